/**
 * How long one transactional request has been held off by its coordinator's "not yet" answers
 * (CONCURRENT_TRANSACTIONS: the previous transaction is still being completed; COORDINATOR_LOAD_IN_PROGRESS: the
 * coordinator is loading its __transaction_state partition). Those are waited out silently by the retry loop of
 * transactions.ts, so an operator would otherwise see nothing but a stall: a wait is reported once when it has
 * lasted `reportAfterMs`, and once more when it ends (answered, or given up), only if it was reported.
 *
 * Invariant: at most two reports per request (`busy`, then `over` or nothing when the caller throws without `end`).
 */

/** One report: `over` false while the coordinator still answers ERROR, true once the request went through or was given up. */
export interface TransactionCoordinatorWait {
  readonly transactionalId: string
  readonly cluster: string
  /** `host:port` of the coordinator that answered. */
  readonly coordinator: string
  /** What the request was for ("commit the transaction of", ...). */
  readonly action: string
  /** The answer waited out (CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS). */
  readonly error: string
  readonly waitedMs: number
  readonly over: boolean
  /** Only when `over`: whether the request went through (false: given up at the retry deadline). */
  readonly answered?: boolean
}

export type WaitReporter = (wait: TransactionCoordinatorWait) => void

/** The first report comes after this long: a transaction being completed normally takes milliseconds. */
export const WAIT_REPORT_MS = 5000

export class TransactionWait {
  readonly #what: Pick<TransactionCoordinatorWait, 'transactionalId' | 'cluster' | 'action'>
  readonly #report: WaitReporter | undefined
  readonly #reportAfterMs: number
  #since: number | null = null
  #last: { coordinator: string, error: string } | null = null
  #reported = false

  constructor (what: Pick<TransactionCoordinatorWait, 'transactionalId' | 'cluster' | 'action'>, report: WaitReporter | undefined, reportAfterMs = WAIT_REPORT_MS) {
    this.#what = what
    this.#report = report
    this.#reportAfterMs = reportAfterMs
  }

  /** The coordinator at COORDINATOR answered ERROR ("not yet"): reported once the wait has lasted long enough. */
  held (coordinator: string, error: string, now = Date.now()): void {
    this.#since ??= now
    this.#last = { coordinator, error }
    const waitedMs = now - this.#since
    if (this.#reported || waitedMs < this.#reportAfterMs) return
    this.#reported = true
    this.#report?.({ ...this.#what, coordinator, error, waitedMs, over: false })
  }

  /** The request went through (`answered`) or was given up: the wait, if it was reported, is reported over. */
  end (answered: boolean, now = Date.now()): void {
    if (!this.#reported || this.#since === null || this.#last === null) return
    this.#reported = false
    this.#report?.({ ...this.#what, ...this.#last, waitedMs: now - this.#since, over: true, answered })
    this.#since = null
  }
}

/** Why a coordinator answers ERROR "not yet", for the operator. */
const CAUSES: Readonly<Record<string, string>> = {
  CONCURRENT_TRANSACTIONS: 'it is still completing the previous transaction of this id, writing its commit or abort markers to every partition the transaction wrote ' +
    '(a partition leader that stopped answering holds that up until the brokers\' own request to it times out: their request.timeout.ms, 30 s by default)',
  COORDINATOR_LOAD_IN_PROGRESS: 'it is loading its partition of __transaction_state (a broker of the cluster restarted, or that partition moved to it)'
}

/** The log message of a report: who holds the flow's transactions, since when, why, and what kmirror does meanwhile. */
export function describeWait (wait: TransactionCoordinatorWait, retryDeadlineMs: number): string {
  const seconds = (wait.waitedMs / 1000).toFixed(1)
  const request = `a request to ${wait.action} transactional id ${wait.transactionalId} on ${wait.cluster}`
  const coordinator = `its transaction coordinator, broker ${wait.coordinator}`
  if (wait.over) {
    return wait.answered === true
      ? `${request} went through after ${seconds} s of ${wait.error} from ${coordinator}: the flow's transactions go on`
      : `${request} was still answered ${wait.error} by ${coordinator}, after ${seconds} s: kmirror gave it up; the round fails, is aborted and copied again`
  }
  const cause = CAUSES[wait.error] ?? 'it is not ready for the request yet'
  return `${request} has been answered ${wait.error} for ${seconds} s by ${coordinator}: ${cause}. ` +
    `Nothing is committed to the target meanwhile; kmirror asks again for up to ${retryDeadlineMs / 1000} s, then the round fails, is aborted and copied again`
}
