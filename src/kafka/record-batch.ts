/**
 * Kafka record batches (message format v2) as bytes: finding them in a fetch response without decompressing,
 * rewriting one so the target accepts it as this producer's batch, and decoding or encoding records where a
 * batch cannot be forwarded as it is.
 *
 * Layout of a v2 batch (all big-endian): baseOffset int64 @0, batchLength int32 @8 (bytes after this field),
 * partitionLeaderEpoch int32 @12, magic int8 @16, crc uint32 @17 (CRC-32C of bytes 21..end), attributes int16
 * @21, lastOffsetDelta int32 @23, baseTimestamp int64 @27, maxTimestamp int64 @35, producerId int64 @43,
 * producerEpoch int16 @51, baseSequence int32 @53, recordCount int32 @57, records @61.
 *
 * Invariants:
 * - A forwarded batch keeps its records section byte for byte (compressed or not): keys, values, headers,
 *   timestamps and the order of records are exactly the source's. Only the header fields that name the
 *   producer (id, epoch, sequence), the transactional bit, the base offset and the leader epoch change, and
 *   the CRC is derived from the source CRC (protocol/crc32c.ts), after the source CRC was verified.
 * - A batch is forwardable only if the target would assign its records consecutive offsets that map one to
 *   one to the source offsets: no offset gaps (compaction), not starting before the wanted offset, create-time
 *   timestamps. Everything else is decoded and re-encoded, never dropped.
 */
import { createRecordsBatch, crc32c as wasmCrc32c, readRecordsBatch, Reader, type CompressionAlgorithmValue, type MessageRecord, type MessageToProduce } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { updateCrc32c } from './protocol/crc32c.ts'

export type RecordHeader = [Buffer, Buffer | null]

export interface FetchedRecord {
  readonly offset: number
  readonly timestamp: bigint
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: RecordHeader[]
}

export interface OutRecord {
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: readonly RecordHeader[]
  readonly timestamp: bigint
}

export const BatchAttributes = {
  COMPRESSION_MASK: 0x07,
  LOG_APPEND_TIME: 0x08,
  TRANSACTIONAL: 0x10,
  CONTROL: 0x20
} as const

