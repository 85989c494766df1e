/**
 * Partitions the source has given nothing of, round after round, though it refused nothing: no leader (its broker
 * down, no replica in sync), a leader out of reach (leader-outages.ts), a leader answering NOT_LEADER_OR_FOLLOWER
 * for long (`due`: waits); or held by a transaction open on the source (`holdsDue`: read read_committed, the leader
 * gives nothing past the last stable offset, and a transaction its coordinator lost track of never ends). The other
 * partitions keep completing rounds, so neither the stall detector nor a failed step would tell of them; past their
 * threshold each is reported failing (partition-failures.ts `unreadable`, `held`): a warning, `/status`,
 * `/healthz`, `kmirror_failing_partitions`.
 *
 * Invariants:
 * - A wait lasts from the first round that fetched the partition and got RETRY until a round gets anything else
 *   for it (records or none, a refusal, out of range), or it leaves the flow (lost, released, its topic removed).
 *   A partition whose topic the source no longer has does not wait (TOPIC_GONE).
 * - A hold (read_committed only) lasts from the first answer, with records or without, after which the last stable
 *   offset is at or below the position and the high watermark above it, at that last stable offset, until an
 *   answer that says otherwise (another last stable offset, nothing past the position), out of range, or the
 *   partition leaves the flow. An answer with records counts: the one that brings the position up to the
 *   last stable offset is often the last answer of the partition an incremental fetch session gives (a broker
 *   leaves a partition out while its records, high watermark and log start do not change; a last stable offset
 *   that does not move is no change). Answers that leave the partition out, RETRY answers (a broker throttling,
 *   late, moving leadership) and refusals say nothing of the transaction: they keep it and its clock.
 * - A hold is listed only while it is confirmed: not while the partition also waits (RETRY) or backs off after a
 *   refusal, since nothing then says the transaction is still open; the first OK answer that finds it still held
 *   lists it, if it is due by then (`overdue` tells the data path so, so that answer does not end the report that
 *   stands as a recovery).
 * - Each wait and each hold is listed once; its end is logged by `PartitionFailures.recover` when the partition is
 *   copied again.
 * - A wait of at least two rounds and STALE_WAIT_MS makes the partition's lag unknown (`staleSince`) until the answer
 *   that ends it: the high watermark kmirror has of it is that of its last answer.
 * - Cheap when nothing waits: a size check or two per partition and round.
 */
import { FetchOutcomes, type FetchedBatches, type RetryReason } from '../kafka/record-fetcher.ts'
import type { PartitionState } from './partition-set.ts'

/**
 * A topic the source does not have any more is the topic refresh's to tell (deleted: logged and counted, its
 * partitions dropped from the flow), never a failing partition.
 */
const TOPIC_GONE = 'UNKNOWN_TOPIC_OR_PARTITION'
/** Why, when the fetcher did not say. */
const UNKNOWN_REASON: RetryReason = { error: 'LEADER_NOT_AVAILABLE', detail: 'its leader gave nothing for it (no leader, or one moving)' }
/** kmirror's own error name (errors.ts): a read_committed read held at the last stable offset by an open transaction. */
export const SOURCE_TRANSACTION_OPEN = 'SOURCE_TRANSACTION_OPEN'

/**
 * How long a wait lasts, at least, before the partition's lag is shown unknown (with at least two RETRY rounds). A
 * broker slower than the others costs its partitions one round now and then (late-fetches.ts: its answer is used at
 * the next round), a leader moving or a failed try a round or two within a second or so (leader-outages.ts rests a
 * broker 200 ms after a first failure): the last high watermark is then about as fresh as between two answers, and a
 * lag flickering to null at each would be noise. Past both, the partition waits on the source (its leader out of
 * reach, none, throttling it): that high watermark is stale and the lag computed from it would be a guess.
 * Example: a broker down at t=0; RETRY rounds at 0, 0.2, 0.6, 1.4, 3.0 s: the lag is unknown from the 3 s mark
 * (seen by any read of /status or the gauges after it) until its next answer.
 */
export const STALE_WAIT_MS = 3_000

/** A partition the source gave nothing of since `since` (epoch ms), and the last reason. */
export interface SourceWait {
  readonly state: PartitionState
  readonly since: number
  readonly reason: RetryReason
}

/** A partition an open source transaction has held since `since` (epoch ms). */
export interface SourceHold {
  readonly state: PartitionState
  readonly since: number
  /** The open transaction's first offset: the last stable offset. */
  readonly at: number
  /** The high watermark last seen: the log goes on to it. */
  readonly highWatermark: number
}

interface Wait { readonly state: PartitionState, readonly since: number, reason: RetryReason, reported: boolean, rounds: number }
interface Hold { readonly state: PartitionState, readonly since: number, readonly at: number, highWatermark: number, reported: boolean }

export class SourceWaits {
  readonly #waits = new Map<string, Wait>()
  readonly #holds = new Map<string, Hold>()
  /** Holds exist only for read_committed reads: read_uncommitted is given everything up to the high watermark. */
  readonly #readCommitted: boolean

  /** How long a hold lasts before it is listed (the flow's health.transaction.hang.threshold.ms): for `overdue`. */
  readonly #holdThresholdMs: number

  constructor (isolation: 'read_committed' | 'read_uncommitted' = 'read_committed', holdThresholdMs = Number.POSITIVE_INFINITY) {
    this.#readCommitted = isolation === 'read_committed'
    this.#holdThresholdMs = holdThresholdMs
  }

