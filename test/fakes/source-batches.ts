/**
 * Real Kafka v2 record batches for the fakes and the batch tests, written by an encoder of its own (not
 * src/kafka/record-batch.ts encodeRecords), so the code under test reads bytes it did not write itself.
 * Unlike a producer, it can write what only a broker's log holds: offset gaps inside a batch (compaction),
 * log-append-time, transactional and control batches, any base offset and producer fields.
 */
import { compressionsAlgorithms, crc32c } from '@platformatic/kafka'
import { BatchAttributes, decodeRecords, scanBatches, type FetchedRecord, type SourceBatch } from '../../src/kafka/record-batch.ts'
import type { Codec } from '../../src/replication/batch-plan.ts'

export const CODECS: readonly Codec[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']

export interface BatchSpec {
  /** The records, with their absolute offsets (ascending; gaps allowed). */
  readonly records: readonly FetchedRecord[]
  /** Defaults to the first record's offset. */
  readonly baseOffset?: number
  /** Defaults to the last record's offset; later for a batch whose last records were compacted away. */
  readonly lastOffset?: number
  readonly codec?: Codec
  /** Extra attribute bits: BatchAttributes.LOG_APPEND_TIME, TRANSACTIONAL, CONTROL. */
  readonly attributes?: number
  /** With LOG_APPEND_TIME: the broker's append time, stored as base and max timestamp. */
  readonly appendTime?: bigint
  readonly producerId?: bigint
  readonly producerEpoch?: number
  readonly baseSequence?: number
  readonly partitionLeaderEpoch?: number
}

/** One v2 batch as a broker stores it. */
export function encodeSourceBatch (spec: BatchSpec): Buffer {
  const records = spec.records
  if (records.length === 0) throw new Error('encodeSourceBatch: a batch needs records')
  const baseOffset = spec.baseOffset ?? records[0]!.offset
  const lastOffset = spec.lastOffset ?? records.at(-1)!.offset
  const codec = spec.codec ?? 'none'
  const logAppend = ((spec.attributes ?? 0) & BatchAttributes.LOG_APPEND_TIME) !== 0
  const baseTimestamp = logAppend ? spec.appendTime ?? 0n : records[0]!.timestamp
  let maxTimestamp = baseTimestamp
  for (const r of records) if (!logAppend && r.timestamp > maxTimestamp) maxTimestamp = r.timestamp
  const body = new ByteWriter()
  for (const r of records) {
    const rec = new ByteWriter()
    rec.int8(0)
    rec.varlong(logAppend ? 0n : r.timestamp - baseTimestamp)
    rec.varint(r.offset - baseOffset)
    rec.bytes(r.key)
    rec.bytes(r.value)
    rec.varint(r.headers.length)
    for (const [k, v] of r.headers) {
      rec.bytes(k)
      rec.bytes(v)
    }
    const encoded = rec.toBuffer()
    body.varint(encoded.length)
    body.raw(encoded)
  }
  const plain = body.toBuffer()
  const payload = codec === 'none' ? plain : compressionsAlgorithms[codec].compressSync(plain)
  const header = Buffer.alloc(61)
  header.writeBigInt64BE(BigInt(baseOffset), 0)
  header.writeInt32BE(61 - 12 + payload.length, 8)
  header.writeInt32BE(spec.partitionLeaderEpoch ?? 7, 12)
  header.writeInt8(2, 16)
  header.writeInt16BE((spec.attributes ?? 0) | compressionsAlgorithms[codec].bitmask, 21)
  header.writeInt32BE(lastOffset - baseOffset, 23)
  header.writeBigInt64BE(baseTimestamp, 27)
  header.writeBigInt64BE(maxTimestamp, 35)
  header.writeBigInt64BE(spec.producerId ?? 4242n, 43)
  header.writeInt16BE(spec.producerEpoch ?? 3, 51)
  header.writeInt32BE(spec.baseSequence ?? 17, 53)
  header.writeInt32BE(records.length, 57)
  const batch = Buffer.concat([header, payload])
  batch.writeUInt32BE(crc32c(batch.subarray(21)) >>> 0, 17)
  return batch
}

/** The SourceBatch of one encoded batch (what RecordFetcher hands the data path). */
export function sourceBatch (spec: BatchSpec): SourceBatch {
  const [batch] = scanBatches(encodeSourceBatch(spec), 't', 0)
  return batch!
}

/**
 * Records as a source broker would return them: batches of consecutive offsets (a gap starts a new batch, unless
 * `compacted`, where a batch spans gaps as one the log cleaner left), at most `batchRecords` records each.
 */
export function sourceBatches (records: readonly FetchedRecord[], options: { batchRecords: number, codec?: Codec, compacted?: boolean }): SourceBatch[] {
  const groups: FetchedRecord[][] = []
  for (const r of records) {
    const group = groups.at(-1)
    const consecutive = group !== undefined && (options.compacted === true || r.offset === group.at(-1)!.offset + 1)
    if (group !== undefined && consecutive && group.length < options.batchRecords) group.push(r)
    else groups.push([r])
  }
  const bytes = Buffer.concat(groups.map(g => encodeSourceBatch({ records: g, codec: options.codec ?? 'none' })))
  return scanBatches(bytes, 'source', 0)
}

/** Decodes the records of batches (from offset 0 on). */
export function decodeAll (batches: readonly SourceBatch[], fromOffset = 0): FetchedRecord[] {
  const out: FetchedRecord[] = []
  for (const b of batches) decodeRecords(b, fromOffset, out)
  return out
}

class ByteWriter {
  readonly #chunks: Buffer[] = []

  raw (b: Buffer): void {
    this.#chunks.push(b)
  }

  int8 (n: number): void {
    this.#chunks.push(Buffer.from([n & 0xff]))
  }

  varint (n: number): void {
    this.varlong(BigInt(n))
  }

  /** Zig-zag varint of a signed 64-bit value. */
  varlong (n: bigint): void {
    let z = BigInt.asUintN(64, (n << 1n) ^ (n >> 63n))
    const out: number[] = []
    while (z >= 0x80n) {
      out.push(Number(z & 0x7fn) | 0x80)
      z >>= 7n
    }
    out.push(Number(z))
    this.#chunks.push(Buffer.from(out))
  }

  bytes (b: Buffer | null): void {
    if (b === null) {
      this.varint(-1)
      return
    }
    this.varint(b.length)
    this.#chunks.push(b)
  }

  toBuffer (): Buffer {
    return Buffer.concat(this.#chunks)
  }
}
