/** The runs of a partition as the offset history topic holds them (offset-history-store.ts reads them into these). */

/** A stored run, keyed (in its map) by its first source offset. */
export interface StoredRun {
  downstream: number
  length: number
  open: boolean
  /** Offset of the run's latest record in the history topic. */
  at: number
  /** Offset of the run's latest start record (open, length 1) in the history topic; -1 once compacted away. */
  startedAt: number
  /** The source topic id the run was copied from, when its record names one. */
  sourceTopicId?: string
}

/**
 * The stored run starts of one partition that belong to its newest copy, sorted. Within one copy a run starts
 * after every record of the runs before it, so a run V whose latest record is older than the start record of
 * some U < V was replaced by a re-copy from U. `append` deletes such runs (tombstones in the re-copy's batch);
 * this leaves out the ones earlier kmirror versions left behind, as long as the re-copy's start record is in the
 * topic (compaction keeps only the latest record of U once the log cleaner reaches it). A re-copy into a remote
 * topic created again needs no such trace: its run starts below the old runs' target offsets (`addRunStart`).
 */
export function currentRunStarts (byStart: ReadonlyMap<number, StoredRun>): number[] {
  const starts = [...byStart.keys()].sort((a, b) => a - b)
  const kept: number[] = []
  let newestStartBelow = -1
  for (const upstream of starts) {
    const run = byStart.get(upstream)!
    if (run.at > newestStartBelow) kept.push(upstream)
    newestStartBelow = Math.max(newestStartBelow, run.startedAt)
  }
  return kept
}