  /** A round's answer for STATE's partition (its position already moved past what was written). */
  note (f: FetchedBatches, state: PartitionState, now: number): void {
    if (f.outcome === FetchOutcomes.OK) {
      if (this.#waits.size > 0) end(this.#waits, state)
      if (this.#readCommitted) this.#noteHold(f, state, now)
      return
    }
    if (f.outcome !== FetchOutcomes.RETRY || f.retryReason?.error === TOPIC_GONE) {
      if (this.#waits.size > 0) end(this.#waits, state)
      // A refusal says nothing of the transaction (the partition backs off meanwhile); out of range moves the position.
      if (this.#holds.size > 0 && f.outcome !== FetchOutcomes.FAILED) end(this.#holds, state)
      return
    }
    const wait = this.#waits.get(state.key)
    if (wait?.state === state) {
      wait.reason = f.retryReason ?? wait.reason
      wait.rounds++
    } else this.#waits.set(state.key, { state, since: now, reason: f.retryReason ?? UNKNOWN_REASON, reported: false, rounds: 1 })
  }

  /**
   * Since when (epoch ms) STATE's partition has waited on the source, when that wait lasted two rounds or more and
   * STALE_WAIT_MS or more: its lag is unknown then (see STALE_WAIT_MS). Undefined otherwise.
   */
  staleSince (state: PartitionState, now: number): number | undefined {
    const wait = this.#waits.size === 0 ? undefined : this.#waits.get(state.key)
    return wait?.state === state && wait.rounds >= 2 && now - wait.since >= STALE_WAIT_MS ? wait.since : undefined
  }

  #noteHold (f: FetchedBatches, state: PartitionState, now: number): void {
    const at = heldAt(f, state)
    if (at === undefined) {
      if (this.#holds.size > 0 && !leftOut(f)) end(this.#holds, state)
      return
    }
    const hold = this.#holds.get(state.key)
    if (hold?.state === state && hold.at === at) hold.highWatermark = f.highWatermark
    else this.#holds.set(state.key, { state, since: now, at, highWatermark: f.highWatermark, reported: false })
  }

  /** Since when (epoch ms) and at which offset an open transaction holds STATE's partition; undefined when none does. */
  holdOf (state: PartitionState): { readonly at: number, readonly since: number } | undefined {
    if (this.#holds.size === 0) return undefined
    const hold = this.#holds.get(state.key)
    return hold?.state === state ? hold : undefined
  }

  /** How many partitions open transactions hold now, and since when (epoch ms) the longest-held one is; null when none. */
  holding (): { readonly count: number, readonly oldestSince: number | null } {
    let oldestSince: number | null = null
    for (const hold of this.#holds.values()) if (oldestSince === null || hold.since < oldestSince) oldestSince = hold.since
    return { count: this.#holds.size, oldestSince }
  }

  /** The waits longer than THRESHOLD_MS not listed before: each wait is listed once. */
  due (thresholdMs: number, now: number): SourceWait[] {
    return dueOf(this.#waits, thresholdMs, now).map(({ state, since, reason }) => ({ state, since, reason }))
  }

  /**
   * Whether STATE's hold is past the hold threshold and not listed yet: listed at the next round's report, so its
   * answer now must not end the report that stands (an outage's) as a recovery.
   */
  overdue (state: PartitionState, now: number): boolean {
    const hold = this.#holds.size === 0 ? undefined : this.#holds.get(state.key)
    return hold?.state === state && !hold.reported && now - hold.since >= this.#holdThresholdMs
  }

  /**
   * The holds longer than THRESHOLD_MS not listed before, of partitions that neither wait (RETRY) nor back off after
   * a refusal: only an OK answer confirms the transaction is still open (see the invariants).
   */
  holdsDue (thresholdMs: number, now: number): SourceHold[] {
    const confirmed = (hold: Hold): boolean => hold.state.retryAt <= now && (this.#waits.size === 0 || this.#waits.get(hold.state.key)?.state !== hold.state)
    return dueOf(this.#holds, thresholdMs, now, confirmed).map(({ state, since, at, highWatermark }) => ({ state, since, at, highWatermark }))
  }

  /** STATE's partition left the flow. */
  forget (state: PartitionState): void {
    end(this.#waits, state)
    end(this.#holds, state)
  }

  get count (): number {
    return this.#waits.size + this.#holds.size
  }
}

function end (map: Map<string, { readonly state: PartitionState }>, state: PartitionState): void {
  if (map.get(state.key)?.state === state) map.delete(state.key)
}

/**
 * The entries of MAP longer than THRESHOLD_MS, not listed before and LISTABLE, now marked listed; those that left the
 * flow dropped.
 */
function dueOf<T extends { readonly state: PartitionState, readonly since: number, reported: boolean }> (map: Map<string, T>, thresholdMs: number, now: number, listable: (entry: T) => boolean = () => true): T[] {
  if (map.size === 0) return []
  const found: T[] = []
  for (const [key, entry] of map) {
    if (entry.state.lost || entry.state.releasing) {
      map.delete(key)
      continue
    }
    if (entry.reported || now - entry.since < thresholdMs || !listable(entry)) continue
    entry.reported = true
    found.push(entry)
  }
  return found
}

/** An OK answer that leaves the partition out (an incremental fetch session's "nothing changed"): it says nothing new. */
function leftOut (f: FetchedBatches): boolean {
  return f.highWatermark < 0 && f.batches.length === 0
}

/**
 * The offset an OK answer says an open transaction holds the partition at, once what it brought is written (STATE's
 * position): its last stable offset, at or below the position, with the high watermark above the position. (Below
 * the position: progress stored by a read_uncommitted reader, MM2 by default, lies past an open transaction.)
 * Undefined when it says nothing of the kind, or leaves the partition out.
 */
function heldAt (f: FetchedBatches, state: PartitionState): number | undefined {
  if (f.highWatermark < 0 || f.lastStableOffset < 0) return undefined
  return f.lastStableOffset <= state.position && f.highWatermark > state.position ? f.lastStableOffset : undefined
}
