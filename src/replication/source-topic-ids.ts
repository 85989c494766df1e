/**
 * The source topic id each partition of a flow is copied from (Kafka 2.8+ sources give topic ids), so that a source
 * topic deleted and created again under the same name is told apart from the one copied so far: its offsets start
 * again, and a position kept from the old topic would skip the new topic's first records, silently. Every instance
 * that owns a partition of it sees the new id in its own fetch answers, whoever runs the topic refresh.
 *
 * Invariants:
 * - Only an answer of the partition's leader with an id counts (`FetchedBatches.topicId`); a source without ids
 *   (before Kafka 2.8, or the zero id) never reads as re-created.
 * - A partition's first id is learnt, not compared: one added from stored progress starts from there (an old
 *   topic's progress can only be told apart by the topic refresh, which sees the ids change).
 * - `changed` is told once per new id; the caller restarts the partition and drops that answer unwritten. An id
 *   once replaced is retired: metadata of a lagging broker never flips a partition back (and restarts it again).
 * - Sources fetched by name (Kafka 2.8-3.0 give ids in Metadata, not in Fetch) label answers with the metadata's id,
 *   which may lag behind the topic served: a re-created topic can be read from the old position before the label
 *   changes; it is then restarted at the new id (duplicates of what was read, never a gap).
 */
import type { FetchedBatches } from '../kafka/fetch-results.ts'
import { TopicIdLedger } from '../topic-ids.ts'

const ZERO_ID = /^[0-]*$/

export class SourceTopicIds {
  /**
   * Partition key -> the topic id its copied records came from. An answer labelled with a retired id comes from
   * metadata read from a broker behind its controller (fetched by name, Kafka 2.8-3.0): neither learnt nor compared.
   */
  readonly #ids = new TopicIdLedger()

  /** Whether answer F (of partition KEY) comes from another topic than the records copied so far; learns its id. */
  changed (key: string, f: FetchedBatches): boolean {
    const id = f.topicId
    if (id === undefined || id === null || ZERO_ID.test(id)) return false
    return this.#ids.check(key, id).kind === 'recreated'
  }

  /** The partition left the flow, or starts afresh: its next id is learnt again. */
  forget (key: string): void {
    this.#ids.forget(key)
  }
}
