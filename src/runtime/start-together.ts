/**
 * Starting several flows at once. Each flow's start waits for its group's first assignment, which waits out a
 * rebalance (up to the session timeout when a dead member is still in the group): started one after another,
 * N flows would add N such waits; started together, start-up takes the longest one.
 */

export interface StartFailure {
  readonly index: number
  readonly error: unknown
}

/**
 * Runs `start(i, signal)` for every i in [0, COUNT) at once and resolves once every start settled, with the first
 * failure in time (undefined when all started). That failure aborts the signal the other starts got, so they end
 * without waiting for their first assignment; so does STOP (kmirror asked to stop), whose abort is no failure of
 * its own: the caller checks `stop.aborted`.
 */
export async function startTogether (
  count: number,
  start: (index: number, signal: AbortSignal) => Promise<void>,
  stop: AbortSignal
): Promise<StartFailure | undefined> {
  const failed = new AbortController()
  const signal = AbortSignal.any([stop, failed.signal])
  let first: StartFailure | undefined
  await Promise.allSettled(Array.from({ length: count }, async (_, index) => {
    try {
      await start(index, signal)
    } catch (error) {
      // A start ended by another's failure (or by stop) does not replace the failure that ended it.
      if (first === undefined && !failed.signal.aborted && !stop.aborted) first = { index, error }
      failed.abort(error)
    }
  }))
  return first
}
