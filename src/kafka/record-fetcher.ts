/**
 * Group-less reading of partitions at explicit offsets (what MM2 gets from KafkaConsumer.assign + seek).
 *
 * Invariants:
 * - Records are returned in offset order per partition, starting at the requested offset: a fetch at X may
 *   return the whole batch containing X, and the records before X are dropped here.
 * - With read_committed, records of aborted transactions are dropped using the response's aborted-transaction
 *   list and each batch's producer id (the Java client's algorithm), never only by finding the abort marker in
 *   the same response. Control batches are never returned, but they do advance `nextOffset`.
 * - `nextOffset` is one past the last offset the broker returned, so skipped control and aborted batches
 *   are not read again.
 */
import { Consumer, FetchIsolationLevels, ListOffsetTimestamps, type fetchV17, type RecordsBatch } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { toConnectOptions } from './client-options.ts'
import { kafkaErrorNames, searchErrorTree, toKmirrorError } from './errors.ts'
import { toOffset } from './offsets.ts'

type FetchResponsePartition = fetchV17.FetchResponsePartition

export interface PartitionPosition {
  readonly topic: string
  readonly partition: number
  readonly offset: number
}

export type RecordHeader = [Buffer, Buffer | null]

export interface FetchedRecord {
  readonly offset: number
  readonly timestamp: bigint
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: RecordHeader[]
}

export const FetchOutcomes = {
  OK: 'ok',
  /** The requested offset is outside [logStartOffset, highWatermark]. */
  OUT_OF_RANGE: 'out-of-range',
  /** Leadership moved or metadata is stale; metadata was refreshed, try again. */
  RETRY: 'retry'
} as const
export type FetchOutcome = (typeof FetchOutcomes)[keyof typeof FetchOutcomes]

export interface FetchedPartition {
  readonly topic: string
  readonly partition: number
  readonly outcome: FetchOutcome
  readonly records: FetchedRecord[]
  /** Where the next fetch of this partition starts. Equals the requested offset when nothing was returned. */
  readonly nextOffset: number
  readonly highWatermark: number
  readonly lastStableOffset: number
  readonly logStartOffset: number
  /** Key + value + header bytes of the returned records. */
  readonly bytes: number
}

export interface RecordFetcherOptions {
  readonly isolation: 'read_committed' | 'read_uncommitted'
  readonly maxWaitMs: number
  readonly maxBytes: number
  readonly maxPartitionBytes: number
}

const ATTR_TIMESTAMP_LOG_APPEND = 0x08
const ATTR_TRANSACTIONAL = 0x10
const ATTR_CONTROL = 0x20
const CONTROL_TYPE_ABORT = 0
const RETRY_ERROR_CODES = new Set([3, 6, 5, 74, 75, 100, 9, 56])
const OFFSET_OUT_OF_RANGE = 1

export class RecordFetcher {
  readonly #consumer: Consumer
  readonly #options: RecordFetcherOptions
  #forceMetadata = false

  constructor (props: ClientProps, clientId: string, options: RecordFetcherOptions) {
    this.#options = options
    // A group id is required by the library's constructor; kmirror never joins it (no JoinGroup is sent).
    this.#consumer = new Consumer({ ...toConnectOptions(props, clientId), groupId: `${clientId}-unused`, autocommit: false })
  }

  /** Reads every position once. Partitions are grouped by leader and each leader is asked in parallel. */
  async fetch (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> {
    if (positions.length === 0) return []
    const topics = [...new Set(positions.map(p => p.topic))]
    const metadata = await this.#metadataSkippingUnknown(topics)
    const byLeader = new Map<number, PartitionPosition[]>()
    const results: FetchedPartition[] = []
    for (const position of positions) {
      const leader = metadata.topics.get(position.topic)?.partitions[position.partition]?.leader
      if (leader === undefined || leader < 0) {
        this.#forceMetadata = true
        results.push(emptyResult(position, FetchOutcomes.RETRY))
        continue
      }
      const list = byLeader.get(leader) ?? []
      list.push(position)
      byLeader.set(leader, list)
    }
    const perLeader = await Promise.all([...byLeader].map(([node, list]) => this.#fetchFromNode(node, list, metadata.topics)))
    for (const list of perLeader) results.push(...list)
    return results
  }

  /**
   * Metadata of the topics that exist. One unknown topic (deleted on the source, not yet noticed by the
   * refresh job) fails the whole request; then each topic is asked alone, and the missing ones are left out,
   * so their partitions answer RETRY while every other partition keeps being copied.
   */
  async #metadataSkippingUnknown (topics: string[]): Promise<{ topics: Map<string, { id: string, partitions: { leader: number }[] }> }> {
    try {
      return await this.#metadata(topics)
    } catch (err) {
      if (!kafkaErrorNames(err).some(n => n === 'UNKNOWN_TOPIC_OR_PARTITION' || n === 'UNKNOWN_TOPIC_ID') && !/unknown topic/i.test(String(err))) throw err
      this.#forceMetadata = true
      const found = new Map<string, { id: string, partitions: { leader: number }[] }>()
      for (const topic of topics) {
        const one = await this.#metadata([topic]).catch(() => null)
        const meta = one?.topics.get(topic)
        if (meta !== undefined) found.set(topic, meta)
      }
      return { topics: found }
    }
  }

  async #metadata (topics: string[]) {
    try {
      const metadata = await this.#consumer.metadata({ topics, forceUpdate: this.#forceMetadata })
      this.#forceMetadata = false
      return metadata
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.FETCH, `read metadata of ${topics.length} topic(s)`)
    }
  }

