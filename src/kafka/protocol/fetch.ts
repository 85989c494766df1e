/**
 * Fetch (key 1), v10-v17, with record batches kept as bytes (the client library's Fetch decodes and
 * decompresses every record; batch forwarding needs neither). A consumer's fetch, full and session-less unless the
 * request names a fetch session (KIP-227, every version here has them; the session state is fetch-session.ts).
 *
 * Version notes (Kafka's FetchRequest/FetchResponse.json): v10 is Kafka 2.1 (zstd, KIP-110); v11 adds the rack id;
 * v12 is flexible; v13 names topics by id instead of name (KIP-516); v15 drops ReplicaId from the request body
 * (a tagged ReplicaState that consumers leave out, KIP-903); v16-v17 only add tagged fields kmirror does not read.
 */
import type { ApiSpec } from './api.ts'
import type { ByteWriter } from './wire.ts'

/**
 * First version naming topics by id (KIP-516). A broker may offer it and still have no topic ids (Kafka 3.1+ in
 * ZooKeeper mode with inter.broker.protocol.version below 2.8): a fetch of a topic without an id stays at v12.
 */
export const FETCH_TOPIC_IDS_FROM = 13

export interface FetchRequest {
  readonly maxWaitMs: number
  readonly minBytes: number
  readonly maxBytes: number
  /** 0 read_uncommitted, 1 read_committed. */
  readonly isolationLevel: number
  readonly topics: readonly FetchTopic[]
  /** The fetch session (KIP-227): id 0 and epoch -1 (the default) is a session-less full fetch. */
  readonly sessionId?: number
  readonly sessionEpoch?: number
  /** Partitions to remove from the session (incremental requests only), by name up to v12, by id from v13. */
  readonly forgotten?: readonly { name: string, id: string | null, partitions: readonly number[] }[]
}

export interface FetchTopic {
  readonly name: string
  /** Needed from v13 on (the broker's topic id); ignored below. */
  readonly id: string | null
  readonly partitions: readonly { partition: number, fetchOffset: bigint, partitionMaxBytes: number }[]
}

export interface FetchPartitionResponse {
  readonly partitionIndex: number
  readonly errorCode: number
  readonly highWatermark: bigint
  readonly lastStableOffset: bigint
  readonly logStartOffset: bigint
  readonly abortedTransactions: readonly { producerId: bigint, firstOffset: bigint }[]
  /** The partition's record batches as the broker sent them (the last one may be cut off), or null. */
  readonly records: Buffer | null
}

export interface FetchResponse {
  /** The session the broker keeps for this client, 0 for none. */
  readonly sessionId: number
  /** Set when the client exceeded a quota: the broker expects no request from it for this long (KIP-219). */
  readonly throttleTimeMs: number
  readonly errorCode: number
  /** `topic` up to v12, `topicId` from v13: the other is null. */
  readonly responses: readonly { topic: string | null, topicId: string | null, partitions: readonly FetchPartitionResponse[] }[]
}

const NO_ID = '00000000-0000-0000-0000-000000000000'

export const FetchApi: ApiSpec<FetchRequest, FetchResponse> = {
  key: 1,
  name: 'Fetch',
  minVersion: 10,
  maxVersion: 17,
  flexibleFrom: 12,
  encode (w, version, request) {
    if (version < 15) w.int32(-1) // replica_id: a consumer
    w.int32(request.maxWaitMs).int32(request.minBytes).int32(request.maxBytes).int8(request.isolationLevel)
    w.int32(request.sessionId ?? 0).int32(request.sessionEpoch ?? -1) // default: no session (id 0, epoch -1)
    w.structs(request.topics, (w, topic) => {
      writeTopic(w, version, topic)
      w.structs(topic.partitions, (w, p) => {
        w.int32(p.partition).int32(-1).int64(p.fetchOffset) // current_leader_epoch -1: not checked
        if (version >= 12) w.int32(-1) // last_fetched_epoch
        w.int64(-1n).int32(p.partitionMaxBytes) // log_start_offset: only followers send one
      })
    })
    w.structs(request.forgotten ?? [], (w, topic) => {
      writeTopic(w, version, topic)
      w.int32s(topic.partitions)
    })
    if (version >= 11) w.string('') // rack_id
    w.tags()
  },
  decode (r, version) {
    const throttleTimeMs = r.int32()
    const errorCode = r.int16()
    const sessionId = r.int32()
    const responses = r.structs(r => {
      const topic = version < FETCH_TOPIC_IDS_FROM ? r.string() : null
      const topicId = version >= FETCH_TOPIC_IDS_FROM ? r.uuid() : null
      const partitions = r.structs((r): FetchPartitionResponse => {
        const partitionIndex = r.int32()
        const partitionError = r.int16()
        const highWatermark = r.int64()
        const lastStableOffset = r.int64()
        const logStartOffset = r.int64()
        const abortedTransactions = r.nullableStructs(r => ({ producerId: r.int64(), firstOffset: r.int64() })) ?? []
        if (version >= 11) r.int32() // preferred_read_replica
        const bytes = r.bytes()
        const records = bytes === null || bytes.length === 0 ? null : bytes
        return { partitionIndex, errorCode: partitionError, highWatermark, lastStableOffset, logStartOffset, abortedTransactions, records }
      })
      return { topic, topicId, partitions }
    })
    r.tags()
    return { throttleTimeMs, errorCode, sessionId, responses }
  }
}

/** A topic by id from v13 on, by name before. */
function writeTopic (w: ByteWriter, version: number, topic: { name: string, id: string | null }): void {
  if (version >= FETCH_TOPIC_IDS_FROM) {
    if (topic.id === null || topic.id === NO_ID) throw new RangeError(`Fetch v${version} needs the id of topic ${topic.name}`)
    w.uuid(topic.id)
  } else {
    w.string(topic.name)
  }
}
