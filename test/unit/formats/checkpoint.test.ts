import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { decodeCheckpoint, decodeCheckpointRecord, encodeCheckpointKey, encodeCheckpointValue, formatCheckpoint } from '../../../src/formats/checkpoint.ts'
import { hex } from './hex.ts'

/*
 * Golden bytes. "spec": mm2-spec §2.3. "jar": printed by Kafka 4.1.1's org.apache.kafka.connect.mirror.Checkpoint
 * (connect-mirror-client-4.1.1.jar) from a throwaway Java program calling recordKey()/recordValue() by reflection.
 */
const GOLDEN = [
  { from: 'spec', checkpoint: { group: 'g1', topic: 'A.t1', partition: 0, upstreamOffset: 100, downstreamOffset: 201, metadata: '' },
    key: '0002 6731 | 0004 412e7431 | 00000000', value: '0000 | 0000000000000064 | 00000000000000c9 | 0000' },
  { from: 'jar', checkpoint: { group: 'grp-é', topic: 'B.A.orders', partition: 3, upstreamOffset: 5000000000, downstreamOffset: 4999999999, metadata: 'meta"data' },
    key: '0006 6772702dc3a9 | 000a 422e412e6f7264657273 | 00000003', value: '0000 | 000000012a05f200 | 000000012a05f1ff | 0009 6d6574612264617461' }
]

describe('Checkpoint format', () => {
  for (const { from, checkpoint, key, value } of GOLDEN) {
    it(`encodes ${JSON.stringify(checkpoint)} to the ${from} golden bytes and decodes them back`, () => {
      assert.deepEqual(encodeCheckpointKey(checkpoint), hex(key))
      assert.deepEqual(encodeCheckpointValue(checkpoint), hex(value))
      assert.deepEqual(decodeCheckpoint(hex(key), hex(value)), checkpoint)
    })
  }

  it('decodes a value of another version with the V0 schema and ignores trailing bytes, as Java does', () => {
    // Checked with Kafka 4.1.1: Checkpoint.deserializeRecord reads this as version 0 data.
    const checkpoint = decodeCheckpoint(hex('000267310004412e743100000000 ffff'), hex('0001 0000000000000064 00000000000000c9 0000 abcd'))
    assert.deepEqual(checkpoint, { group: 'g1', topic: 'A.t1', partition: 0, upstreamOffset: 100, downstreamOffset: 201, metadata: '' })
  })

  it('throws a DECODE error naming the metadata field when the value stops before it', () => {
    assert.throws(() => decodeCheckpoint(hex('000267310004412e743100000000'), hex('0000 0000000000000064 00000000000000c9')), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.DECODE)
      assert.match(err.message, /Checkpoint value: field metadata \(length\)/)
      return true
    })
  })

  it('throws a DECODE error naming the key when the group string is longer than the key', () => {
    assert.throws(() => decodeCheckpoint(hex('0009 6731'), hex('0000 0000000000000064 00000000000000c9 0000')), /Checkpoint key: field group/)
  })

  it('prints the same line as MM2\'s CheckpointFormatter', () => {
    assert.equal(formatCheckpoint({ group: 'g1', topic: 'A.t1', partition: 0, upstreamOffset: 100, downstreamOffset: 201, metadata: '' }),
      'Checkpoint{consumerGroupId=g1, topicPartition=A.t1-0, upstreamOffset=100, downstreamOffset=201, metadata=}')
  })

  it('reads a checkpoints-topic record as a checkpoint, or null for a tombstone, a missing key or bytes it cannot decode', () => {
    const key = hex('000267310004412e743100000000')
    const value = hex('0000 0000000000000064 00000000000000c9 0000')
    assert.deepEqual(decodeCheckpointRecord({ key, value }), { group: 'g1', topic: 'A.t1', partition: 0, upstreamOffset: 100, downstreamOffset: 201, metadata: '' })
    assert.equal(decodeCheckpointRecord({ key, value: null }), null)
    assert.equal(decodeCheckpointRecord({ key: null, value }), null)
    assert.equal(decodeCheckpointRecord({ key: hex('0009 6731'), value }), null)
  })
})
