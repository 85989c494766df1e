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
 * - What can be listed is: a broker that cannot be asked (down, wedged, refusing) or does not offer ListTransactions
 *   (Kafka before 3.0, mid-upgrade) and an id that cannot be described are named in `missed`, with why, and the
 *   others are returned. A caller fences only what it found, so a partial answer is safe and more useful than none.
 * - `null` only when no broker offers ListTransactions: the cluster cannot say.
 * - A transaction no longer open by the time it is described (committed, aborted, fenced meanwhile) or no longer
 *   known (TRANSACTIONAL_ID_NOT_FOUND) is left out without a word.
 */
import type { Broker, ConnectionPool } from '@platformatic/kafka'
import { ErrorCodes, isKmirrorError, KmirrorError } from '../errors.ts'
import type { ClusterContext } from './connection-hints.ts'
import { kafkaResponseError, toKmirrorError } from './errors.ts'
import type { DescribedTransaction } from './protocol/describe-transactions.ts'
import { ListTransactionsApi, type ListTransactionsResponse } from './protocol/list-transactions.ts'
import type { SendFn } from './transactions.ts'

/** The state of a transaction with records or offsets added and no commit or abort begun. */
export const ONGOING = 'Ongoing'
/** What a coordinator answers for an id it does not know (expired, or never used). */
const NOT_FOUND = 'TRANSACTIONAL_ID_NOT_FOUND'

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

export interface OpenTransactions {
  readonly open: OpenTransaction[]
  /** What could not be listed or described: a broker (`host:port`) or a transactional id, and why. */
  readonly missed: { readonly what: string, readonly why: string }[]
}

/**
 * The open transactions whose id starts with PREFIX, sorted by id, and what could not be looked at; null when no
 * broker of the cluster can list transactions.
 */
export async function openTransactions (deps: OpenTransactionsDeps, prefix: string): Promise<OpenTransactions | null> {
  const missed: OpenTransactions['missed'] = []
  const listed = await Promise.all(deps.brokers.map(async broker => {
    try {
      return await ongoingAt(deps, broker)
    } catch (err) {
      missed.push({ what: `broker ${broker.host}:${broker.port}`, why: err instanceof Error ? err.message : String(err) })
      return []
    }
  }))
  if (listed.every(ids => ids === null)) return null
  listed.forEach((ids, i) => { if (ids === null) missed.push({ what: `broker ${deps.brokers[i]!.host}:${deps.brokers[i]!.port}`, why: 'it does not offer ListTransactions (Kafka before 3.0)' }) })
  const ids = [...new Set(listed.flatMap(l => l ?? []))].filter(id => id.startsWith(prefix)).sort()
  const described = await Promise.all(ids.map(async id => {
    try {
      return await deps.describe(id)
    } catch (err) {
      if (!isKmirrorError(err) || !(err.details['kafkaErrors'] as unknown[] | undefined ?? []).includes(NOT_FOUND)) {
        missed.push({ what: `transactional id ${id}`, why: err instanceof Error ? err.message : String(err) })
      }
      return undefined
    }
  }))
  const open = described.flatMap(d => d === undefined || d.errorCode !== 0 || d.state !== ONGOING ? [] : [toOpen(d)])
  return { open, missed }
}

/** The ids of the transactions BROKER coordinates that are Ongoing; null when it does not offer ListTransactions. */
async function ongoingAt (deps: OpenTransactionsDeps, broker: Broker): Promise<string[] | null> {
  const what = `list the open transactions of broker ${broker.host}:${broker.port} of ${deps.cluster.label}`
  let answer: ListTransactionsResponse
  try {
    answer = await deps.send(await deps.pool.get(broker), ListTransactionsApi, { stateFilters: [ONGOING] }, deps.cluster.label)
  } catch (err) {
    // The negotiation sends nothing a broker does not offer: it refuses with BROKER_INCOMPATIBLE naming the API.
    if (isKmirrorError(err) && err.code === ErrorCodes.BROKER_INCOMPATIBLE && err.details['api'] === ListTransactionsApi.name) return null
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
