/**
 * The topic id each remote partition was last written under, so a remote topic deleted and created again under
 * the same name (by hand, while kmirror copies it) is noticed by whoever writes its partitions, before anything is
 * written into the new topic at the old position.
 *
 * Invariants:
 * - A partition's id is learned from the metadata of its first write (after it joined this writer or was
 *   forgotten), and compared at every later write; the metadata is read fresh for every write (target-leaders.ts).
 * - An id that changed is reported until the data path was told (`reported`: a write returned the failure, or
 *   `recreatedPartitions` named it): a write that found it and then threw (another broker's request failed) finds
 *   it again. Then the partition's entry is dropped, so its next write (copied again from the log start by the data
 *   path) learns the new id.
 * - Topic ids only move forward. An id once replaced by another (of any partition) is retired for good: Kafka never
 *   gives a topic id twice, so a broker still answering it is behind the controller (metadata propagation after a
 *   re-creation: brokers of one cluster answer the old and the new id for a while). Such an answer is `stale`: the
 *   write waits as for a leader moving ("not now"), nothing is learned, and the re-creation is not reported again
 *   when the new id comes back (one copy again per re-creation, never two; no flapping between the ids).
 * - Brokers without topic ids (before Kafka 2.8) answer none: nothing is learned or compared.
 */
import { CURRENT_TOPIC_ID, TopicIdLedger, type TopicIdCheck } from '../topic-ids.ts'
import { partitionKey } from '../topic-partition.ts'

export class RemoteTopicIds {
  /** Remote partition (`partitionKey`) → the topic id it was written under, and the retired ids. */
  readonly #ids = new TopicIdLedger()
  /** Re-created remote partitions the data path was not told of yet → the id they had before. */
  readonly #unreported = new Map<string, string>()

  /** `id`, the partition's topic id in fresh metadata, against the one it was written under; learns it when new. */
  check (topic: string, partition: number, id: string | null | undefined): TopicIdCheck {
    if (id === null || id === undefined) return CURRENT_TOPIC_ID
    const key = partitionKey(topic, partition)
    const unreported = this.#unreported.get(key)
    if (unreported !== undefined) return { kind: 'recreated', before: unreported }
    const found = this.#ids.check(key, id)
    if (found.kind === 'recreated') this.#unreported.set(key, found.before)
    return found
  }

  /** The data path was told that the partition's remote topic was created again: its next write learns the new id. */
  reported (topic: string, partition: number): void {
    this.#unreported.delete(partitionKey(topic, partition))
  }

  /**
   * Takes out of `byLeader` (leader → write indexes) the writes whose remote topic has another topic id (in `ids`,
   * by topic) than at their partition's last write, calling `recreated` with each one and the id it had before,
   * and those whose broker answered a retired id, calling `stale` with each.
   */
  holdRecreated (
    byLeader: Map<number, number[]>, ids: ReadonlyMap<string, string | null>, item: (i: number) => { topic: string, partition: number },
    recreated: (i: number, before: string) => void, stale: (i: number) => void
  ): void {
    for (const [node, indexes] of byLeader) {
      const kept = indexes.filter(i => {
        const { topic, partition } = item(i)
        const found = this.check(topic, partition, ids.get(topic))
        if (found.kind === 'current') return true
        if (found.kind === 'recreated') recreated(i, found.before)
        else stale(i)
        return false
      })
      if (kept.length === 0) byLeader.delete(node)
      else byLeader.set(node, kept)
    }
  }

  /** The partition left this writer (released, removed): its next write learns the id afresh (retired ids stay). */
  forget (topic: string, partition: number): void {
    this.#ids.forget(partitionKey(topic, partition))
    this.#unreported.delete(partitionKey(topic, partition))
  }
}
