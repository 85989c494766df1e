/**
 * Exact read-back of a partition with Consumer.fetch from its leader, without a consumer group.
 *
 * The client's own read_committed filter is never trusted (reference/ts-stack.md §1 risk 2): aborted
 * transactions are dropped here from the fetch responses' aborted-transaction lists, as the Java consumer
 * does (committedBatches).
 */
import { ListOffsetTimestamps, type Consumer, type RecordsBatch } from '@platformatic/kafka'
import { resolveCluster, type ClusterRef, type TestCluster } from './clusters.ts'
import {
  isolationLevel,
  withConsumer,
  type AbortedTransaction,
  type Compression,
  type Header,
  type Isolation,
  type ReadRecord
} from './kafka-clients.ts'

const ATTR_CODEC_MASK = 0x07
const ATTR_LOG_APPEND_TIME = 0x08
const ATTR_TRANSACTIONAL = 0x10
const ATTR_CONTROL = 0x20
const CODECS: readonly Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
const CONTROL_TYPE_ABORT = 0

export interface ReadOptions {
  isolation: Isolation
  /** First offset to return; the log start offset by default. */
  fromOffset?: bigint
  /** Offset to stop before (exclusive); capped at the high watermark (or last stable offset). */
  toOffset?: bigint
  /** partitionMaxBytes of each fetch (4 MiB by default); 1 yields one batch per fetch response. */
  fetchMaxBytes?: number
}

/** What one batch looked like on the wire (codec, transactional and control flags), with its records. */
export interface FetchedBatch {
  firstOffset: bigint
  lastOffset: bigint
  codec: Compression
  producerId: bigint
  producerEpoch: number
  isTransactional: boolean
  isControl: boolean
  /** For a control batch: true for an ABORT marker, false for COMMIT. */
  isAbortMarker: boolean
  records: ReadRecord[]
}

interface FetchedRange {
  batches: RecordsBatch[]
  aborted: AbortedTransaction[]
  start: bigint
  end: bigint
}

/**
 * Every record of TOPIC-PARTITION from the log start (or fromOffset) up to the high watermark
 * (read_uncommitted) or the last stable offset (read_committed), read with Consumer.fetch from the
 * partition leader, without a consumer group. With read_committed, records of aborted transactions are
 * removed here (see committedBatches); control records are never returned.
 */
export async function readPartition (ref: ClusterRef, topic: string, partition: number, options: ReadOptions): Promise<ReadRecord[]> {
  const range = await fetchRange(ref, topic, partition, options)
  const batches = options.isolation === 'read_committed' ? committedBatches(range.batches, range.aborted) : range.batches
  const records: ReadRecord[] = []
  for (const batch of batches) {
    if (isControlBatch(batch)) continue
    for (const r of batchRecords(batch)) if (r.offset >= range.start && r.offset < range.end) records.push(r)
  }
  return records
}

/**
 * The batches of TOPIC-PARTITION as stored (read_uncommitted, control batches included): to check codecs,
 * transactional flags and markers. Batches wholly outside [fromOffset, toOffset) are left out.
 */
export async function readBatches (
  ref: ClusterRef,
  topic: string,
  partition: number,
  options: Omit<ReadOptions, 'isolation'> = {}
): Promise<FetchedBatch[]> {
  const range = await fetchRange(ref, topic, partition, { ...options, isolation: 'read_uncommitted' })
  return range.batches.map(batch => ({
    firstOffset: batch.firstOffset,
    lastOffset: lastOffsetOf(batch),
    codec: CODECS[batch.attributes & ATTR_CODEC_MASK] ?? 'none',
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    isTransactional: (batch.attributes & ATTR_TRANSACTIONAL) !== 0,
    isControl: isControlBatch(batch),
    isAbortMarker: isAbortMarker(batch),
    records: isControlBatch(batch) ? [] : batchRecords(batch)
  }))
}

/**
 * The Java consumer's read_committed filter (Fetcher/CompletedFetch), over batches in offset order:
 * - before looking at a batch, every aborted transaction whose firstOffset <= the batch's last offset
 *   marks its producer id as aborted;
 * - an ABORT control batch of a marked producer unmarks it (its transaction ends there);
 * - a transactional batch of a marked producer is dropped; control batches are dropped too.
 * Example: producer 7 aborted at firstOffset 10, batches [10..12](pid 7) [13](ABORT pid 7) [14..15](pid 7):
 * 10 <= 12 marks 7, so [10..12] goes; the marker unmarks 7; [14..15] stays.
 */
export function committedBatches (batches: readonly RecordsBatch[], aborted: readonly AbortedTransaction[]): RecordsBatch[] {
  const seen = new Set<string>()
  const queue = aborted
    .filter(a => {
      const id = `${a.producerId}:${a.firstOffset}`
      return seen.has(id) ? false : (seen.add(id), true)
    })
    .sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  const abortedProducers = new Set<bigint>()
  let next = 0
  const kept: RecordsBatch[] = []
  for (const batch of batches) {
    const last = lastOffsetOf(batch)
    while (next < queue.length && queue[next]!.firstOffset <= last) abortedProducers.add(queue[next++]!.producerId)
    if (isControlBatch(batch)) {
      if (isAbortMarker(batch)) abortedProducers.delete(batch.producerId)
      continue
    }
    if ((batch.attributes & ATTR_TRANSACTIONAL) !== 0 && abortedProducers.has(batch.producerId)) continue
    kept.push(batch)
  }
  return kept
}

