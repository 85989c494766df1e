import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ByteReader, ByteWriter } from '../../../../src/kafka/protocol/wire.ts'

describe('wire primitives', () => {
  test('classic encodings: int16 string lengths, int32 array and bytes lengths, -1 for null', () => {
    const w = new ByteWriter(false).string('ab').string(null).bytes(null).structs([1, 2], (w, n) => { w.int8(n) }).structs(null, () => undefined).tags()
    assert.equal(w.toBuffer().toString('hex'), '0002' + '6162' + 'ffff' + 'ffffffff' + '00000002' + '01' + '02' + 'ffffffff')
  })

  test('compact encodings: unsigned varint length + 1, 0 for null, a tagged-field section after each struct', () => {
    const w = new ByteWriter(true).string('ab').string(null).bytes(null).structs([1, 2], (w, n) => { w.int8(n) }).int32s([7]).tags()
    assert.equal(w.toBuffer().toString('hex'), '03' + '6162' + '00' + '00' + '03' + '0100' + '0200' + '02' + '00000007' + '00')
  })

  test('unsigned varints of every length round-trip', () => {
    for (const n of [0, 1, 127, 128, 300, 16_383, 16_384, 2_097_151, 2_097_152, 2 ** 31 - 1, 2 ** 32 - 1]) {
      const bytes = new ByteWriter(true).uvarint(n).toBuffer()
      assert.equal(new ByteReader(bytes, true).uvarint(), n, String(n))
    }
  })

  test('a record batch is carried as its own chunk, never copied, and read back as a view of the response', () => {
    const batch = Buffer.from('0123456789abcdef', 'hex')
    const chunks = new ByteWriter(false).int16(1).bytes(batch).int16(2).chunks()
    assert.equal(chunks.length, 3)
    assert.equal(chunks[1], batch)
    const whole = Buffer.concat(chunks)
    const r = new ByteReader(whole, false)
    r.int16()
    const read = r.bytes()!
    assert.equal(read.buffer, whole.buffer)
    assert.deepEqual(read, batch)
    assert.equal(r.int16(), 2)
    assert.equal(r.remaining, 0)
  })

  test('tagged fields the reader does not know are skipped; a UUID reads in Kafka\'s dashed form', () => {
    const bytes = Buffer.concat([Buffer.from('02' + '00' + '02' + 'aaaa' + '05' + '01' + 'bb', 'hex'), Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex')])
    const r = new ByteReader(bytes, true)
    r.tags()
    assert.equal(r.uuid(), '00010203-0405-0607-0809-0a0b0c0d0e0f')
    assert.equal(r.remaining, 0)
  })

  test('a truncated response is an error, not garbage', () => {
    assert.throws(() => new ByteReader(Buffer.from('0005616263', 'hex'), false).string(), /response ends at byte 5, 5 more bytes expected at byte 2/)
  })
})