  async #fetchFromNode (node: number, positions: PartitionPosition[], topicMeta: Map<string, { id: string }>): Promise<FetchedPartition[]> {
    const byTopicId = new Map<string, { topic: string, partitions: PartitionPosition[] }>()
    for (const p of positions) {
      const id = topicMeta.get(p.topic)?.id
      if (id === undefined) continue
      const entry = byTopicId.get(id) ?? { topic: p.topic, partitions: [] }
      entry.partitions.push(p)
      byTopicId.set(id, entry)
    }
    const request = [...byTopicId].map(([topicId, { partitions }]) => ({
      topicId,
      partitions: partitions.map(p => ({
        partition: p.partition,
        currentLeaderEpoch: -1,
        fetchOffset: BigInt(p.offset),
        lastFetchedEpoch: -1,
        partitionMaxBytes: this.#options.maxPartitionBytes
      }))
    }))
    let response
    try {
      response = await this.#consumer.fetch({
        node,
        topics: request,
        maxWaitTime: this.#options.maxWaitMs,
        maxBytes: this.#options.maxBytes,
        isolationLevel: this.#isolationLevel()
      })
    } catch (err) {
      // A partition-level error fails the whole call, but the parsed response rides on the error.
      response = findFetchResponse(err)
      if (response === undefined) throw toKmirrorError(err, ErrorCodes.FETCH, `fetch from broker ${node}`)
    }
    return this.#interpret(positions, byTopicId, response.responses)
  }

  #isolationLevel (): number {
    return this.#options.isolation === 'read_committed' ? FetchIsolationLevels.READ_COMMITTED : FetchIsolationLevels.READ_UNCOMMITTED
  }

  #interpret (
    positions: PartitionPosition[],
    byTopicId: Map<string, { topic: string }>,
    responses: { topicId: string, partitions: FetchResponsePartition[] }[]
  ): FetchedPartition[] {
    const answered = new Map<string, FetchResponsePartition>()
    for (const topic of responses) {
      const name = byTopicId.get(topic.topicId)?.topic
      if (name === undefined) continue
      for (const p of topic.partitions) answered.set(`${name}\u0000${p.partitionIndex}`, p)
    }
    return positions.map(position => {
      const p = answered.get(`${position.topic}\u0000${position.partition}`)
      // An incremental fetch session omits partitions that have nothing new.
      if (p === undefined) return emptyResult(position, FetchOutcomes.OK)
      if (p.errorCode === OFFSET_OUT_OF_RANGE) return withOffsets(emptyResult(position, FetchOutcomes.OUT_OF_RANGE), p)
      if (p.errorCode !== 0) {
        if (!RETRY_ERROR_CODES.has(p.errorCode)) {
          throw new KmirrorError(ErrorCodes.FETCH, `fetch of ${position.topic}-${position.partition} failed with Kafka error code ${p.errorCode}`, { retriable: true })
        }
        this.#forceMetadata = true
        return emptyResult(position, FetchOutcomes.RETRY)
      }
      return decodePartition(position, p, this.#options.isolation === 'read_committed')
    })
  }

  /** Earliest (log start) or latest (high watermark) offsets, read_committed aware for 'latest'. */
  async listOffsets (partitions: readonly { topic: string, partition: number }[], which: 'earliest' | 'latest', retried = false): Promise<Map<string, number>> {
    const byTopic = new Map<string, number[]>()
    for (const tp of partitions) byTopic.set(tp.topic, [...(byTopic.get(tp.topic) ?? []), tp.partition])
    const timestamp = which === 'earliest' ? ListOffsetTimestamps.EARLIEST : ListOffsetTimestamps.LATEST
    try {
      // Partitions added since the client's metadata was cached are "not found" until it is refreshed.
      if (this.#forceMetadata) await this.#metadata([...byTopic.keys()])
      const result = await this.#consumer.listOffsets({
        topics: [...byTopic.keys()],
        partitions: Object.fromEntries(byTopic),
        timestamp,
        isolationLevel: this.#isolationLevel()
      })
      const out = new Map<string, number>()
      for (const [topic, offsets] of result) offsets.forEach((o, partition) => out.set(partitionKey(topic, partition), toOffset(o)))
      return out
    } catch (err) {
      if (!retried) {
        // Once, with fresh metadata: partitions added since the last refresh are "not found" until then.
        this.#forceMetadata = true
        return await this.listOffsets(partitions, which, true)
      }
      throw toKmirrorError(err, ErrorCodes.FETCH, `list ${which} offsets`)
    }
  }

  async close (): Promise<void> {
    await this.#consumer.close(true).catch(() => undefined)
  }
}

