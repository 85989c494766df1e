/**
 * Partitions the source has given nothing of, round after round, though it refused nothing: no leader (its broker
 * down, no replica in sync), a leader out of reach (leader-outages.ts), a leader answering NOT_LEADER_OR_FOLLOWER
 * for long; or held by a transaction open on the source (read_committed: the leader gives nothing past the last
 * stable offset, and a producer that died or hangs mid-transaction holds it there until the transaction ends). The
 * other partitions keep completing rounds, so neither the stall detector nor a failed step would tell of them; past
 * the flow's stall threshold each is reported failing (partition-failures.ts `unreadable`): a warning, `/status`,
 * `/healthz`, `kmirror_failing_partitions`.
 *
 * Invariants:
 * - A wait lasts from the first round that fetched the partition and got RETRY until a round gets anything else
 *   for it (records or none, a refusal, out of range), or it leaves the flow (lost, released, its topic removed).
 *   A partition whose topic the source no longer has does not wait (TOPIC_GONE).
 * - A hold lasts from the first answer without records whose last stable offset is the position and whose high
 *   watermark is above it, through answers that leave the partition out (an incremental fetch session's "nothing
 *   changed"), until an answer with records, a last stable offset past the position or nothing past the position.
 *   While it lasts, its reported failure is not ended by its empty answers (`held`).
 * - Each wait is listed once (`due`); its end is logged by `PartitionFailures.recover` when the partition is
 *   copied again.
 * - Cheap when nothing waits: one size check per partition and round.
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

/** A partition the source gave nothing of since `since` (epoch ms), and the last reason. */
export interface SourceWait {
  readonly state: PartitionState
  readonly since: number
  readonly reason: RetryReason
  /** A hold (SOURCE_TRANSACTION_OPEN): the offset of the open transaction's first record (the last stable offset). */
  readonly heldAt?: number
}

interface Wait { readonly state: PartitionState, readonly since: number, reason: RetryReason, readonly heldAt?: number, reported: boolean }

export class SourceWaits {
  readonly #waits = new Map<string, Wait>()

  /** A round's answer for STATE's partition (its position already moved past what was written). */
  note (f: FetchedBatches, state: PartitionState, now: number): void {
    if (f.outcome === FetchOutcomes.OK) {
      const held = heldAt(f, state)
      if (held !== undefined) this.#hold(state, held, f, now)
      else if (this.#waits.size > 0 && !(f.highWatermark < 0 && this.#waits.get(state.key)?.heldAt !== undefined)) this.#end(state)
      return
    }
    if (f.outcome !== FetchOutcomes.RETRY || f.retryReason?.error === TOPIC_GONE) {
      if (this.#waits.size > 0) this.#end(state)
      return
    }
    // A hold that turns into a RETRY (its leader gone meanwhile) is a new wait, as a RETRY that turns into a hold is.
    const wait = this.#waits.get(state.key)
    if (wait?.state === state && wait.heldAt === undefined) wait.reason = f.retryReason ?? wait.reason
    else this.#waits.set(state.key, { state, since: now, reason: f.retryReason ?? UNKNOWN_REASON, reported: false })
  }

  /** Whether an open transaction holds STATE's partition now (its empty answers do not end that failure). */
  held (state: PartitionState): boolean {
    if (this.#waits.size === 0) return false
    const wait = this.#waits.get(state.key)
    return wait?.state === state && wait.heldAt !== undefined
  }

  #hold (state: PartitionState, offset: number, f: FetchedBatches, now: number): void {
    const reason = { error: SOURCE_TRANSACTION_OPEN, detail: `it is read read_committed, and a transaction still open on the source holds it at offset ${offset}, ` +
      `its last stable offset (the log goes on to ${f.highWatermark}): its leader gives nothing past that offset until the transaction commits or aborts` }
    const wait = this.#waits.get(state.key)
    if (wait?.state === state && wait.heldAt === offset) wait.reason = reason
    else this.#waits.set(state.key, { state, since: now, reason, heldAt: offset, reported: false })
  }

  #end (state: PartitionState): void {
    if (this.#waits.get(state.key)?.state === state) this.#waits.delete(state.key)
  }

  /** The waits longer than THRESHOLD_MS (holds: HOLD_THRESHOLD_MS) not listed before: each wait is listed once. */
  due (thresholdMs: number, now: number, holdThresholdMs = thresholdMs): SourceWait[] {
    if (this.#waits.size === 0) return []
    const found: SourceWait[] = []
    for (const [key, wait] of this.#waits) {
      if (wait.state.lost || wait.state.releasing) {
        this.#waits.delete(key)
        continue
      }
      if (wait.reported || now - wait.since < (wait.heldAt === undefined ? thresholdMs : holdThresholdMs)) continue
      wait.reported = true
      found.push({ state: wait.state, since: wait.since, reason: wait.reason, ...(wait.heldAt === undefined ? {} : { heldAt: wait.heldAt }) })
    }
    return found
  }

  /** STATE's partition left the flow. */
  forget (state: PartitionState): void {
    if (this.#waits.get(state.key)?.state === state) this.#waits.delete(state.key)
  }

  get count (): number {
    return this.#waits.size
  }
}

/**
 * The offset an OK answer without records says an open transaction holds the partition at: its last stable offset is
 * the position and its high watermark is above it. Undefined when it says nothing of the kind (records came, the
 * partition was left out of the answer, or nothing lies past the position).
 */
function heldAt (f: FetchedBatches, state: PartitionState): number | undefined {
  if (f.batches.length > 0 || f.highWatermark < 0 || f.lastStableOffset < 0) return undefined
  return f.lastStableOffset === state.position && f.highWatermark > state.position ? state.position : undefined
}
