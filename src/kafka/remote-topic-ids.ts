/**
 * The topic id each remote partition was last written under, so a remote topic deleted and created again under
 * the same name (by hand, while kmirror copies it) is noticed by whoever writes its partitions, before anything is
 * written into the new topic at the old position.
 *
 * Invariants:
 * - A partition's id is learned from the metadata of its first write (after it joined this writer or was
 *   forgotten), and compared at every later write; the metadata is read fresh for every write (target-leaders.ts).
 * - An id that changed is reported once: the partition's entry is dropped, so its next write (copied again from
 *   the log start by the data path) learns the new id.
 * - Brokers without topic ids (before Kafka 2.8) answer none: nothing is learned or compared.
 */
import { partitionKey } from '../topic-partition.ts'

export class RemoteTopicIds {
  /** Remote partition (`partitionKey`) → the topic id it was written under. */
  readonly #ids = new Map<string, string>()

  /** The id the partition was written under before, when it differs from `id` now; null otherwise (and learns `id`). */
  changed (topic: string, partition: number, id: string | null | undefined): string | null {
    if (id === null || id === undefined) return null
    const key = partitionKey(topic, partition)
    const known = this.#ids.get(key)
    if (known === undefined) {
      this.#ids.set(key, id)
      return null
    }
    if (known === id) return null
    this.#ids.delete(key)
    return known
  }

  /**
   * Takes out of `byLeader` (leader → write indexes) the writes whose remote topic has another topic id (in `ids`,
   * by topic) than at their partition's last write, calling `recreated` with each one and the id it had before.
   */
  holdRecreated (byLeader: Map<number, number[]>, ids: ReadonlyMap<string, string | null>, item: (i: number) => { topic: string, partition: number }, recreated: (i: number, before: string) => void): void {
    for (const [node, indexes] of byLeader) {
      const kept = indexes.filter(i => {
        const { topic, partition } = item(i)
        const before = this.changed(topic, partition, ids.get(topic))
        if (before === null) return true
        recreated(i, before)
        return false
      })
      if (kept.length === 0) byLeader.delete(node)
      else byLeader.set(node, kept)
    }
  }

  /** The partition left this writer (released, removed): its next write learns the id afresh. */
  forget (topic: string, partition: number): void {
    this.#ids.delete(partitionKey(topic, partition))
  }
}
