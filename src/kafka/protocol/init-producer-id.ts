/**
 * InitProducerId (key 22), v1-v5: a fresh producer id and epoch for the data path's idempotent producer (no
 * transactional id).
 *
 * Version notes (Kafka's InitProducerIdRequest/InitProducerIdResponse.json): v1 is Kafka 2.1; v2 is flexible;
 * v3 sends the current producer id and epoch (KIP-360: bump the epoch instead of a new id; kmirror asks for a
 * new id, -1/-1); v4 and v5 only change which errors a broker may return.
 */
import type { ApiSpec } from './api.ts'

export interface InitProducerIdRequest {
  readonly transactionalId: string | null
  readonly transactionTimeoutMs: number
}

export interface InitProducerIdResponse {
  readonly throttleTimeMs: number
  readonly errorCode: number
  readonly producerId: bigint
  readonly producerEpoch: number
}

export const InitProducerIdApi: ApiSpec<InitProducerIdRequest, InitProducerIdResponse> = {
  key: 22,
  name: 'InitProducerId',
  minVersion: 1,
  maxVersion: 5,
  flexibleFrom: 2,
  encode (w, version, request) {
    w.string(request.transactionalId).int32(request.transactionTimeoutMs)
    if (version >= 3) w.int64(-1n).int16(-1)
    w.tags()
  },
  decode (r) {
    const response = { throttleTimeMs: r.int32(), errorCode: r.int16(), producerId: r.int64(), producerEpoch: r.int16() }
    r.tags()
    return response
  }
}
