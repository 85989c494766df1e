/**
 * What a fetch-and-write round's answers and writes say of each partition of flow-replicator.ts: advanced, left out
 * for a moment, set aside (source or target refusal), held (remote topic created again), or out of range.
 *
 * Invariants:
 * - Every partition that was written advances before any recovery that may throw: a partition whose records are
 *   acknowledged is never left at its old position (they would be written twice).
 * - A partition the target could not take yet (no leader, remote topic still loading) or refused stays where its
 *   acknowledged batches took it; one not taken yet is parked (target-wait.ts): left out of the fetch rounds until
 *   the target is ready for it, so it neither holds up the others nor is read from the source again and again.
 * - Synchronous: no await between the fetch and here, so the loops over every partition run as one optimised
 *   function.
 */
import { FetchOutcomes, type FetchedBatches } from '../kafka/record-fetcher.ts'
import { FailureSides, type PartitionFailures } from './partition-failures.ts'
import type { PartitionState } from './partition-set.ts'
import { REMOTE_TOPIC_RECREATED, type RecreatedRemotes } from './recreated-remotes.ts'
import type { RoundWriter, RoundWriteResult } from './round-writer.ts'
import type { SourceWaits } from './source-waits.ts'
import type { TargetWait } from './target-wait.ts'

/** A round where every partition was written, or had nothing to write. */
const NONE_WAITING: ReadonlySet<FetchedBatches> = new Set()

export interface RoundOutcomeDeps {
  /** The state of a partition fetched this round (it leaves the set only between rounds). */
  readonly state: (f: { topic: string, partition: number }) => PartitionState
  readonly failing: PartitionFailures
  readonly writer: Pick<RoundWriter, 'refused'>
  readonly recreated: Pick<RecreatedRemotes, 'hold'>
  readonly waiting: Pick<TargetWait, 'park' | 'settled' | 'anyWaiting'>
  /** The partitions the source gives nothing of (source-waits.ts). */
  readonly unread: Pick<SourceWaits, 'note' | 'holdOf' | 'overdue'>
}

export class RoundOutcome {
  readonly #deps: RoundOutcomeDeps

  constructor (deps: RoundOutcomeDeps) {
    this.#deps = deps
  }

  /**
   * Settles every partition of the round (see the invariants). Returns the partitions out of range. FENCED: the
   * incomplete ones were not offered to the target at all (the lease gate was closed), so none is parked.
   */
  settle (fetched: readonly FetchedBatches[], incomplete: readonly FetchedBatches[], failed: RoundWriteResult['failed'], fenced = false): FetchedBatches[] {
    const waiting: ReadonlySet<FetchedBatches> = incomplete.length + failed.length === 0 ? NONE_WAITING : new Set([...incomplete, ...failed.map(r => r.fetched)])
    const tracking = incomplete.length > 0 || this.#deps.waiting.anyWaiting
    const parked: ReadonlySet<FetchedBatches> = incomplete.length === 0 ? NONE_WAITING : new Set(incomplete)
    const now = Date.now()
    for (const f of fetched) {
      const state = this.#advance(f, !waiting.has(f))
      this.#deps.unread.note(f, state, now)
      // A wait ends when the target took the partition, refused it or had nothing to take; a fetch that read
      // nothing (RETRY, out of range) says nothing about the target.
      if (tracking && !parked.has(f) && (f.outcome === FetchOutcomes.OK || f.outcome === FetchOutcomes.FAILED)) this.#deps.waiting.settled(state)
    }
    if (incomplete.length > 0 && !fenced) this.#deps.waiting.park(incomplete.map(f => this.#deps.state(f)))
    for (const r of failed) {
      if (r.failure.error === REMOTE_TOPIC_RECREATED) this.#deps.recreated.hold(this.#deps.state(r.fetched))
      else this.#deps.writer.refused(r.fetched, r.failure)
    }
    const outOfRange: FetchedBatches[] = []
    for (const f of fetched) {
      this.#noteFetchOutcome(f, waiting, now)
      if (f.outcome === FetchOutcomes.OUT_OF_RANGE) outOfRange.push(f)
    }
    return outOfRange
  }

  /** Sets aside a partition the source refused; logs the recovery of one that was read and written again. */
  #noteFetchOutcome (f: FetchedBatches, notWritten: ReadonlySet<FetchedBatches>, now: number): void {
    const state = this.#deps.state(f)
    if (f.outcome === FetchOutcomes.FAILED && f.failure !== undefined) {
      state.retryAt = this.#deps.failing.fail(state.key, state, { side: FailureSides.SOURCE, ...f.failure })
    } else if (f.outcome === FetchOutcomes.OK && !notWritten.has(f)) {
      // An answer of a partition an open transaction holds does not end the report of that hold (partition-failures.ts),
      // nor, when the hold is to be listed at the next round, the report that stands until then.
      if (!this.#deps.unread.overdue(state, now)) this.#deps.failing.recover(state.key, state, this.#deps.unread.holdOf(state)?.at)
    }
  }

  /**
   * The source's high watermark is taken from every fetch, written or not: a partition waiting for the target shows
   * its lag growing, never a stale 0. An answer without one (RETRY, or left out of a fetch session's answer) keeps the
   * last: a RETRY wait past STALE_WAIT_MS shows the lag unknown instead (source-waits.ts `staleSince`). Its position
   * moves only when `written`.
   */
  #advance (f: FetchedBatches, written: boolean): PartitionState {
    const state = this.#deps.state(f)
    if (f.highWatermark >= 0) state.highWatermark = f.highWatermark
    if (written && f.outcome === FetchOutcomes.OK) state.position = Math.max(state.position, f.nextOffset)
    return state
  }
}
