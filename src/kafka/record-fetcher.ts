/**
 * Group-less reading of partitions at explicit offsets (what MM2 gets from KafkaConsumer.assign + seek).
 *
 * Invariants:
 * - Records are returned in offset order per partition, starting at the requested offset: a fetch at X may
 *   return the whole batch containing X, and the records before X are dropped here.
 * - With read_committed, records of aborted transactions are dropped using the response's aborted-transaction
 *   list and each batch's producer id (the Java client's algorithm), never only by finding the abort marker in
 *   the same response. Control batches are never returned, but they do advance `nextOffset`.
 * - `nextOffset` is one past the last offset the broker returned, so skipped control and aborted batches
 *   are not read again.
 * - With `sessions` (the data path), each broker is read in an incremental fetch session (fetch-session.ts): a
 *   partition the answer leaves out had nothing new and comes back OK and empty at its requested offset.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { ConnectionPool, FetchIsolationLevels, type Broker } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { toConnectOptions } from './client-options.ts'
import { parseBrokerAddress } from './broker-address.ts'
import type { ClusterContext } from './connection-hints.ts'
import { isRetriableKafkaError, isTimeoutError, kafkaErrorHint, kafkaErrorInfo, kafkaErrorName, toKmirrorError } from './errors.ts'
import { noteOutcome } from './broker-suspects.ts'
import { FetchRounds, fetchFromLabel, type ReadOptions } from './fetch-rounds.ts'
import { MetadataCache } from './metadata-cache.ts'
import { describePrincipal } from './principal.ts'
import { FETCH_TOPIC_IDS_FROM, FetchApi, type FetchPartitionResponse, type FetchResponse } from './protocol/fetch.ts'
import { brokerApis, sendRequest } from './protocol/negotiation.ts'
import { watchedPool } from './silent-brokers.ts'
import { emptyBatches, failedRead, FetchOutcomes, rawOffsets, selectBatches, type FetchedBatches, type FetchedPartition, type PartitionPosition } from './fetch-results.ts'
import { FetchSession, fetchTopics, isFetchSessionError, sessionlessRequest, type SessionPartition, type SessionRequest } from './fetch-session.ts'
import { decodeRecords, recordBytes, type FetchedRecord } from './record-batch.ts'
import { listOffsets, listOffsetsSettled, type OffsetListingDeps, type OffsetQuery, type SettledOffsets } from './offset-listing.ts'

export type { FetchedRecord, RecordHeader } from './record-batch.ts'
export { FetchOutcomes } from './fetch-results.ts'
export type { FetchedBatches, FetchedPartition, FetchOutcome, PartitionError, PartitionPosition, RetryReason } from './fetch-results.ts'

/** The principal a client reads as, and its cluster. */
export interface Grantee {
  readonly principal: string
  readonly cluster: ClusterContext
}

export type { OffsetQuery, SettledOffsets } from './offset-listing.ts'

export interface RecordFetcherOptions {
  readonly isolation: 'read_committed' | 'read_uncommitted'
  readonly maxWaitMs: number
  readonly maxBytes: number
  readonly maxPartitionBytes: number
  /** Names the cluster in messages ("cluster A") and its alias in hints; the client id when not given. */
  readonly cluster?: ClusterContext
  /**
   * Incremental fetch sessions (KIP-227), one per broker: for a reader that asks the same partitions round after
   * round (the data path). Off: every fetch is full and session-less.
   */
  readonly sessions?: boolean
  /** Told of every fetch request of a session (full or incremental) and every session that ended by an error. */
  readonly onSessionEvent?: (event: 'full' | 'incremental' | 'reset') => void
  /**
   * A read that takes what it can (the data path): a broker whose fetch fails (unreachable, its connection cut)
   * while another answered gives its partitions back RETRY with the reason, and is left alone for a back-off
   * (leader-outages.ts); the answers of the others are kept. Off, or when no broker asked answered: the read fails.
   * A broker slower than the others (late-fetches.ts) keeps its fetch out past the round; its partitions RETRY
   * until a later round collects the answer.
   */
  readonly partial?: boolean
  /** Who reads (the flow's name), named in the outage reports of `partial`. */
  readonly reader?: string
}

