/**
 * Decides when a partition needs an offset sync (MM2's OffsetSyncWriter rules, made exact).
 *
 * Invariants, per partition:
 * - A sync is due on the first record of this process's lifetime, whenever the source-to-target offset
 *   difference changes (a gap upstream from markers, aborted data or compaction; a gap or rewind downstream),
 *   and when the target has run `offset.lag.max` records past the last sync (MM2 rule 2).
 * - Because every change of the difference produces a sync, `target = sync.target + (source - sync.source)`
 *   is exact for any source offset between two syncs. Syncs grow with discontinuities, not with records.
 * - Due syncs are queued in order and never coalesced: MM2 keeps only the newest pending sync per partition,
 *   which would drop a difference change when a later sync of the same partition is queued before the send.
 * - A record that is not due is kept as "delayed" (the newest per partition); `promoteDelayed` turns those into
 *   pending syncs at each progress flush so quiet partitions still get a sync for their latest record.
 * - Records are fed only after the target acknowledged them, so no sync ever points at unwritten data.
 *
 * Worked example (offset.lag.max=100): (0→0) due, first | (1→1) not due | (3→2) due, upstream skipped a
 * marker at 2 | (4→3) not due | (5→3) impossible: the target never reuses an offset.
 */
export interface OffsetSyncEntry {
  readonly topic: string
  readonly partition: number
  readonly upstreamOffset: number
  readonly downstreamOffset: number
  /**
   * True when this record starts a new run (first record, or a gap or rewind on either side): the exact
   * offset history needs exactly these. False for syncs that only continue a run (offset.lag.max, flushes).
   */
  readonly runStart: boolean
  /** For a run start: source offset of the last record of the run before it in this process; otherwise -1. */
  readonly previousUpstream: number
  /** For a run start: the id of the source topic its record was fetched from, when the source gave one (offset history). */
  readonly sourceTopicId?: string
}

interface PartitionState {
  previousUpstream: number
  previousDownstream: number
  lastSyncDownstream: number
}

export class OffsetSyncTracker {
  readonly #offsetLagMax: number
  readonly #states = new Map<string, PartitionState>()
  #pending: OffsetSyncEntry[] = []
  /** Bumped by `dropAll`: syncs taken before it are not put back (`requeue`). */
  #epoch = 0
  readonly #delayed = new Map<string, OffsetSyncEntry>()

  constructor (offsetLagMax: number) {
    this.#offsetLagMax = offsetLagMax
  }

  /**
   * Feeds one acknowledged record: `upstream` is its source offset, `downstream` its target offset, SOURCE_TOPIC_ID
   * the id of the source topic it was fetched from (when the source gave one).
   */
  record (key: string, topic: string, partition: number, upstream: number, downstream: number, sourceTopicId?: string): void {
    let state = this.#states.get(key)
    if (state === undefined) {
      state = { previousUpstream: -1, previousDownstream: -1, lastSyncDownstream: -1 }
      this.#states.set(key, state)
    }
    const runStart = state.lastSyncDownstream === -1 ||
      upstream - state.previousUpstream !== 1 ||
      downstream - state.previousDownstream !== 1
    const due = runStart || downstream - (state.lastSyncDownstream + 1) >= this.#offsetLagMax
    const previousUpstream = state.previousUpstream
    state.previousUpstream = upstream
    state.previousDownstream = downstream
    const entry: OffsetSyncEntry = runStart
      ? { topic, partition, upstreamOffset: upstream, downstreamOffset: downstream, runStart, previousUpstream, ...(sourceTopicId === undefined ? {} : { sourceTopicId }) }
      : { topic, partition, upstreamOffset: upstream, downstreamOffset: downstream, runStart, previousUpstream: -1 }
    if (due) {
      state.lastSyncDownstream = downstream
      this.#pending.push(entry)
      this.#delayed.delete(key)
    } else {
      this.#delayed.set(key, entry)
    }
  }

  /**
   * Feeds a run of acknowledged records whose source and target offsets both advance by one: only its first
   * and last records can be due, so the run costs two updates instead of one per record.
   */
  recordRun (key: string, topic: string, partition: number, firstUpstream: number, firstDownstream: number, count: number, sourceTopicId?: string): void {
    if (count <= 0) return
    if (this.#offsetLagMax <= 0) {
      // offset.lag.max = 0 asks for a sync at every record, as MM2 does; MM2's checkpoint task relies on that.
      for (let i = 0; i < count; i++) this.record(key, topic, partition, firstUpstream + i, firstDownstream + i, sourceTopicId)
      return
    }
    this.record(key, topic, partition, firstUpstream, firstDownstream, sourceTopicId)
    if (count < 2) return
    const state = this.#states.get(key)!
    const lastUpstream = firstUpstream + count - 1
    const lastDownstream = firstDownstream + count - 1
    // Rule 2 may fire inside the run: emit the record where the lag first reaches offset.lag.max.
    while (lastDownstream - (state.lastSyncDownstream + 1) >= this.#offsetLagMax) {
      const downstream = state.lastSyncDownstream + 1 + this.#offsetLagMax
      if (downstream >= lastDownstream) break
      const upstream = firstUpstream + (downstream - firstDownstream)
      state.previousUpstream = upstream - 1
      state.previousDownstream = downstream - 1
      this.record(key, topic, partition, upstream, downstream, sourceTopicId)
    }
    state.previousUpstream = lastUpstream - 1
    state.previousDownstream = lastDownstream - 1
    this.record(key, topic, partition, lastUpstream, lastDownstream, sourceTopicId)
  }

  /** Removes and returns the syncs that must be written now, in the order they became due. */
  takePending (): OffsetSyncEntry[] {
    const out = this.#pending
    this.#pending = []
    return out
  }

  /** Where `requeue` must be told the syncs were taken: `epoch` at `takePending`. */
  get epoch (): number {
    return this.#epoch
  }

  /**
   * Puts back syncs whose write failed, ahead of newer ones, so no difference change is ever dropped; not those
   * taken before a `dropAll` (TAKEN_AT: `epoch` when they were taken).
   */
  requeue (entries: readonly OffsetSyncEntry[], takenAt = this.#epoch): void {
    if (takenAt !== this.#epoch) return
    this.#pending = [...entries, ...this.#pending]
  }

  /**
   * Membership lost (at-least-once mode): every partition went to other owners, so no sync of them may be written
   * any more: pending and delayed ones are dropped, and those in a write under way are not put back if it fails.
   */
  dropAll (): void {
    this.#pending = []
    this.#delayed.clear()
    this.#epoch++
  }

  /** At a progress flush: the newest non-due record of each partition becomes a pending sync (MM2's commit()). */
  promoteDelayed (): void {
    for (const entry of this.#delayed.values()) this.#pending.push(entry)
    this.#delayed.clear()
  }

  /** Forgets every delayed sync (exactly-once mode, after an aborted round: they may point at aborted offsets). */
  dropDelayed (): void {
    this.#delayed.clear()
  }

  /** Forgets a partition, e.g. after its position was reset: its next record starts a new run. */
  reset (key: string): void {
    this.#states.delete(key)
  }

  get pendingCount (): number {
    return this.#pending.length
  }
}
