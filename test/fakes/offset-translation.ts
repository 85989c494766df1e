/**
 * Reference translation over a list of offset syncs, to check that the syncs kmirror emits are enough for
 * exact translation. These are test oracles, not the checkpoint code.
 */

export interface SyncPoint {
  readonly upstreamOffset: number
  readonly downstreamOffset: number
}

/**
 * The syncs that still count, in upstream order, after replaying them in the order they were sent:
 * a sync whose upstream offset is at or below earlier ones (a rewind: records re-sent after a retry or
 * a restart) supersedes them, as the newer copy is the one a consumer should resume in.
 */
export function effectiveSyncs (sent: readonly SyncPoint[]): SyncPoint[] {
  const kept: SyncPoint[] = []
  for (const sync of sent) {
    while (kept.length > 0 && kept[kept.length - 1]!.upstreamOffset >= sync.upstreamOffset) kept.pop()
    kept.push(sync)
  }
  return kept
}

/** Index of the newest sync with upstream <= `upstream` in an upstream-ordered list, or -1. */
function floorIndex (syncs: readonly SyncPoint[], upstream: number): number {
  let lo = 0
  let hi = syncs.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (syncs[mid]!.upstreamOffset <= upstream) {
      found = mid
      lo = mid + 1
    } else {
      hi = mid - 1
    }
  }
  return found
}

/** design-notes §1's rule: `S.target + (C - S.source)` with S the newest sync at or before C; undefined before any sync. */
export function translateByStep (syncs: readonly SyncPoint[], upstream: number): number | undefined {
  const i = floorIndex(syncs, upstream)
  if (i < 0) return undefined
  return syncs[i]!.downstreamOffset + (upstream - syncs[i]!.upstreamOffset)
}

/**
 * The step rule, capped by the next sync's target offset. A committed offset inside an upstream gap wider
 * than one offset (an aborted transaction, a compacted range) must map to the next copied record, which is
 * exactly where the next sync is (every gap makes one).
 */
export function translateClamped (syncs: readonly SyncPoint[], upstream: number): number | undefined {
  const i = floorIndex(syncs, upstream)
  if (i < 0) return undefined
  const step = syncs[i]!.downstreamOffset + (upstream - syncs[i]!.upstreamOffset)
  const next = syncs[i + 1]
  return next === undefined ? step : Math.min(step, next.downstreamOffset)
}