/** How the fetcher's requests went: full or incremental, and sessions the broker lost (fetch-session.ts). */
export interface FetchSessionStats {
  fullRequests: number
  incrementalRequests: number
  /** Sessions ended by an error (broker restarted, session evicted, a request failed): the next request was full. */
  resets: number
}

const OFFSET_OUT_OF_RANGE = 1

export class RecordFetcher {
  readonly #options: RecordFetcherOptions
  readonly #cluster: ClusterContext
  readonly #pool: ConnectionPool
  readonly #metadata: MetadataCache
  /** Per broker: no fetch before this time (quota throttling, KIP-219: the client waits, the broker does not). */
  readonly #throttledUntil = new Map<number, number>()
  /** Per broker: its fetch session, and whether a request of it is in flight (then a fetch goes session-less). */
  readonly #sessions = new Map<number, { session: FetchSession, busy: boolean }>()
  readonly sessionStats: FetchSessionStats = { fullRequests: 0, incrementalRequests: 0, resets: 0 }
  /** Each read split by leader and put together again; with `partial`, taking what it can (fetch-rounds.ts). */
  readonly #rounds: FetchRounds
  /** Who reads, on which cluster: for the grant a refused read names (topic-reader.ts). */
  readonly grantee: Grantee

  constructor (props: ClientProps, clientId: string, options: RecordFetcherOptions) {
    this.#options = options
    this.#cluster = options.cluster ?? { label: clientId }
    this.grantee = { principal: describePrincipal(props, this.#cluster.alias ?? clientId), cluster: this.#cluster }
    const connect = toConnectOptions(props, clientId)
    this.#pool = watchedPool(new ConnectionPool(clientId, connect), this.#cluster.label)
    this.#metadata = new MetadataCache(this.#pool, connect.bootstrapBrokers.map(parseBrokerAddress), this.#cluster)
    this.#rounds = new FetchRounds({
      metadata: this.#metadata,
      cluster: this.#cluster,
      maxWaitMs: options.maxWaitMs,
      partial: options.partial === true,
      ...(options.reader === undefined ? {} : { reader: options.reader }),
      fetchFrom: async (node, broker, positions, topics, how) => await this.#fetchBatchesFromNode(node, broker, positions, topics, how),
      refused: (position, code) => this.#failed(position, code, 'the metadata', 'DESCRIBE'),
      throttledUntil: node => this.#throttledUntil.get(node) ?? 0
    })
  }

  /**
   * Reads every position once and decodes the records (for internal topics and tools; the data path forwards
   * batches without decoding, see fetchBatches). Partitions are grouped by leader, each leader asked in parallel.
   */
  async fetch (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> {
    const fetched = await this.fetchBatches(positions, { session: false })
    // Readers of internal topics need every partition: one the cluster refused fails the read (the data path,
    // through fetchBatches, sets such a partition aside instead).
    const failed = fetched.find(f => f.outcome === FetchOutcomes.FAILED)
    if (failed?.failure !== undefined) throw failedRead(failed.failure)
    return fetched.map(f => {
      const records: FetchedRecord[] = []
      for (const batch of f.batches) decodeRecords(batch, f.fromOffset, records)
      let bytes = 0
      for (const r of records) bytes += recordBytes(r)
      return { topic: f.topic, partition: f.partition, outcome: f.outcome, records, nextOffset: f.nextOffset, highWatermark: f.highWatermark, lastStableOffset: f.lastStableOffset, logStartOffset: f.logStartOffset, bytes }
    })
  }

  #isolationLevel (): number {
    return this.#options.isolation === 'read_committed' ? FetchIsolationLevels.READ_COMMITTED : FetchIsolationLevels.READ_UNCOMMITTED
  }

