import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { crc32c as libraryCrc32c } from '@platformatic/kafka'
import { crc32c, updateCrc32c } from '../../../src/kafka/protocol/crc32c.ts'
import { createPrng } from '../../fakes/prng.ts'

function randomBytes (seed: number, length: number): Buffer {
  const prng = createPrng(seed)
  const out = Buffer.alloc(length)
  for (let i = 0; i < length; i++) out[i] = prng.int(0, 255)
  return out
}

describe('crc32c', () => {
  it('matches the published CRC-32C check values', () => {
    // Given the standard check input and a few well-known vectors (RFC 3720 B.4)
    // Then the checksums are Castagnoli's
    assert.equal(crc32c(Buffer.from('123456789', 'ascii')), 0xe3069283)
    assert.equal(crc32c(Buffer.alloc(0)), 0)
    assert.equal(crc32c(Buffer.alloc(32, 0x00)), 0x8a9136aa)
    assert.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43)
    assert.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => i))), 0x46dd794e)
  })

  it('checksums a sub-range exactly like a copy of it, and agrees with the client library for any length', () => {
    for (const length of [1, 3, 61, 1000, 4096]) {
      const data = randomBytes(length, length + 20)
      assert.equal(crc32c(data, 10, 10 + length), crc32c(Buffer.from(data.subarray(10, 10 + length))))
      assert.equal(crc32c(data), libraryCrc32c(data) >>> 0, `length ${length + 20}`)
    }
  })
})

describe('updateCrc32c', () => {
  it('equals a full recomputation after the first bytes changed, for tails of any length', () => {
    for (const tailLength of [0, 1, 7, 4096, 65537]) {
      for (const prefixLength of [1, 4, 36]) {
        // Given a region whose first `prefixLength` bytes change and whose tail stays
        const seed = tailLength * 100 + prefixLength
        const tail = randomBytes(seed, tailLength)
        const before = randomBytes(seed + 1, prefixLength)
        const after = randomBytes(seed + 2, prefixLength)
        const oldCrc = crc32c(Buffer.concat([before, tail]))
        // When the CRC is derived from the old one
        const derived = updateCrc32c(oldCrc, before, after, tailLength)
        // Then it is the CRC of the new region
        assert.equal(derived, crc32c(Buffer.concat([after, tail])), `prefix ${prefixLength}, tail ${tailLength}`)
      }
    }
  })

  it('keeps the CRC when nothing changed, and carries a corruption of the tail into the derived CRC', () => {
    // Given a region and the CRC of a corrupted copy of it (one tail bit flipped)
    const region = randomBytes(7, 500)
    const corrupted = Buffer.from(region)
    corrupted[400]! ^= 0x10
    const before = region.subarray(0, 36)
    const after = randomBytes(8, 36)
    // Then an unchanged prefix keeps the CRC, and the derived CRC of the corrupted bytes stays wrong for the new bytes
    assert.equal(updateCrc32c(crc32c(region), before, before, 464), crc32c(region))
    const derived = updateCrc32c(crc32c(corrupted), before, after, 464)
    assert.notEqual(derived, crc32c(Buffer.concat([after, region.subarray(36)])))
    assert.equal(derived, crc32c(Buffer.concat([after, corrupted.subarray(36)])))
  })

  it('refuses prefixes of different lengths', () => {
    assert.throws(() => updateCrc32c(0, Buffer.alloc(2), Buffer.alloc(3), 0), RangeError)
  })
})
