import { encodeInt16, encodeInt32, encodeInt64, encodeString, StructReader } from './struct-codec.ts'

/**
 * MM2's Checkpoint record (topic `<source>.checkpoints.internal`, mm2-spec §2.3).
 * key = group STRING, topic STRING (the downstream name, e.g. `A.t1`), partition INT32;
 * value = version INT16 (0), then V0: upstreamOffset INT64, offset INT64, metadata STRING.
 */

export const CHECKPOINT_VERSION = 0

export interface CheckpointKey {
  readonly group: string
  /** The downstream (target-side) topic name. */
  readonly topic: string
  readonly partition: number
}

export interface CheckpointValue {
  readonly upstreamOffset: number
  readonly downstreamOffset: number
  /** The upstream commit's metadata. Java's serializer throws on null; MM2's task writes "" for a null metadata. */
  readonly metadata: string
}

export interface Checkpoint extends CheckpointKey, CheckpointValue {}

export function encodeCheckpointKey (key: CheckpointKey): Buffer {
  return Buffer.concat([
    encodeString(key.group, 'Checkpoint group'),
    encodeString(key.topic, 'Checkpoint topic'),
    encodeInt32(key.partition, 'Checkpoint partition')
  ])
}

/** Always version 0, the only version MM2 has ever written. */
export function encodeCheckpointValue (value: CheckpointValue): Buffer {
  return Buffer.concat([
    encodeInt16(CHECKPOINT_VERSION, 'Checkpoint version'),
    encodeInt64(value.upstreamOffset, 'Checkpoint upstreamOffset'),
    encodeInt64(value.downstreamOffset, 'Checkpoint offset'),
    encodeString(value.metadata, 'Checkpoint metadata')
  ])
}

export function decodeCheckpointKey (key: Buffer): CheckpointKey {
  const reader = new StructReader(key, 'Checkpoint key')
  return { group: reader.readString('group'), topic: reader.readString('topic'), partition: reader.readInt32('partition') }
}

/** Java checks the version only with a (disabled) `assert`, so every version is read with the V0 schema; so does kmirror. */
export function decodeCheckpointValue (value: Buffer): CheckpointValue {
  const reader = new StructReader(value, 'Checkpoint value')
  reader.readInt16('version')
  return {
    upstreamOffset: reader.readInt64('upstreamOffset'),
    downstreamOffset: reader.readInt64('offset'),
    metadata: reader.readString('metadata')
  }
}

export function decodeCheckpoint (key: Buffer, value: Buffer): Checkpoint {
  return { ...decodeCheckpointKey(key), ...decodeCheckpointValue(value) }
}

/**
 * A record of a checkpoints topic as a checkpoint, or null when it is not one (no key or value, a version or layout
 * it cannot read): MM2's readers skip such records, and so does every reader of kmirror.
 */
export function decodeCheckpointRecord (record: { readonly key: Buffer | null, readonly value: Buffer | null }): Checkpoint | null {
  if (record.key === null || record.value === null) return null
  try {
    return decodeCheckpoint(record.key, record.value)
  } catch {
    return null
  }
}

/** The line MM2's CheckpointFormatter prints (KIP-597). */
export function formatCheckpoint (c: Checkpoint): string {
  return `Checkpoint{consumerGroupId=${c.group}, topicPartition=${c.topic}-${c.partition}, ` +
    `upstreamOffset=${c.upstreamOffset}, downstreamOffset=${c.downstreamOffset}, metadata=${c.metadata}}`
}
