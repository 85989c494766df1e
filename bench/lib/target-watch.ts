/**
 * Watches how many records a set of topics on one cluster holds (sum of end offsets), with long-lived clients,
 * and notes when the first record arrived and when all had.
 *
 * A poll lists every partition's offset with kmirror's own listing (one ListOffsets per leader, each partition's
 * answer or error apart, asked once; a Metadata request first when its leaders are not cached), after the topic
 * list and a Metadata request while some topic is not sized yet, and every RESIZE_MS a Metadata request. Why:
 * while a broker creates thousands of partitions most of them cannot answer yet, and an all-or-nothing listing (as
 * the Admin client's is) fell back to one request per topic: a poll over 1,000 topics then took seconds, added its
 * requests to the broker's work in every contender's run, and saw the first record only when it ended (`partitions`
 * showed a first record 13-14 s into kmirror's 15 s run, whose first records were acknowledged at about 6 s).
 */
import { Admin, ListOffsetTimestamps } from '@platformatic/kafka'
import { RecordFetcher } from '../../src/kafka/record-fetcher.ts'
import { partitionKey } from '../../src/topic-partition.ts'
import { uniqueName } from '../../test/helpers/wait.ts'

/** How often the partition counts of every watched topic are read again. */
const RESIZE_MS = 5_000
/** Topics per Metadata request once a request for all of them failed. */
const METADATA_CHUNK = 100

export interface Arrival {
  /** ms from START until the topics held at least one record. */
  firstRecordMs: number
  /** ms from START until they held EXPECTED records. */
  completeMs: number
}

export class TargetWatch {
  private readonly admin: Admin
  private readonly lister: RecordFetcher
  private closed = false
  /** Records each partition held at its last good answer (never lowered), by partitionKey. */
  private readonly known = new Map<string, number>()
  /** Partitions of each topic seen so far (never lowered), and when they were last read for all topics. */
  private readonly partitions = new Map<string, number>()
  private sizedAt = Date.now()

  constructor (bootstrap: string) {
    this.admin = new Admin({ clientId: uniqueName('kmirror-bench-watch'), bootstrapBrokers: [bootstrap], retries: 2, retryDelay: 100 })
    this.lister = new RecordFetcher({ 'bootstrap.servers': bootstrap }, uniqueName('kmirror-bench-watch-offsets'), {
      isolation: 'read_uncommitted', maxWaitMs: 0, maxBytes: 1, maxPartitionBytes: 1, sessions: false
    })
  }

  /**
   * Records held by TOPICS (those that exist; 0 for the others). A partition whose offset cannot be listed now (no
   * leader yet, its log not loaded) counts what it held at its last good answer.
   */
  async count (topics: readonly string[]): Promise<number> {
    await this.size(topics)
    const all = topics.flatMap(topic => Array.from({ length: this.partitions.get(topic) ?? 0 }, (_, partition) => ({ topic, partition })))
    if (all.length > 0) {
      const { offsets } = await this.lister.listOffsetsSettled(all, 'latest', 1)
      for (const [key, offset] of offsets) if (offset > (this.known.get(key) ?? 0)) this.known.set(key, offset)
    }
    let total = 0
    for (const { topic, partition } of all) total += this.known.get(partitionKey(topic, partition)) ?? 0
    return total
  }

  /**
   * Partition counts: of the topics not sized yet at every poll (those that exist), and of all of them every
   * RESIZE_MS, since on clusters the harness does not own a remote topic may be auto-created with the broker's
   * default partitions before the replicator adds the rest.
   */
  private async size (topics: readonly string[]): Promise<void> {
    if (Date.now() - this.sizedAt >= RESIZE_MS) {
      this.sizedAt = Date.now()
      await this.learnPartitions(topics.filter(t => this.partitions.has(t)))
    }
    if (topics.every(t => this.partitions.has(t))) return
    const existing = new Set(await this.admin.listTopics({ includeInternals: false }))
    await this.learnPartitions(topics.filter(t => existing.has(t) && !this.partitions.has(t)))
  }

  /**
   * Partition counts of TOPICS, in one Metadata request, or 100 topics a request when that one fails (a topic
   * being created); a topic that answers with none yet, or whose request failed, is asked again at the next poll.
   */
  private async learnPartitions (topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return
    const metadata = await this.admin.metadata({ topics: [...topics], forceUpdate: true }).catch(() => undefined)
    if (metadata === undefined) {
      if (topics.length > METADATA_CHUNK) {
        for (let i = 0; i < topics.length; i += METADATA_CHUNK) await this.learnPartitions(topics.slice(i, i + METADATA_CHUNK))
      }
      return
    }
    for (const topic of topics) {
      const count = metadata.topics.get(topic)?.partitionsCount ?? 0
      if (count > (this.partitions.get(topic) ?? 0)) this.partitions.set(topic, count)
    }
  }

  /** End offsets of every partition of TOPIC (index = partition). */
  async partitionEnds (topic: string): Promise<bigint[]> {
    const listed = await this.listOffsets([topic])
    const ends: bigint[] = []
    for (const p of listed[0]?.partitions ?? []) ends[p.partitionIndex] = p.offset
    return ends
  }

  private async listOffsets (topics: readonly string[]): Promise<{ name: string, partitions: { partitionIndex: number, offset: bigint }[] }[]> {
    // Asking for a missing topic would fail the whole metadata request: only existing ones are named.
    const metadata = await this.admin.metadata({ topics: [...topics], forceUpdate: true })
    const request = topics.map(name => ({
      name,
      partitions: Array.from({ length: metadata.topics.get(name)?.partitionsCount ?? 0 }, (_, partitionIndex) => ({ partitionIndex, timestamp: ListOffsetTimestamps.LATEST }))
    }))
    return await this.admin.listOffsets({ topics: request })
  }

  /** True once every one of TOPICS exists. */
  async allExist (topics: readonly string[]): Promise<boolean> {
    const existing = new Set(await this.admin.listTopics({ includeInternals: false }))
    return topics.every(t => existing.has(t))
  }

  /**
   * Polls every INTERVALMS until TOPICS hold EXPECTED records; START is the epoch ms the clock runs from.
   * Rejects after TIMEOUTMS with the count reached. A failed poll (topic being created) counts as "not yet".
   */
  async waitForRecords (topics: readonly string[], expected: number, start: number, { timeoutMs, intervalMs = 200 }: { timeoutMs: number; intervalMs?: number }): Promise<Arrival> {
    let firstRecordMs: number | undefined
    let last = 0
    for (;;) {
      try {
        last = await this.count(topics)
      } catch {
        // metadata not ready yet: try again at the next poll
      }
      if (this.closed) throw new Error('the watch was closed')
      const now = Date.now()
      if (last > 0) firstRecordMs ??= now - start
      if (last >= expected) return { firstRecordMs: firstRecordMs ?? now - start, completeMs: now - start }
      if (now - start > timeoutMs) throw new Error(`target holds ${last} of ${expected} records after ${now - start} ms`)
      await new Promise(resolve => setTimeout(resolve, intervalMs))
    }
  }

  async close (): Promise<void> {
    this.closed = true
    await Promise.all([this.admin.close(), this.lister.close()])
  }
}
