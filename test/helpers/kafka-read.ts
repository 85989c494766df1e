/**
 * Exact read-back of a partition with Consumer.fetch from its leader, without a consumer group.
 *
 * The client's own read_committed filter is never trusted (reference/ts-stack.md §1 risk 2), nor even let run:
 * Consumer.fetch applies it to every read_committed fetch, and it drops COMMITTED batches. It keeps one range per
 * producer id, from the first aborted transaction's first offset to that producer's LAST abort marker in the
 * response, so a committed transaction between two aborts is dropped when the second abort has no data in the
 * partition (the coordinator writes a marker to every partition added to the transaction, even one whose produce
 * never landed, e.g. a target broker killed mid-round). So the log is fetched read_uncommitted, markers
 * included, and transactions are settled here by their markers (committedBatches); read_committed only bounds
 * the range at the last stable offset.
 */
import { ListOffsetTimestamps, type Consumer, type RecordsBatch } from '@platformatic/kafka'
import { resolveCluster, type ClusterRef, type TestCluster } from './clusters.ts'
import {
  isolationLevel,
  withConsumer,
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
/** Every fetch is read_uncommitted: Consumer.fetch runs its own (wrong) filter on read_committed ones. */
const READ_UNCOMMITTED = isolationLevel('read_uncommitted')

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
  /** The batch's max timestamp: for a marker, when its coordinator wrote it. */
  maxTimestamp: bigint
  records: ReadRecord[]
}

interface FetchedRange {
  batches: RecordsBatch[]
  start: bigint
  /** Records at or past it are not returned: the high watermark, the last stable offset (read_committed) or toOffset. */
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
  const batches = options.isolation === 'read_committed' ? committedBatches(range.batches) : range.batches
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
    maxTimestamp: batch.maxTimestamp,
    records: isControlBatch(batch) ? [] : batchRecords(batch)
  }))
}

/**
 * The batches a read_committed reader returns, over batches in offset order read read_uncommitted (control
 * batches included) up to the high watermark: a transactional data batch is kept once the next control batch of
 * its producer id is a COMMIT marker, dropped when it is an ABORT marker, and dropped while none follows (its
 * transaction is still open: it lies at or past the last stable offset). Non-transactional batches are kept;
 * control batches are dropped. Producer epochs do not matter (the Java consumer matches markers by producer id).
 * Example: [0..974](pid 9, txn) [975](ABORT 9) [976..1996](pid 9, txn) [1997](COMMIT 9) [1998](ABORT 9, no
 * data of this transaction here) keeps [976..1996] only.
 */
export function committedBatches (batches: readonly RecordsBatch[]): RecordsBatch[] {
  const keep = batches.map(batch => !isControlBatch(batch) && (batch.attributes & ATTR_TRANSACTIONAL) === 0)
  const open = new Map<bigint, number[]>()
  batches.forEach((batch, i) => {
    if (isControlBatch(batch)) {
      const commit = !isAbortMarker(batch)
      for (const j of open.get(batch.producerId) ?? []) keep[j] = commit
      open.delete(batch.producerId)
    } else if ((batch.attributes & ATTR_TRANSACTIONAL) !== 0) {
      const list = open.get(batch.producerId) ?? []
      open.set(batch.producerId, list)
      list.push(i)
    }
  })
  return batches.filter((_, i) => keep[i])
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

/**
 * Fetches every batch overlapping [start, end), always read_uncommitted (see the file comment). With read_committed,
 * `end` is the last stable offset and the fetch goes on to the high watermark: a transaction's marker may lie past
 * the last stable offset (another producer's open transaction began before it).
 */
async function fetchRange (ref: ClusterRef, topic: string, partition: number, options: ReadOptions): Promise<FetchedRange> {
  const cluster = resolveCluster(ref)
  const level = isolationLevel(options.isolation)
  const maxBytes = options.fetchMaxBytes ?? 4 * 1024 * 1024
  return withConsumer(cluster, async consumer => {
    const where = { topics: [topic], partitions: { [topic]: [partition] } }
    const earliest = (await consumer.listOffsets({ ...where, timestamp: ListOffsetTimestamps.EARLIEST }))?.get(topic)?.[partition]
    const latest = (await consumer.listOffsets({ ...where, timestamp: ListOffsetTimestamps.LATEST, isolationLevel: level }))?.get(topic)?.[partition]
    const high = level === READ_UNCOMMITTED ? latest : (await consumer.listOffsets({ ...where, timestamp: ListOffsetTimestamps.LATEST, isolationLevel: READ_UNCOMMITTED }))?.get(topic)?.[partition]
    if (earliest === undefined || latest === undefined || high === undefined) throw new Error(`no offsets for ${topic}-${partition} on ${cluster.name}`)
    const start = options.fromOffset ?? earliest
    const end = options.toOffset !== undefined && options.toOffset < latest ? options.toOffset : latest
    const range: FetchedRange = { batches: [], start, end }
    const topicKey = await fetchTopicKey(consumer, topic)
    let next = start
    let emptyResponses = 0
    const fetchEnd = level === READ_UNCOMMITTED ? end : high
    while (next < fetchEnd) {
      const added = await fetchOnce(cluster, consumer, topic, topicKey, partition, next, maxBytes, range)
      if (added === null) {
        if (++emptyResponses > 50) throw new Error(`fetch of ${topic}-${partition} on ${cluster.name} made no progress at offset ${next} (end ${fetchEnd})`)
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

/** One read_uncommitted Fetch at OFFSET; appends new batches to RANGE; the next offset, or null. */
async function fetchOnce (
  cluster: TestCluster,
  consumer: Consumer,
  topic: string,
  topicKey: (topicId: string) => string,
  partition: number,
  offset: bigint,
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
    isolationLevel: READ_UNCOMMITTED,
    minBytes: 1,
    maxBytes,
    maxWaitTime: 200
  })
  const data = response.responses.flatMap(t => t.partitions).find(p => p.partitionIndex === partition)
  if (!data) return null
  if (data.errorCode !== 0) throw new Error(`fetch of ${topic}-${partition} on ${cluster.name} failed with error code ${data.errorCode}`)
  let next: bigint | null = null
  for (const batch of data.records ?? []) {
    const last = lastOffsetOf(batch)
    if (last < offset) continue
    range.batches.push(batch)
    next = last + 1n
  }
  return next
}
