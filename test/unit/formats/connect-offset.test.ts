import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import {
  decodeConnectOffsetKey, decodeSourceOffsetKey, decodeSourceOffsetValue, encodeCheckpointOffsetKey,
  encodeHeartbeatOffsetKey, encodeSourceOffsetKey, encodeSourceOffsetValue, jacksonString
} from '../../../src/formats/connect-offset.ts'
import { partitionForKey } from '../../../src/formats/murmur2.ts'
import { assertDecodeError } from './decode-error.ts'

/*
 * Golden keys from Kafka 4.1.1's jars, printed by a throwaway Java program that built each key exactly as
 * Connect's OffsetStorageWriter does: JsonConverter (connect-json-4.1.1, schemas.enable=false, converter.type=key)
 * .fromConnectData(name, null, Arrays.asList(name, partitionMap)), where partitionMap came from the jar's own
 * MirrorUtils.wrapPartition(new TopicPartition(topic, partition), cluster) (a java.util.HashMap), and
 * partition25 = BuiltInPartitioner.partitionForKey(keyBytes, 25) from kafka-clients-4.1.1.
 * They show Jackson's escaping: `"` `\` and control characters escaped (upper-case hex), characters above
 * U+FFFF and lone surrogates written as \uXXXX escapes, DEL, U+2028 and C1 controls written raw.
 */
const SOURCE_KEYS = [
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'A', topic: 't1', partition: 0 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a2241222c22706172746974696f6e223a302c22746f706963223a227431227d5d', partition25: 4 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'us-west', topic: 'orders', partition: 12 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a2275732d77657374222c22706172746974696f6e223a31322c22746f706963223a226f7264657273227d5d', partition25: 9 },
  { key: { connectorName: 'my-mm2', cluster: 'A', topic: 't1', partition: 0 }, hex: '5b226d792d6d6d32222c7b22636c7573746572223a2241222c22706172746974696f6e223a302c22746f706963223a227431227d5d', partition25: 7 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'A"q', topic: 'a\\b', partition: 1 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a22415c2271222c22706172746974696f6e223a312c22746f706963223a22615c5c62227d5d', partition25: 20 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'caf\u00e9', topic: 'ctl\u0001x', partition: 2 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a22636166c3a9222c22706172746974696f6e223a322c22746f706963223a2263746c5c753030303178227d5d', partition25: 7 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'A', topic: 'nl\u000at\u0009b\u000d\u0008\u000c', partition: 3 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a2241222c22706172746974696f6e223a332c22746f706963223a226e6c5c6e745c74625c725c625c66227d5d', partition25: 17 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'A', topic: 'sl/<>&\'\u007f\u2028\ud83d\ude00', partition: 4 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a2241222c22706172746974696f6e223a342c22746f706963223a22736c2f3c3e26277fe280a85c75443833445c7544453030227d5d', partition25: 18 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'A', topic: 't1', partition: 1 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a2241222c22706172746974696f6e223a312c22746f706963223a227431227d5d', partition25: 18 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'A', topic: 't1', partition: 2 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a2241222c22706172746974696f6e223a322c22746f706963223a227431227d5d', partition25: 15 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'B', topic: 't2', partition: 0 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a2242222c22706172746974696f6e223a302c22746f706963223a227432227d5d', partition25: 11 },
  { key: { connectorName: 'MirrorSourceConnector', cluster: 'A', topic: 'c\u0000\u001b\u001f\u0080\u009f\ud800x\udc00', partition: 5 }, hex: '5b224d6972726f72536f75726365436f6e6e6563746f72222c7b22636c7573746572223a2241222c22706172746974696f6e223a352c22746f706963223a22635c75303030305c75303031425c7530303146c280c29f5c7544383030785c7544433030227d5d', partition25: 23 },
]

/** Checkpoint keys: partitionMap from the jar's Checkpoint.connectPartition(); heartbeat keys from Heartbeat.connectPartition(). */
const CHECKPOINT_KEYS = [
  { key: { group: 'g1', topic: 'A.t1', partition: 0 }, json: '["MirrorCheckpointConnector",{"partition":0,"topic":"A.t1","group":"g1"}]', partition25: 18 },
  { key: { group: 'grp"\u00e9', topic: 'B.x', partition: 9 }, json: '["MirrorCheckpointConnector",{"partition":9,"topic":"B.x","group":"grp\\"\u00e9"}]', partition25: 5 }
]
const HEARTBEAT_KEY = { json: '["MirrorHeartbeatConnector",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]', partition25: 0 }

