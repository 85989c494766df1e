/**
 * ListTransactions (key 66, KIP-664, Kafka 3.0+): the transactions a broker coordinates, with their producer id and
 * state, filtered by state. Each broker answers only for the transactional ids whose __transaction_state
 * partitions it leads, so a cluster-wide list asks every broker; ids the principal may not DESCRIBE are left out
 * without an error. kmirror lists the open transactions of its group's members on the target
 * (open-transactions.ts).
 *
 * Version notes (Kafka's ListTransactionsRequest/Response.json): flexible from v0; v1 (3.8) adds a duration filter
 * and v2 (4.1) a transactional id pattern, neither of which kmirror needs: v0 is the one version spoken, and every
 * broker from 3.0 on answers it. Brokers before 3.0 do not offer the API at all.
 */
import type { ApiSpec } from './api.ts'

export interface ListTransactionsRequest {
  /** Transaction states to keep (e.g. "Ongoing"); empty for every state. */
  readonly stateFilters: readonly string[]
}

export interface ListedTransaction {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly state: string
}

export interface ListTransactionsResponse {
  readonly throttleTimeMs: number
  readonly errorCode: number
  /** The state filters of the request the broker does not know (a misspelt state would silently list nothing). */
  readonly unknownStateFilters: readonly string[]
  readonly transactions: readonly ListedTransaction[]
}

export const ListTransactionsApi: ApiSpec<ListTransactionsRequest, ListTransactionsResponse> = {
  key: 66,
  name: 'ListTransactions',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: 0,
  encode (w, _version, request) {
    // Compact arrays of plain values: a length, the values, no tagged fields per element.
    w.uvarint(request.stateFilters.length + 1)
    for (const state of request.stateFilters) w.string(state)
    w.uvarint(1) // no producer id filter
    w.tags()
  },
  decode (r) {
    const throttleTimeMs = r.int32()
    const errorCode = r.int16()
    const unknownStateFilters: string[] = []
    for (let i = r.uvarint() - 1; i > 0; i--) unknownStateFilters.push(r.string())
    const transactions = r.structs(r => ({ transactionalId: r.string(), producerId: r.int64(), state: r.string() }))
    r.tags()
    return { throttleTimeMs, errorCode, unknownStateFilters, transactions }
  }
}
