/**
 * How a group member's join loop (group-member.ts) waits after a round failed for a retriable cause, and how loudly
 * it says so.
 *
 * Invariants:
 * - The wait is 250 ms after the first failure, doubled after each further one, at most MAX_BACKOFF_MS; a round that
 *   goes through starts over.
 * - A coordinator moving or loading its partition (every new group on a fresh cluster, every leader move) is
 *   routine: logged at info until the failures last a session timeout, a warning from then on. Every other cause
 *   is a warning at once.
 */
import type { KmirrorError } from '../errors.ts'
import { isCoordinatorTransient } from './errors.ts'

const MIN_BACKOFF_MS = 250
const MAX_BACKOFF_MS = 10_000

export interface JoinRetry {
  /** How long to wait before the next round. */
  readonly retryInMs: number
  /** Whether the failure is routine (logged at info) rather than a warning. */
  readonly routine: boolean
}

export class JoinBackOff {
  readonly #sessionTimeoutMs: number
  #backoff = 0
  /** When the failures in a row began; null after a round went through. */
  #failingSince: number | null = null

  constructor (sessionTimeoutMs: number) {
    this.#sessionTimeoutMs = sessionTimeoutMs
  }

  /** A round went through (or a nap passed): the next failure starts over. */
  reset (): void {
    this.#backoff = 0
    this.#failingSince = null
  }

  /** A round failed for the retriable ERROR: how long to wait, and how loudly to say so. */
  failed (error: KmirrorError): JoinRetry {
    this.#backoff = Math.min(Math.max(this.#backoff * 2, MIN_BACKOFF_MS), MAX_BACKOFF_MS)
    this.#failingSince ??= Date.now()
    const routine = isCoordinatorTransient(error) && Date.now() - this.#failingSince < this.#sessionTimeoutMs
    return { retryInMs: this.#backoff, routine }
  }
}
