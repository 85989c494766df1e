/**
 * Asking again after a retriable failure, for a bounded time: for start-up steps that a cluster still settling
 * refuses for a moment (a fresh target answers COORDINATOR_NOT_AVAILABLE while it creates its offsets topic) and
 * that are worth doing early, not at any price.
 *
 * Invariants:
 * - Only retriable failures (`isRetriable`) are asked again; any other is thrown at once.
 * - No attempt starts after PATIENCE_MS from the first; the last failure is thrown then.
 * - Pauses grow 100, 200, 400 ms, then 500 ms apart; none starts once the caller says it is stopping.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { isRetriable } from './errors.ts'

export interface RetryOptions {
  /** Asked before each pause: true throws the last failure at once (the caller is stopping). */
  readonly stopped?: () => boolean
  readonly now?: () => number
}

export async function retryRetriable<T> (fn: () => Promise<T>, patienceMs: number, options: RetryOptions = {}): Promise<T> {
  const now = options.now ?? Date.now
  const deadline = now() + patienceMs
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn()
    } catch (err) {
      const pauseMs = Math.min(500, 100 * 2 ** attempt)
      if (!isRetriable(err) || now() + pauseMs > deadline || options.stopped?.() === true) throw err
      // Unreferenced: a pause never keeps a stopping process alive.
      await delay(pauseMs, undefined, { ref: false })
    }
  }
}
