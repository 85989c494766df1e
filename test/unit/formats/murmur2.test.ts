import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { murmur2, partitionForKey, toPositive } from '../../../src/formats/murmur2.ts'

/*
 * Golden values printed by a throwaway Java program against kafka-clients-4.1.1.jar:
 * Utils.murmur2(key.getBytes(UTF_8)), Utils.toPositive(...) and BuiltInPartitioner.partitionForKey(bytes, 25 / 7).
 * The lengths 0..8 cover every tail size of the 4-byte blocks.
 */
const GOLDEN = [
  { key: '', murmur2: 275646681, positive: 275646681, p25: 6, p7: 2 },
  { key: 'a', murmur2: -1563381124, positive: 584102524, p25: 24, p7: 5 },
  { key: 'ab', murmur2: 316155434, positive: 316155434, p25: 9, p7: 0 },
  { key: 'abc', murmur2: 479470107, positive: 479470107, p25: 7, p7: 4 },
  { key: 'abcd', murmur2: -1323649548, positive: 823834100, p25: 0, p7: 5 },
  { key: 'abcde', murmur2: 461995741, positive: 461995741, p25: 16, p7: 4 },
  { key: 'abcdef', murmur2: 1870650108, positive: 1870650108, p25: 8, p7: 5 },
  { key: 'abcdefg', murmur2: -346467175, positive: 1801016473, p25: 23, p7: 4 },
  { key: 'abcdefgh', murmur2: -955427363, positive: 1192056285, p25: 10, p7: 0 },
  { key: 'kafka', murmur2: -798503068, positive: 1348980580, p25: 5, p7: 3 },
  { key: '21', murmur2: -973932308, positive: 1173551340, p25: 15, p7: 3 },
  { key: 'foobar', murmur2: -790332482, positive: 1357151166, p25: 16, p7: 0 },
  { key: 'a-little-bit-long-string', murmur2: -985981536, positive: 1161502112, p25: 12, p7: 1 },
  { key: 'a-little-bit-longer-string', murmur2: -1486304829, positive: 661178819, p25: 19, p7: 0 },
  { key: 'lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', murmur2: -58897971, positive: 2088585677, p25: 2, p7: 3 },
  { key: 'café', murmur2: -1358007374, positive: 789476274, p25: 24, p7: 6 }
]

describe('murmur2', () => {
  for (const g of GOLDEN) {
    it(`hashes ${JSON.stringify(g.key)} to Kafka's value and partition`, () => {
      const bytes = Buffer.from(g.key, 'utf8')
      assert.equal(murmur2(bytes), g.murmur2)
      assert.equal(toPositive(g.murmur2), g.positive)
      assert.equal(partitionForKey(bytes, 25), g.p25)
      assert.equal(partitionForKey(bytes, 7), g.p7)
    })
  }

  it('hashes every byte value 0..255 like Kafka (high bytes are unsigned)', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i)
    assert.equal(murmur2(all), -1948347274)
  })

  it('clears the sign bit rather than taking the absolute value, as Utils.toPositive does', () => {
    assert.equal(toPositive(-1), 2147483647)
    assert.equal(toPositive(-2147483648), 0)
    assert.equal(toPositive(0), 0)
  })

  it('refuses a partition count that is not a positive integer', () => {
    assert.throws(() => partitionForKey(Buffer.from('a'), 0), RangeError)
  })
})
