/**
 * ListOffsets (key 2), v4-v9: a partition's offset for a timestamp (-2 earliest, -1 latest), asked of its leader.
 * Partition errors are answers: kmirror also uses this as a cheap probe of whether a broker leads a partition yet.
 *
 * Version notes (Kafka's ListOffsetsRequest/ListOffsetsResponse.json): v4 is Kafka 2.1 (leader epochs); v6 is
 * flexible; v7 adds timestamp -3 (max timestamp), v8 -4 and v9 -5 (tiered storage): the request layout is the
 * same from v4 to v9. v10 adds a timeout field and is not spoken.
 */
import type { ApiSpec } from './api.ts'

export const ListOffsetTimestamps = { LATEST: -1n, EARLIEST: -2n } as const

export interface ListOffsetsRequest {
  /** 0 read_uncommitted, 1 read_committed (the latest offset is then the last stable offset). */
  readonly isolationLevel: number
  readonly topics: readonly { name: string, partitions: readonly { partition: number, timestamp: bigint }[] }[]
}

export interface ListOffsetsPartitionResponse {
  readonly partition: number
  readonly errorCode: number
  readonly timestamp: bigint
  readonly offset: bigint
  readonly leaderEpoch: number
}

export interface ListOffsetsResponse {
  readonly throttleTimeMs: number
  readonly topics: readonly { name: string, partitions: readonly ListOffsetsPartitionResponse[] }[]
}

export const ListOffsetsApi: ApiSpec<ListOffsetsRequest, ListOffsetsResponse> = {
  key: 2,
  name: 'ListOffsets',
  minVersion: 4,
  maxVersion: 9,
  flexibleFrom: 6,
  encode (w, _version, request) {
    w.int32(-1).int8(request.isolationLevel) // replica_id: a consumer
    w.structs(request.topics, (w, topic) => {
      w.string(topic.name).structs(topic.partitions, (w, p) => { w.int32(p.partition).int32(-1).int64(p.timestamp) })
    })
    w.tags()
  },
  decode (r) {
    const throttleTimeMs = r.int32()
    const topics = r.structs(r => ({
      name: r.string(),
      partitions: r.structs((r): ListOffsetsPartitionResponse => ({
        partition: r.int32(), errorCode: r.int16(), timestamp: r.int64(), offset: r.int64(), leaderEpoch: r.int32()
      }))
    }))
    r.tags()
    return { throttleTimeMs, topics }
  }
}
