/**
 * The source→target offset mapping of one partition, kept as the starts of its runs, and exact translation
 * in both directions (failover: source → target; failback: target → source).
 *
 * A run is a stretch of copied records whose source and target offsets both advance by one. A new run starts
 * wherever the difference changes: a gap upstream (transaction markers, aborted records, compaction), a gap or
 * rewind downstream, a restart that re-copied records. Storage is one entry per run start: proportional to
 * discontinuities, not to records (one entry ever for a plain topic copied once).
 *
 * Invariants:
 * - Entries are sorted by upstream offset and by downstream offset.
 *   A re-copy after a crash starts a new run at an upstream offset already covered; it replaces every entry
 *   at or after that upstream offset, because the newest copy is where consumers of the target read. A copy into
 *   a remote topic created again (target offsets from 0 again) replaces every entry at or after its downstream
 *   offset: those map into a topic that is gone.
 * - `replicatedEnd` (source) and `targetEnd` (target) are one past the last copied record; translation past
 *   them is not exact.
 *
 * Worked example. Source offsets 0..4 copied to 0..4, a commit marker at 5, records 6..9 copied to 5..8:
 *   entries (0→0), (6→5); replicatedEnd 10, targetEnd 9.
 *   translate(3) = 0 + (3 - 0) = 3            exact: the consumer resumes at source record 3 = target record 3
 *   translate(5) = min(0 + 5, next.down 5) = 5 exact: offset 5 is the marker, the next record is 6 → target 5
 *   translate(8) = 5 + (8 - 6) = 7            exact
 *   translate(10) = targetEnd 9               exact: everything before it was copied
 *   translate(12) = 9, not exact              beyond what was replicated: never skip, say so
 */
export interface RunStart {
  readonly upstream: number
  readonly downstream: number
  /** Records in the run, once the next run started; undefined while it is open (or its end is unknown). */
  readonly length?: number
}

export interface Translation {
  readonly offset: number
  /** True when a consumer resuming at `offset` re-reads nothing and skips nothing. */
  readonly exact: boolean
  /** Why it is not exact, for the user. */
  readonly reason?: string
  /**
   * True when the offset is the history's first run start for an offset before it: the records between are not in
   * the history (copied by another tool, or before a hand-over), so a consumer resuming there may skip records
   * that are on the other side. A move by it is a skip of unknown size.
   */
  readonly maySkip?: true
}

export class PartitionOffsetHistory {
  #runs: RunStart[] = []
  #replicatedEnd = -1
  #targetEnd = -1
  /** The replication position: source offsets below it were read; those past the last copied record are gaps. */
  #consumedEnd = -1

  /** Run starts, oldest first. */
  get runs (): readonly RunStart[] {
    return this.#runs
  }

  get replicatedEnd (): number {
    return this.#replicatedEnd
  }

  get targetEnd (): number {
    return this.#targetEnd
  }

  /**
   * Adds the first record of a run; returns the runs it replaces (none, unless it is a re-copy). A run start at or
   * before the last one is a re-copy of the source (after a crash or a rewind, or a source topic created again);
   * one at or below the last run's target offset writes target offsets again (a remote topic created again, a
   * target log truncated): every run from its source offset on, or from its target offset on, is replaced.
   * Feeding a record that merely continues a run as a run start is harmless (it splits a run in two with the same
   * difference); missing a run start is not.
   */
  addRunStart (upstream: number, downstream: number, previousUpstream = -1): RunStart[] {
    let last = this.#runs.at(-1)
    let replaced: RunStart[] = []
    if (last !== undefined && (upstream <= last.upstream || downstream <= last.downstream)) {
      const kept = this.#runs.filter(r => r.upstream < upstream && r.downstream < downstream)
      replaced = this.#runs.filter(r => !(r.upstream < upstream && r.downstream < downstream))
      this.#runs = kept
      last = this.#runs.at(-1)
    }
    if (last !== undefined && last.length === undefined && previousUpstream >= last.upstream && previousUpstream < upstream) {
      // The run before ended at `previousUpstream`: offsets after it and before `upstream` are a gap.
      this.#runs[this.#runs.length - 1] = { ...last, length: previousUpstream - last.upstream + 1 }
    }
    this.#runs.push({ upstream, downstream })
    this.#replicatedEnd = upstream + 1
    this.#targetEnd = downstream + 1
    return replaced
  }