  /**
   * Reads every position once, keeping record batches as bytes (no decompression, no per-record objects).
   * Same grouping, errors and outcomes as `fetch`.
   */
  async fetchBatches (positions: readonly PartitionPosition[], options: { maxPartitionBytes?: number, session?: boolean } = {}): Promise<FetchedBatches[]> {
    return await this.#rounds.read(positions, {
      partitionMaxBytes: options.maxPartitionBytes ?? this.#options.maxPartitionBytes,
      session: (options.session ?? true) && this.#options.sessions === true
    })
  }

  async #fetchBatchesFromNode (node: number, broker: Broker, positions: PartitionPosition[], topicMeta: ReadonlyMap<string, { id: string | null }>, how: ReadOptions): Promise<FetchedBatches[]> {
    const { partitionMaxBytes, session: useSession } = how
    const wanted: SessionPartition[] = positions.map(p => ({ topic: p.topic, topicId: topicMeta.get(p.topic)?.id ?? null, partition: p.partition, fetchOffset: p.offset, partitionMaxBytes }))
    const idToName = new Map(wanted.map(p => [p.topicId, p.topic]))
    const wait = (this.#throttledUntil.get(node) ?? 0) - Date.now()
    if (wait > 0) await delay(wait)
    const response = await this.#send(node, broker, wanted, useSession)
    if (response.throttleTimeMs > 0) this.#throttledUntil.set(node, Date.now() + response.throttleTimeMs)
    if (response.errorCode !== 0) {
      this.#metadata.invalidate()
      const error = kafkaErrorName(response.errorCode)
      throw new KmirrorError(ErrorCodes.FETCH, `${this.#fetchFrom(node, broker)}: Kafka error ${error}`, { retriable: true, details: { kafkaErrors: [error] } })
    }
    // By topic, then partition: no string key per partition (a round over thousands of idle partitions answers few).
    const answered = new Map<string, Map<number, FetchPartitionResponse>>()
    for (const topic of response.responses) {
      const name = topic.topic ?? idToName.get(topic.topicId)
      if (name === undefined) continue
      const partitions = answered.get(name) ?? new Map<number, FetchPartitionResponse>()
      answered.set(name, partitions)
      for (const p of topic.partitions) partitions.set(p.partitionIndex, p)
    }
    return positions.map(position => {
      const p = answered.get(position.topic)?.get(position.partition)
      if (p === undefined) return emptyBatches(position, FetchOutcomes.OK)
      if (p.errorCode === OFFSET_OUT_OF_RANGE) return { ...emptyBatches(position, FetchOutcomes.OUT_OF_RANGE), ...rawOffsets(p) }
      if (p.errorCode !== 0) {
        if (!isRetriableKafkaError(p.errorCode)) return this.#failed(position, p.errorCode, `a fetch from broker ${node} (${broker.host}:${broker.port})`, 'READ')
        this.#metadata.invalidate()
        const error = kafkaErrorName(p.errorCode)
        return { ...emptyBatches(position, FetchOutcomes.RETRY), retryReason: { error, detail: `its leader on ${this.#cluster.label}, broker ${node} (${broker.host}:${broker.port}), answered ${error}` } }
      }
      try {
        return { ...selectBatches(position, p, this.#options.isolation === 'read_committed'), topicId: topicMeta.get(position.topic)?.id ?? null }
      } catch (err) {
        // A batch that fails its CRC: this partition cannot be copied past it, the others can.
        return { ...emptyBatches(position, FetchOutcomes.FAILED), failure: { error: 'CORRUPT_MESSAGE', kind: kafkaErrorInfo('CORRUPT_MESSAGE').kind, message: err instanceof Error ? err.message : String(err), hint: undefined } }
      }
    })
  }

  /**
   * One Fetch to the broker: in its fetch session when asked and none is in flight, else full and session-less.
   * A session the broker lost (restart, eviction) or an unsure outcome ends the session; a session error is
   * answered at once with a full request in a new session, so no round is lost to it.
   */
  async #send (node: number, broker: Broker, wanted: readonly SessionPartition[], useSession: boolean): Promise<FetchResponse> {
    const entry = useSession ? this.#sessionOf(node) : null
    if (entry !== null) entry.busy = true
    try {
      for (let attempt = 1; ; attempt++) {
        let request: SessionRequest | undefined
        let response: FetchResponse
        try {
          const connection = await this.#pool.get(broker)
          const cap = wanted.every(p => p.topicId !== null) ? FetchApi.maxVersion : FETCH_TOPIC_IDS_FROM - 1
          const usesTopicIds = ((await brokerApis(connection)).versionFor(FetchApi, cap) ?? 0) >= FETCH_TOPIC_IDS_FROM
          request = entry === null ? sessionlessRequest(wanted, usesTopicIds) : entry.session.next(wanted, usesTopicIds)
          response = await sendRequest(connection, FetchApi, {
            maxWaitMs: this.#options.maxWaitMs, minBytes: 1, maxBytes: this.#options.maxBytes, isolationLevel: this.#isolationLevel(),
            sessionId: request.sessionId, sessionEpoch: request.sessionEpoch, topics: fetchTopics(request), forgotten: request.forgotten
          }, this.#cluster.label, cap)
        } catch (err) {
          if (entry !== null) this.#resetSession(entry.session)
          this.#metadata.invalidate()
          // A fetch unanswered for request.timeout.ms makes its broker silent: what else waits on it is cut too.
          if (isTimeoutError(err)) noteOutcome(broker, err)
          throw toKmirrorError(err, ErrorCodes.FETCH, this.#fetchFrom(node, broker), this.#cluster)
        }
        if (entry === null) return response
        if (response.errorCode === 0) {
          entry.session.answered(request, response.sessionId)
          if (request.full) this.sessionStats.fullRequests++
          else this.sessionStats.incrementalRequests++
          this.#options.onSessionEvent?.(request.full ? 'full' : 'incremental')
          return response
        }
        this.#resetSession(entry.session)
        if (!isFetchSessionError(response.errorCode) || attempt > 1) return response
      }
    } finally {
      if (entry !== null) entry.busy = false
    }
  }

  /** What a failed fetch's message begins with. */
  #fetchFrom (node: number, broker: Broker): string {
    return fetchFromLabel(node, broker, this.#cluster)
  }

  /** The broker's fetch session, or null while one of its requests is in flight. */
  #sessionOf (node: number): { session: FetchSession, busy: boolean } | null {
    let entry = this.#sessions.get(node)
    if (entry === undefined) this.#sessions.set(node, entry = { session: new FetchSession(), busy: false })
    return entry.busy ? null : entry
  }

  #resetSession (session: FetchSession): void {
    if (!session.reset()) return
    this.sessionStats.resets++
    this.#options.onSessionEvent?.('reset')
  }

  /** A partition the cluster refused `what` of (e.g. "a fetch from broker 1 (host:port)") with Kafka error `errorCode`. */
  #failed (position: PartitionPosition, errorCode: number, what: string, operation: string): FetchedBatches {
    const error = kafkaErrorName(errorCode)
    const message = `${this.#cluster.label} refused ${what} of ${position.topic}-${position.partition} (Kafka error ${error})`
    return { ...emptyBatches(position, FetchOutcomes.FAILED), failure: { error, kind: kafkaErrorInfo(error).kind, message, hint: kafkaErrorHint(error, this.#cluster), operation } }
  }

  /**
   * Earliest (log start), latest (high watermark; the last stable offset with read_committed) or by time (the first
   * offset whose timestamp is at or after `atOrAfter` epoch ms; -1 when there is none) offsets, asked of each
   * partition's leader (offset-listing.ts). All or nothing: a partition without an answer fails the call.
   */
  async listOffsets (partitions: readonly { topic: string, partition: number }[], which: OffsetQuery): Promise<Map<string, number>> {
    return await listOffsets(this.#listing(), partitions, which)
  }

  /**
   * As `listOffsets`, but the partitions that got no offset are returned apart, with their Kafka error. `attempts`
   * bounds the tries (default 5, with a growing pause): a caller with its own back-off asks once.
   */
  async listOffsetsSettled (partitions: readonly { topic: string, partition: number }[], which: OffsetQuery, attempts?: number): Promise<SettledOffsets> {
    return await listOffsetsSettled(this.#listing(), partitions, which, attempts)
  }

  #listing (): OffsetListingDeps {
    return { metadata: this.#metadata, pool: this.#pool, cluster: this.#cluster, isolationLevel: this.#isolationLevel() }
  }

  async close (): Promise<void> {
    await this.#pool.close().catch(() => undefined)
  }
}