function lastOffsetOf (batch: RecordsBatch): bigint {
  return batch.firstOffset + BigInt(batch.lastOffsetDelta)
}

function isControlBatch (batch: RecordsBatch): boolean {
  return (batch.attributes & ATTR_CONTROL) !== 0
}

/** A control record's key is version (int16) then type (int16): 0 = ABORT, 1 = COMMIT. */
function isAbortMarker (batch: RecordsBatch): boolean {
  const key = batch.records[0]?.key
  return isControlBatch(batch) && key != null && key.length >= 4 && key.readInt16BE(2) === CONTROL_TYPE_ABORT
}

function batchRecords (batch: RecordsBatch): ReadRecord[] {
  const logAppendTime = (batch.attributes & ATTR_LOG_APPEND_TIME) !== 0
  return batch.records.map(r => ({
    offset: batch.firstOffset + BigInt(r.offsetDelta),
    key: r.key,
    value: r.value,
    headers: r.headers.map(([k, v]): Header => [k ?? Buffer.alloc(0), v]),
    timestamp: logAppendTime ? batch.maxTimestamp : batch.firstTimestamp + r.timestampDelta
  }))
}

/** Fetches every batch overlapping [start, end) and the union of the responses' aborted transactions. */
async function fetchRange (ref: ClusterRef, topic: string, partition: number, options: ReadOptions): Promise<FetchedRange> {
  const cluster = resolveCluster(ref)
  const level = isolationLevel(options.isolation)
  const maxBytes = options.fetchMaxBytes ?? 4 * 1024 * 1024
  return withConsumer(cluster, async consumer => {
    const where = { topics: [topic], partitions: { [topic]: [partition] } }
    const earliest = (await consumer.listOffsets({ ...where, timestamp: ListOffsetTimestamps.EARLIEST }))?.get(topic)?.[partition]
    const latest = (await consumer.listOffsets({ ...where, timestamp: ListOffsetTimestamps.LATEST, isolationLevel: level }))?.get(topic)?.[partition]
    if (earliest === undefined || latest === undefined) throw new Error(`no offsets for ${topic}-${partition} on ${cluster.name}`)
    const start = options.fromOffset ?? earliest
    const end = options.toOffset !== undefined && options.toOffset < latest ? options.toOffset : latest
    const range: FetchedRange = { batches: [], aborted: [], start, end }
    const topicKey = await fetchTopicKey(consumer, topic)
    let next = start
    let emptyResponses = 0
    while (next < end) {
      const added = await fetchOnce(cluster, consumer, topic, topicKey, partition, next, level, maxBytes, range)
      if (added === null) {
        if (++emptyResponses > 50) throw new Error(`fetch of ${topic}-${partition} on ${cluster.name} made no progress at offset ${next} (end ${end})`)
        continue
      }
      emptyResponses = 0
      next = added
    }
    return range
  })
}

/**
 * How Consumer.fetch must name TOPIC in its `topicId` field. Fetch v13+ (Kafka 3.1+) carries topic ids; up to
 * v12 the field is written as the topic NAME. The library translates ids to names itself only for topics the
 * consumer subscribed to, and this one never subscribes, so on older brokers it must be given the name.
 * The library uses the broker's highest Fetch version it has a codec for (v17 at most).
 */
async function fetchTopicKey (consumer: Consumer, topic: string): Promise<(topicId: string) => string> {
  const fetchApi = (await consumer.listApis()).find(api => api.apiKey === 1)
  return fetchApi !== undefined && fetchApi.maxVersion <= 12 ? () => topic : topicId => topicId
}

/** One Fetch at OFFSET; appends new batches and aborted transactions to RANGE; the next offset, or null. */
async function fetchOnce (
  cluster: TestCluster,
  consumer: Consumer,
  topic: string,
  topicKey: (topicId: string) => string,
  partition: number,
  offset: bigint,
  level: 0 | 1,
  maxBytes: number,
  range: FetchedRange
): Promise<bigint | null> {
  const metadata = await consumer.metadata({ topics: [topic] })
  const topicMetadata = metadata.topics.get(topic)
  const leader = topicMetadata?.partitions[partition]?.leader
  if (!topicMetadata || leader === undefined || leader < 0) throw new Error(`no leader for ${topic}-${partition} on ${cluster.name}`)
  const response = await consumer.fetch({
    node: leader,
    topics: [{ topicId: topicKey(topicMetadata.id), partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, partitionMaxBytes: maxBytes }] }],
    isolationLevel: level,
    minBytes: 1,
    maxBytes,
    maxWaitTime: 200
  })
  const data = response.responses.flatMap(t => t.partitions).find(p => p.partitionIndex === partition)
  if (!data) return null
  if (data.errorCode !== 0) throw new Error(`fetch of ${topic}-${partition} on ${cluster.name} failed with error code ${data.errorCode}`)
  range.aborted.push(...(data.abortedTransactions ?? []))
  let next: bigint | null = null
  for (const batch of data.records ?? []) {
    const last = lastOffsetOf(batch)
    if (last < offset) continue
    range.batches.push(batch)
    next = last + 1n
  }
  return next
}
