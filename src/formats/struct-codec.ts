import { ErrorCodes, KmirrorError } from '../errors.ts'

/**
 * The primitives of Kafka's protocol `Struct` encoding (org.apache.kafka.common.protocol.types), the only ones
 * MM2's OffsetSync, Checkpoint and Heartbeat records use (mm2-spec §2.2): fields back to back, big-endian,
 * no tags, no framing. Offsets are JavaScript numbers, so INT64 is limited to the safe-integer range.
 *
 * Encoding bad input (an unsafe integer, an over-long string) is a programmer error: RangeError.
 * Decoding bad bytes is a data error: KmirrorError DECODE, naming the record and field.
 */

const MAX_STRING_BYTES = 0x7fff

export function encodeInt16 (value: number, field: string): Buffer {
  checkInteger(value, -0x8000, 0x7fff, field, 'INT16')
  const buf = Buffer.alloc(2)
  buf.writeInt16BE(value)
  return buf
}

export function encodeInt32 (value: number, field: string): Buffer {
  checkInteger(value, -0x80000000, 0x7fffffff, field, 'INT32')
  const buf = Buffer.alloc(4)
  buf.writeInt32BE(value)
  return buf
}

export function encodeInt64 (value: number, field: string): Buffer {
  checkInteger(value, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, field, 'INT64 (safe-integer range)')
  const buf = Buffer.alloc(8)
  buf.writeBigInt64BE(BigInt(value))
  return buf
}

/** INT16 byte length, then standard UTF-8 (not Java's modified UTF-8). Java's writer rejects more than 32767 bytes. */
export function encodeString (value: string, field: string): Buffer {
  if (typeof value !== 'string') throw new RangeError(`${field} must be a string (Kafka STRING fields are not nullable), got ${String(value)}`)
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length > MAX_STRING_BYTES) throw new RangeError(`${field} is ${bytes.length} bytes of UTF-8, more than the ${MAX_STRING_BYTES} a Kafka STRING can hold`)
  const length = Buffer.alloc(2)
  length.writeInt16BE(bytes.length)
  return Buffer.concat([length, bytes])
}

function checkInteger (value: number, min: number, max: number, field: string, type: string): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${field} must be an integer in [${min}, ${max}] to be written as ${type}, got ${value}`)
  }
}

/**
 * Reads one Struct field after another from `buf`.
 * Invariant: `offset` never exceeds `buf.length`; bytes after the last field read are ignored, as Java's readers ignore them.
 */
export class StructReader {
  private readonly buf: Buffer
  private readonly what: string
  private offset = 0

  /** `what` names the record part being decoded, e.g. "OffsetSync key", for error messages. */
  constructor (buf: Buffer, what: string) {
    this.buf = buf
    this.what = what
  }

  readInt8 (field: string): number {
    this.require(1, field, 'INT8')
    const value = this.buf.readInt8(this.offset)
    this.offset += 1
    return value
  }

  readInt16 (field: string): number {
    this.require(2, field, 'INT16')
    const value = this.buf.readInt16BE(this.offset)
    this.offset += 2
    return value
  }

  readInt32 (field: string): number {
    this.require(4, field, 'INT32')
    const value = this.buf.readInt32BE(this.offset)
    this.offset += 4
    return value
  }

  readInt64 (field: string): number {
    this.require(8, field, 'INT64')
    const value = this.buf.readBigInt64BE(this.offset)
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw this.error(`field ${field} holds ${value}, outside the safe-integer range kmirror supports for offsets and timestamps`)
    }
    this.offset += 8
    return Number(value)
  }

  /** Malformed UTF-8 becomes U+FFFD, as Java's `new String(bytes, UTF_8)` does. */
  readString (field: string): string {
    const length = this.readInt16(`${field} (length)`)
    if (length < 0) throw this.error(`field ${field} has a negative length ${length} (Kafka STRING is not nullable)`)
    this.require(length, field, 'STRING bytes')
    const value = this.buf.toString('utf8', this.offset, this.offset + length)
    this.offset += length
    return value
  }

  /** A STRING whose length -1 means null (Kafka's NULLABLE_STRING). */
  readNullableString (field: string): string | null {
    const length = this.readInt16(`${field} (length)`)
    if (length < -1) throw this.error(`field ${field} has a negative length ${length}`)
    if (length === -1) return null
    this.require(length, field, 'STRING bytes')
    const value = this.buf.toString('utf8', this.offset, this.offset + length)
    this.offset += length
    return value
  }

  /** INT32 length then that many bytes; length -1 means null (Kafka's NULLABLE_BYTES). */
  readNullableBytes (field: string): Buffer | null {
    const length = this.readInt32(`${field} (length)`)
    if (length < -1) throw this.error(`field ${field} has a negative length ${length}`)
    if (length === -1) return null
    this.require(length, field, 'BYTES')
    const value = this.buf.subarray(this.offset, this.offset + length)
    this.offset += length
    return value
  }

  /** Bytes not read yet (an array count larger than these can hold is garbled). */
  get remaining (): number {
    return this.buf.length - this.offset
  }

  private require (bytes: number, field: string, type: string): void {
    const remaining = this.buf.length - this.offset
    if (remaining < bytes) {
      throw this.error(`field ${field} needs ${bytes} bytes of ${type} at byte ${this.offset}, but only ${remaining} remain (truncated record?)`)
    }
  }

  private error (problem: string): KmirrorError {
    return new KmirrorError(ErrorCodes.DECODE, `cannot decode ${this.what}: ${problem}`, {
      details: { record: this.what, length: this.buf.length, hexPrefix: this.buf.subarray(0, 64).toString('hex') }
    })
  }
}
