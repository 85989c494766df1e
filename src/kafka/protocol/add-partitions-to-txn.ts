/**
 * AddPartitionsToTxn (key 24), v0-v3: adds the partitions a transactional producer is about to write to its open
 * transaction (the coordinator then writes their markers at EndTxn).
 *
 * Version notes (Kafka's AddPartitionsToTxnRequest/AddPartitionsToTxnResponse.json): v0-v1 are Kafka 2.1; v2 is
 * the same grammar; v3 is flexible. v4+ (KIP-890) batches transactions for brokers and needs CLUSTER_ACTION, a
 * broker-to-broker permission: a client sends v3 at most, as the Java producer does.
 */
import type { ApiSpec } from './api.ts'

export interface AddPartitionsToTxnRequest {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly topics: readonly { name: string, partitions: readonly number[] }[]
}

export interface AddPartitionsToTxnResponse {
  readonly throttleTimeMs: number
  readonly results: readonly { name: string, partitions: readonly { index: number, errorCode: number }[] }[]
}

export const AddPartitionsToTxnApi: ApiSpec<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> = {
  key: 24,
  name: 'AddPartitionsToTxn',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 3,
  encode (w, _version, request) {
    w.string(request.transactionalId).int64(request.producerId).int16(request.producerEpoch)
    w.structs(request.topics, (w, topic) => { w.string(topic.name).int32s(topic.partitions) })
    w.tags()
  },
  decode (r) {
    const throttleTimeMs = r.int32()
    const results = r.structs(r => ({ name: r.string(), partitions: r.structs(r => ({ index: r.int32(), errorCode: r.int16() })) }))
    r.tags()
    return { throttleTimeMs, results }
  }
}
