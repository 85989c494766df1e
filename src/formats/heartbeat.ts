import { encodeInt16, encodeInt64, encodeString, StructReader } from './struct-codec.ts'

/**
 * MM2's Heartbeat record (topic `heartbeats`, copied unchanged into `<source>.heartbeats`, mm2-spec §2.3).
 * key = sourceClusterAlias STRING, targetClusterAlias STRING; value = version INT16 (0), then V0: timestamp INT64.
 */

export const HEARTBEAT_VERSION = 0

export interface HeartbeatKey {
  readonly sourceClusterAlias: string
  readonly targetClusterAlias: string
}

export interface HeartbeatValue {
  /** Milliseconds since the epoch; MM2 also uses it as the record timestamp. */
  readonly timestamp: number
}

export interface Heartbeat extends HeartbeatKey, HeartbeatValue {}

export function encodeHeartbeatKey (key: HeartbeatKey): Buffer {
  return Buffer.concat([
    encodeString(key.sourceClusterAlias, 'Heartbeat sourceClusterAlias'),
    encodeString(key.targetClusterAlias, 'Heartbeat targetClusterAlias')
  ])
}

export function encodeHeartbeatValue (value: HeartbeatValue): Buffer {
  return Buffer.concat([encodeInt16(HEARTBEAT_VERSION, 'Heartbeat version'), encodeInt64(value.timestamp, 'Heartbeat timestamp')])
}

export function decodeHeartbeatKey (key: Buffer): HeartbeatKey {
  const reader = new StructReader(key, 'Heartbeat key')
  return { sourceClusterAlias: reader.readString('sourceClusterAlias'), targetClusterAlias: reader.readString('targetClusterAlias') }
}

/** Any version is read with the V0 schema, as Java does (its version check is an `assert`). */
export function decodeHeartbeatValue (value: Buffer): HeartbeatValue {
  const reader = new StructReader(value, 'Heartbeat value')
  reader.readInt16('version')
  return { timestamp: reader.readInt64('timestamp') }
}

export function decodeHeartbeat (key: Buffer, value: Buffer): Heartbeat {
  return { ...decodeHeartbeatKey(key), ...decodeHeartbeatValue(value) }
}

/** The line MM2's HeartbeatFormatter prints (KIP-597). */
export function formatHeartbeat (h: Heartbeat): string {
  return `Heartbeat{sourceClusterAlias=${h.sourceClusterAlias}, targetClusterAlias=${h.targetClusterAlias}, timestamp=${h.timestamp}}`
}