export function partitionKey (topic: string, partition: number): string {
  return `${topic}\u0000${partition}`
}

function emptyResult (position: PartitionPosition, outcome: FetchOutcome): FetchedPartition {
  return { topic: position.topic, partition: position.partition, outcome, records: [], nextOffset: position.offset, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, bytes: 0 }
}

function withOffsets (result: FetchedPartition, p: FetchResponsePartition): FetchedPartition {
  return { ...result, highWatermark: toOffset(p.highWatermark), lastStableOffset: toOffset(p.lastStableOffset), logStartOffset: toOffset(p.logStartOffset) }
}

function decodePartition (position: PartitionPosition, p: FetchResponsePartition, readCommitted: boolean): FetchedPartition {
  const batches = p.records ?? []
  const aborted = readCommitted ? [...(p.abortedTransactions ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1)) : []
  const abortedProducers = new Set<bigint>()
  const records: FetchedRecord[] = []
  let nextAborted = 0
  let nextOffset = position.offset
  let bytes = 0
  for (const batch of batches) {
    const lastOffset = toOffset(batch.firstOffset) + batch.lastOffsetDelta
    if (lastOffset < position.offset) continue
    nextOffset = lastOffset + 1
    while (nextAborted < aborted.length && toOffset(aborted[nextAborted]!.firstOffset) <= lastOffset) {
      abortedProducers.add(aborted[nextAborted]!.producerId)
      nextAborted++
    }
    if ((batch.attributes & ATTR_CONTROL) !== 0) {
      if (isAbortMarker(batch)) abortedProducers.delete(batch.producerId)
      continue
    }
    if ((batch.attributes & ATTR_TRANSACTIONAL) !== 0 && abortedProducers.has(batch.producerId)) continue
    bytes += appendRecords(batch, position.offset, records)
  }
  return { ...withOffsets(emptyResult(position, FetchOutcomes.OK), p), records, nextOffset, bytes }
}

function isAbortMarker (batch: RecordsBatch): boolean {
  const key = batch.records[0]?.key
  return key !== null && key !== undefined && key.length >= 4 && key.readInt16BE(2) === CONTROL_TYPE_ABORT
}

function appendRecords (batch: RecordsBatch, fromOffset: number, out: FetchedRecord[]): number {
  const base = toOffset(batch.firstOffset)
  const logAppendTime = (batch.attributes & ATTR_TIMESTAMP_LOG_APPEND) !== 0
  let bytes = 0
  for (const r of batch.records) {
    const offset = base + r.offsetDelta
    if (offset < fromOffset) continue
    const headers = r.headers as RecordHeader[]
    out.push({
      offset,
      timestamp: logAppendTime ? batch.maxTimestamp : batch.firstTimestamp + r.timestampDelta,
      key: r.key,
      value: r.value,
      headers
    })
    bytes += (r.key?.length ?? 0) + (r.value?.length ?? 0)
    for (const [k, v] of headers) bytes += k.length + (v?.length ?? 0)
  }
  return bytes
}

type FetchResponseTopics = { responses: { topicId: string, partitions: FetchResponsePartition[] }[] }

/** A partition-level error fails the whole call; the parsed response rides on one of the errors. */
function findFetchResponse (err: unknown): FetchResponseTopics | undefined {
  return searchErrorTree(err, e => {
    const response = (e as { response?: { responses?: unknown } }).response
    return response !== undefined && Array.isArray(response.responses) ? response as FetchResponseTopics : undefined
  })
}
