import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { encodeInt16, encodeInt32, encodeInt64, encodeString, StructReader } from '../../../src/formats/struct-codec.ts'
import { hex } from './hex.ts'
import { assertDecodeError } from './decode-error.ts'

describe('struct codec', () => {
  it('writes signed big-endian integers of 2, 4 and 8 bytes', () => {
    assert.deepEqual(encodeInt16(-2, 'f'), hex('fffe'))
    assert.deepEqual(encodeInt32(0x01020304, 'f'), hex('01020304'))
    assert.deepEqual(encodeInt64(-1, 'f'), hex('ffffffffffffffff'))
    assert.deepEqual(encodeInt64(Number.MAX_SAFE_INTEGER, 'f'), hex('001fffffffffffff'))
  })

  it('refuses to write integers that do not fit their type or are not integers', () => {
    assert.throws(() => encodeInt16(0x8000, 'version'), RangeError)
    assert.throws(() => encodeInt32(2 ** 31, 'partition'), /partition/)
    assert.throws(() => encodeInt64(Number.MAX_SAFE_INTEGER + 1, 'offset'), RangeError)
    assert.throws(() => encodeInt64(1.5, 'offset'), RangeError)
  })

  it('writes a string as an INT16 byte length then standard UTF-8', () => {
    assert.deepEqual(encodeString('é', 'f'), hex('0002 c3a9'))
    assert.deepEqual(encodeString('\u{1F600}', 'f'), hex('0004 f09f9880'))
    assert.deepEqual(encodeString('', 'f'), hex('0000'))
  })

  it('refuses strings longer than 32767 bytes and null, as Java does', () => {
    assert.equal(encodeString('a'.repeat(32767), 'f').length, 32769)
    assert.throws(() => encodeString('a'.repeat(32768), 'group'), /group.*32768 bytes/)
    assert.throws(() => encodeString(null as unknown as string, 'group'), /not nullable/)
  })

  it('reads fields in order and ignores trailing bytes', () => {
    const reader = new StructReader(hex('0002 6731 00000007 0000000000000064 ffff'), 'test')
    assert.equal(reader.readString('s'), 'g1')
    assert.equal(reader.readInt32('i'), 7)
    assert.equal(reader.readInt64('l'), 100)
  })

  it('reports a truncated field with the record part, the field and the byte position', () => {
    const reader = new StructReader(hex('0002 6731 0000'), 'OffsetSync key')
    reader.readString('topic')
    assertDecodeError(() => reader.readInt32('partition'), /cannot decode OffsetSync key: field partition needs 4 bytes of INT32 at byte 4, but only 2 remain/)
  })

  it('rejects a negative string length and a length beyond the buffer', () => {
    assertDecodeError(() => new StructReader(hex('ffff'), 'k').readString('topic'), /topic has a negative length -1/)
    assertDecodeError(() => new StructReader(hex('0005 6162'), 'k').readString('topic'), /topic needs 5 bytes/)
  })

  it('rejects an INT64 outside the safe-integer range instead of losing precision', () => {
    assertDecodeError(() => new StructReader(hex('0020000000000000'), 'v').readInt64('offset'), /9007199254740992.*safe-integer range/)
    assertDecodeError(() => new StructReader(hex('8000000000000000'), 'v').readInt64('offset'), /safe-integer range/)
    assert.equal(new StructReader(hex('ffe0000000000001'), 'v').readInt64('offset'), -Number.MAX_SAFE_INTEGER)
  })
})
