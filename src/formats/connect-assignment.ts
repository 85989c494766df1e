/**
 * What a Connect worker runs, as its group shows it to DescribeGroups (protocol type `connect`): kmirror reads it
 * to tell whether a live MirrorMaker 2 copies a flow (runtime/mm2-worker-check.ts). Kafka's Struct encoding
 * (struct-codec.ts), as Connect writes it (ConnectProtocol, IncrementalCooperativeConnectProtocol):
 *
 *   Metadata (JoinGroup):    version INT16 (0 eager, 1 compatible, 2 sessioned), url STRING, configOffset INT64,
 *                            v1+: allocation NULLABLE_BYTES (the worker's whole assignment when it joined, encoded
 *                            as below), v2 may append more
 *   Assignment (SyncGroup):  version INT16, error INT16, leader STRING, leaderUrl STRING, configOffset INT64,
 *                            assigned [connector STRING, tasks [INT32]],
 *                            v1+: revoked [connector STRING, tasks [INT32]] (both arrays nullable), delay INT32
 *
 * A connector itself is listed as task -1 of its entry, its tasks as 0, 1, ... Eager (v0) assignments are whole;
 * incremental ones (v1+, KIP-415) are changes: what a worker runs now is its allocation at join, plus what the last
 * assignment added, minus what it revoked (`runningTasks`). Fields after those are ignored.
 *
 * Worked example (MM2 4.1.1, one worker, a flow with two source tasks): the worker joined running the three MM2
 * connectors (allocation: MirrorSourceConnector [-1], MirrorHeartbeatConnector [-1], MirrorCheckpointConnector [-1]);
 * the next assignment added MirrorSourceConnector [0, 1]: it runs tasks 0 and 1.
 */
import { StructReader } from './struct-codec.ts'

/** How Connect lists a connector (not one of its tasks) in an assignment. */
export const CONNECTOR_TASK = -1

type TaskMap = ReadonlyMap<string, readonly number[]>

export interface ConnectAssignment {
  readonly version: number
  readonly error: number
  readonly leader: string
  /** Connector name → task ids (CONNECTOR_TASK for the connector itself). Whole in v0, added in v1+. */
  readonly assigned: TaskMap
  /** v1+: what the worker stops. Empty in v0. */
  readonly revoked: TaskMap
}

export interface ConnectMemberMetadata {
  readonly version: number
  readonly url: string
  /** v1+: what the worker ran when it joined; null in v0 or for a worker that ran nothing. */
  readonly allocation: ConnectAssignment | null
}

function readTaskMap (r: StructReader, field: string): Map<string, number[]> {
  const out = new Map<string, number[]>()
  const count = r.readInt32(field)
  for (let i = 0; i < count; i++) {
    const connector = r.readString(`${field} connector`)
    const taskCount = r.readInt32(`${field} tasks`)
    const tasks: number[] = []
    for (let t = 0; t < taskCount; t++) tasks.push(r.readInt32(`${field} task`))
    out.set(connector, [...(out.get(connector) ?? []), ...tasks])
  }
  return out
}

/** Decodes a Connect worker's assignment; a truncated or garbled one is a DECODE error naming the field. */
export function decodeConnectAssignment (buf: Buffer): ConnectAssignment {
  const r = new StructReader(buf, 'Connect worker assignment')
  const version = r.readInt16('version')
  const error = r.readInt16('error')
  const leader = r.readString('leader')
  r.readString('leaderUrl')
  r.readInt64('configOffset')
  const assigned = readTaskMap(r, 'assignment')
  const revoked = version >= 1 ? readTaskMap(r, 'revoked') : new Map<string, number[]>()
  return { version, error, leader, assigned, revoked }
}

/** Decodes a Connect worker's JoinGroup metadata (its allocation decoded too). */
export function decodeConnectMemberMetadata (buf: Buffer): ConnectMemberMetadata {
  const r = new StructReader(buf, 'Connect worker metadata')
  const version = r.readInt16('version')
  const url = r.readString('url')
  r.readInt64('configOffset')
  const bytes = version >= 1 ? r.readNullableBytes('allocation') : null
  return { version, url, allocation: bytes === null || bytes.length === 0 ? null : decodeConnectAssignment(bytes) }
}

/**
 * The task ids of CONNECTOR (its connector entry left out) a worker runs: the last ASSIGNMENT if eager (v0);
 * otherwise its ALLOCATION at join plus what ASSIGNMENT added, minus what it revoked. Either may be missing
 * (a worker between JoinGroup and SyncGroup has no assignment yet).
 */
export function runningTasks (allocation: ConnectAssignment | null, assignment: ConnectAssignment | null, connector: string): number[] {
  const tasks = (map: TaskMap | undefined): number[] => (map?.get(connector) ?? []).filter(t => t !== CONNECTOR_TASK)
  if (assignment !== null && assignment.version === 0) return tasks(assignment.assigned)
  const revoked = new Set(tasks(assignment?.revoked))
  const running = new Set([...tasks(allocation?.assigned), ...tasks(assignment?.assigned)])
  return [...running].filter(t => !revoked.has(t)).sort((x, y) => x - y)
}
