/**
 * Failures of a whole replication step (every partition waits: a broker unreachable, credentials refused, a
 * request timed out), as the log and `/status` show them.
 *
 * Invariants:
 * - One warning when the step starts failing or fails with another error; the retries with the same error log
 *   at debug level; one info line when a step succeeds again.
 * - Only errors worth waiting for are retried (`isWorthWaiting`); any other error stops the flow.
 */
import { ErrorCodes, isKmirrorError, isRetriable } from '../errors.ts'
import type { Logger } from '../logger.ts'

/** A failure of the whole replication step, while it lasts. */
export interface StepFailure {
  readonly code: string
  readonly message: string
  readonly since: string
  readonly attempts: number
}

/**
 * Whether the loop waits and tries again after `err` of a whole step: retriable errors, and refusals an operator
 * fixes while kmirror runs (credentials, ACLs, a cluster unreachable). Anything else (programmer errors,
 * INTERNAL, errors kmirror cannot classify) stops the flow: carrying on could lose data.
 */
export function isWorthWaiting (err: unknown): boolean {
  if (isRetriable(err)) return true
  if (!isKmirrorError(err)) return false
  return err.code === ErrorCodes.AUTHENTICATION || err.code === ErrorCodes.NOT_AUTHORIZED || err.code === ErrorCodes.CLUSTER_UNREACHABLE
}

/** The pause after the `failures`-th failed (or unanswered) step in a row: 200 ms doubling, at most 5 s. */
export function stepBackoffMs (failures: number): number {
  return Math.min(5000, 100 * 2 ** Math.min(failures, 6))
}

export class StepFailures {
  readonly #log: Logger
  #current: (StepFailure & { key: string }) | null = null

  constructor (log: Logger) {
    this.#log = log
  }

  /** One more failed step; `attempt` and `backoffMs` are the loop's. */
  failed (err: unknown, attempt: number, backoffMs: number): void {
    const code = isKmirrorError(err) ? err.code : ErrorCodes.INTERNAL
    const message = err instanceof Error ? err.message : String(err)
    const key = `${code}\u0000${message}`
    const before = this.#current
    const changed = before?.key !== key
    this.#current = { key, code, message, since: changed ? new Date().toISOString() : before!.since, attempts: changed ? 1 : before!.attempts + 1 }
    if (changed) this.#log.warn({ err, attempt, backoffMs }, 'replication step failed; retrying')
    else this.#log.debug({ code, attempt, backoffMs }, 'replication step failed again; retrying')
  }

  succeeded (): void {
    if (this.#current === null) return
    this.#log.info({ code: this.#current.code, since: this.#current.since, attempts: this.#current.attempts }, 'replication steps succeed again')
    this.#current = null
  }

  current (): StepFailure | null {
    if (this.#current === null) return null
    const { key: _, ...failure } = this.#current
    return failure
  }
}
