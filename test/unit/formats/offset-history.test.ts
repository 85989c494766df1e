import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeOffsetHistoryKey, decodeOffsetHistoryValue, encodeOffsetHistoryKey, encodeOffsetHistoryValue } from '../../../src/formats/offset-history.ts'

describe('OffsetHistory records', () => {
  it('encodes the key as topic, partition and the run\'s first source offset, in Struct primitives', () => {
    assert.equal(encodeOffsetHistoryKey({ topic: 't1', partition: 3, upstreamOffset: 100 }).toString('hex'),
      '0002' + '7431' + '00000003' + '0000000000000064')
  })

  it('encodes the value as version 0, the target offset, the run length and whether the run is still open', () => {
    assert.equal(encodeOffsetHistoryValue({ downstreamOffset: 201, length: 5, open: true }).toString('hex'),
      '0000' + '00000000000000c9' + '0000000000000005' + '01')
  })

  it('decodes what it encodes, and ignores trailing bytes of a later version', () => {
    const key = { topic: 'orders.é', partition: 0, upstreamOffset: Number.MAX_SAFE_INTEGER }
    assert.deepEqual(decodeOffsetHistoryKey(encodeOffsetHistoryKey(key)), key)
    const value = Buffer.concat([encodeOffsetHistoryValue({ downstreamOffset: 7, length: 42, open: false }), Buffer.from('ffff', 'hex')])
    assert.deepEqual(decodeOffsetHistoryValue(value), { downstreamOffset: 7, length: 42, open: false })
  })

  it('encodes a run copied from a source topic with an id as version 1, the id last, as a STRING', () => {
    const id = 'AAAAAAAAAAAAAAAAAAAAAQ'
    assert.equal(encodeOffsetHistoryValue({ downstreamOffset: 201, length: 5, open: true, sourceTopicId: id }).toString('hex'),
      '0001' + '00000000000000c9' + '0000000000000005' + '01' + '0016' + Buffer.from(id).toString('hex'))
    assert.deepEqual(decodeOffsetHistoryValue(encodeOffsetHistoryValue({ downstreamOffset: 3, length: -1, open: true, sourceTopicId: id })),
      { downstreamOffset: 3, length: -1, open: true, sourceTopicId: id })
  })

  it('reads version 1 without the id when it is missing, and ignores what a later version appends after the id', () => {
    const v1NoId = Buffer.from('0001' + '0000000000000007' + '000000000000002a' + '00', 'hex')
    assert.deepEqual(decodeOffsetHistoryValue(v1NoId), { downstreamOffset: 7, length: 42, open: false })
    const later = Buffer.concat([encodeOffsetHistoryValue({ downstreamOffset: 7, length: 42, open: false, sourceTopicId: 'x' }), Buffer.from('ffff', 'hex')])
    later.writeInt16BE(2, 0)
    assert.deepEqual(decodeOffsetHistoryValue(later), { downstreamOffset: 7, length: 42, open: false, sourceTopicId: 'x' })
  })

  it('refuses a truncated value with a DECODE error naming the field', () => {
    assert.throws(() => decodeOffsetHistoryValue(Buffer.from('0000000000', 'hex')), { code: 'KMIRROR_ERR_DECODE', message: /downstreamOffset/ })
  })
})
