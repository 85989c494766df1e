/**
 * Whether a replicated source topic read with fewer partitions than kmirror replicates really has fewer. Kafka never
 * takes partitions away from a topic, so a lower count under the same topic id comes from a broker whose metadata is
 * behind its controller (just after a growth): the replicated count is held, and nothing is released or handed out
 * again. Only a topic created again can have fewer, and that is a new topic id.
 *
 * Invariants:
 * - Same topic id (both real): the replicated count is held, at every refresh.
 * - Another topic id: a new topic (topic-sync-plan.ts `recreatedOnSource`), its count is taken at once.
 * - No topic ids (a source before Kafka 2.8): a lower count is taken only when two consecutive refreshes read it; a
 *   lagging broker's answer is gone by the next refresh, a re-creation with fewer partitions is not.
 *
 * Example: `orders` grown 3 -> 6 and replicated with 6; the next refresh asks a broker that has not caught up and reads
 * 3: held at 6 (the remote topic's 6 partitions are no "more partitions than the source" either).
 */
import type { ReplicatedTopic } from './topic-sync-plan.ts'
import type { SourceTopicState } from './topic-state.ts'

/** Kafka's "no id" (brokers before 2.8). */
const NO_ID = /^[0-]*$/

export class PartitionCountHold {
  /** Topics without ids read lower at the last refresh: a second lower read in a row is believed. */
  #lowerOnce = new Set<string>()

  /**
   * The counts to plan with, for the replicated topics read lower now (topic → count replicated until now); topics
   * not in it are planned as read. One call per refresh: it counts the reads without topic ids.
   */
  held (replicated: readonly ReplicatedTopic[], source: ReadonlyMap<string, SourceTopicState>, knownIds: ReadonlyMap<string, string>): Map<string, number> {
    const held = new Map<string, number>()
    const lowerNow = new Set<string>()
    for (const t of replicated) {
      const read = source.get(t.source)
      if (read === undefined || read.partitions >= t.partitions) continue
      const known = knownIds.get(t.source)
      const idsKnown = known !== undefined && !NO_ID.test(known) && !NO_ID.test(read.id)
      if (idsKnown) {
        if (known === read.id) held.set(t.source, t.partitions)
        continue
      }
      lowerNow.add(t.source)
      if (!this.#lowerOnce.has(t.source)) held.set(t.source, t.partitions)
    }
    this.#lowerOnce = lowerNow
    return held
  }
}
