/**
 * ListOffsets for a reader (record-fetcher.ts): each partition's earliest, latest or by-time offset, asked of its
 * leader with kmirror's own request, grouped by leader.
 *
 * Invariants:
 * - A partition whose leader moved, could not be reached or answered a retriable error is asked again with fresh
 *   metadata and a growing pause, LIST_OFFSETS_ATTEMPTS times in all; one refused for good is not asked again and
 *   does not stop the others' retries.
 * - `listOffsets` is all or nothing: a partition still without an answer then fails the call. `listOffsetsSettled`
 *   returns the offsets it has and, apart, each partition it could not get one for with its Kafka error (a source
 *   partition without a leader must not hide the other partitions' offsets). A topic the principal may not describe
 *   fails both.
 * - A partition without a leader in a topic the cluster has is LEADER_NOT_AVAILABLE, not UNKNOWN_TOPIC_OR_PARTITION.
 * - A partition its leader left out of the answer is UNKNOWN_SERVER_ERROR: it never gets a made-up offset.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { Broker, ConnectionPool } from '@platformatic/kafka'
import { groupBy } from '../collections.ts'
import { ErrorCodes, type KmirrorError } from '../errors.ts'
import { partitionKey } from '../topic-partition.ts'
import type { ClusterContext } from './connection-hints.ts'
import { isRetriableKafkaError, isTimeoutError, kafkaErrorName, kafkaResponseError, toKmirrorError } from './errors.ts'
import { noteOutcome } from './broker-suspects.ts'
import { leaderOf, throwIfRefused, type MetadataCache } from './metadata-cache.ts'
import { toOffset } from './offsets.ts'
import { ListOffsetsApi, ListOffsetTimestamps, type ListOffsetsRequest, type ListOffsetsResponse } from './protocol/list-offsets.ts'
import { sendRequest } from './protocol/negotiation.ts'

/**
 * Which offset is asked for: the log start, the end as the reader sees it (a read_committed reader: the last stable
 * offset, before the first record of a transaction still open), the end of everything written (the high watermark,
 * whatever the reader's isolation), or the first at or after a time (epoch ms).
 */
export type OffsetQuery = 'earliest' | 'latest' | 'written' | { readonly atOrAfter: number }

/** How a ListOffsets request reaches a broker: kmirror's versioned request by default; unit tests answer it. */
export type SendListOffsets = (broker: Broker, request: ListOffsetsRequest, cluster: string) => Promise<ListOffsetsResponse>

export interface OffsetListingDeps {
  readonly metadata: Pick<MetadataCache, 'leaders' | 'invalidate'>
  readonly pool: Pick<ConnectionPool, 'get'>
  readonly cluster: ClusterContext
  readonly isolationLevel: number
  readonly send?: SendListOffsets
}

type TopicPartition = { readonly topic: string, readonly partition: number }

/** The offsets answered, keyed `topic-partition`, and the partitions that got none, with their Kafka error. */
export interface SettledOffsets {
  readonly offsets: Map<string, number>
  readonly failed: Map<string, string>
}

/** Asked again this many times (after a fresh metadata read and a growing pause) before giving up. */
const LIST_OFFSETS_ATTEMPTS = 5
const UNKNOWN_TOPIC_OR_PARTITION = 3
const LEADER_NOT_AVAILABLE = 5
const NETWORK_EXCEPTION = 13
const UNKNOWN_SERVER_ERROR = -1
/** ListOffsets' isolation level 0: the high watermark as `latest`. */
const READ_UNCOMMITTED = 0

interface Round {
  readonly out: Map<string, number>
  readonly failed: { topic: string, partition: number, errorCode: number }[]
  /** The last failure to reach a leader, for the partitions in `failed` with NETWORK_EXCEPTION. */
  unreachable: KmirrorError | null
}

/** All or nothing: throws when any partition got no offset. */
export async function listOffsets (deps: OffsetListingDeps, partitions: readonly TopicPartition[], which: OffsetQuery): Promise<Map<string, number>> {
  const round = await listRound(deps, partitions, which, LIST_OFFSETS_ATTEMPTS)
  // A partition refused for good names the failure, rather than one that only ran out of retries.
  const first = round.failed.find(f => !isRetriable(f)) ?? round.failed[0]
  if (first === undefined) return round.out
  if (first.errorCode === NETWORK_EXCEPTION && round.unreachable !== null) throw round.unreachable
  throw kafkaResponseError(first.errorCode, ErrorCodes.FETCH, `list ${describe(which)} of ${round.failed.length} partition(s) of ${deps.cluster.label}, first ${first.topic}-${first.partition}`, deps.cluster)
}

