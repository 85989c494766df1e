/**
 * Kafka's wire primitives for one request or response at one version: big-endian integers, varints, and the two
 * encodings of strings, bytes and arrays: classic (int16/int32 lengths, -1 = null) before a message's first
 * flexible version, compact (unsigned varint length + 1, 0 = null) and tagged-field sections from it on (KIP-482).
 *
 * Invariants:
 * - Arrays of structs end every element with a tagged-field section when flexible; arrays of plain integers do not.
 * - `bytes()` appends the given buffer as its own chunk: a record batch is never copied while a request is built.
 * - The reader hands out subarrays of the response buffer for `bytes`, never copies.
 */

const SCRATCH_BYTES = 512

export class ByteWriter {
  readonly flexible: boolean
  readonly #chunks: Buffer[] = []
  #scratch = Buffer.allocUnsafe(SCRATCH_BYTES)
  #at = 0
  #length = 0

  constructor (flexible: boolean) {
    this.flexible = flexible
  }

  #room (bytes: number): Buffer {
    if (this.#at + bytes > this.#scratch.length) {
      this.#flush()
      this.#scratch = Buffer.allocUnsafe(Math.max(SCRATCH_BYTES, bytes))
    }
    this.#length += bytes
    return this.#scratch
  }

  #flush (): void {
    if (this.#at > 0) this.#chunks.push(this.#scratch.subarray(0, this.#at))
    this.#scratch = this.#scratch.subarray(this.#at)
    this.#at = 0
  }

  int8 (value: number): this { this.#room(1).writeInt8(value, this.#at); this.#at += 1; return this }
  bool (value: boolean): this { return this.int8(value ? 1 : 0) }
  int16 (value: number): this { this.#room(2).writeInt16BE(value, this.#at); this.#at += 2; return this }
  int32 (value: number): this { this.#room(4).writeInt32BE(value, this.#at); this.#at += 4; return this }
  int64 (value: bigint): this { this.#room(8).writeBigInt64BE(value, this.#at); this.#at += 8; return this }

  uvarint (value: number): this {
    let rest = value >>> 0
    while (rest >= 0x80) {
      this.#room(1)[this.#at++] = (rest & 0x7f) | 0x80
      rest >>>= 7
    }
    this.#room(1)[this.#at++] = rest
    return this
  }

  /** A UUID as Kafka prints it (with or without dashes); all zeros when null. */
  uuid (value: string | null): this {
    const hex = (value ?? '').replaceAll('-', '')
    const bytes = hex === '' ? Buffer.alloc(16) : Buffer.from(hex, 'hex')
    if (bytes.length !== 16) throw new RangeError(`not a UUID: ${JSON.stringify(value)}`)
    this.#room(16).set(bytes, this.#at)
    this.#at += 16
    return this
  }

  string (value: string | null): this {
    if (value === null) return this.flexible ? this.uvarint(0) : this.int16(-1)
    const bytes = Buffer.from(value, 'utf8')
    if (this.flexible) this.uvarint(bytes.length + 1)
    else this.int16(bytes.length)
    return this.#raw(bytes)
  }

  /** Nullable bytes (a record set): the buffer becomes a chunk of its own, uncopied. */
  bytes (value: Buffer | null): this {
    if (value === null) return this.flexible ? this.uvarint(0) : this.int32(-1)
    if (this.flexible) this.uvarint(value.length + 1)
    else this.int32(value.length)
    if (value.length === 0) return this
    this.#flush()
    this.#chunks.push(value)
    this.#length += value.length
    return this
  }

  #raw (bytes: Buffer): this {
    this.#room(bytes.length).set(bytes, this.#at)
    this.#at += bytes.length
    return this
  }

  #length32 (count: number | null): this {
    if (count === null) return this.flexible ? this.uvarint(0) : this.int32(-1)
    return this.flexible ? this.uvarint(count + 1) : this.int32(count)
  }

  /** An array of structs; null writes a null array. */
  structs<T> (items: readonly T[] | null, write: (w: this, item: T) => void): this {
    this.#length32(items === null ? null : items.length)
    for (const item of items ?? []) {
      write(this, item)
      this.tags()
    }
    return this
  }

  int32s (items: readonly number[]): this {
    this.#length32(items.length)
    for (const item of items) this.int32(item)
    return this
  }

  /** An empty tagged-field section (kmirror sends no tagged fields); nothing before the flexible versions. */
  tags (): this {
    return this.flexible ? this.uvarint(0) : this
  }

  get length (): number {
    return this.#length
  }

  /** The encoded bytes as chunks (large buffers are not copied). */
  chunks (): Buffer[] {
    this.#flush()
    return [...this.#chunks]
  }

  toBuffer (): Buffer {
    return Buffer.concat(this.chunks())
  }
}

export class ByteReader {
  readonly flexible: boolean
  readonly buffer: Buffer
  #at: number

  constructor (buffer: Buffer, flexible: boolean, offset = 0) {
    this.buffer = buffer
    this.flexible = flexible
    this.#at = offset
  }

  get position (): number {
    return this.#at
  }

  get remaining (): number {
    return this.buffer.length - this.#at
  }

  #need (bytes: number): number {
    const at = this.#at
    if (at + bytes > this.buffer.length) {
      throw new RangeError(`response ends at byte ${this.buffer.length}, ${bytes} more bytes expected at byte ${at}`)
    }
    this.#at += bytes
    return at
  }

  int8 (): number { return this.buffer.readInt8(this.#need(1)) }
  bool (): boolean { return this.int8() !== 0 }
  int16 (): number { return this.buffer.readInt16BE(this.#need(2)) }
  int32 (): number { return this.buffer.readInt32BE(this.#need(4)) }
  int64 (): bigint { return this.buffer.readBigInt64BE(this.#need(8)) }

  uvarint (): number {
    let value = 0
    for (let shift = 0; shift < 35; shift += 7) {
      const byte = this.buffer[this.#need(1)]!
      value += (byte & 0x7f) * 2 ** shift
      if ((byte & 0x80) === 0) return value
    }
    throw new RangeError(`unsigned varint longer than 5 bytes at byte ${this.#at}`)
  }

  /** A UUID in Kafka's dashed hex form (all zeros when the broker has none). */
  uuid (): string {
    const hex = this.buffer.toString('hex', this.#need(16), this.#at)
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }

  nullableString (): string | null {
    const length = this.flexible ? this.uvarint() - 1 : this.int16()
    if (length < 0) return null
    const at = this.#need(length)
    return this.buffer.toString('utf8', at, at + length)
  }

  string (): string {
    return this.nullableString() ?? ''
  }

  /** Nullable bytes as a subarray of the response (no copy). */
  bytes (): Buffer | null {
    const length = this.flexible ? this.uvarint() - 1 : this.int32()
    if (length < 0) return null
    const at = this.#need(length)
    return this.buffer.subarray(at, at + length)
  }

  #count (): number {
    return this.flexible ? this.uvarint() - 1 : this.int32()
  }

  /** An array of structs (null reads as empty); tagged fields after each element are skipped. */
  structs<T> (read: (r: this) => T): T[] {
    const count = this.#count()
    const items: T[] = []
    for (let i = 0; i < count; i++) {
      items.push(read(this))
      this.tags()
    }
    return items
  }

  /** Like structs, but null stays null. */
  nullableStructs<T> (read: (r: this) => T): T[] | null {
    const count = this.#count()
    if (count < 0) return null
    const items: T[] = []
    for (let i = 0; i < count; i++) {
      items.push(read(this))
      this.tags()
    }
    return items
  }

  int32s (): number[] {
    const count = this.#count()
    const items: number[] = []
    for (let i = 0; i < count; i++) items.push(this.int32())
    return items
  }

  /** Skips a tagged-field section (kmirror reads none of the optional fields brokers add). */
  tags (): void {
    if (!this.flexible) return
    const count = this.uvarint()
    for (let i = 0; i < count; i++) {
      this.uvarint()
      this.#need(this.uvarint())
    }
  }
}
