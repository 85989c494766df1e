/**
 * Named periodic jobs (MM2's Scheduler). A job that fails is logged with its name, counted, and retried
 * with back-off; it never stops another job or the data path. Runs of one job never overlap. While the `gate`
 * gives a reason (a flow's group lease does not hold: another instance may run these jobs now), no run starts:
 * each due run is put off by at most GATE_RECHECK_MS and neither counted nor logged as a failure.
 *
 * Each run is given an AbortSignal, aborted when the job is cancelled with a reason (`cancel(name, reason)`: the
 * group membership that owned it was lost, and another instance may run it now): the run is to write nothing more
 * (jobs look at it before each write), and its end is logged at info, not counted as a failure.
 *
 * Warnings: the first failure, each change of error and a reminder every `repeatWarningMs` while the same error
 * goes on are warnings; the repeats between are logged at debug (an outage of a cluster fails every job in a
 * back-off of 2, 4, 8 ... s: a warning each would bury the first one). Every failure is counted (status, metrics)
 * whatever its level; the first success after failures says so once at info.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { Logger } from '../logger.ts'

/** How soon a run put off by the gate looks again. */
const GATE_RECHECK_MS = 1000

/** How often a job failing with the same error warns again (see the module's comment). */
export const REPEAT_WARNING_MS = 5 * 60 * 1000

export interface JobStatus {
  readonly name: string
  readonly runs: number
  readonly failures: number
  readonly lastDurationMs: number
  /** The error of the last run; null once a run succeeds. */
  readonly lastError: string | null
  /** When the last run ended (ISO-8601); null before the first. */
  readonly lastRunAt: string | null
  /** The last failed run, kept after later successes: when it ended and its error. */
  readonly lastFailure: { readonly at: string, readonly error: string } | null
}

interface Job {
  name: string
  intervalMs: number
  fn: JobRun
  timer: NodeJS.Timeout | null
  running: Promise<void> | null
  /** Aborts the run in progress (`cancel` with a reason). */
  abort: AbortController | null
  cancelled: boolean
  runs: number
  failures: number
  consecutiveFailures: number
  /** Runs (with back-off, at most `intervalMs` apart) only until one succeeds. */
  untilSuccess: boolean
  /** When a failure of the current error was last logged at warn (epoch ms). */
  warnedAt: number
  lastDurationMs: number
  lastError: string | null
  lastRunAt: string | null
  lastFailure: { at: string, error: string } | null
}

/** A job's run: SIGNAL is aborted when the job is cancelled with a reason while it runs (see above). */
export type JobRun = (signal: AbortSignal) => Promise<void>

export interface SchedulerOptions {
  /** Hears of every finished run, e.g. to count runs and failures in metrics. */
  readonly onRun?: (job: string, ok: boolean) => void
  /** A reason puts runs off (above). */
  readonly gate?: () => string | null
  /**
   * How often a failure repeating the error before it warns again (default REPEAT_WARNING_MS); Infinity: never,
   * for a job that runs every second (heartbeats), whose outage is already told by the data path.
   */
  readonly repeatWarningMs?: number
}

