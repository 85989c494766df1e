import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { decodeOffsetSync, encodeOffsetSyncKey, encodeOffsetSyncValue, formatOffsetSync } from '../../../src/formats/offset-sync.ts'
import { hex } from './hex.ts'

/*
 * Golden bytes. "spec" ones are the hex examples of mm2-spec §2.3. "jar" ones were printed by Kafka 4.1.1's
 * own org.apache.kafka.connect.mirror.OffsetSync (connect-mirror-client-4.1.1.jar): a throwaway Java program
 * built `new OffsetSync(new TopicPartition(topic, partition), up, down)` and called its package-private
 * recordKey()/recordValue() through reflection.
 */
const GOLDEN = [
  { from: 'spec', sync: { topic: 't1', partition: 0, upstreamOffset: 100, downstreamOffset: 200 }, key: '0002 7431 00000000', value: '0000000000000064 00000000000000c8' },
  { from: 'jar', sync: { topic: 'topic-é', partition: 2147483647, upstreamOffset: 9007199254740991, downstreamOffset: -1 }, key: '0008 746f7069632dc3a9 7fffffff', value: '001fffffffffffff ffffffffffffffff' },
  { from: 'jar', sync: { topic: 'orders', partition: 7, upstreamOffset: 100, downstreamOffset: 200 }, key: '0006 6f7264657273 00000007', value: '0000000000000064 00000000000000c8' },
  { from: 'jar', sync: { topic: 'smile\u{1F600}', partition: 7, upstreamOffset: 100, downstreamOffset: 200 }, key: '0009 736d696c65f09f9880 00000007', value: '0000000000000064 00000000000000c8' },
  { from: 'jar', sync: { topic: 'ctl\u0001x', partition: 7, upstreamOffset: 100, downstreamOffset: 200 }, key: '0005 63746c0178 00000007', value: '0000000000000064 00000000000000c8' },
  { from: 'jar', sync: { topic: '', partition: 7, upstreamOffset: 100, downstreamOffset: 200 }, key: '0000 00000007', value: '0000000000000064 00000000000000c8' }
]

describe('OffsetSync format', () => {
  for (const { from, sync, key, value } of GOLDEN) {
    it(`encodes ${JSON.stringify(sync)} to the ${from} golden bytes and decodes them back`, () => {
      assert.deepEqual(encodeOffsetSyncKey(sync), hex(key))
      assert.deepEqual(encodeOffsetSyncValue(sync), hex(value))
      assert.deepEqual(decodeOffsetSync(hex(key), hex(value)), sync)
    })
  }

  it('ignores trailing bytes after the key and the value, as Java does', () => {
    assert.deepEqual(decodeOffsetSync(hex('0002743100000000 99'), hex('000000000000006400000000000000c8 ff')),
      { topic: 't1', partition: 0, upstreamOffset: 100, downstreamOffset: 200 })
  })

  it('throws a DECODE error naming the key when the key is truncated', () => {
    assert.throws(() => decodeOffsetSync(hex('0002743100'), hex('000000000000006400000000000000c8')), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.DECODE)
      assert.match(err.message, /OffsetSync key.*partition/)
      return true
    })
  })

  it('throws a DECODE error naming the value when the downstream offset is truncated', () => {
    assert.throws(() => decodeOffsetSync(hex('0002743100000000'), hex('0000000000000064 000000')), /OffsetSync value: field offset/)
  })

  it('prints the same line as MM2\'s OffsetSyncFormatter', () => {
    assert.equal(formatOffsetSync({ topic: 't1', partition: 0, upstreamOffset: 100, downstreamOffset: 200 }),
      'OffsetSync{topicPartition=t1-0, upstreamOffset=100, downstreamOffset=200}')
  })
})
