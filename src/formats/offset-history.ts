import { encodeInt16, encodeInt32, encodeInt64, encodeString, StructReader } from './struct-codec.ts'

/**
 * kmirror's run-start record (topic `mm2-offset-history.<source>.internal` on the target; no MM2 equivalent).
 * One record per run of a partition: a stretch of copied records whose source and target offsets both advance
 * by one (see src/checkpoint/offset-history.ts). Compacted: the key includes the run's first source offset,
 * so each run keeps its own record, and the record is written again with its length when the run closes.
 *
 * key   = topic STRING (source name), partition INT32, upstreamOffset INT64
 * value = version INT16 (0 or 1), downstreamOffset INT64, length INT64, open INT8, [sourceTopicId STRING]
 *   open = 1: the run is still growing and `length` is how much of it was copied at the last progress flush;
 *   open = 0: the run ended after `length` records.
 *   sourceTopicId (version 1 only): the id of the source topic the run's records were copied from (Kafka 2.8+
 *   sources); version 0 when the source gave none. It tells a stored position of a topic deleted and created again
 *   since (while no kmirror copied it) from one of the topic there now (replication/source-recreated.ts).
 *
 * Same primitives as MM2's records (Kafka protocol Struct encoding); readers ignore trailing bytes, so a later
 * version may append fields (a kmirror before version 1 reads version 1 records as version 0, without the id).
 */
export const OFFSET_HISTORY_VERSION = 1

export interface OffsetHistoryKey {
  readonly topic: string
  readonly partition: number
  readonly upstreamOffset: number
}

export interface OffsetHistoryValue {
  readonly downstreamOffset: number
  /** Records in the run (so far, while it is open). */
  readonly length: number
  /** True while the run may still grow. */
  readonly open: boolean
  /** The source topic id the run was copied from; absent when the source gave none (before Kafka 2.8) or older records. */
  readonly sourceTopicId?: string
}

export interface OffsetHistoryRecord extends OffsetHistoryKey, OffsetHistoryValue {}

export function encodeOffsetHistoryKey (key: OffsetHistoryKey): Buffer {
  return Buffer.concat([
    encodeString(key.topic, 'OffsetHistory topic'),
    encodeInt32(key.partition, 'OffsetHistory partition'),
    encodeInt64(key.upstreamOffset, 'OffsetHistory upstreamOffset')
  ])
}

export function encodeOffsetHistoryValue (value: OffsetHistoryValue): Buffer {
  const id = value.sourceTopicId
  return Buffer.concat([
    encodeInt16(id === undefined ? 0 : OFFSET_HISTORY_VERSION, 'OffsetHistory version'),
    encodeInt64(value.downstreamOffset, 'OffsetHistory downstreamOffset'),
    encodeInt64(value.length, 'OffsetHistory length'),
    Buffer.from([value.open ? 1 : 0]),
    ...(id === undefined ? [] : [encodeString(id, 'OffsetHistory sourceTopicId')])
  ])
}

export function decodeOffsetHistoryKey (key: Buffer): OffsetHistoryKey {
  const reader = new StructReader(key, 'OffsetHistory key')
  return { topic: reader.readString('topic'), partition: reader.readInt32('partition'), upstreamOffset: reader.readInt64('upstreamOffset') }
}

/** Version 0 and later are read with the version-0 layout, then the id from version 1 on; later fields are ignored. */
export function decodeOffsetHistoryValue (value: Buffer): OffsetHistoryValue {
  const reader = new StructReader(value, 'OffsetHistory value')
  const version = reader.readInt16('version')
  const downstreamOffset = reader.readInt64('downstreamOffset')
  const length = reader.readInt64('length')
  const open = reader.readInt8('open') !== 0
  if (version < 1 || reader.remaining === 0) return { downstreamOffset, length, open }
  return { downstreamOffset, length, open, sourceTopicId: reader.readString('sourceTopicId') }
}
