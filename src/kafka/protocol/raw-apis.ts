/**
 * Fetch and Produce on the wire with record batches kept as bytes. The client library's own Fetch decodes (and
 * decompresses) every record and its Produce encodes records it is given; batch forwarding needs neither.
 * These APIs reuse the library's connections (TLS, SASL, correlation ids, timeouts) and its request writer,
 * and differ only in how records are carried.
 *
 * Fetch v17 (Kafka 3.8+; kmirror's floor is Kafka 4.x) and Produce v11 (Kafka 3.8+) are what the library
 * itself uses against Kafka 4.x brokers.
 */
import { createAPI, fetchV17, Reader, readKnownTaggedFields, Writer, type Connection } from '@platformatic/kafka'

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
