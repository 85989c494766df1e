/**
 * Partitions the source has given nothing of, round after round, though it refused nothing: no leader (its broker
 * down, no replica in sync), a leader out of reach (leader-outages.ts), a leader answering NOT_LEADER_OR_FOLLOWER
 * for long. The other partitions keep completing rounds, so neither the stall detector nor a failed step would
 * tell of them; past the flow's stall threshold each is reported failing (partition-failures.ts `unreadable`):
 * a warning, `/status`, `/healthz`, `kmirror_failing_partitions`.
 *
 * Invariants:
 * - A wait lasts from the first round that fetched the partition and got RETRY until a round gets anything else
 *   for it (records or none, a refusal, out of range), or it leaves the flow (lost, released, its topic removed).
 *   A partition whose topic the source no longer has does not wait (TOPIC_GONE).
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

/** A partition the source gave nothing of since `since` (epoch ms), and the last reason. */
export interface SourceWait {
  readonly state: PartitionState
  readonly since: number
  readonly reason: RetryReason
}

interface Wait { readonly state: PartitionState, readonly since: number, reason: RetryReason, reported: boolean }

export class SourceWaits {
  readonly #waits = new Map<string, Wait>()

  /** A round's answer for STATE's partition. */
  note (f: FetchedBatches, state: PartitionState, now: number): void {
    if (f.outcome !== FetchOutcomes.RETRY || f.retryReason?.error === TOPIC_GONE) {
      if (this.#waits.size > 0 && this.#waits.get(state.key)?.state === state) this.#waits.delete(state.key)
      return
    }
    const wait = this.#waits.get(state.key)
    if (wait?.state === state) wait.reason = f.retryReason ?? wait.reason
    else this.#waits.set(state.key, { state, since: now, reason: f.retryReason ?? UNKNOWN_REASON, reported: false })
  }

  /** The waits longer than THRESHOLD_MS not listed before: each wait is listed once. */
  due (thresholdMs: number, now: number): SourceWait[] {
    if (this.#waits.size === 0) return []
    const found: SourceWait[] = []
    for (const [key, wait] of this.#waits) {
      if (wait.state.lost || wait.state.releasing) {
        this.#waits.delete(key)
        continue
      }
      if (wait.reported || now - wait.since < thresholdMs) continue
      wait.reported = true
      found.push({ state: wait.state, since: wait.since, reason: wait.reason })
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
