import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { decodeHeartbeat, encodeHeartbeatKey, encodeHeartbeatValue, formatHeartbeat } from '../../../src/formats/heartbeat.ts'
import { hex } from './hex.ts'

/*
 * Golden bytes. "spec": mm2-spec §2.3. "jar": printed by Kafka 4.1.1's org.apache.kafka.connect.mirror.Heartbeat
 * (connect-mirror-client-4.1.1.jar) from a throwaway Java program calling recordKey()/recordValue() by reflection.
 */
const GOLDEN = [
  { from: 'spec', heartbeat: { sourceClusterAlias: 'A', targetClusterAlias: 'B', timestamp: 1700000000000 }, key: '0001 41 0001 42', value: '0000 | 0000018bcfe56800' },
  { from: 'jar', heartbeat: { sourceClusterAlias: 'us-west', targetClusterAlias: 'eu-é', timestamp: 0 }, key: '0007 75732d77657374 0005 65752dc3a9', value: '0000 | 0000000000000000' }
]

describe('Heartbeat format', () => {
  for (const { from, heartbeat, key, value } of GOLDEN) {
    it(`encodes ${JSON.stringify(heartbeat)} to the ${from} golden bytes and decodes them back`, () => {
      assert.deepEqual(encodeHeartbeatKey(heartbeat), hex(key))
      assert.deepEqual(encodeHeartbeatValue(heartbeat), hex(value))
      assert.deepEqual(decodeHeartbeat(hex(key), hex(value)), heartbeat)
    })
  }

  it('decodes a value of another version with the V0 schema and ignores trailing bytes, as Java does', () => {
    // Checked with Kafka 4.1.1: Heartbeat.deserializeRecord reads this as version 0 data.
    assert.deepEqual(decodeHeartbeat(hex('000141000142 ee'), hex('0007 0000018bcfe56800 ff')),
      { sourceClusterAlias: 'A', targetClusterAlias: 'B', timestamp: 1700000000000 })
  })

  it('throws a DECODE error naming the timestamp when the value is truncated', () => {
    assert.throws(() => decodeHeartbeat(hex('000141000142'), hex('0000 0000018b')), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.DECODE)
      assert.match(err.message, /Heartbeat value: field timestamp needs 8 bytes/)
      return true
    })
  })

  it('throws a DECODE error naming the key when the target alias is missing', () => {
    assert.throws(() => decodeHeartbeat(hex('000141'), hex('0000 0000018bcfe56800')), /Heartbeat key: field targetClusterAlias/)
  })

  it('prints the same line as MM2\'s HeartbeatFormatter', () => {
    assert.equal(formatHeartbeat({ sourceClusterAlias: 'A', targetClusterAlias: 'B', timestamp: 1700000000000 }),
      'Heartbeat{sourceClusterAlias=A, targetClusterAlias=B, timestamp=1700000000000}')
  })
})
