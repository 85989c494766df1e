/**
 * What `kmirror verify` compares of a record: its key, value, headers (in order) and timestamp, not its offset.
 * A range's digest is SHA-256 over the records' canonical encodings in offset order, so two ranges holding the same
 * records in the same order have the same digest whatever their offsets.
 *
 * Canonical encoding of one record: timestamp (int64), then key, value and each header key and value as
 * length (int32, -1 for null) + bytes, with the header count (int32) before the headers.
 */
import { createHash, type Hash } from 'node:crypto'
import type { FetchedRecord } from '../kafka/record-fetcher.ts'

export const RecordFields = { KEY: 'key', VALUE: 'value', HEADERS: 'headers', TIMESTAMP: 'timestamp' } as const
export type RecordField = (typeof RecordFields)[keyof typeof RecordFields]

function sameBytes (a: Buffer | null, b: Buffer | null): boolean {
  if (a === null || b === null) return a === b
  return a.equals(b)
}

/** The fields in which two records differ; empty when they are the same record. */
export function differingFields (a: FetchedRecord, b: FetchedRecord): RecordField[] {
  const out: RecordField[] = []
  if (!sameBytes(a.key, b.key)) out.push(RecordFields.KEY)
  if (!sameBytes(a.value, b.value)) out.push(RecordFields.VALUE)
  const sameHeaders = a.headers.length === b.headers.length &&
    a.headers.every((h, i) => sameBytes(h[0], b.headers[i]![0]) && sameBytes(h[1], b.headers[i]![1]))
  if (!sameHeaders) out.push(RecordFields.HEADERS)
  if (a.timestamp !== b.timestamp) out.push(RecordFields.TIMESTAMP)
  return out
}

const INT32 = Buffer.alloc(4)
const INT64 = Buffer.alloc(8)

function updateBytes (hash: Hash, bytes: Buffer | null): void {
  INT32.writeInt32BE(bytes === null ? -1 : bytes.length)
  hash.update(INT32)
  if (bytes !== null) hash.update(bytes)
}

/** Count and running digest of the records of one range of one side. */
export class RangeDigest {
  #hash = createHash('sha256')
  #records = 0

  get records (): number {
    return this.#records
  }

  add (record: FetchedRecord): void {
    INT64.writeBigInt64BE(record.timestamp)
    this.#hash.update(INT64)
    updateBytes(this.#hash, record.key)
    updateBytes(this.#hash, record.value)
    INT32.writeInt32BE(record.headers.length)
    this.#hash.update(INT32)
    for (const [key, value] of record.headers) {
      updateBytes(this.#hash, key)
      updateBytes(this.#hash, value)
    }
    this.#records++
  }

  /** The hex digest (the first 32 hex digits of SHA-256); ends this digest. */
  finish (): string {
    return this.#hash.digest('hex').slice(0, 32)
  }
}
