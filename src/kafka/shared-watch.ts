/**
 * A process-wide watch (one subscription to the client library's diagnostics, one timer) however many callers use
 * it: started by the first, stopped when the last releases it (several MirrorMakers in one process share it).
 *
 * Invariants: `start` runs once per run of the watch; releasing twice counts once; a watch stopped and used again
 * starts afresh.
 */

/** The function each user calls to use the watch STARTed on demand; it returns that user's release. */
export function sharedWatch (start: () => () => void): () => () => void {
  let shared: { readonly stop: () => void, users: number } | null = null
  return () => {
    shared ??= { stop: start(), users: 0 }
    const current = shared
    current.users++
    let released = false
    return () => {
      if (released) return
      released = true
      if (--current.users === 0 && shared === current) {
        current.stop()
        shared = null
      }
    }
  }
}
