/**
 * EndTxn (key 26), v0-v4: commits or aborts a transactional producer's open transaction.
 *
 * Version notes (Kafka's EndTxnRequest/EndTxnResponse.json): v0-v1 are Kafka 2.1; v2 the same grammar; v3 is
 * flexible; v4 only adds TRANSACTION_ABORTABLE (KIP-890). v5 (transactions V2: the response carries a new producer
 * id and epoch) is deliberately not spoken, like Produce v12.
 */
import type { ApiSpec } from './api.ts'

export interface EndTxnRequest {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  /** true: commit; false: abort. */
  readonly committed: boolean
}

export interface EndTxnResponse {
  readonly throttleTimeMs: number
  readonly errorCode: number
}

export const EndTxnApi: ApiSpec<EndTxnRequest, EndTxnResponse> = {
  key: 26,
  name: 'EndTxn',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: 3,
  encode (w, _version, request) {
    w.string(request.transactionalId).int64(request.producerId).int16(request.producerEpoch).bool(request.committed)
    w.tags()
  },
  decode (r) {
    const response = { throttleTimeMs: r.int32(), errorCode: r.int16() }
    r.tags()
    return response
  }
}
