import { encodeInt32, encodeInt64, encodeString, StructReader } from './struct-codec.ts'

/**
 * MM2's OffsetSync record (topic `mm2-offset-syncs.<alias>.internal`, mm2-spec §2.3): no version field.
 * key = topic STRING (the upstream name, not renamed), partition INT32; value = upstreamOffset INT64, offset INT64.
 */

export interface OffsetSyncKey {
  /** The upstream (source) topic name, as it is on the source cluster. */
  readonly topic: string
  readonly partition: number
}

export interface OffsetSyncValue {
  readonly upstreamOffset: number
  readonly downstreamOffset: number
}

export interface OffsetSync extends OffsetSyncKey, OffsetSyncValue {}

export function encodeOffsetSyncKey (key: OffsetSyncKey): Buffer {
  return Buffer.concat([encodeString(key.topic, 'OffsetSync topic'), encodeInt32(key.partition, 'OffsetSync partition')])
}

export function encodeOffsetSyncValue (value: OffsetSyncValue): Buffer {
  return Buffer.concat([
    encodeInt64(value.upstreamOffset, 'OffsetSync upstreamOffset'),
    encodeInt64(value.downstreamOffset, 'OffsetSync offset')
  ])
}

export function decodeOffsetSyncKey (key: Buffer): OffsetSyncKey {
  const reader = new StructReader(key, 'OffsetSync key')
  return { topic: reader.readString('topic'), partition: reader.readInt32('partition') }
}

export function decodeOffsetSyncValue (value: Buffer): OffsetSyncValue {
  const reader = new StructReader(value, 'OffsetSync value')
  return { upstreamOffset: reader.readInt64('upstreamOffset'), downstreamOffset: reader.readInt64('offset') }
}

/** Throws a DECODE KmirrorError for a truncated or out-of-range record; trailing bytes are ignored, as in Java. */
export function decodeOffsetSync (key: Buffer, value: Buffer): OffsetSync {
  return { ...decodeOffsetSyncKey(key), ...decodeOffsetSyncValue(value) }
}

/** The line MM2's OffsetSyncFormatter prints (KIP-597), e.g. `OffsetSync{topicPartition=t1-0, upstreamOffset=100, downstreamOffset=200}`. */
export function formatOffsetSync (sync: OffsetSync): string {
  return `OffsetSync{topicPartition=${sync.topic}-${sync.partition}, upstreamOffset=${sync.upstreamOffset}, downstreamOffset=${sync.downstreamOffset}}`
}
