/**
 * A task whose runs never overlap: a call made while a run is under way starts once that run has ended, whatever
 * its outcome (a failed run never blocks the next). For state that a run reads, awaits and then writes back (the
 * topic refresh's remembered topics and absences), where two runs at once would each see the other's half. Each call's
 * arguments go to its own run.
 */
export function oneAtATime<A extends unknown[]> (task: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let previous: Promise<void> = Promise.resolve()
  return async (...args: A) => {
    const run = previous.then(async () => { await task(...args) })
    previous = run.catch(() => undefined)
    return await run
  }
}