  /** Records that the current run continues: every source offset below `upstreamEnd` was copied, up to `targetEnd`. */
  markReplicatedTo (upstreamEnd: number, targetEnd: number): void {
    if (upstreamEnd >= this.#replicatedEnd) {
      this.#replicatedEnd = upstreamEnd
      this.#targetEnd = Math.max(this.#targetEnd, targetEnd)
    }
  }

  /**
   * Records the replication position (the next source offset to read). Offsets from the last copied record
   * up to it were read and held nothing to copy (markers, aborted records), so they translate exactly to the
   * target end.
   */
  markConsumedTo (upstreamEnd: number): void {
    this.#consumedEnd = Math.max(this.#consumedEnd, upstreamEnd)
  }

  /**
   * Forgets runs entirely below `logStart` of the source (retention), keeping the last one that starts at or
   * below it, which still translates offsets from `logStart` on.
   */
  trimBelow (logStart: number): number {
    let keepFrom = 0
    for (let i = 0; i < this.#runs.length; i++) if (this.#runs[i]!.upstream <= logStart) keepFrom = i
    const removed = keepFrom
    if (removed > 0) this.#runs = this.#runs.slice(keepFrom)
    return removed
  }

  /** Source offset (a committed position: the next record to read) → target offset. */
  toTarget (committed: number): Translation {
    const runs = this.#runs
    if (runs.length === 0) return { offset: -1, exact: false, reason: 'nothing of this partition has been replicated yet' }
    if (committed < runs[0]!.upstream) {
      return { offset: runs[0]!.downstream, exact: false, reason: `source offset ${committed} is before the first replicated offset ${runs[0]!.upstream}`, maySkip: true }
    }
    if (committed >= this.#replicatedEnd) {
      const end = Math.max(this.#replicatedEnd, this.#consumedEnd)
      const exact = committed <= end
      return exact ? { offset: this.#targetEnd, exact } : { offset: this.#targetEnd, exact, reason: `source offset ${committed} is beyond what has been replicated (up to ${end})` }
    }
    const i = lastIndexAtOrBefore(runs, committed, r => r.upstream)
    const run = runs[i]!
    const next = runs[i + 1]
    const nextDownstream = next?.downstream ?? this.#targetEnd
    const within = committed - run.upstream
    // Inside the run: the record's own target offset. In the gap after it: the next run's first record.
    if (within < (run.length ?? Number.POSITIVE_INFINITY)) return { offset: Math.min(run.downstream + within, nextDownstream), exact: true }
    return { offset: nextDownstream, exact: true }
  }

  /** Target offset (a committed position on the target) → source offset, for failback. */
  toSource (committed: number): Translation {
    const runs = this.#runs
    if (runs.length === 0) return { offset: -1, exact: false, reason: 'nothing of this partition has been replicated yet' }
    if (committed < runs[0]!.downstream) {
      return { offset: runs[0]!.upstream, exact: false, reason: `target offset ${committed} is before the first replicated record (target offset ${runs[0]!.downstream})`, maySkip: true }
    }
    if (committed >= this.#targetEnd) {
      const exact = committed === this.#targetEnd
      return exact ? { offset: this.#replicatedEnd, exact } : { offset: this.#replicatedEnd, exact, reason: `target offset ${committed} is beyond the replicated records (up to ${this.#targetEnd})` }
    }
    const i = lastIndexAtOrBefore(runs, committed, r => r.downstream)
    const run = runs[i]!
    const next = runs[i + 1]
    const runLength = run.length ?? ((next?.downstream ?? this.#targetEnd) - run.downstream)
    const within = committed - run.downstream
    // Inside a run a target record maps to exactly one source record; past the run's end (a gap on the
    // target, e.g. records of another producer) the next source record is the next run's first.
    const nextUpstream = next?.upstream ?? this.#replicatedEnd
    return within < runLength ? { offset: Math.min(run.upstream + within, nextUpstream), exact: true } : { offset: nextUpstream, exact: true }
  }
}

/** Index of the last element whose key is at or below `value`; the array is sorted by that key and not empty. */
function lastIndexAtOrBefore<T> (items: readonly T[], value: number, key: (item: T) => number): number {
  let lo = 0
  let hi = items.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (key(items[mid]!) <= value) lo = mid
    else hi = mid - 1
  }
  return lo
}
