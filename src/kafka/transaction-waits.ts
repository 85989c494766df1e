/**
 * How long one transactional request has been held off by its coordinator's "not yet" answers
 * (CONCURRENT_TRANSACTIONS: the previous transaction of the id is still being completed; COORDINATOR_LOAD_IN_PROGRESS:
 * the coordinator is loading its __transaction_state partition). The retry loop of transactions.ts waits them out
 * silently, so an operator would otherwise see nothing but a stall: a wait is reported once it has lasted
 * `reportAfterMs` at one coordinator, and once more when it ends (went through, given up at the deadline, or failed
 * otherwise), only if it was reported.
 *
 * Invariants:
 * - At most two reports per request: `over` false once, then `over` true once.
 * - The threshold counts from the first "not yet" of the coordinator answering now: a coordinator that moved
 *   (reported apart, as a move) starts the count afresh. The end reports the whole wait, from the first "not yet".
 * - A reporter that throws never fails the request: reporting is only reporting.
 */
import type { Logger } from '../logger.ts'

/** One report: `over` false while the coordinator still answers ERROR, true once the request ended. */
export interface TransactionCoordinatorWait {
  readonly transactionalId: string
  readonly cluster: string
  /** `host:port` of the coordinator that answered last. */
  readonly coordinator: string
  /** What the request was for ("commit the transaction of", ...). */
  readonly action: string
  /** How long "not yet" answers are waited out for this request before it is given up. */
  readonly deadlineMs: number
  /** The last "not yet" answer (CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS). */
  readonly error: string
  readonly waitedMs: number
  readonly over: boolean
  /** Only when `over`: how it ended. */
  readonly outcome?: WaitOutcome
  /** Only when `over` and `failed`: the error the request ended with. */
  readonly failure?: string
}

/** `answered`: the request went through; `gave-up`: still "not yet" at the retry deadline; `failed`: another error ended it. */
export type WaitOutcome = 'answered' | 'gave-up' | 'failed'

export type WaitReporter = (wait: TransactionCoordinatorWait) => void

/** The first report comes after this long: a transaction being completed normally takes milliseconds. */
export const WAIT_REPORT_MS = 5000

type What = Pick<TransactionCoordinatorWait, 'transactionalId' | 'cluster' | 'action' | 'deadlineMs'>

export class TransactionWait {
  readonly #what: What
  readonly #report: WaitReporter | undefined
  readonly #reportAfterMs: number
  /** The first "not yet" of the whole wait, and of the coordinator answering now. */
  #firstAt: number | null = null
  #sinceAt = 0
  #last: { coordinator: string, error: string } | null = null
  #reported = false

  constructor (what: What, report: WaitReporter | undefined, reportAfterMs = WAIT_REPORT_MS) {
    this.#what = what
    this.#report = report
    this.#reportAfterMs = reportAfterMs
  }

  /** The coordinator at COORDINATOR answered ERROR ("not yet"): reported once the wait there has lasted long enough. */
  held (coordinator: string, error: string, now = Date.now()): void {
    this.#firstAt ??= now
    if (this.#last?.coordinator !== coordinator) this.#sinceAt = now
    this.#last = { coordinator, error }
    if (this.#reported || now - this.#sinceAt < this.#reportAfterMs) return
    this.#reported = true
    this.#emit({ ...this.#what, coordinator, error, waitedMs: now - this.#sinceAt, over: false })
  }

  /** The request ended (OUTCOME; FAILURE names the error of a `failed` one): reported if its wait was. */
  end (outcome: WaitOutcome, failure?: string, now = Date.now()): void {
    if (!this.#reported || this.#firstAt === null || this.#last === null) return
    this.#reported = false
    this.#emit({ ...this.#what, ...this.#last, waitedMs: now - this.#firstAt, over: true, outcome, ...(outcome === 'failed' && failure !== undefined ? { failure } : {}) })
  }

  #emit (wait: TransactionCoordinatorWait): void {
    try { this.#report?.(wait) } catch { /* see the invariants */ }
  }
}

/** Why a coordinator answers ERROR "not yet", for the operator. */
const CAUSES: Readonly<Record<string, string>> = {
  CONCURRENT_TRANSACTIONS: 'it is still completing the previous transaction of this id, writing its commit or abort markers to every partition the transaction wrote ' +
    '(a partition leader that stopped answering holds that up until the brokers\' own request to it times out: their request.timeout.ms, 30 s by default)',
  COORDINATOR_LOAD_IN_PROGRESS: 'it is loading its partition of __transaction_state (a broker of the cluster restarted, or that partition moved to it)'
}

/** What follows when the request does not go through, by action (transaction-rounds.ts). */
const AFTERWARDS: Readonly<Record<string, string>> = {
  'add partitions to the transaction of': 'the round fails, is aborted and copied again',
  'commit the transaction of': 'the round fails, is aborted and copied again',
  'abort the transaction of': 'the next producer id asked for (InitProducerId) aborts the transaction instead',
  'get a producer id for': 'the step fails and is tried again'
}

/** The log message of a report: who holds the flow's transactions, since when, why, and what kmirror does meanwhile. */
export function describeWait (wait: TransactionCoordinatorWait): string {
  const seconds = (wait.waitedMs / 1000).toFixed(1)
  const request = `a request to ${wait.action} transactional id ${wait.transactionalId} on ${wait.cluster}`
  const coordinator = `its transaction coordinator, broker ${wait.coordinator}`
  const afterwards = AFTERWARDS[wait.action] ?? 'the step fails and is tried again'
  if (!wait.over) {
    const cause = CAUSES[wait.error] ?? 'it is not ready for the request yet'
    return `${request} has been answered ${wait.error} for ${seconds} s by ${coordinator}: ${cause}. ` +
      `Nothing is committed to the target meanwhile; kmirror asks again for up to ${wait.deadlineMs / 1000} s, then ${afterwards}`
  }
  if (wait.outcome === 'answered') return `${request} went through after ${seconds} s held off (last answer: ${wait.error} from ${coordinator}): the flow's transactions go on`
  if (wait.outcome === 'gave-up') return `${request} was still answered ${wait.error} by ${coordinator} after ${seconds} s: kmirror gave it up; ${afterwards}`
  return `${request}, held off ${seconds} s (last answer: ${wait.error} from ${coordinator}), ended with another error: ${wait.failure ?? 'unknown'}`
}

/** Logs a report: at warn while the wait lasts and when it did not go through, at info when it did. */
export function logTransactionWait (log: Logger, wait: TransactionCoordinatorWait): void {
  log[wait.outcome === 'answered' ? 'info' : 'warn']({ ...wait }, describeWait(wait))
}
