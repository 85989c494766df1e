/**
 * Fetch and Produce on the wire with record batches kept as bytes. The client library's own Fetch decodes (and
 * decompresses) every record and its Produce encodes records it is given; batch forwarding needs neither.
 * These APIs reuse the library's connections (TLS, SASL, correlation ids, timeouts) and its request writer,
 * and differ only in how records are carried. Metadata and a ListOffsets probe are here too, because the
 * writer needs "this topic is not there yet" and "this leader is not ready yet" as answers, where the
 * library's clients turn them into retries and errors.
 *
 * Fetch v17 (Kafka 3.8+; kmirror's floor is Kafka 4.x) and Produce v11 (Kafka 3.8+) are what the library
 * itself uses against Kafka 4.x brokers.
 */
import { groupBy } from '../../collections.ts'
import { createAPI, fetchV17, listOffsetsV9, metadataV12, Reader, readKnownTaggedFields, Writer, type Connection } from '@platformatic/kafka'

export interface RawFetchPartition {
  readonly partitionIndex: number
  readonly errorCode: number
  readonly highWatermark: bigint
  readonly lastStableOffset: bigint
  readonly logStartOffset: bigint
  readonly abortedTransactions: readonly { producerId: bigint, firstOffset: bigint }[]
  /** The partition's record batches as the broker sent them (the last one may be cut off), or null. */
  readonly records: Buffer | null
}

export interface RawFetchResponse {
  /** Set when the client exceeded a quota: the broker expects no request from it for this long (KIP-219). */
  readonly throttleTimeMs: number
  readonly errorCode: number
  readonly responses: readonly { topicId: string, partitions: RawFetchPartition[] }[]
}

export interface RawFetchTopic {
  readonly topicId: string
  readonly partitions: readonly { partition: number, fetchOffset: bigint, partitionMaxBytes: number }[]
}

function parseFetch (_correlationId: number, _apiKey: number, _apiVersion: number, reader: Reader): RawFetchResponse {
  const throttleTimeMs = reader.readInt32()
  const errorCode = reader.readInt16()
  reader.readInt32() // session_id
  const responses = reader.readArray(r => ({
    topicId: r.readUUID(),
    partitions: r.readArray(r => {
      const partitionIndex = r.readInt32()
      const partitionError = r.readInt16()
      const highWatermark = r.readInt64()
      const lastStableOffset = r.readInt64()
      const logStartOffset = r.readInt64()
      const aborted = r.readNullableArray(r => ({ producerId: r.readInt64(), firstOffset: r.readInt64() })) ?? []
      r.readInt32() // preferred_read_replica
      const size = r.readUnsignedVarInt()
      let records: Buffer | null = null
      if (size > 1) {
        // A subarray of the socket's chunk when the batches arrived in one piece, else one copy.
        records = r.buffer.slice(r.position, r.position + size - 1)
        r.skip(size - 1)
      }
      readKnownTaggedFields(r, {})
      return { partitionIndex, errorCode: partitionError, highWatermark, lastStableOffset, logStartOffset, abortedTransactions: aborted, records }
    }, true, false)
  }), true, true)
  readKnownTaggedFields(reader, {})
  return { throttleTimeMs, errorCode, responses }
}

const fetchApi = createAPI<Parameters<typeof fetchV17.createRequest>, RawFetchResponse>(1, 17, fetchV17.createRequest, parseFetch)

/** One full (session-less) Fetch of the given partitions from the connection's broker. */
export function rawFetch (connection: Connection, topics: readonly RawFetchTopic[], options: { maxWaitMs: number, minBytes: number, maxBytes: number, isolationLevel: number }): Promise<RawFetchResponse> {
  const request = topics.map(t => ({
    topicId: t.topicId,
    partitions: t.partitions.map(p => ({
      partition: p.partition,
      currentLeaderEpoch: -1,
      fetchOffset: p.fetchOffset,
      lastFetchedEpoch: -1,
      partitionMaxBytes: p.partitionMaxBytes
    }))
  }))
  return fetchApi.async(connection, options.maxWaitMs, options.minBytes, options.maxBytes, options.isolationLevel, 0, -1, request, [], '')
}

export interface RawProducePartition {
  readonly index: number
  /** Exactly one record batch (a Produce request v3+ carries at most one per partition). */
  readonly batch: Buffer
}

export interface RawProduceTopic {
  readonly name: string
  readonly partitions: readonly RawProducePartition[]
}

export interface RawProducePartitionResponse {
  readonly index: number
  readonly errorCode: number
  readonly baseOffset: bigint
  readonly errorMessage: string | null
  readonly recordErrors: readonly { batchIndex: number, message: string | null }[]
}

export interface RawProduceResponse {
  /** Set when the client exceeded a quota: the broker expects no request from it for this long (KIP-219). */
  readonly throttleTimeMs: number
  readonly responses: readonly { name: string, partitions: readonly RawProducePartitionResponse[] }[]
}

function createProduce (acks: number, timeoutMs: number, topics: readonly RawProduceTopic[]): Writer {
  return Writer.create()
    .appendString(null)
    .appendInt16(acks)
    .appendInt32(timeoutMs)
    .appendArray(topics as RawProduceTopic[], (w, t) => {
      w.appendString(t.name).appendArray(t.partitions as RawProducePartition[], (w, p) => {
        w.appendInt32(p.index).appendUnsignedVarInt(p.batch.length + 1).append(p.batch)
      })
    })
    .appendTaggedFields()
}

