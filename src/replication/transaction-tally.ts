/**
 * Exactly-once mode: what a flow's round transactions came to, for `/status`, the console and the metrics. An
 * operator reads from it that the flow runs exactly-once, under which transactional id and timeout, that commits
 * keep coming, and why the last round was aborted (its records are copied again from the committed progress, so an
 * abort loses nothing, but aborts that keep coming mean work done twice or a flow that cannot commit).
 *
 * Invariants:
 * - A round that wrote nothing opens no transaction and counts nothing.
 * - An abort keeps the code and message of its cause (secrets never reach it: error messages name keys, not values).
 */
import { ErrorCodes, errorMessage, isKmirrorError } from '../errors.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { RoundOutcome } from './transaction-rounds.ts'

export interface ExactlyOnceStatus {
  /** This instance's transactional id on the target (`<group id>-<member name>`). */
  readonly transactionalId: string
  /** The transactions' timeout (`<target>.producer.transaction.timeout.ms`). */
  readonly transactionTimeoutMs: number
  readonly committed: number
  readonly aborted: number
  /** ISO time of the last commit; null before the first. */
  readonly lastCommitAt: string | null
  /** The last abort: when, and its cause; null when none was. */
  readonly lastAbort: { readonly at: string, readonly code: string, readonly message: string } | null
}

export class TransactionTally {
  readonly #flow: string
  readonly #transactionalId: string
  readonly #timeoutMs: number
  readonly #metrics: Metrics
  #committed = 0
  #aborted = 0
  #lastCommitAt: number | null = null
  #lastAbort: { at: number, code: string, message: string } | null = null

  constructor (flow: string, transactionalId: string, timeoutMs: number, metrics: Metrics) {
    this.#flow = flow
    this.#transactionalId = transactionalId
    this.#timeoutMs = timeoutMs
    this.#metrics = metrics
    // Both series exist from the start: a flow that never commits still has its ratio of aborts (the alert).
    metrics.inc('transactionsCommitted', { flow }, 0)
    metrics.inc('transactionsAborted', { flow }, 0)
  }

  /** How a round's transaction ended (TransactionRounds' `onEnd`); CAUSE is the failure of an aborted round. */
  ended (outcome: RoundOutcome, cause?: unknown): void {
    if (outcome === 'committed') {
      this.#committed++
      this.#lastCommitAt = Date.now()
      this.#metrics.inc('transactionsCommitted', { flow: this.#flow })
    } else if (outcome === 'aborted') {
      this.#aborted++
      this.#lastAbort = { at: Date.now(), code: isKmirrorError(cause) ? cause.code : ErrorCodes.INTERNAL, message: errorMessage(cause) }
      this.#metrics.inc('transactionsAborted', { flow: this.#flow })
    }
  }

  status (): ExactlyOnceStatus {
    const abort = this.#lastAbort
    return {
      transactionalId: this.#transactionalId,
      transactionTimeoutMs: this.#timeoutMs,
      committed: this.#committed,
      aborted: this.#aborted,
      lastCommitAt: this.#lastCommitAt === null ? null : new Date(this.#lastCommitAt).toISOString(),
      lastAbort: abort === null ? null : { at: new Date(abort.at).toISOString(), code: abort.code, message: abort.message }
    }
  }
}
