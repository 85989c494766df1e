/**
 * Failures of a whole replication step (every partition waits: a broker unreachable, credentials refused, a
 * request timed out), as the log and `/status` show them.
 *
 * Invariants:
 * - One warning when the step starts failing or fails with another error; the retries with the same error log
 *   at debug level; one info line when a step succeeds again (failure-streak.ts: numbers in the message set aside).
 * - Only errors worth waiting for are retried (`isWorthWaiting`); any other error stops the flow.
 */
import { ErrorCodes, isKmirrorError, isRetriable } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { FailureStreak } from './failure-streak.ts'

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
  readonly #streak: FailureStreak

  constructor (log: Logger) {
    this.#streak = new FailureStreak(log, {
      failed: 'replication step failed; retrying',
      again: 'replication step failed again; retrying',
      recovered: () => 'replication steps succeed again'
    })
  }

  /** One more failed step; `attempt` and `backoffMs` are the loop's. */
  failed (err: unknown, attempt: number, backoffMs: number): void {
    this.#streak.failed(err, { attempt, backoffMs })
  }

  succeeded (): void {
    this.#streak.succeeded()
  }

  current (): StepFailure | null {
    const streak = this.#streak.current()
    if (streak === null) return null
    return { code: streak.code, message: streak.message, since: new Date(streak.since).toISOString(), attempts: streak.attempts }
  }
}
