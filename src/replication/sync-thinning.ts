/**
 * Which queued MM2 offset syncs to keep when too many wait to be written (sync-outbox.ts). MM2 translates a group
 * offset from the newest sync at or below it (upstream), adding at most one. Within a stretch where both offsets of
 * a partition's syncs only grow, any subset still translates safely: a missing sync only sends consumers back to an
 * older one (they re-read, never skip). A sync that goes back on either side (a remote topic created again, its
 * copy restarted at downstream 0; a source topic re-created) is what tells MM2 to forget the syncs before it:
 * dropped, MM2 would translate the offsets after it from the older, higher syncs and skip records. So, in order of
 * worth:
 * - never dropped: each partition's first queued sync (it may go back against what was written before) and every
 *   sync lower on either side than the one queued before it, and each partition's newest sync (the group offsets of
 *   consumers keeping up translate to it);
 * - the starts of runs (a gap on either side: where the source-to-target difference changes), as long as the
 *   target leaves room;
 * - every second one of the rest, per partition, so what is kept stays spread over the offsets.
 * Order is kept: the outcome is a subsequence of the input.
 */
import type { OffsetSyncEntry } from './offset-sync-tracker.ts'

/**
 * ENTRIES thinned by halving, per partition, until at most TARGET remain or nothing more can go. Run starts go only
 * once the other syncs could not bring the count down to TARGET; rewinds and each partition's first and newest never.
 */
export function thinSyncs (entries: readonly OffsetSyncEntry[], target: number): OffsetSyncEntry[] {
  const kept = new Set(rewinds(entries))
  let left = [...entries]
  for (const keepRunStarts of [true, false]) {
    while (left.length > target) {
      const halved = halve(left, e => kept.has(e) || (keepRunStarts && e.runStart))
      if (halved.length === left.length) break
      left = halved
    }
  }
  return left
}

/** The syncs that may go back against what came before them: each partition's first, and each lower than the one before. */
function rewinds (entries: readonly OffsetSyncEntry[]): OffsetSyncEntry[] {
  const before = new Map<string, OffsetSyncEntry>()
  const found: OffsetSyncEntry[] = []
  for (const e of entries) {
    const key = partitionKey(e)
    const previous = before.get(key)
    if (previous === undefined || e.upstreamOffset < previous.upstreamOffset || e.downstreamOffset < previous.downstreamOffset) found.push(e)
    before.set(key, e)
  }
  return found
}

function halve (entries: readonly OffsetSyncEntry[], protect: (e: OffsetSyncEntry) => boolean): OffsetSyncEntry[] {
  const newest = new Map<string, number>()
  entries.forEach((e, i) => newest.set(partitionKey(e), i))
  const seen = new Map<string, number>()
  return entries.filter((e, i) => {
    const key = partitionKey(e)
    if (newest.get(key) === i || protect(e)) return true
    const n = seen.get(key) ?? 0
    seen.set(key, n + 1)
    // The older of each pair goes: what is kept leans to the newer offsets, which groups are likelier to be at.
    return n % 2 === 1
  })
}

function partitionKey (e: OffsetSyncEntry): string {
  return `${e.partition}:${e.topic}`
}
