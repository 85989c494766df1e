/**
 * A checksum of the records a planned batch carries: source offset, timestamp, key, value and headers of each, in
 * order. Asked only for batches whose produce request was lost (kafka/in-doubt.ts): with their source span it tells
 * a batch sent again from one that carries other records at the same offsets (a source topic deleted and created
 * again, a source log truncated by an unclean election), which the broker must not take for a duplicate. A batch
 * forwarded as it is and the same records re-encoded have the same fingerprint.
 */
import { crc32c } from '../kafka/protocol/crc32c.ts'
import { decodeRecords, type FetchedRecord, type SourceBatch } from '../kafka/record-batch.ts'

const NULL_MARK = Buffer.from([0xff])

function lengthPrefixed (parts: Buffer[], value: Buffer | null): void {
  if (value === null) {
    parts.push(NULL_MARK)
    return
  }
  const length = Buffer.alloc(4)
  length.writeUInt32BE(value.length)
  parts.push(length, value)
}

export function fingerprintRecords (records: readonly FetchedRecord[]): number {
  const parts: Buffer[] = []
  for (const r of records) {
    const fixed = Buffer.alloc(16)
    fixed.writeBigInt64BE(BigInt(r.offset), 0)
    fixed.writeBigInt64BE(r.timestamp, 8)
    parts.push(fixed)
    lengthPrefixed(parts, r.key)
    lengthPrefixed(parts, r.value)
    for (const [key, value] of r.headers) {
      lengthPrefixed(parts, key)
      lengthPrefixed(parts, value)
    }
  }
  return crc32c(Buffer.concat(parts))
}

/** The fingerprint of every record of a source batch forwarded as it is. */
export function fingerprintBatch (batch: SourceBatch): number {
  const records: FetchedRecord[] = []
  decodeRecords(batch, batch.baseOffset, records)
  return fingerprintRecords(records)
}
