/**
 * Produce (key 0), v7-v11, with ready-made record batches (one per partition: the broker refuses more in one
 * request). Partition errors are answers, never thrown.
 *
 * Version notes (Kafka's ProduceRequest/ProduceResponse.json): v7 is Kafka 2.1 (zstd); v8 adds per-record errors
 * and an error message (KIP-467); v9 is flexible; v10 adds tagged leader hints (KIP-951) kmirror does not read;
 * v11 can return TRANSACTION_ABORTABLE (KIP-890). v12 (transactions V2: the produce adds the partition to a
 * transaction implicitly) is deliberately not spoken.
 */
import type { ApiSpec } from './api.ts'

export interface ProduceRequest {
  /** Exactly-once mode: the transactional id whose open transaction the batches join; null or absent otherwise. */
  readonly transactionalId?: string | null
  readonly acks: number
  readonly timeoutMs: number
  readonly topics: readonly ProduceTopic[]
}

export interface ProduceTopic {
  readonly name: string
  /** Exactly one record batch per partition. */
  readonly partitions: readonly { index: number, batch: Buffer }[]
}

export interface ProducePartitionResponse {
  readonly index: number
  readonly errorCode: number
  readonly baseOffset: bigint
  readonly errorMessage: string | null
  readonly recordErrors: readonly { batchIndex: number, message: string | null }[]
}

export interface ProduceResponse {
  /** Set when the client exceeded a quota: the broker expects no request from it for this long (KIP-219). */
  readonly throttleTimeMs: number
  readonly responses: readonly { name: string, partitions: readonly ProducePartitionResponse[] }[]
}

export const ProduceApi: ApiSpec<ProduceRequest, ProduceResponse> = {
  key: 0,
  name: 'Produce',
  minVersion: 7,
  maxVersion: 11,
  flexibleFrom: 9,
  encode (w, _version, request) {
    w.string(request.transactionalId ?? null).int16(request.acks).int32(request.timeoutMs)
    w.structs(request.topics, (w, topic) => {
      w.string(topic.name).structs(topic.partitions, (w, p) => { w.int32(p.index).bytes(p.batch) })
    })
    w.tags()
  },
  decode (r, version) {
    const responses = r.structs(r => ({
      name: r.string(),
      partitions: r.structs((r): ProducePartitionResponse => {
        const index = r.int32()
        const errorCode = r.int16()
        const baseOffset = r.int64()
        r.int64() // log_append_time_ms
        r.int64() // log_start_offset
        const recordErrors = version >= 8 ? r.structs(r => ({ batchIndex: r.int32(), message: r.nullableString() })) : []
        const errorMessage = version >= 8 ? r.nullableString() : null
        return { index, errorCode, baseOffset, errorMessage, recordErrors }
      })
    }))
    const throttleTimeMs = r.int32()
    r.tags()
    return { throttleTimeMs, responses }
  }
}