const CODECS: readonly CompressionAlgorithmValue[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']

/** One batch as the source returned it. `bytes` is the whole batch, header included. */
export interface SourceBatch {
  readonly bytes: Buffer
  readonly baseOffset: number
  /** baseOffset + lastOffsetDelta: the last offset the batch covers (records may have been compacted away). */
  readonly lastOffset: number
  readonly recordCount: number
  readonly attributes: number
  readonly producerId: bigint
}

/**
 * The source timestamps of a batch's first record and of its newest, in ms, read from the header (no decoding).
 * A log-append-time batch's records all carry the broker's append time, the header's maxTimestamp.
 */
export function batchTimestamps (b: SourceBatch): { readonly first: number, readonly max: number } {
  const max = Number(b.bytes.readBigInt64BE(35))
  if ((b.attributes & BatchAttributes.LOG_APPEND_TIME) !== 0) return { first: max, max }
  return { first: Number(b.bytes.readBigInt64BE(27)), max }
}

/** The producer kmirror writes as on the target (idempotent: id and epoch from InitProducerId). */
export interface ProducerIdentity {
  readonly id: bigint
  readonly epoch: number
  /** Exactly-once mode: batches carry the transactional attribute bit (they belong to the open transaction). */
  readonly transactional?: boolean
}

const HEADER_BYTES = 61
const LOG_OVERHEAD = 12
const CRC_START = 21
const SEQUENCE_END = 57

/**
 * The complete batches in `records` (a fetch response's records of one partition), in order. A batch cut off
 * at the end (the broker stops at the size limit) is left out: the next fetch starts at it.
 */
export function scanBatches (records: Buffer, topic: string, partition: number): SourceBatch[] {
  const batches: SourceBatch[] = []
  let pos = 0
  while (records.length - pos >= LOG_OVERHEAD) {
    const length = records.readInt32BE(pos + 8)
    const end = pos + LOG_OVERHEAD + length
    if (end > records.length) break
    const baseOffset = Number(records.readBigInt64BE(pos))
    const magic = records[pos + 16]
    if (magic !== 2) {
      throw new KmirrorError(ErrorCodes.FETCH, `${topic}-${partition} holds records in message format v${magic} at offset ${baseOffset}; ` +
        'kmirror reads format v2 only (Kafka 0.11 and later). Rewrite the topic with a current producer, or copy it once with MirrorMaker 2')
    }
    if (length < HEADER_BYTES - LOG_OVERHEAD) {
      throw new KmirrorError(ErrorCodes.FETCH, `${topic}-${partition} returned a malformed record batch at offset ${baseOffset} (length ${length})`, { retriable: true })
    }
    batches.push({
      bytes: records.subarray(pos, end),
      baseOffset,
      lastOffset: baseOffset + records.readInt32BE(pos + 23),
      recordCount: records.readInt32BE(pos + 57),
      attributes: records.readInt16BE(pos + 21),
      producerId: records.readBigInt64BE(pos + 43)
    })
    pos = end
  }
  return batches
}

/** The compression codec of a batch ('none', 'gzip', 'snappy', 'lz4', 'zstd'). */
export function codecOf (batch: SourceBatch): CompressionAlgorithmValue {
  const codec = CODECS[batch.attributes & BatchAttributes.COMPRESSION_MASK]
  if (codec === undefined) throw new KmirrorError(ErrorCodes.FETCH, `record batch at offset ${batch.baseOffset} uses unknown compression ${batch.attributes & 7}`)
  return codec
}

/** True if a control batch is a transaction abort marker (its one record's key: version int16, type int16 = 0). */
export function isAbortMarker (batch: SourceBatch): boolean {
  // Control batches are never compressed. Record: length varint, attributes int8, timestampDelta varlong,
  // offsetDelta varint, keyLength varint, key.
  const b = batch.bytes
  let pos = HEADER_BYTES
  pos = skipVarint(b, pos)
  pos += 1
  pos = skipVarint(b, pos)
  pos = skipVarint(b, pos)
  const [keyLength, keyStart] = readVarint(b, pos)
  return keyLength >= 4 && b.readInt16BE(keyStart + 2) === 0
}

function skipVarint (b: Buffer, pos: number): number {
  while (pos < b.length && (b[pos]! & 0x80) !== 0) pos++
  return pos + 1
}

function readVarint (b: Buffer, pos: number): [number, number] {
  let raw = 0
  let shift = 0
  let byte: number
  do {
    byte = b[pos++] ?? 0
    raw += (byte & 0x7f) * 2 ** shift
    shift += 7
  } while ((byte & 0x80) !== 0 && shift < 35)
  // zig-zag
  return [raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2, pos]
}

/** Checks the batch's CRC as the Java consumer does (check.crcs=true); a mismatch stops the flow, loudly. */
export function verifyCrc (batch: SourceBatch, topic: string, partition: number): void {
  const stored = batch.bytes.readUInt32BE(17)
  const actual = wasmCrc32c(batch.bytes.subarray(CRC_START)) >>> 0
  if (stored !== actual) {
    throw new KmirrorError(ErrorCodes.FETCH, `the record batch of ${topic}-${partition} at offsets ${batch.baseOffset}..${batch.lastOffset} is corrupt on the source ` +
      `(CRC ${stored.toString(16)} stored, ${actual.toString(16)} computed); kmirror stops rather than copy it. Check the source broker's disks and logs`)
  }
}

/**
 * True if the batch can be written to the target as it is: its records map one to one to consecutive target
 * offsets (no compaction gaps, nothing before `fromOffset`) and carry create-time timestamps.
 */
export function isForwardable (batch: SourceBatch, fromOffset: number): boolean {
  return batch.baseOffset >= fromOffset &&
    batch.recordCount > 0 &&
    batch.lastOffset - batch.baseOffset === batch.recordCount - 1 &&
    (batch.attributes & (BatchAttributes.LOG_APPEND_TIME | BatchAttributes.CONTROL)) === 0
}

/**
 * Turns a source batch into this producer's batch, in place (the fetched bytes are not used again): base offset
 * 0, no leader epoch, transactional only if this producer is, our producer id, epoch and sequence; the CRC is
 * derived from the old one.
 */
export function rewriteForTarget (batch: SourceBatch, producer: ProducerIdentity, baseSequence: number): Buffer {
  const b = batch.bytes
  const before = Buffer.from(b.subarray(CRC_START, SEQUENCE_END))
  b.writeBigInt64BE(0n, 0)
  b.writeInt32BE(-1, 12)
  b.writeInt16BE(producer.transactional === true ? batch.attributes | BatchAttributes.TRANSACTIONAL : batch.attributes & ~BatchAttributes.TRANSACTIONAL, 21)
  b.writeBigInt64BE(producer.id, 43)
  b.writeInt16BE(producer.epoch, 51)
  b.writeInt32BE(baseSequence, 53)
  const crc = updateCrc32c(b.readUInt32BE(17), before, b.subarray(CRC_START, SEQUENCE_END), b.length - SEQUENCE_END)
  b.writeUInt32BE(crc, 17)
  return b
}

/** The records of a batch at or after `fromOffset` (decompressing if needed). */
export function decodeRecords (batch: SourceBatch, fromOffset: number, out: FetchedRecord[]): void {
  const decoded = readRecordsBatch(Reader.from(batch.bytes))
  const logAppendTime = (batch.attributes & BatchAttributes.LOG_APPEND_TIME) !== 0
  for (const r of decoded.records) {
    const offset = batch.baseOffset + r.offsetDelta
    if (offset < fromOffset) continue
    out.push({
      offset,
      timestamp: logAppendTime ? decoded.maxTimestamp : decoded.firstTimestamp + r.timestampDelta,
      key: r.key,
      value: r.value,
      headers: r.headers as RecordHeader[]
    })
  }
}

/** Key + value + header bytes of a record, for the bytes-copied figures. */
export function recordBytes (r: OutRecord): number {
  let n = (r.key?.length ?? 0) + (r.value?.length ?? 0)
  for (const [k, v] of r.headers) n += k.length + (v?.length ?? 0)
  return n
}

/** Encodes records as one batch of this producer, starting at `baseSequence`. */
export function encodeRecords (records: readonly OutRecord[], compression: CompressionAlgorithmValue, producer: ProducerIdentity, baseSequence: number): Buffer {
  const messages = records.map(r => toMessage(r)) as MessageRecord[]
  const batch = createRecordsBatch(messages, {
    compression,
    producerId: producer.id,
    producerEpoch: producer.epoch,
    partitionLeaderEpoch: -1,
    // The library reads the first sequence from its own per-partition map; kmirror keeps the sequences itself.
    sequences: { getWithDefault: () => baseSequence } as unknown as NonNullable<Parameters<typeof createRecordsBatch>[1]>['sequences']
  })
  return producer.transactional === true ? markTransactional(batch.buffer) : batch.buffer
}

/** Sets the transactional attribute bit of an encoded batch (the library's encoder has no option for it). */
function markTransactional (bytes: Buffer): Buffer {
  bytes.writeInt16BE(bytes.readInt16BE(CRC_START) | BatchAttributes.TRANSACTIONAL, CRC_START)
  bytes.writeUInt32BE(wasmCrc32c(bytes.subarray(CRC_START)) >>> 0, 17)
  return bytes
}

/** A record as the client library's encoder takes it: repeated and empty header keys kept, in order. */
export function toMessage (r: OutRecord, topic = '', partition = 0): MessageToProduce {
  const message: MessageToProduce = { topic, partition, timestamp: r.timestamp }
  if (r.key !== null) message.key = r.key
  if (r.value !== null) message.value = r.value
  if (r.headers.length > 0) {
    // Header keys are distinct Buffer objects, so a Map keeps repeated keys and their order.
    const headers = new Map<Buffer, Buffer>()
    for (const [k, v] of r.headers) headers.set(k.length === 0 || headers.has(k) ? Buffer.from(k) : k, v as Buffer)
    message.headers = headers
  }
  return message
}