/** The longest delay a Node timer keeps (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1

export class Scheduler {
  readonly #log: Logger
  readonly #onRun: (job: string, ok: boolean) => void
  readonly #gate: () => string | null
  readonly #repeatWarningMs: number
  readonly #jobs = new Map<string, Job>()
  #stopped = false

  constructor (log: Logger, options: SchedulerOptions = {}) {
    this.#log = log
    this.#onRun = options.onRun ?? (() => undefined)
    this.#gate = options.gate ?? (() => null)
    this.#repeatWarningMs = options.repeatWarningMs ?? REPEAT_WARNING_MS
  }

  /**
   * Runs `fn` every `intervalMs`, the first time after `firstDelayMs` (default: one interval). UNTIL_SUCCESS: only
   * until a run succeeds (a job that runs once, retried with back-off capped at `intervalMs`); it then leaves the
   * scheduler, as `cancel` would.
   */
  every (name: string, intervalMs: number, fn: JobRun, firstDelayMs = intervalMs, { untilSuccess = false } = {}): void {
    if (this.#jobs.has(name)) throw new KmirrorError(ErrorCodes.INTERNAL, `job ${name} is already scheduled`)
    const job: Job = { name, intervalMs, fn, timer: null, running: null, abort: null, cancelled: false, runs: 0, failures: 0, consecutiveFailures: 0, untilSuccess, warnedAt: 0, lastDurationMs: 0, lastError: null, lastRunAt: null, lastFailure: null }
    this.#jobs.set(name, job)
    this.#schedule(job, firstDelayMs)
  }

  #schedule (job: Job, delayMs: number): void {
    if (this.#stopped || job.cancelled) return
    // Node runs a timer of 2^31 ms or more after 1 ms: an interval set very long "to nearly turn a job off" would
    // run it back to back. Such a job runs every 24.8 days instead.
    delayMs = Math.min(delayMs, MAX_TIMER_MS)
    job.timer = setTimeout(() => {
      const closed = this.#gate()
      if (closed === null) {
        job.running = this.#run(job)
        return
      }
      this.#log.debug({ job: job.name, reason: closed }, 'job run put off: the lease gate is closed')
      this.#schedule(job, Math.min(job.intervalMs, GATE_RECHECK_MS))
    }, delayMs)
    job.timer.unref()
  }

  async #run (job: Job): Promise<void> {
    const started = Date.now()
    const log = this.#log.child({ job: job.name })
    const abort = new AbortController()
    job.abort = abort
    let aborted = false
    try {
      await job.fn(abort.signal)
      // The warnings stop; this line says why, as a partition's recovery line does.
      if (job.consecutiveFailures > 0) log.info({ failedRuns: job.consecutiveFailures, lastError: job.lastError }, 'job succeeded again')
      job.consecutiveFailures = 0
      job.lastError = null
    } catch (err) {
      if (abort.signal.aborted) {
        aborted = true
        log.info({ reason: errorMessage(abort.signal.reason) }, 'job run stopped before its end: it writes nothing more')
        return
      }
      job.failures++
      job.consecutiveFailures++
      const previous = job.lastError
      job.lastError = err instanceof Error ? err.message : String(err)
      const repeat = job.consecutiveFailures > 1 && previous === job.lastError
      const warn = !repeat || Date.now() - job.warnedAt >= this.#repeatWarningMs
      if (warn) job.warnedAt = Date.now()
      log[warn ? 'warn' : 'debug']({ err, failures: job.failures, failedRuns: job.consecutiveFailures }, 'job failed; it will run again')
    } finally {
      job.runs++
      job.lastDurationMs = Date.now() - started
      job.lastRunAt = new Date().toISOString()
      if (!aborted && job.lastError !== null) job.lastFailure = { at: job.lastRunAt, error: job.lastError }
      job.running = null
      job.abort = null
      // An aborted run is no failure, whatever the run before it ended with (its error is still `lastError`).
      this.#onRun(job.name, aborted || job.lastError === null)
    }
    if (job.untilSuccess && job.consecutiveFailures === 0) {
      if (this.#jobs.get(job.name) === job) this.#jobs.delete(job.name)
      return
    }
    const backoff = job.consecutiveFailures === 0 ? job.intervalMs : Math.min(job.intervalMs, 1000 * 2 ** Math.min(job.consecutiveFailures, 6))
    this.#schedule(job, backoff)
  }

  /** Whether the job `name` is scheduled (and not cancelled). */
  has (name: string): boolean {
    return this.#jobs.has(name)
  }

  /**
   * Stops scheduling the job `name` and waits for its run in progress, if any; it can be scheduled again with
   * `every` afterwards. Its runs and failures leave the status with it. With a REASON, the run in progress is
   * aborted first (its signal's reason: a retriable FENCED naming the job and REASON).
   */
  async cancel (name: string, reason?: string): Promise<void> {
    const job = this.#jobs.get(name)
    if (job === undefined) return
    this.#jobs.delete(name)
    job.cancelled = true
    if (job.timer !== null) clearTimeout(job.timer)
    if (reason !== undefined) job.abort?.abort(new KmirrorError(ErrorCodes.FENCED, `job ${name} stopped: ${reason}`, { retriable: true, details: { fence: reason } }))
    await job.running
  }

  /** Stops scheduling and waits for runs in progress. */
  async stop (): Promise<void> {
    this.#stopped = true
    for (const job of this.#jobs.values()) if (job.timer !== null) clearTimeout(job.timer)
    await Promise.all([...this.#jobs.values()].map(j => j.running))
  }

  status (): JobStatus[] {
    return [...this.#jobs.values()].map(j => ({ name: j.name, runs: j.runs, failures: j.failures, lastDurationMs: j.lastDurationMs, lastError: j.lastError, lastRunAt: j.lastRunAt, lastFailure: j.lastFailure }))
  }
}

function errorMessage (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
