/**
 * The open transactions on a cluster whose transactional id starts with a prefix: what a kmirror group's first
 * leader fences when no member before it is known (an instance killed and its session ended before the next one
 * started: the group is empty, yet its open transaction holds read_committed readers back until the transaction
 * timeout).
 *
 * How: ListTransactions (state Ongoing) to every broker, since each answers only for the transactional ids its
 * __transaction_state partitions hold; then DescribeTransactions of each id with the prefix, at its coordinator,
 * for when the transaction started and which partitions it holds (the caller decides whether they are its own).
 *
 * Invariants:
 * - Read only: nothing here fences or aborts anything.
 * - `null` when a broker does not offer ListTransactions (Kafka before 3.0): the cluster cannot say, and the
 *   caller falls back to the transaction timeout.
 * - A transaction no longer open by the time it is described (committed, aborted, fenced meanwhile) or no longer
 *   known is left out; a failure to reach a broker or a coordinator fails the whole listing (a partial list could
 *   hide exactly the transaction that matters, and the caller treats a failure as "unknown").
 */
import type { Broker, ConnectionPool } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { ClusterContext } from './connection-hints.ts'
import { kafkaResponseError, toKmirrorError } from './errors.ts'
import type { DescribedTransaction } from './protocol/describe-transactions.ts'
import { ListTransactionsApi, type ListTransactionsResponse } from './protocol/list-transactions.ts'
import type { SendFn } from './transactions.ts'

/** The state of a transaction with records or offsets added and no commit or abort begun. */
export const ONGOING = 'Ongoing'

export interface OpenTransaction {
  readonly transactionalId: string
  readonly producerId: bigint
  readonly producerEpoch: number
  /** When the transaction started (ms since the epoch), by the coordinator's clock. */
  readonly startedAt: number
  readonly timeoutMs: number
  /** The topics of the partitions it holds, sorted. */
  readonly topics: readonly string[]
}

export interface OpenTransactionsDeps {
  readonly pool: Pick<ConnectionPool, 'get'>
  readonly send: SendFn
  /** Every broker of the cluster (from fresh metadata). */
  readonly brokers: readonly Broker[]
  readonly cluster: ClusterContext
  /** DescribeTransactions of one id at its coordinator (transactions.ts `describe`). */
  readonly describe: (transactionalId: string) => Promise<DescribedTransaction | undefined>
}

/** The open transactions whose id starts with PREFIX, sorted by id; null when the cluster cannot list them. */
export async function openTransactions (deps: OpenTransactionsDeps, prefix: string): Promise<OpenTransaction[] | null> {
  const listed = await Promise.all(deps.brokers.map(async broker => await ongoingAt(deps, broker)))
  if (listed.some(ids => ids === null)) return null
  const ids = [...new Set(listed.flatMap(l => l ?? []))].filter(id => id.startsWith(prefix)).sort()
  const described = await Promise.all(ids.map(async id => await deps.describe(id)))
  return described.flatMap(d => d === undefined || d.errorCode !== 0 || d.state !== ONGOING ? [] : [toOpen(d)])
}

/** The ids of the transactions BROKER coordinates that are Ongoing; null when it does not offer ListTransactions. */
async function ongoingAt (deps: OpenTransactionsDeps, broker: Broker): Promise<string[] | null> {
  const what = `list the open transactions of broker ${broker.host}:${broker.port} of ${deps.cluster.label}`
  let answer: ListTransactionsResponse
  try {
    answer = await deps.send(await deps.pool.get(broker), ListTransactionsApi, { stateFilters: [ONGOING] }, deps.cluster.label)
  } catch (err) {
    // The negotiation sends nothing a broker does not offer: it refuses with BROKER_INCOMPATIBLE naming the API.
    if (err instanceof KmirrorError && err.code === ErrorCodes.BROKER_INCOMPATIBLE && err.details.api === ListTransactionsApi.name) return null
    throw toKmirrorError(err, ErrorCodes.PRODUCE, what, deps.cluster)
  }
  if (answer.errorCode !== 0) throw kafkaResponseError(answer.errorCode, ErrorCodes.PRODUCE, what, deps.cluster)
  if (answer.unknownStateFilters.length > 0) {
    throw new KmirrorError(ErrorCodes.PRODUCE, `${what}: the broker does not know the transaction state(s) ${answer.unknownStateFilters.join(', ')}, so it listed nothing for them`)
  }
  return answer.transactions.filter(t => t.state === ONGOING).map(t => t.transactionalId)
}

function toOpen (d: DescribedTransaction): OpenTransaction {
  return {
    transactionalId: d.transactionalId,
    producerId: d.producerId,
    producerEpoch: d.producerEpoch,
    startedAt: Number(d.startTimeMs),
    timeoutMs: d.timeoutMs,
    topics: [...new Set(d.topics.map(t => t.name))].sort()
  }
}