function parseProduce (_correlationId: number, _apiKey: number, _apiVersion: number, reader: Reader): RawProduceResponse {
  const responses = reader.readArray(r => ({
    name: r.readString(),
    partitions: r.readArray(r => {
      const index = r.readInt32()
      const errorCode = r.readInt16()
      const baseOffset = r.readInt64()
      r.readInt64() // log_append_time_ms
      r.readInt64() // log_start_offset
      const recordErrors = r.readArray(r => ({ batchIndex: r.readInt32(), message: r.readNullableString() }), true, true)
      const errorMessage = r.readNullableString()
      readKnownTaggedFields(r, {})
      return { index, errorCode, baseOffset, errorMessage, recordErrors }
    }, true, false)
  }), true, true)
  const throttleTimeMs = reader.readInt32()
  readKnownTaggedFields(reader, {})
  return { throttleTimeMs, responses }
}

const produceApi = createAPI<[number, number, readonly RawProduceTopic[]], RawProduceResponse>(0, 11, createProduce, parseProduce)

/** One Produce request; partition errors are returned in the response, never thrown. */
export function rawProduce (connection: Connection, acks: number, timeoutMs: number, topics: readonly RawProduceTopic[]): Promise<RawProduceResponse> {
  return produceApi.async(connection, acks, timeoutMs, topics)
}

export interface RawMetadata {
  readonly brokers: Map<number, { host: string, port: number }>
  /** Per topic the client asked for and the cluster has: each partition's leader (-1 while it has none). */
  readonly topics: Map<string, { errorCode: number, leaders: number[] }>
}

function parseMetadata (_correlationId: number, _apiKey: number, _apiVersion: number, reader: Reader): RawMetadata {
  reader.readInt32() // throttle_time_ms
  const brokers = new Map<number, { host: string, port: number }>()
  reader.readArray(r => {
    const nodeId = r.readInt32()
    const host = r.readString()
    const port = r.readInt32()
    r.readNullableString() // rack
    brokers.set(nodeId, { host, port })
  }, true, true)
  reader.readNullableString() // cluster_id
  reader.readInt32() // controller_id
  const topics = new Map<string, { errorCode: number, leaders: number[] }>()
  reader.readArray(r => {
    const errorCode = r.readInt16()
    const name = r.readNullableString()
    r.readUUID()
    r.readBoolean() // is_internal
    const leaders: number[] = []
    r.readArray(r => {
      const partitionError = r.readInt16()
      const index = r.readInt32()
      const leader = r.readInt32()
      r.readInt32() // leader_epoch
      r.readArray(r => r.readInt32(), true, false)
      r.readArray(r => r.readInt32(), true, false)
      r.readArray(r => r.readInt32(), true, false)
      leaders[index] = partitionError === 0 ? leader : -1
    }, true, true)
    r.readInt32() // topic_authorized_operations
    if (name !== null) topics.set(name, { errorCode, leaders })
  }, true, true)
  readKnownTaggedFields(reader, {})
  return { brokers, topics }
}

const metadataApi = createAPI<Parameters<typeof metadataV12.createRequest>, RawMetadata>(3, 12, metadataV12.createRequest, parseMetadata)

/**
 * Metadata of the named topics (never auto-created). Unlike the library's client, a topic the cluster does not
 * have, or a partition without a leader, is an answer, not an error: the caller decides what waits.
 */
export function rawMetadata (connection: Connection, topics: readonly string[]): Promise<RawMetadata> {
  return metadataApi.async(connection, [...topics], false, false)
}

function parseListOffsets (_correlationId: number, _apiKey: number, _apiVersion: number, reader: Reader): Map<string, number> {
  reader.readInt32() // throttle_time_ms
  const errors = new Map<string, number>()
  reader.readArray(r => {
    const name = r.readString()
    r.readArray(r => {
      const index = r.readInt32()
      const errorCode = r.readInt16()
      r.readInt64()
      r.readInt64()
      r.readInt32()
      errors.set(`${name}\u0000${index}`, errorCode)
    }, true, true)
  }, true, true)
  readKnownTaggedFields(reader, {})
  return errors
}

const listOffsetsApi = createAPI<Parameters<typeof listOffsetsV9.createRequest>, Map<string, number>>(2, 9, listOffsetsV9.createRequest, parseListOffsets)

/**
 * Asks the connection's broker for the log end of each partition, only to learn whether it leads the partition
 * now: a remote topic's leader is in the metadata before the broker has loaded the partition. Returns the error
 * code per `topic\0partition` (0 = ready). A few bytes, where a produce attempt carries the data again.
 */
export function rawLeaderProbe (connection: Connection, partitions: readonly { topic: string, partition: number }[]): Promise<Map<string, number>> {
  const topics = [...groupBy(partitions, p => p.topic)].map(([name, list]) => ({ name, partitions: list.map(p => ({ partitionIndex: p.partition, currentLeaderEpoch: -1, timestamp: -1n })) }))
  return listOffsetsApi.async(connection, -1, 0, topics)
}
