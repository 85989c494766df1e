import { ErrorCodes, KmirrorError } from '../errors.ts'

/**
 * Kafka Connect source-offset records, as MM2's connectors leave them in `mm2-offsets.<source>.internal`
 * (mm2-spec §2.5). Connect's OffsetStorageWriter serializes `[connectorName, partitionMap]` with the
 * internal JsonConverter (schemas.enable=false): compact JSON, no spaces. Connect finds offsets by the
 * exact key bytes, so kmirror must write byte-identical keys for MM2 to pick up where kmirror stopped.
 *
 * Two details make the bytes what they are (both checked against Kafka 4.1.1's jars):
 * - the partition map is a java.util.HashMap, so its fields come in HashMap iteration order, which for
 *   these fixed key names is: source `cluster, partition, topic`; checkpoint `partition, topic, group`;
 *   heartbeat `sourceClusterAlias, targetClusterAlias`;
 * - Jackson escapes strings its own way (see `jacksonString`).
 */

export const MirrorConnectorNames = {
  SOURCE: 'MirrorSourceConnector',
  CHECKPOINT: 'MirrorCheckpointConnector',
  HEARTBEAT: 'MirrorHeartbeatConnector'
} as const

export interface SourceOffsetKey {
  /** The Connect connector name: the class's simple name in dedicated mode, the user's name in Connect mode. */
  readonly connectorName: string
  /** The source cluster alias. */
  readonly cluster: string
  /** The upstream topic name. */
  readonly topic: string
  readonly partition: number
}

export type SourceOffsetKeyInput = Omit<SourceOffsetKey, 'connectorName'> & { readonly connectorName?: string }

export interface CheckpointOffsetKeyInput {
  readonly connectorName?: string
  readonly group: string
  /** The downstream topic name, as in the Checkpoint record. */
  readonly topic: string
  readonly partition: number
}

export interface HeartbeatOffsetKeyInput {
  readonly connectorName?: string
  readonly sourceClusterAlias: string
  readonly targetClusterAlias: string
}

type JsonField = readonly [name: string, value: string | number]

export function encodeSourceOffsetKey (key: SourceOffsetKeyInput): Buffer {
  return encodeConnectKey(key.connectorName ?? MirrorConnectorNames.SOURCE, [
    ['cluster', key.cluster], ['partition', checkPartition(key.partition)], ['topic', key.topic]
  ])
}

export function encodeCheckpointOffsetKey (key: CheckpointOffsetKeyInput): Buffer {
  return encodeConnectKey(key.connectorName ?? MirrorConnectorNames.CHECKPOINT, [
    ['partition', checkPartition(key.partition)], ['topic', key.topic], ['group', key.group]
  ])
}

export function encodeHeartbeatOffsetKey (key: HeartbeatOffsetKeyInput): Buffer {
  return encodeConnectKey(key.connectorName ?? MirrorConnectorNames.HEARTBEAT, [
    ['sourceClusterAlias', key.sourceClusterAlias], ['targetClusterAlias', key.targetClusterAlias]
  ])
}

/** `{"offset":N}`: for the source connector N is the last replicated upstream offset; the other two always write 0. */
export function encodeSourceOffsetValue (offset: number): Buffer {
  if (!Number.isSafeInteger(offset)) throw new RangeError(`a Connect source offset must be a safe integer, got ${offset}`)
  return Buffer.from(`{"offset":${offset}}`, 'utf8')
}

/**
 * The source connector's key, or null for anything else: keys of MM2's checkpoint and heartbeat connectors
 * (they share the topic), of other connectors, or not JSON at all. Never throws, since the topic holds
 * whatever any connector wrote. Decoding is by meaning: a key with other field order still decodes here,
 * although MM2 itself would not find it (it looks keys up by bytes).
 */
export function decodeSourceOffsetKey (buf: Buffer): SourceOffsetKey | null {
  const key = decodeConnectOffsetKey(buf)
  if (key === null) return null
  const { cluster, partition, topic } = key.partition
  if (!hasExactly(key.partition, ['cluster', 'partition', 'topic'])) return null
  if (typeof cluster !== 'string' || typeof topic !== 'string' || !isPartition(partition)) return null
  return { connectorName: key.connectorName, cluster, topic, partition }
}

/** Any Connect offset key `[connectorName, {partition map}]`, or null when the bytes are not one. */
export function decodeConnectOffsetKey (buf: Buffer): { connectorName: string, partition: Readonly<Record<string, unknown>> } | null {
  const parsed = parseJson(buf)
  if (!Array.isArray(parsed) || parsed.length !== 2) return null
  const [connectorName, partition] = parsed as unknown[]
  if (typeof connectorName !== 'string' || !isPlainObject(partition)) return null
  return { connectorName, partition }
}

/**
 * The offset in a source-offset value; null for a tombstone (a null value resets the offset).
 * Throws a DECODE KmirrorError for anything but an object with an integral `offset` in the safe range.
 */
export function decodeSourceOffsetValue (buf: Buffer | null): number | null {
  if (buf === null) return null
  const parsed = parseJson(buf)
  const offset = isPlainObject(parsed) ? parsed.offset : undefined
  if (typeof offset === 'number' && Number.isSafeInteger(offset)) return offset
  const problem = typeof offset === 'number'
    ? `its offset ${offset} is not an integer in the safe range (larger values lose precision in JSON.parse)`
    : 'it is not a JSON object with a numeric "offset"'
  throw new KmirrorError(ErrorCodes.DECODE, `cannot decode Connect source-offset value: ${problem}`, {
    details: { record: 'Connect source-offset value', text: buf.subarray(0, 200).toString('utf8') }
  })
}

function encodeConnectKey (connectorName: string, fields: readonly JsonField[]): Buffer {
  const members = fields.map(([name, value]) => `${jacksonString(name)}:${typeof value === 'number' ? String(value) : jacksonString(value)}`)
  return Buffer.from(`[${jacksonString(connectorName)},{${members.join(',')}}]`, 'utf8')
}

const SHORT_ESCAPES: Readonly<Record<number, string>> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' }

/**
 * A JSON string as Jackson's UTF8JsonGenerator writes it: `"` and `\` escaped; control characters as
 * \b \t \n \f \r or `\u00XX` (upper-case hex); UTF-16 surrogates (every character above U+FFFF, and lone
 * surrogates) as `\uXXXX` escapes; everything else, DEL and U+2028 included, raw UTF-8.
 * Example: "é😀\u0001" → `"é\uD83D\uDE00\u0001"`.
 */
export function jacksonString (value: string): string {
  if (typeof value !== 'string') throw new RangeError(`a Connect offset key field must be a string, got ${String(value)}`)
  let out = '"'
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i)
    const short = SHORT_ESCAPES[unit]
    if (short !== undefined) out += short
    else if (unit < 0x20 || (unit >= 0xd800 && unit <= 0xdfff)) out += `\\u${unit.toString(16).toUpperCase().padStart(4, '0')}`
    else out += value.charAt(i)
  }
  return `${out}"`
}

/** Strict UTF-8 then JSON; null for either failing. */
function parseJson (buf: Buffer): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf))
  } catch {
    return null
  }
}

function checkPartition (partition: number): number {
  if (!isPartition(partition)) throw new RangeError(`a partition must be an integer in [0, 2147483647], got ${partition}`)
  return partition
}

function isPartition (value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0x7fffffff
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function hasExactly (obj: Record<string, unknown>, names: readonly string[]): boolean {
  const keys = Object.keys(obj)
  return keys.length === names.length && names.every(n => Object.hasOwn(obj, n))
}
