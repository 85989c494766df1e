/**
 * A task whose runs never overlap: a call made while a run is under way starts once that run has ended, whatever
 * its outcome (a failed run never blocks the next). For state that a run reads, awaits and then writes back (the
 * topic refresh's remembered topics and absences), where two runs at once would each see the other's half.
 */
export function oneAtATime (task: () => Promise<void>): () => Promise<void> {
  let previous: Promise<void> = Promise.resolve()
  return async () => {
    const run = previous.then(task)
    previous = run.catch(() => undefined)
    return await run
  }
}
