/**
 * A promise raced against a timer, the one way kmirror bounds a wait it cannot cancel: the work goes on (its own
 * requests end at their own timeouts), the caller stops waiting for it. The timer is always cleared, so a bounded
 * wait never keeps the process alive after the work settled.
 */

/** WORK's outcome, or the error LATE makes once MS passed (MS below 0 counts as 0). */
export async function rejectAfter<T> (work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(late()), Math.max(0, ms)) })
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/** WORK's outcome, or LATE once MS passed (MS below 0 counts as 0). Rejects only as WORK does. */
export async function resolveAfter<T, L> (work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<L>(resolve => { timer = setTimeout(() => resolve(late), Math.max(0, ms)) })
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}
