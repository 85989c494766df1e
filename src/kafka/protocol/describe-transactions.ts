/**
 * DescribeTransactions (key 65, KIP-664, Kafka 3.0+): per transactional id, its state, producer id and epoch,
 * timeout, when the open transaction started and the partitions it holds. Asked of each id's transaction
 * coordinator (FindCoordinator TRANSACTION); another broker answers NOT_COORDINATOR for that id.
 *
 * Version notes (Kafka's DescribeTransactionsRequest/Response.json): v0 only, flexible. Brokers before 3.0 do not
 * offer the API.
 */
import type { ApiSpec } from './api.ts'

export interface DescribeTransactionsRequest {
  readonly transactionalIds: readonly string[]
}

export interface DescribedTransaction {
  readonly errorCode: number
  readonly transactionalId: string
  readonly state: string
  readonly timeoutMs: number
  /** When the open transaction started (ms since the epoch), -1 when none is open. */
  readonly startTimeMs: bigint
  readonly producerId: bigint
  readonly producerEpoch: number
  readonly topics: readonly { readonly name: string, readonly partitions: readonly number[] }[]
}

export interface DescribeTransactionsResponse {
  readonly throttleTimeMs: number
  readonly transactions: readonly DescribedTransaction[]
}

export const DescribeTransactionsApi: ApiSpec<DescribeTransactionsRequest, DescribeTransactionsResponse> = {
  key: 65,
  name: 'DescribeTransactions',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: 0,
  encode (w, _version, request) {
    w.uvarint(request.transactionalIds.length + 1)
    for (const id of request.transactionalIds) w.string(id)
    w.tags()
  },
  decode (r) {
    const throttleTimeMs = r.int32()
    const transactions = r.structs((r): DescribedTransaction => ({
      errorCode: r.int16(),
      transactionalId: r.string(),
      state: r.string(),
      timeoutMs: r.int32(),
      startTimeMs: r.int64(),
      producerId: r.int64(),
      producerEpoch: r.int16(),
      topics: r.structs(r => ({ name: r.string(), partitions: r.int32s() }))
    }))
    r.tags()
    return { throttleTimeMs, transactions }
  }
}
