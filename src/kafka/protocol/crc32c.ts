/**
 * CRC-32C (Castagnoli), the checksum of Kafka record batches, and the one operation batch forwarding needs:
 * updating a batch's CRC after a few header bytes changed, without reading the (possibly megabytes of)
 * records after them.
 *
 * Why this works: a CRC is affine over GF(2). For two messages of equal length, crc(a) ^ crc(b) equals the
 * "pure" CRC (zero initial value, no final xor) of a ^ b. When only the first bytes differ, a ^ b is those
 * differing bytes followed by zeros, and appending n zero bytes to a pure CRC is a multiplication by
 * x^(8n) modulo the polynomial, which takes O(log n) steps. So the new CRC is derived from the old one:
 * if the source bytes were corrupted, the derived CRC is wrong too and the target broker rejects the batch,
 * instead of kmirror blessing corrupt data with a fresh checksum.
 */

/** The reflected Castagnoli polynomial. */
const POLY = 0x82f63b78

const TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/** The standard CRC-32C of `data[start, end)` (what a Kafka batch header stores). */
export function crc32c (data: Uint8Array, start = 0, end = data.length): number {
  return (pureCrc(data, start, end, 0xffffffff) ^ 0xffffffff) >>> 0
}

function pureCrc (data: Uint8Array, start: number, end: number, initial: number): number {
  let c = initial
  for (let i = start; i < end; i++) c = TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8)
  return c >>> 0
}

/** a(x) * b(x) modulo the polynomial, both in reflected bit order. */
function multiplyModP (a: number, b: number): number {
  let product = 0
  let m = 0x80000000
  for (;;) {
    if ((a & m) !== 0) {
      product ^= b
      if ((a & (m - 1)) === 0) break
    }
    m >>>= 1
    b = (b & 1) !== 0 ? (b >>> 1) ^ POLY : b >>> 1
  }
  return product >>> 0
}

/** X2N[k] = x^(2^k) modulo the polynomial. */
const X2N = (() => {
  const table = new Uint32Array(32)
  let p = 0x40000000 // x^1
  table[0] = p
  for (let k = 1; k < 32; k++) table[k] = p = multiplyModP(p, p)
  return table
})()

/** x^(8 * bytes) modulo the polynomial: the operator that appends `bytes` zero bytes to a pure CRC. */
function zeroBytesOperator (bytes: number): number {
  let p = 0x80000000 // x^0
  let k = 3
  let n = bytes
  while (n > 0) {
    if ((n & 1) !== 0) p = multiplyModP(X2N[k & 31]!, p)
    n = Math.floor(n / 2)
    k++
  }
  return p
}

/**
 * The CRC-32C of a region after its first bytes changed: `before` and `after` hold the old and new values of
 * the region's first `before.length` bytes, and `tailLength` bytes follow them unchanged.
 */
export function updateCrc32c (oldCrc: number, before: Uint8Array, after: Uint8Array, tailLength: number): number {
  if (before.length !== after.length) throw new RangeError('updateCrc32c: the changed prefixes must have the same length')
  const diff = new Uint8Array(before.length)
  for (let i = 0; i < diff.length; i++) diff[i] = before[i]! ^ after[i]!
  const prefix = pureCrc(diff, 0, diff.length, 0)
  return (oldCrc ^ multiplyModP(zeroBytesOperator(tailLength), prefix)) >>> 0
}
