import { encodeInt16, encodeInt32, encodeInt64, encodeString, StructReader } from './struct-codec.ts'

/**
 * kmirror's run-start record (topic `mm2-offset-history.<source>.internal` on the target; no MM2 equivalent).
 * One record per run of a partition: a stretch of copied records whose source and target offsets both advance
 * by one (see src/checkpoint/offset-history.ts). Compacted: the key includes the run's first source offset,
 * so each run keeps its own record, and the record is written again with its length when the run closes.
 *
 * key   = topic STRING (source name), partition INT32, upstreamOffset INT64
 * value = version INT16 (0), downstreamOffset INT64, length INT64, open INT8
 *   open = 1: the run is still growing and `length` is how much of it was copied at the last progress flush;
 *   open = 0: the run ended after `length` records.
 *
 * Same primitives as MM2's records (Kafka protocol Struct encoding); readers ignore trailing bytes, so a later
 * version may append fields.
 */
export const OFFSET_HISTORY_VERSION = 0

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
  return Buffer.concat([
    encodeInt16(OFFSET_HISTORY_VERSION, 'OffsetHistory version'),
    encodeInt64(value.downstreamOffset, 'OffsetHistory downstreamOffset'),
    encodeInt64(value.length, 'OffsetHistory length'),
    Buffer.from([value.open ? 1 : 0])
  ])
}

export function decodeOffsetHistoryKey (key: Buffer): OffsetHistoryKey {
  const reader = new StructReader(key, 'OffsetHistory key')
  return { topic: reader.readString('topic'), partition: reader.readInt32('partition'), upstreamOffset: reader.readInt64('upstreamOffset') }
}

/** Any version is read with the version-0 layout, as MM2 does for its own records. */
export function decodeOffsetHistoryValue (value: Buffer): OffsetHistoryValue {
  const reader = new StructReader(value, 'OffsetHistory value')
  reader.readInt16('version')
  const downstreamOffset = reader.readInt64('downstreamOffset')
  const length = reader.readInt64('length')
  return { downstreamOffset, length, open: reader.readInt8('open') !== 0 }
}
