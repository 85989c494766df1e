/**
 * The source topic id each partition of a flow is copied from (Kafka 2.8+ sources give topic ids), so that a source
 * topic deleted and created again under the same name is told apart from the one copied so far: its offsets start
 * again, and a position kept from the old topic would skip the new topic's first records, silently. Every instance
 * that owns a partition of it sees the new id in its own fetch answers, whoever runs the topic refresh.
 *
 * Invariants:
 * - Only an answer of the partition's leader with an id counts (`FetchedBatches.topicId`); a source without ids
 *   (before Kafka 2.8, or the zero id) never reads as re-created.
 * - A partition's first id is learnt, not compared, unless it resumes from a stored position whose copy's source
 *   topic id the offset history names (`resume`): then an answer under another id is a topic created again since
 *   the copy stopped (while no kmirror copied it: stopped, or the partition unowned), whose offsets start again.
 * - `changed` is told once per new id; the caller restarts the partition and drops that answer unwritten. An id
 *   once replaced is retired: metadata of a lagging broker never flips a partition back (and restarts it again).
 * - Sources fetched by name (Kafka 2.8-3.0 give ids in Metadata, not in Fetch) label answers with the metadata's id,
 *   which may lag behind the topic served: a re-created topic can be read from the old position before the label
 *   changes; it is then restarted at the new id (duplicates of what was read, never a gap).
 */
import type { FetchedBatches } from '../kafka/fetch-results.ts'
import { TopicIdLedger } from '../topic-ids.ts'

const ZERO_ID = /^[0-]*$/

/** The source topic id answer F carries, when it carries a real one (not the zero id of sources before 2.8). */
export function sourceTopicIdOf (f: Pick<FetchedBatches, 'topicId'>): string | undefined {
  const id = f.topicId
  return id === undefined || id === null || ZERO_ID.test(id) ? undefined : id
}

export class SourceTopicIds {
  /**
   * Partition key -> the topic id its copied records came from. An answer labelled with a retired id comes from
   * metadata read from a broker behind its controller (fetched by name, Kafka 2.8-3.0): neither learnt nor compared.
   */
  readonly #ids = new TopicIdLedger()

  /** Whether answer F (of partition KEY) comes from another topic than the records copied so far; learns its id. */
  changed (key: string, f: FetchedBatches): boolean {
    const id = sourceTopicIdOf(f)
    if (id === undefined) return false
    return this.#ids.check(key, id).kind === 'recreated'
  }

  /**
   * Partition KEY resumes from a stored position of a copy made from source topic ID (the offset history's): its
   * first answer is compared with ID, not learnt, so an answer from a topic created again since is told apart. ID
   * replaces what this instance saw of the partition before (it may have copied it, let it go, and seen the topic
   * created again on another partition since): the history names the copy that stored the position.
   */
  resume (key: string, id: string): void {
    this.#ids.resume(key, id)
  }

  /** The partition left the flow, or starts afresh: its next id is learnt again. */
  forget (key: string): void {
    this.#ids.forget(key)
  }
}
