import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it, mock } from 'node:test'
import { Scheduler } from '../../../src/runtime/scheduler.ts'
import { deferred, settle } from '../../fakes/deferred.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

/*
 * Time is mocked (setTimeout and Date): `tick(ms)` fires due timers synchronously, and a job's function is
 * called synchronously from its timer, so call counts are exact right after a tick. `settle()` lets the
 * promise callbacks after a run (its bookkeeping and the next schedule) happen; no real time passes.
 */

/** A job that records the mocked time of each call and fails while `failing` says so. */
function recordingJob (failing: (call: number) => boolean = () => false) {
  const calls: number[] = []
  const fn = async (): Promise<void> => {
    calls.push(Date.now())
    if (failing(calls.length)) throw new Error(`boom ${calls.length}`)
  }
  return { calls, fn }
}

/** Advances mocked time by `ms` in steps of `step`, letting each run finish and reschedule in between. */
async function advance (ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    mock.timers.tick(step)
    await settle()
  }
}

describe('Scheduler', () => {
  let scheduler: Scheduler | null = null

  beforeEach(() => { mock.timers.enable({ apis: ['setTimeout', 'Date'] }) })
  afterEach(async () => {
    await scheduler?.stop()
    scheduler = null
    mock.timers.reset()
  }, { timeout: 5000 }) // a failed test may leave a run open on a mocked timer: fail the hook, never hang

  it('runs a job first after one interval by default, then every interval after the end of the previous run', async () => {
    // Given a job every 1000 ms
    scheduler = new Scheduler(memoryLogger().log)
    const job = recordingJob()
    scheduler.every('refresh', 1000, job.fn)
    // When 999 ms pass, Then it has not run
    mock.timers.tick(999)
    assert.deepEqual(job.calls, [])
    // When 1 more ms passes, Then it runs, and again every 1000 ms
    mock.timers.tick(1)
    await settle()
    await advance(3000)
    assert.deepEqual(job.calls, [1000, 2000, 3000, 4000])
    assert.deepEqual(scheduler.status(), [{ name: 'refresh', runs: 4, failures: 0, lastDurationMs: 0, lastError: null, lastRunAt: '1970-01-01T00:00:04.000Z', lastFailure: null }])
  })

  it('cancels one job: waits for its run in progress, runs it no more, leaves the others, and can schedule it again', async () => {
    // Given two jobs every 1000 ms, the first one in a run that has not ended
    scheduler = new Scheduler(memoryLogger().log)
    const gate = deferred()
    let slowCalls = 0
    scheduler.every('slow', 1000, async () => { slowCalls++; await gate.promise })
    const other = recordingJob()
    scheduler.every('other', 1000, other.fn)
    mock.timers.tick(1000)
    await settle()
    // When the first is cancelled, Then the cancel waits for its run
    let cancelled = false
    const cancelling = scheduler.cancel('slow').then(() => { cancelled = true })
    await settle()
    assert.equal(cancelled, false)
    gate.resolve()
    await cancelling
    // And it runs no more and leaves the status, while the other keeps running
    await advance(3000)
    assert.equal(slowCalls, 1)
    assert.equal(scheduler.has('slow'), false)
    assert.deepEqual(scheduler.status().map(j => j.name), ['other'])
    assert.deepEqual(other.calls, [1000, 2000, 3000, 4000])
    // When it is scheduled again, Then it runs again
    scheduler.every('slow', 1000, async () => { slowCalls++ }, 0)
    mock.timers.tick(0)
    await settle()
    assert.equal(slowCalls, 2)
  })

  it('runs a job first after the given first delay, 0 meaning at once', async () => {
    scheduler = new Scheduler(memoryLogger().log)
    const job = recordingJob()
    scheduler.every('configs', 1000, job.fn, 0)
    mock.timers.tick(0)
    await settle()
    await advance(1000)
    assert.deepEqual(job.calls, [0, 1000])
  })

  it('counts, logs and retries a failing job with back-off of 2 s, 4 s, 8 s, then its interval again after a success', async () => {
    // Given a job every 60 s that fails at its first three runs
    const logs = memoryLogger()
    scheduler = new Scheduler(logs.log)
    const job = recordingJob(call => call <= 3)
    scheduler.every('acls', 60_000, job.fn, 0)
    // When time passes
    mock.timers.tick(0)
    await settle()
    await advance(75_000, 1000)
    // Then it ran at 0 (fail), +2 s (fail), +4 s (fail), +8 s (ok), then one interval later
    assert.deepEqual(job.calls, [0, 2000, 6000, 14_000, 74_000])
    assert.deepEqual(scheduler.status(), [{
      name: 'acls', runs: 5, failures: 3, lastDurationMs: 0, lastError: null, lastRunAt: '1970-01-01T00:01:14.000Z',
      // the last failure stays visible after the job recovered
      lastFailure: { at: '1970-01-01T00:00:06.000Z', error: 'boom 3' }
    }])
    // and each failure was logged at warn with the job's name, the count and the error
    const warns = logs.at(LogLevels.warn)
    assert.deepEqual(warns.map(w => [w['job'], w['failures'], (w['err'] as { message: string }).message, w.msg]), [
      ['acls', 1, 'boom 1', 'job failed; it will run again'],
      ['acls', 2, 'boom 2', 'job failed; it will run again'],
      ['acls', 3, 'boom 3', 'job failed; it will run again']
    ])
    // and its first success after them once at info, naming how many runs failed and the last error
    assert.deepEqual(logs.at(LogLevels.info).filter(l => l['job'] === 'acls').map(l => [l.msg, l['failedRuns'], l['lastError']]), [['job succeeded again', 3, 'boom 3']])
  })

  it('keeps the last error of a job until it succeeds, and never retries later than its interval', async () => {
    scheduler = new Scheduler(memoryLogger().log)
    const job = recordingJob(() => true)
    scheduler.every('fast', 500, job.fn, 0)
    mock.timers.tick(0)
    await settle()
    await advance(1500)
    assert.deepEqual(job.calls, [0, 500, 1000, 1500])
    assert.equal(scheduler.status()[0]!.lastError, 'boom 4')
  })

  it('never stops another job when one keeps failing', async () => {
    scheduler = new Scheduler(memoryLogger().log)
    const failing = recordingJob(() => true)
    const healthy = recordingJob()
    scheduler.every('broken', 1000, failing.fn)
    scheduler.every('topics', 1000, healthy.fn)
    await advance(5000)
    assert.deepEqual(healthy.calls, [1000, 2000, 3000, 4000, 5000])
    assert.equal(failing.calls.length, 5)
    assert.deepEqual(scheduler.status().map(s => [s.name, s.failures]), [['broken', 5], ['topics', 0]])
  })

  it('never overlaps two runs of a job: a slow run delays the next one, which starts one interval after it ends', async () => {
    // Given a job every 1000 ms whose runs take 2500 ms
    scheduler = new Scheduler(memoryLogger().log)
    let running = 0
    let maxRunning = 0
    const starts: number[] = []
    scheduler.every('slow', 1000, async () => {
      starts.push(Date.now())
      running++
      maxRunning = Math.max(maxRunning, running)
      await new Promise(resolve => setTimeout(resolve, 2500))
      running--
    })
    // When 11 s pass (the third run ends at 10.5 s)
    await advance(11_000)
    // Then runs started at 1000, 4500 (one interval after the first ended at 3500) and 8000, never two at once
    assert.deepEqual(starts, [1000, 4500, 8000])
    assert.equal(maxRunning, 1)
    assert.equal(scheduler.status()[0]!.lastDurationMs, 2500)
  })

  it('waits in stop() for a run in progress, and runs nothing after it', async () => {
    // Given a run that is held open
    scheduler = new Scheduler(memoryLogger().log)
    const release = deferred()
    const job = recordingJob()
    let finished = false
    scheduler.every('sync', 1000, async () => {
      await job.fn()
      await release.promise
      finished = true
    })
    mock.timers.tick(1000)
    assert.equal(job.calls.length, 1)
    // When stop() is called, Then it does not resolve while the run is open
    let stopped = false
    const stopping = scheduler.stop().then(() => { stopped = true })
    await settle()
    assert.equal(stopped, false)
    // When the run ends, Then stop() resolves, after the run finished
    release.resolve()
    await stopping
    assert.equal(finished, true)
    // and no run happens afterwards
    await advance(5000, 1000)
    assert.equal(job.calls.length, 1)
  })

  it('resolves stop() at once when no run is in progress and cancels the pending timers', async () => {
    scheduler = new Scheduler(memoryLogger().log)
    const job = recordingJob()
    scheduler.every('idle', 1000, job.fn)
    await scheduler.stop()
    await advance(3000, 1000)
    assert.deepEqual(job.calls, [])
  })

  it('refuses to register a second job under a name already in use', async () => {
    // Given a job named "dup"
    scheduler = new Scheduler(memoryLogger().log)
    const first = recordingJob()
    scheduler.every('dup', 1000, first.fn)
    // When another job is registered under that name, Then it is refused and the first job is untouched
    assert.throws(() => scheduler!.every('dup', 1000, recordingJob().fn), { code: 'KMIRROR_ERR_INTERNAL' })
    await scheduler.stop()
    await advance(2000, 1000)
    assert.deepEqual(first.calls, [])
  })

  it('puts runs off while the gate gives a reason (a lease that does not hold): neither run nor failure, and runs again within a second once it opens', async () => {
    // Given a job every 10 s behind a gate that closes before its first run
    let closed: string | null = null
    const logger = memoryLogger()
    scheduler = new Scheduler(logger.log, { gate: () => closed })
    const job = recordingJob()
    scheduler.every('checkpoints', 10_000, job.fn)
    closed = 'the lease does not hold'
    // When 25 s pass with the gate closed, Then it never runs, counts nothing and warns of nothing
    await advance(25_000, 500)
    assert.deepEqual(job.calls, [])
    assert.deepEqual(scheduler.status().map(j => [j.runs, j.failures]), [[0, 0]])
    assert.equal(logger.at(LogLevels.warn).length, 0)
    // When it opens, Then the job runs within a second, then every interval again
    closed = null
    await advance(21_000, 500)
    assert.ok(job.calls.length === 3 && job.calls[0]! <= 26_000, `runs at ${job.calls.join(', ')}`)
    assert.deepEqual(job.calls.slice(1).map((t, i) => t - job.calls[i]!), [10_000, 10_000])
  })

  it('with no reminder (heartbeats), a failure repeating the error before it is logged at debug; the first, a new error and the recovery are not', async () => {
    // Given a job every second (heartbeats) failing 5 times with one error, then once with another, then recovering
    const logs = memoryLogger()
    scheduler = new Scheduler(logs.log, { repeatWarningMs: Infinity })
    let calls = 0
    scheduler.every('heartbeats', 1000, async () => {
      calls++
      if (calls <= 5) throw new Error('target down')
      if (calls === 6) throw new Error('topic refused')
    }, 0)
    mock.timers.tick(0)
    await settle()
    await advance(10_000)
    // Then two warnings (the first failure, the change of error), the repeats at debug, one recovery line
    assert.deepEqual(logs.at(LogLevels.warn).map(w => [w['failures'], (w['err'] as { message: string }).message]), [[1, 'target down'], [6, 'topic refused']])
    assert.equal(logs.at(LogLevels.debug).filter(l => l.msg === 'job failed; it will run again').length, 4)
    assert.deepEqual(logs.at(LogLevels.info).map(l => [l.msg, l['failedRuns']]), [['job succeeded again', 6]])
    assert.equal(scheduler.status()[0]!.failures, 6)
  })

  it('a job until its first success: retried with back-off capped at its interval, then it leaves the scheduler', async () => {
    scheduler = new Scheduler(memoryLogger().log)
    const job = recordingJob(call => call <= 3)
    scheduler.every('refresh-topics', 5000, job.fn, 2000, { untilSuccess: true })
    await advance(60_000, 500)
    // Then runs at 2 s (fail), 4 s (fail), 8 s (fail), 13 s (the back-off of 8 s capped at 5 s: success), no more
    assert.deepEqual(job.calls, [2000, 4000, 8000, 13_000])
    assert.equal(scheduler.has('refresh-topics'), false)
    assert.deepEqual(scheduler.status(), [])
  })

  it('a job cancelled and scheduled again under its name while its old run is under way: the old run\'s end neither removes nor reschedules the new one', async () => {
    scheduler = new Scheduler(memoryLogger().log)
    let release = (): void => {}
    const old = async (): Promise<void> => { await new Promise<void>(resolve => { release = resolve }) }
    scheduler.every('refresh-topics', 5000, old, 0, { untilSuccess: true })
    mock.timers.tick(0)
    await settle()
    const cancelled = scheduler.cancel('refresh-topics')
    const fresh = recordingJob()
    scheduler.every('refresh-topics', 5000, fresh.fn, 1000)
    release()
    await cancelled
    await advance(11_000, 500)
    assert.equal(scheduler.has('refresh-topics'), true)
    assert.deepEqual(fresh.calls, [1000, 6000, 11_000])
  })

  it('a job cancelled with a reason (its membership lost): the run under way sees its signal aborted, a retriable FENCED naming the job and the reason, and its end is told at info, not as a failure', async () => {
    const logs = memoryLogger()
    scheduler = new Scheduler(logs.log)
    const signals: AbortSignal[] = []
    let release = (): void => {}
    scheduler.every('sync-group-offsets', 5000, async signal => {
      signals.push(signal)
      await new Promise<void>(resolve => { release = resolve })
      signal.throwIfAborted()
    }, 0)
    mock.timers.tick(0)
    await settle()
    const cancelled = scheduler.cancel('sync-group-offsets', 'the group membership was lost')
    assert.equal(signals[0]!.aborted, true)
    assert.match(String(signals[0]!.reason), /job sync-group-offsets stopped: the group membership was lost/)
    assert.equal((signals[0]!.reason as { retriable?: boolean }).retriable, true)
    release()
    await cancelled
    assert.deepEqual(logs.at(LogLevels.warn), [])
    assert.ok(logs.at(LogLevels.info).some(l => l.msg === 'job run stopped before its end: it writes nothing more'))
  })

  it('a job aborted in the run after a failed one is not told as a failure to onRun (which counts kmirror_job_failures_total)', async () => {
    // Given a job whose first run failed (told as a failure) and whose second run is under way
    const told: boolean[] = []
    scheduler = new Scheduler(memoryLogger().log, { onRun: (_job, ok) => { told.push(ok) } })
    let release = (): void => {}
    let run = 0
    scheduler.every('heartbeats', 1000, async signal => {
      if (++run === 1) throw new Error('target down')
      await new Promise<void>(resolve => { release = resolve })
      signal.throwIfAborted()
    }, 0)
    mock.timers.tick(0)
    await settle()
    await advance(1000)
    assert.equal(run, 2)
    // When it is cancelled with a reason (its membership lost) while that run is under way
    const cancelled = scheduler.cancel('heartbeats', 'the group membership was lost')
    release()
    await cancelled
    // Then the aborted run is a run, not a failure: onRun hears ok (the error of the run before is not its own)
    assert.deepEqual(told, [false, true])
  })

  it('a job cancelled without a reason (revoked): the run under way is waited for, its signal never aborted', async () => {
    scheduler = new Scheduler(memoryLogger().log)
    const signals: AbortSignal[] = []
    let release = (): void => {}
    scheduler.every('emit-checkpoints', 5000, async signal => { signals.push(signal); await new Promise<void>(resolve => { release = resolve }) }, 0)
    mock.timers.tick(0)
    await settle()
    const cancelled = scheduler.cancel('emit-checkpoints')
    assert.equal(signals[0]!.aborted, false)
    release()
    await cancelled
    assert.equal(signals[0]!.aborted, false)
  })

  it('with no reminder (heartbeats), the same error for 10 minutes warns once', async () => {
    const logs = memoryLogger()
    scheduler = new Scheduler(logs.log, { repeatWarningMs: Infinity })
    scheduler.every('heartbeats', 1000, async () => { throw new Error('target down') }, 0)
    mock.timers.tick(0)
    await settle()
    await advance(10 * 60_000, 1000)
    assert.equal(logs.at(LogLevels.warn).length, 1)
    assert.ok(scheduler.status()[0]!.failures > 100)
  })

  it('by default, a job failing with the same error warns at its first failure and then once every 5 minutes, with the failed runs so far; the runs between go to debug', async () => {
    // Given a job every minute failing with one error for 12 minutes (a source cluster down)
    const logs = memoryLogger()
    scheduler = new Scheduler(logs.log)
    const start = Date.now()
    scheduler.every('sync-topic-configs', 60_000, async () => {
      if (Date.now() - start < 12 * 60_000) throw new Error('cluster A unreachable')
    }, 0)
    mock.timers.tick(0)
    await settle()
    await advance(13 * 60_000, 1000)
    // Then warnings at the first run (0 s), then at the first failure 5 minutes after the last warning: runs at 0, 2,
    // 6, 14, 30, 62 s (back-off), then every minute: the 10th at 302 s, the 15th at 602 s
    const failed = logs.lines.filter(l => l.msg === 'job failed; it will run again')
    const warns = failed.filter(l => l.level === LogLevels.warn)
    assert.deepEqual(warns.map(w => w['failedRuns']), [1, 10, 15])
    assert.equal(failed.length, scheduler.status()[0]!.failures, 'every failure logged, at warn or debug')
    assert.ok(failed.length > warns.length)
    assert.deepEqual(logs.at(LogLevels.info).map(l => [l.msg, l['failedRuns']]), [['job succeeded again', failed.length]])
  })
})

describe('Scheduler timers', () => {
  it('never asks Node for a timer of 2^31 ms or more (Node would run it after 1 ms): a very long interval waits 24.8 days', async () => {
    const delays: number[] = []
    const spy = mock.method(globalThis, 'setTimeout', (_fn: () => void, ms: number) => {
      delays.push(ms)
      return { unref: () => undefined } as unknown as NodeJS.Timeout
    })
    try {
      const scheduler = new Scheduler(memoryLogger().log)
      scheduler.every('emit-checkpoints', 99_999_999 * 1000, async () => undefined)
      assert.deepEqual(delays, [2 ** 31 - 1])
    } finally {
      spy.mock.restore()
    }
  })
})