describe('Connect source-offset records', () => {
  it('writes the MirrorSourceConnector key of spec §2.5 byte for byte, with the connector name defaulted', () => {
    const key = encodeSourceOffsetKey({ cluster: 'A', topic: 't1', partition: 0 })
    assert.equal(key.toString('utf8'), '["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]')
  })

  for (const { key, hex, partition25 } of SOURCE_KEYS) {
    it(`writes the source key for ${JSON.stringify(key)} exactly as Connect does, and Connect's partition of 25`, () => {
      const bytes = encodeSourceOffsetKey(key)
      assert.equal(bytes.toString('hex'), hex)
      assert.equal(partitionForKey(bytes, 25), partition25)
    })

    it(`reads the source key for ${JSON.stringify(key)} back from Connect's bytes`, () => {
      assert.deepEqual(decodeSourceOffsetKey(Buffer.from(hex, 'hex')), key)
    })
  }

  for (const { key, json, partition25 } of CHECKPOINT_KEYS) {
    it(`writes the MirrorCheckpointConnector key for ${JSON.stringify(key)} exactly as Connect does`, () => {
      const bytes = encodeCheckpointOffsetKey(key)
      assert.equal(bytes.toString('utf8'), json)
      assert.equal(partitionForKey(bytes, 25), partition25)
    })
  }

  it('writes the MirrorHeartbeatConnector key exactly as Connect does', () => {
    const bytes = encodeHeartbeatOffsetKey({ sourceClusterAlias: 'A', targetClusterAlias: 'B' })
    assert.equal(bytes.toString('utf8'), HEARTBEAT_KEY.json)
    assert.equal(partitionForKey(bytes, 25), HEARTBEAT_KEY.partition25)
  })

  it('returns null, without throwing, for the checkpoint and heartbeat connectors\' keys that share the topic', () => {
    assert.equal(decodeSourceOffsetKey(encodeCheckpointOffsetKey({ group: 'g1', topic: 'A.t1', partition: 0 })), null)
    assert.equal(decodeSourceOffsetKey(encodeHeartbeatOffsetKey({ sourceClusterAlias: 'A', targetClusterAlias: 'B' })), null)
  })

  it('returns null for keys of other connectors and for bytes that are not a Connect key', () => {
    const foreign = [
      '["jdbc-source",{"table":"orders"}]', '["MirrorSourceConnector",{"cluster":"A","partition":0}]',
      '["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1","extra":1}]',
      '["MirrorSourceConnector",{"cluster":"A","partition":"0","topic":"t1"}]',
      '["MirrorSourceConnector",{"cluster":"A","partition":-1,"topic":"t1"}]',
      '["MirrorSourceConnector",{"cluster":"A","partition":0.5,"topic":"t1"}]',
      '["MirrorSourceConnector",{"cluster":null,"partition":0,"topic":"t1"}]',
      '["MirrorSourceConnector",["A",0,"t1"]]', '[1,{"cluster":"A","partition":0,"topic":"t1"}]',
      '["MirrorSourceConnector"]', '{"cluster":"A"}', 'null', '', '["unterminated'
    ]
    for (const text of foreign) assert.equal(decodeSourceOffsetKey(Buffer.from(text, 'utf8')), null, text)
    assert.equal(decodeSourceOffsetKey(Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d])), null)
  })

  it('decodes a source key whose fields come in another order, by meaning', () => {
    assert.deepEqual(decodeSourceOffsetKey(Buffer.from('["c",{"topic":"t1","cluster":"A","partition":3}]')),
      { connectorName: 'c', cluster: 'A', topic: 't1', partition: 3 })
  })

  it('exposes any connector\'s key as its name and partition map', () => {
    assert.deepEqual(decodeConnectOffsetKey(Buffer.from(HEARTBEAT_KEY.json)),
      { connectorName: 'MirrorHeartbeatConnector', partition: { sourceClusterAlias: 'A', targetClusterAlias: 'B' } })
  })

  it('refuses to write a key with a partition that is not a non-negative INT32', () => {
    assert.throws(() => encodeSourceOffsetKey({ cluster: 'A', topic: 't', partition: -1 }), RangeError)
    assert.throws(() => encodeSourceOffsetKey({ cluster: 'A', topic: 't', partition: 2 ** 31 }), RangeError)
  })

  it('writes and reads values as {"offset":N}, as JsonConverter does (golden from connect-json-4.1.1)', () => {
    assert.equal(encodeSourceOffsetValue(0).toString('utf8'), '{"offset":0}')
    assert.equal(encodeSourceOffsetValue(42).toString('utf8'), '{"offset":42}')
    assert.equal(encodeSourceOffsetValue(-1).toString('utf8'), '{"offset":-1}')
    assert.equal(encodeSourceOffsetValue(9007199254740991).toString('hex'), '7b226f6666736574223a393030373139393235343734303939317d')
    assert.equal(decodeSourceOffsetValue(Buffer.from('{"offset":42}')), 42)
    assert.equal(decodeSourceOffsetValue(Buffer.from('{"offset":9007199254740991}')), 9007199254740991)
  })

  it('reads a null value as a tombstone that resets the offset', () => {
    assert.equal(decodeSourceOffsetValue(null), null)
  })

  it('throws a DECODE error for an offset beyond the safe-integer range instead of losing precision', () => {
    assertDecodeError(() => decodeSourceOffsetValue(Buffer.from('{"offset":9007199254740992}')), /safe range/)
    assertDecodeError(() => decodeSourceOffsetValue(Buffer.from('{"offset":9007199254740993}')), /safe range/)
    assert.throws(() => encodeSourceOffsetValue(2 ** 53), RangeError)
  })

  it('throws a DECODE error for values that are not an offset object', () => {
    for (const text of ['{}', '{"offset":"1"}', '{"offset":1.5}', '[1]', 'garbage', '']) {
      assertDecodeError(() => decodeSourceOffsetValue(Buffer.from(text)), /Connect source-offset value/)
    }
  })

  it('escapes strings the way Jackson does', () => {
    assert.equal(jacksonString('a"b\\c'), '"a\\"b\\\\c"')
    assert.equal(jacksonString('\b\t\n\f\r\u0000\u001f'), '"\\b\\t\\n\\f\\r\\u0000\\u001F"')
    assert.equal(jacksonString('é\u007f\u2028/'), '"é\u007f\u2028/"')
    assert.equal(jacksonString('\u{1F600}'), '"\\uD83D\\uDE00"')
  })
})
