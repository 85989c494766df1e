/**
 * Kafka's 32-bit murmur2 (`org.apache.kafka.common.utils.Utils.murmur2`, seed 0x9747b28c) and the Java
 * producer's partition choice for keyed records (`BuiltInPartitioner.partitionForKey`). kmirror needs the
 * exact same numbers to write each Connect offset key to the partition Connect itself would choose.
 *
 * All arithmetic is on signed 32-bit ints like Java's `int`: `Math.imul` multiplies modulo 2^32,
 * `| 0` wraps, `>>>` is Java's unsigned shift.
 */

const SEED = 0x9747b28c
const M = 0x5bd1e995
const R = 24

/** Returns a signed 32-bit int, as Java does. */
export function murmur2 (data: Uint8Array): number {
  const length = data.length
  let h = (SEED ^ length) | 0
  const whole = length - (length % 4)
  for (let i = 0; i < whole; i += 4) {
    // Little-endian 4-byte block.
    let k = ((data[i] as number) | ((data[i + 1] as number) << 8) | ((data[i + 2] as number) << 16) | ((data[i + 3] as number) << 24)) | 0
    k = Math.imul(k, M)
    k ^= k >>> R
    k = Math.imul(k, M)
    h = Math.imul(h, M) ^ k
  }
  h = mixTail(h, data, whole)
  h ^= h >>> 13
  h = Math.imul(h, M)
  h ^= h >>> 15
  return h | 0
}

/** The 1 to 3 bytes after the last whole block (Java's fall-through switch on `length % 4`). */
function mixTail (h: number, data: Uint8Array, whole: number): number {
  const rest = data.length - whole
  if (rest === 0) return h
  if (rest === 3) h ^= (data[whole + 2] as number) << 16
  if (rest >= 2) h ^= (data[whole + 1] as number) << 8
  h ^= data[whole] as number
  return Math.imul(h, M)
}

/** Kafka's `Utils.toPositive`: clears the sign bit (not `Math.abs`, so MIN_VALUE maps to 0). */
export function toPositive (n: number): number {
  return n & 0x7fffffff
}

/** The partition the Java producer's default partitioner picks for a record with this (serialized) key. */
export function partitionForKey (key: Uint8Array, numPartitions: number): number {
  if (!Number.isInteger(numPartitions) || numPartitions <= 0) throw new RangeError(`numPartitions must be a positive integer, got ${numPartitions}`)
  return toPositive(murmur2(key)) % numPartitions
}
