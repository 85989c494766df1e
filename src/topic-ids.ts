/**
 * The topic id each partition was last seen under, to tell a topic deleted and created again under the same name
 * from the one seen so far. Shared by the source side (source-topic-ids.ts: fetch answers) and the target side
 * (kafka/remote-topic-ids.ts: write metadata).
 *
 * Invariants:
 * - A partition's first id is learnt, not compared, unless it resumes a copy whose id a stored record names (`resume`).
 * - Topic ids only move forward. An id once replaced by another (of any partition) is retired for good: Kafka never
 *   gives a topic id twice, so an answer with one comes from a broker behind its controller (metadata propagation
 *   after a re-creation). Such an answer is `stale`: nothing is learnt, and the re-creation is not found again
 *   when the new id comes back (one finding per re-creation, no flapping between the ids).
 * - A `recreated` finding drops the partition's entry: its next id is learnt afresh.
 */

/** A partition's topic id in an answer, against the one it was last seen under. */
export type TopicIdCheck =
  | { readonly kind: 'current' }
  | { readonly kind: 'stale', readonly id: string }
  | { readonly kind: 'recreated', readonly before: string }

export const CURRENT_TOPIC_ID: TopicIdCheck = { kind: 'current' }

export class TopicIdLedger {
  /** Partition key → the topic id it was last seen under. */
  readonly #ids = new Map<string, string>()
  /** Topic ids replaced by another one. */
  readonly #retired = new Set<string>()

  /** `id`, partition KEY's topic id in an answer, against the one it was seen under; learns it when new. */
  check (key: string, id: string): TopicIdCheck {
    if (this.#retired.has(id)) return { kind: 'stale', id }
    const known = this.#ids.get(key)
    if (known === undefined) {
      this.#ids.set(key, id)
      return CURRENT_TOPIC_ID
    }
    if (known === id) return CURRENT_TOPIC_ID
    this.#retired.add(known)
    this.#ids.delete(key)
    return { kind: 'recreated', before: known }
  }

  /**
   * Partition KEY resumes a copy made from topic ID (a stored record says so, which outranks what this ledger saw):
   * its next answer is compared with ID, not learnt, even if ID was retired since (another partition of the topic
   * saw it replaced). An answer under ID itself then reads as `stale` when ID was retired, as any answer under it.
   */
  resume (key: string, id: string): void {
    this.#ids.set(key, id)
  }

  /** The partition left, or starts afresh: its next id is learnt again (retired ids stay). */
  forget (key: string): void {
    this.#ids.delete(key)
  }
}
