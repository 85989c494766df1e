/**
 * Which queued MM2 offset syncs to keep when too many wait to be written (sync-outbox.ts). MM2 translates a group
 * offset from the newest sync at or below it, so any subset of the syncs still translates safely: a missing sync
 * only sends consumers back to an older one (they re-read, never skip). What is kept, in order of worth:
 * - each partition's newest sync (the group offsets of consumers keeping up translate to it);
 * - the starts of runs (a gap or rewind on either side: where the source-to-target difference changes, so the syncs
 *   after it cannot stand in for it), as long as the target leaves room;
 * - every second one of the rest, per partition, so what is kept stays spread over the offsets.
 * Order is kept: the outcome is a subsequence of the input.
 */
import type { OffsetSyncEntry } from './offset-sync-tracker.ts'

/**
 * ENTRIES thinned by halving, per partition, until at most TARGET remain or nothing more can go (every partition
 * down to its newest sync). Run starts go only once the other syncs could not bring the count down to TARGET.
 */
export function thinSyncs (entries: readonly OffsetSyncEntry[], target: number): OffsetSyncEntry[] {
  let kept = [...entries]
  for (const keepRunStarts of [true, false]) {
    while (kept.length > target) {
      const halved = halve(kept, keepRunStarts)
      if (halved.length === kept.length) break
      kept = halved
    }
  }
  return kept
}

function halve (entries: readonly OffsetSyncEntry[], keepRunStarts: boolean): OffsetSyncEntry[] {
  const newest = new Map<string, number>()
  entries.forEach((e, i) => newest.set(partitionKey(e), i))
  const seen = new Map<string, number>()
  return entries.filter((e, i) => {
    const key = partitionKey(e)
    if (newest.get(key) === i || (keepRunStarts && e.runStart)) return true
    const n = seen.get(key) ?? 0
    seen.set(key, n + 1)
    // The older of each pair goes: what is kept leans to the newer offsets, which groups are likelier to be at.
    return n % 2 === 1
  })
}

function partitionKey (e: OffsetSyncEntry): string {
  return `${e.partition}:${e.topic}`
}
