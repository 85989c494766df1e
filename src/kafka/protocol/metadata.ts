/**
 * Metadata (key 3), v7-v12: brokers, and per asked topic its id and each partition's leader. Unlike the client
 * library's metadata, a topic the cluster does not have or a partition without a leader is an answer (an error
 * code in its entry), never a failure of the whole request: the caller decides what waits.
 *
 * Version notes (Kafka's MetadataRequest/MetadataResponse.json): v7 is Kafka 2.1 (leader epochs); v8 adds
 * authorized operations; v9 is flexible; v10 adds topic ids (all zeros from brokers without them); v11 drops the
 * cluster's authorized operations (KIP-700); v12 allows a null topic name (lookup by id, not used here).
 */
import type { ApiSpec } from './api.ts'

export interface MetadataRequest {
  /** Topic names; null asks for every topic, [] for none (brokers only). Never auto-created. */
  readonly topics: readonly string[] | null
}

export interface MetadataPartition {
  readonly index: number
  readonly errorCode: number
  /** -1 while the partition has no leader. */
  readonly leader: number
  readonly leaderEpoch: number
}

export interface MetadataTopic {
  readonly name: string
  readonly errorCode: number
  /** Null before v10 and from brokers without topic ids. */
  readonly id: string | null
  readonly isInternal: boolean
  readonly partitions: readonly MetadataPartition[]
}

export interface MetadataBroker {
  readonly nodeId: number
  readonly host: string
  readonly port: number
  readonly rack: string | null
}

export interface MetadataResponse {
  readonly throttleTimeMs: number
  readonly brokers: ReadonlyMap<number, MetadataBroker>
  readonly clusterId: string | null
  readonly controllerId: number
  readonly topics: ReadonlyMap<string, MetadataTopic>
}

const NO_ID = '00000000-0000-0000-0000-000000000000'

export const MetadataApi: ApiSpec<MetadataRequest, MetadataResponse> = {
  key: 3,
  name: 'Metadata',
  minVersion: 7,
  maxVersion: 12,
  flexibleFrom: 9,
  encode (w, version, request) {
    w.structs(request.topics, (w, name) => {
      if (version >= 10) w.uuid(null)
      w.string(name)
    })
    w.bool(false) // allow_auto_topic_creation
    if (version >= 8 && version <= 10) w.bool(false) // include_cluster_authorized_operations
    if (version >= 8) w.bool(false) // include_topic_authorized_operations
    w.tags()
  },
  decode (r, version) {
    const throttleTimeMs = r.int32()
    const brokers = new Map<number, MetadataBroker>()
    r.structs(r => {
      const nodeId = r.int32()
      brokers.set(nodeId, { nodeId, host: r.string(), port: r.int32(), rack: r.nullableString() })
    })
    const clusterId = r.nullableString()
    const controllerId = r.int32()
    const topics = new Map<string, MetadataTopic>()
    r.structs(r => {
      const errorCode = r.int16()
      const name = r.nullableString()
      const rawId = version >= 10 ? r.uuid() : NO_ID
      const isInternal = r.bool()
      const partitions = r.structs((r): MetadataPartition => {
        const partitionError = r.int16()
        const index = r.int32()
        const leader = r.int32()
        const leaderEpoch = r.int32()
        r.int32s() // replica_nodes
        r.int32s() // isr_nodes
        r.int32s() // offline_replicas
        return { index, errorCode: partitionError, leader, leaderEpoch }
      })
      if (version >= 8) r.int32() // topic_authorized_operations
      if (name !== null) topics.set(name, { name, errorCode, id: rawId === NO_ID ? null : rawId, isInternal, partitions })
    })
    if (version >= 8 && version <= 10) r.int32() // cluster_authorized_operations
    r.tags()
    return { throttleTimeMs, brokers, clusterId, controllerId, topics }
  }
}

/** Each partition's leader by partition index; -1 for a partition without a leader or with an error. */
export function partitionLeaders (topic: MetadataTopic): number[] {
  const leaders: number[] = []
  for (const p of topic.partitions) leaders[p.index] = p.errorCode === 0 ? p.leader : -1
  return leaders
}