/**
 * The offsets it could get, and apart the partitions it could not, each with its Kafka error name. `attempts`
 * (at most LIST_OFFSETS_ATTEMPTS) bounds the tries: a caller with its own back-off asks once.
 */
export async function listOffsetsSettled (deps: OffsetListingDeps, partitions: readonly TopicPartition[], which: OffsetQuery, attempts = LIST_OFFSETS_ATTEMPTS): Promise<SettledOffsets> {
  const round = await listRound(deps, partitions, which, Math.max(1, Math.min(attempts, LIST_OFFSETS_ATTEMPTS)))
  return { offsets: round.out, failed: new Map(round.failed.map(f => [partitionKey(f.topic, f.partition), kafkaErrorName(f.errorCode)])) }
}

function describe (which: OffsetQuery): string {
  if (typeof which === 'object') return `offsets at ${new Date(which.atOrAfter).toISOString()}`
  return which === 'written' ? 'high watermarks' : `${which} offsets`
}

async function listRound (deps: OffsetListingDeps, partitions: readonly TopicPartition[], which: OffsetQuery, attemptsLeft: number): Promise<Round> {
  const timestamp = typeof which === 'object' ? BigInt(which.atOrAfter) : which === 'earliest' ? ListOffsetTimestamps.EARLIEST : ListOffsetTimestamps.LATEST
  const metadata = await deps.metadata.leaders([...new Set(partitions.map(p => p.topic))])
  throwIfRefused(metadata, new Set(partitions.map(p => p.topic)), deps.cluster)
  const byLeader = groupBy(partitions, tp => leaderOf(metadata, tp.topic, tp.partition))
  const round: Round = {
    out: new Map(),
    // A partition of a topic the cluster has, without a leader (its broker down, no replica in sync), is said so.
    failed: (byLeader.get(-1) ?? []).map(tp => ({
      ...tp, errorCode: metadata.topics.get(tp.topic)?.leaders[tp.partition] === undefined ? UNKNOWN_TOPIC_OR_PARTITION : LEADER_NOT_AVAILABLE
    })),
    unreachable: null
  }
  byLeader.delete(-1)
  await Promise.all([...byLeader].map(async ([node, list]) => {
    const broker = metadata.brokers.get(node)!
    const topics = [...groupBy(list, tp => tp.topic)].map(([name, tps]) => ({ name, partitions: tps.map(tp => ({ partition: tp.partition, timestamp })) }))
    let response
    try {
      const request = { isolationLevel: which === 'written' ? READ_UNCOMMITTED : deps.isolationLevel, topics }
      response = deps.send === undefined
        ? await sendRequest(await deps.pool.get(broker), ListOffsetsApi, request, deps.cluster.label)
        : await deps.send(broker, request, deps.cluster.label)
    } catch (err) {
      deps.metadata.invalidate()
      if (isTimeoutError(err)) noteOutcome(broker, err)
      const error = toKmirrorError(err, ErrorCodes.FETCH, `list ${describe(which)} on broker ${node} (${broker.host}:${broker.port}) of ${deps.cluster.label}`, deps.cluster)
      if (!error.retriable) throw error
      // A leader that cannot be reached (its broker died, its partitions moved on): asked again with fresh metadata.
      round.unreachable = error
      for (const tp of list) round.failed.push({ ...tp, errorCode: NETWORK_EXCEPTION })
      return
    }
    const answered = new Set<string>()
    for (const t of response.topics) {
      for (const p of t.partitions) {
        answered.add(partitionKey(t.name, p.partition))
        if (p.errorCode === 0) round.out.set(partitionKey(t.name, p.partition), toOffset(p.offset))
        else round.failed.push({ topic: t.name, partition: p.partition, errorCode: p.errorCode })
      }
    }
    for (const tp of list) if (!answered.has(partitionKey(tp.topic, tp.partition))) round.failed.push({ ...tp, errorCode: UNKNOWN_SERVER_ERROR })
  }))
  if (round.failed.length === 0) return round
  deps.metadata.invalidate()
  // Only what waiting may fix is asked again; a partition refused for good stays failed, and holds up no retry.
  const again = round.failed.filter(isRetriable)
  if (attemptsLeft <= 1 || again.length === 0) return round
  await delay(50 * 2 ** (LIST_OFFSETS_ATTEMPTS - attemptsLeft + 1))
  const next = await listRound(deps, again, which, attemptsLeft - 1)
  for (const [tp, offset] of next.out) round.out.set(tp, offset)
  return { out: round.out, failed: [...round.failed.filter(f => !isRetriable(f)), ...next.failed], unreachable: next.unreachable ?? round.unreachable }
}

function isRetriable (f: { errorCode: number }): boolean {
  return f.errorCode === NETWORK_EXCEPTION || isRetriableKafkaError(f.errorCode)
}
