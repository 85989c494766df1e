/**
 * Writes ready-made record batches to the target as one idempotent producer (acks=all), several requests in
 * flight per broker, and reports the base offset each batch received.
 *
 * Invariants:
 * - One produce request carries at most one batch per partition (the broker refuses more), so a batch's
 *   records get consecutive offsets from the returned base offset: target offsets are exact.
 * - A partition's batches are sent in order, each with the next sequence number of this producer id, at most
 *   `maxInFlight` requests per broker connection (the broker's idempotence window is 5 batches per
 *   partition). The broker appends them in order or refuses the rest with OUT_OF_ORDER_SEQUENCE_NUMBER.
 * - Acknowledgements are reported to `onAcked` in order per partition, and one call at a time, before more
 *   batches of that round's responses are reported. After the first failure of a partition, none of its
 *   later acknowledgements are reported: its progress stops at the last batch before the failure, so a retry
 *   re-copies (at least once) rather than skipping.
 * - A failure ends this producer id: the next write starts with a fresh one (InitProducerId) and sequences
 *   from 0. Re-sent batches are then never deduplicated against the failed attempt: duplicates, never loss.
 *   The exception are "not now" errors (`notNow` in errors.ts: no leader yet, leader moving), where the broker
 *   appended neither the batch nor any later one of that partition: the partition's sequence is rewound to the
 *   refused batch (partition-send.ts) and it is sent again, with the same producer id, once a probe finds its
 *   leader ready, for up to NOT_NOW_PATIENCE_MS (NOT_NOW_SHORT_PATIENCE_MS when other partitions went through).
 * - A partition the target refuses (authorization, too large, invalid) is returned in `failed` as a typed
 *   PartitionFailure, never thrown: the other partitions of the write are acknowledged as usual. Only a failure of
 *   a whole request (connection, metadata, producer id) throws.
 * - A batch is only sent once the metadata knows its partition and leader (see record-writer.ts for the
 *   library's modulo pitfall; this writer addresses partitions explicitly and never maps them).
 * - `fence` is asked synchronously right before each produce request (and each EndTxn commit) is handed to the
 *   connection: a reason means nothing is sent and the write throws FENCED.
 * - Exactly-once mode (`transactionalId`): the producer id comes from InitProducerId with that id (fencing older
 *   producers of it, aborting their open transaction); every partition is added to the open transaction
 *   (AddPartitionsToTxn) before its first batch; batches carry the transactional bit; `commitTransaction` ends it.
 *   A failure of a whole request drops the producer: the next one is initialised again, which aborts whatever the
 *   failed transaction held. A refused partition's sequences are unknown: the producer is renewed after the
 *   transaction ends, never in the middle of one (that would abort what was acknowledged). Fencing answers
 *   (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH) throw FENCED; TRANSACTIONAL_ID_AUTHORIZATION_FAILED throws
 *   NOT_AUTHORIZED naming the grant.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { ConnectionPool, ProduceAcks, type Broker, type Connection } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { parseBrokerAddress } from './broker-address.ts'
import { toConnectOptions } from './client-options.ts'
import type { ClusterContext } from './connection-hints.ts'
import { isRefusedBatchError, isRetriableKafkaError, KafkaErrorKinds, kafkaErrorHint, kafkaErrorInfo, kafkaErrorName, kafkaResponseError, toKmirrorError, type KafkaErrorKind } from './errors.ts'
import { InitProducerIdApi } from './protocol/init-producer-id.ts'
import { ListOffsetsApi, ListOffsetTimestamps } from './protocol/list-offsets.ts'
import { leaderOf, toLeaderMetadata } from './metadata-cache.ts'
import { MetadataApi } from './protocol/metadata.ts'
import { sendRequest } from './protocol/negotiation.ts'
import type { ApiSpec } from './protocol/api.ts'
import { ProduceApi, type ProduceResponse, type ProduceTopic } from './protocol/produce.ts'
import type { ProducerIdentity } from './record-batch.ts'
import { partitionKey } from '../topic-partition.ts'
import { PartitionSend, Sequences } from './partition-send.ts'
import { groupBy } from '../collections.ts'
import { describePrincipal } from './principal.ts'
import { fencedError, TransactionCoordinator } from './transactions.ts'

/** A batch to write: it is built for the producer id and sequence the writer gives it when it is sent. */
export interface OutBatch {
  readonly recordCount: number
  build (producer: ProducerIdentity, baseSequence: number): Buffer
}

export interface PartitionWrite {
  readonly topic: string
  readonly partition: number
  readonly batches: readonly OutBatch[]
}

/** Batch `batch` of write `write` was acknowledged; its first record is at target offset `baseOffset`. */
export interface BatchAck {
  readonly write: number
  readonly batch: number
  readonly baseOffset: number
}

export type OnBatchesAcked = (acks: readonly BatchAck[]) => Promise<void> | void

/**
 * A partition the target refused records of (authorization, unknown topic, too large, invalid batch, ...): its
 * batches from the refused one on were not appended. The other partitions of the write are not affected.
 */
export interface PartitionFailure {
  /** Index of the write in `write()`'s argument. */
  readonly write: number
  readonly topic: string
  readonly partition: number
  /** The Kafka error name (e.g. TOPIC_AUTHORIZATION_FAILED). */
  readonly error: string
  readonly kind: KafkaErrorKind
  /** The broker's error message, if it sent one. */
  readonly message: string | null
  readonly retriable: boolean
  /** The target refused the batch itself as it is (too large, invalid): re-encoding it may help. */
  readonly refusedBatch: boolean
  /** What to check, naming the cluster's keys. */
  readonly hint: string | undefined
  /** The ACL operation refused, when known: WRITE (produce, the default) or DESCRIBE (metadata). */
  readonly operation?: string
}

export interface WriteResult {
  /** Writes left for a "not now" reason (no leader yet, leader moving): try them again shortly. */
  readonly incomplete: number[]
  /** Partitions the target refused; their acknowledged batches were reported. */
  readonly failed: PartitionFailure[]
}

export interface BatchWriterOptions {
  /** Produce requests in flight per broker connection (at most 5: the broker's idempotence window). */
  readonly maxInFlight: number
  /** A request is closed once its batches reach this many bytes (a single larger batch still goes alone). */
  readonly maxRequestBytes: number
  readonly timeoutMs: number
  /** Names the cluster in messages ("cluster B") and its alias in hints; the client id when not given. */
  readonly cluster?: ClusterContext
  /**
   * Asked synchronously right before each produce request is handed to the connection: a non-null reason (the
   * group lease ran out) means no request is sent and the write throws FENCED (KmirrorError, not retriable).
   */
  readonly fence?: () => string | null
  /** Exactly-once mode: writes are transactional, with this transactional id (see the invariants above). */
  readonly transactionalId?: string
}


/**
 * How long "not now" partitions are tried again within one write before they are returned incomplete: while
 * nothing else of the write was acknowledged, and once something was.
 */
const NOT_NOW_PATIENCE_MS = 3_000
const NOT_NOW_SHORT_PATIENCE_MS = 300

/**
 * Errors that say "not now" for a partition (`notNow` in errors.ts: leadership moving, a new topic not loaded
 * on its leader yet). The batch was not appended; the partition is left incomplete (its position stays at its
 * last acknowledged batch) and tried again with fresh metadata, while the other partitions carry on.
 */
function isNotNow (name: string): boolean {
  return kafkaErrorInfo(name).notNow === true
}

/** A refused partition, or a request that failed as a whole (connection lost, timeout): `requestError`. */
type Failure = Omit<PartitionFailure, 'kind' | 'refusedBatch' | 'hint'> & { readonly requestError?: KmirrorError }

/**
 * How the writer reaches the brokers: the library's connection pool and kmirror's versioned requests by default;
 * unit tests give fakes (test/fakes/fake-produce-brokers.ts).
 */
export interface WriterTransport {
  readonly pool: Pick<ConnectionPool, 'get' | 'getFirstAvailable' | 'close'>
  readonly send: <Req, Res>(connection: Connection, spec: ApiSpec<Req, Res>, request: Req, cluster: string) => Promise<Res>
}

export class BatchWriter {
  /** Where metadata is asked: the bootstrap servers, then the brokers they named. */
  #brokers: Broker[]
  readonly #bootstrap: Broker[]
  readonly #pool: WriterTransport['pool']
  readonly #send: WriterTransport['send']
  readonly #options: BatchWriterOptions
  readonly #clientId: string
  readonly #cluster: ClusterContext
  #producer: ProducerIdentity | null = null
  readonly #throttledUntil = new Map<number, number>()
  readonly #sequences = new Sequences()
  readonly #coordinator: TransactionCoordinator
  /** Partitions added to the open transaction (exactly-once mode). */
  readonly #inTransaction = new Set<string>()
  /** A partition was refused mid-transaction: its sequences are unknown, the producer is renewed after the transaction. */
  #renewAfterTransaction = false
  /**
   * Set once another producer took this transactional id (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH): every later
   * call throws it. Initialising the id again would fence the instance that owns it now.
   */
  #fencedBy: KmirrorError | null = null

  constructor (props: ClientProps, clientId: string, options: BatchWriterOptions, transport?: WriterTransport) {
    const connect = toConnectOptions(props, clientId)
    this.#clientId = clientId
    this.#cluster = options.cluster ?? { label: clientId }
    this.#options = { ...options, maxInFlight: Math.max(1, Math.min(5, options.maxInFlight)) }
    this.#bootstrap = connect.bootstrapBrokers.map(parseBrokerAddress)
    this.#brokers = this.#bootstrap
    this.#pool = transport?.pool ?? new ConnectionPool(clientId, { ...connect, maxInflights: this.#options.maxInFlight })
    this.#send = transport?.send ?? sendRequest
    this.#coordinator = new TransactionCoordinator({
      pool: this.#pool, send: this.#send, brokers: () => this.#brokers, cluster: this.#cluster,
      principal: describePrincipal(props, this.#cluster.alias ?? clientId)
    })
  }

  /** The transactional id in exactly-once mode, else null. */
  get transactionalId (): string | null {
    return this.#options.transactionalId ?? null
  }

  /** Whether a transaction is open (a partition was added to it since the last commit or abort). */
  get inTransaction (): boolean {
    return this.#inTransaction.size > 0
  }

  /**
   * Commits the open transaction; false when none is open (nothing to commit). Throws FENCED, or the failure (the
   * outcome is then unknown: `abortTransaction` settles it).
   */
  async commitTransaction (): Promise<boolean> {
    const id = this.#options.transactionalId
    if (id === undefined || this.#inTransaction.size === 0) return false
    this.#throwIfFenced()
    try {
      const producer = this.#producer
      if (producer === null) throw new KmirrorError(ErrorCodes.INTERNAL, `no producer for the open transaction of ${id}`)
      this.#checkFence()
      await this.#coordinator.endTxn(id, producer, true)
      this.#inTransaction.clear()
      if (this.#renewAfterTransaction) this.#reset()
      return true
    } catch (err) {
      this.#reset()
      throw this.#noteFenced(err)
    }
  }

  #throwIfFenced (): void {
    if (this.#fencedBy !== null) throw this.#fencedBy
  }

  /** Remembers a fencing by another producer of the transactional id (not the `fence` hook's: that one is asked each time). */
  #noteFenced (err: unknown): unknown {
    if (err instanceof KmirrorError && err.code === ErrorCodes.FENCED && err.details['transactionalId'] !== undefined) this.#fencedBy = err
    return err
  }

  /**
   * Ends the open transaction without its records: EndTxn(abort) while the producer is valid, then a fresh
   * InitProducerId, which also completes a commit or abort left in doubt by a failed request. When this resolves,
   * a read_committed reader sees either all of the last transaction or none of it.
   */
  async abortTransaction (): Promise<void> {
    const id = this.#options.transactionalId
    if (id === undefined) return
    this.#throwIfFenced()
    const producer = this.#producer
    if (producer !== null && this.#inTransaction.size > 0) await this.#coordinator.endTxn(id, producer, false).catch(() => undefined)
    this.#reset()
    const metadata = await this.#metadata([])
    await this.#ensureProducer(metadata.brokers)
  }

  /**
   * Fences every producer of these transactional ids on this cluster (InitProducerId with each id and no producer
   * id: epoch bumped, open transaction aborted). A refusal throws NOT_AUTHORIZED naming the WRITE grant.
   */
  async fenceTransactionalIds (ids: readonly string[]): Promise<void> {
    await this.#metadata([])
    await Promise.all(ids.map(id => this.#coordinator.initProducerId(id)))
  }

  #checkFence (): void {
    const reason = this.#options.fence?.() ?? null
    if (reason !== null) {
      // Retriable: the membership is lost and joined again; the flow goes on with what its group gives it then.
      throw new KmirrorError(ErrorCodes.FENCED, `not writing to ${this.#cluster.label}: ${reason}; this instance stops writing until it owns its work again`, { retriable: true, details: { fence: reason } })
    }
  }

  /**
   * Exactly-once mode: adds the partitions of these writes the open transaction does not hold yet. Those the
   * coordinator refuses for themselves (topic authorization, a topic it does not know) are taken out of `byLeader` and failed like a refused produce (set aside by the
   * data path, invariant 22), so the other partitions are still written.
   */
  async #addToTransaction (
    id: string, writes: readonly PartitionWrite[], byLeader: Map<number, number[]>, sends: Map<number, PartitionSend<PartitionWrite>>, failures: Failure[], producer: ProducerIdentity
  ): Promise<void> {
    const fresh = new Map<string, PartitionWrite>()
    for (const i of [...byLeader.values()].flat()) {
      const w = writes[i]!
      const key = partitionKey(w.topic, w.partition)
      if (!this.#inTransaction.has(key)) fresh.set(key, w)
    }
    if (fresh.size === 0) return
    const refused = await this.#coordinator.addPartitions(id, producer, [...fresh.values()].map(w => ({ topic: w.topic, partition: w.partition })))
    for (const key of fresh.keys()) if (!refused.has(key)) this.#inTransaction.add(key)
    if (refused.size === 0) return
    for (const [node, indexes] of byLeader) {
      const kept = indexes.filter(i => {
        const w = writes[i]!
        const error = refused.get(partitionKey(w.topic, w.partition))
        if (error === undefined) return true
        sends.get(i)!.refuse(0, false)
        const info = kafkaErrorInfo(error)
        failures.push({
          write: i, topic: w.topic, partition: w.partition, error, message: `${this.#cluster.label} refused to add ${w.topic}-${w.partition} to the transaction of ${id}`,
          retriable: info.retriable, ...(info.kind === KafkaErrorKinds.AUTHORIZATION ? { operation: 'WRITE' } : {})
        })
        return false
      })
      if (kept.length === 0) byLeader.delete(node)
      else byLeader.set(node, kept)
    }
  }

  /**
   * Gets the producer id and opens the connections ahead of the first write, so start-up steps overlap with it
   * (a fresh cluster can take a moment to hand out producer ids). Failures are left for the first write.
   */
  async prepare (): Promise<void> {
    try {
      const metadata = await this.#metadata([])
      await this.#ensureProducer(metadata.brokers)
      await Promise.all([...metadata.brokers.values()].map(broker => this.#pool.get(broker)))
    } catch {
      // The first write gets the producer id again and reports what is wrong.
    }
  }

  /**
   * Writes every batch and reports each acknowledged one. Resolves with the writes left incomplete for a
   * "not now" reason (no leader known yet, leadership moving: isNotNow) and the partitions the target refused
   * (`failed`): their acknowledged batches were reported, the rest was not written, and the caller tries them
   * again later. A failure of a whole request or broker (connection, metadata, producer id) throws, after every
   * acknowledgement that came back was reported.
   */
  async write (writes: readonly PartitionWrite[], onAcked: OnBatchesAcked): Promise<WriteResult> {
    // One send state per write with batches (partition-send.ts).
    const sends = new Map<number, PartitionSend<PartitionWrite>>()
    writes.forEach((w, i) => { if (w.batches.length > 0) sends.set(i, new PartitionSend(i, w)) })
    if (sends.size === 0) return { incomplete: [], failed: [] }
    this.#throwIfFenced()
    const failures: Failure[] = []
    let reporting: Promise<void> = Promise.resolve()
    let acked = false
    const report = (acks: BatchAck[]): Promise<void> => {
      acked = true
      reporting = reporting.then(() => onAcked(acks))
      return reporting
    }
    // Long patience only while nothing of this write got through (typically new remote topics at start);
    // otherwise the waiting partitions would hold up the others' next round.
    const started = Date.now()
    const deadline = (): number => started + (acked ? NOT_NOW_SHORT_PATIENCE_MS : NOT_NOW_PATIENCE_MS)
    let pause = 20
    let toSend = [...sends.keys()]
    let waiting: number[] = []
    try {
      for (;;) {
        const { brokers, byLeader, leaderless: notNow, refused } = await this.#byLeader(toSend, i => writes[i]!)
        for (const { item, errorCode } of refused) {
          const w = writes[item]!
          sends.get(item)!.refuse(0, false)
          failures.push({ write: item, topic: w.topic, partition: w.partition, error: kafkaErrorName(errorCode), message: `${this.#cluster.label} refused the metadata of topic ${w.topic}`, retriable: isRetriableKafkaError(errorCode), operation: 'DESCRIBE' })
        }
        if (byLeader.size > 0) {
          const producer = await this.#ensureProducer(brokers)
          const id = this.#options.transactionalId
          if (id !== undefined) await this.#addToTransaction(id, writes, byLeader, sends, failures, producer)
          const results = await Promise.allSettled([...byLeader].map(([node, indexes]) =>
            this.#writeToBroker(brokers.get(node)!, node, indexes.map(i => sends.get(i)!), producer, failures, notNow, report)))
          for (const r of results) if (r.status === 'rejected') throw r.reason
        }
        waiting = [...waiting, ...notNow]
        toSend = []
        // "Not now" partitions (a new remote topic not loaded on its leader yet, a leader moving) are tried
        // again for a few seconds, as the Java producer does, without giving up the producer id. Their data is
        // sent again only once a probe finds their leader ready: resending megabytes to a broker that is still
        // loading hundreds of new partitions slows that loading down (measured: 3x for 500 new topics).
        while (waiting.length > 0 && failures.length === 0 && Date.now() + pause <= deadline()) {
          await delay(pause)
          // Probes are small: every 20 ms at first (a new topic's leader is usually ready within a few
          // hundred ms), then every 100 ms.
          pause = Date.now() - started < 500 ? 20 : 100
          const ready = new Set(await this.#ready(waiting.map(i => writes[i]!)))
          if (ready.size === 0) continue
          toSend = waiting.filter(i => ready.has(writes[i]!))
          waiting = waiting.filter(i => !ready.has(writes[i]!))
          break
        }
        if (toSend.length === 0) break
      }
      await reporting
    } catch (err) {
      this.#reset()
      throw this.#noteFenced(err)
    }
    try {
      return { incomplete: waiting, failed: this.#failed(failures) }
    } catch (err) {
      throw this.#noteFenced(err)
    }
  }

  /** Whatever the broker appended of a failed attempt cannot be told apart from what it did not: start afresh. */
  #reset (): void {
    this.#producer = null
    this.#sequences.clear()
    this.#inTransaction.clear()
    this.#renewAfterTransaction = false
  }

  /**
   * Sends the batches of `sends` from their first unacknowledged one on to one broker, up to maxInFlight requests
   * at once. A "not now" error puts the partition in `notNow` and rewinds its sequence (partition-send.ts).
   */
  async #writeToBroker (
    broker: Broker, node: number, sends: PartitionSend<PartitionWrite>[],
    producer: ProducerIdentity, failures: Failure[], notNow: number[], report: (acks: BatchAck[]) => Promise<void>
  ): Promise<void> {
    let connection: Connection
    try {
      connection = await this.#pool.get(broker)
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.PRODUCE, `connect to broker ${node} (${broker.host}:${broker.port}) of ${this.#cluster.label}`, this.#cluster)
    }
    for (const send of sends) send.resume()
    type Entry = { send: PartitionSend<PartitionWrite>, batch: number, sequence: number }
    const inFlight: { sent: Promise<ProduceResponse | Error>, entries: Entry[] }[] = []
    const settle = async (): Promise<void> => {
      const { sent, entries } = inFlight.shift()!
      const response = await sent
      const acks: BatchAck[] = []
      const answered = new Map<string, { errorCode: number, baseOffset: bigint, errorMessage: string | null }>()
      if (!(response instanceof Error)) {
        for (const t of response.responses) for (const p of t.partitions) answered.set(partitionKey(t.name, p.index), p)
      }
      for (const { send, batch, sequence } of entries) {
        const w = send.write
        const p = answered.get(send.key)
        const ok = p !== undefined && p.errorCode === 0
        const name = response instanceof Error ? null : p === undefined ? 'NO_RESPONSE' : kafkaErrorName(p.errorCode)
        const outcome = ok ? send.ack(batch) : send.refuse(sequence, name !== null && isNotNow(name))
        if (outcome.type === 'acked') {
          acks.push({ write: send.index, batch, baseOffset: Number(p!.baseOffset) })
        } else if (outcome.type === 'not-now') {
          notNow.push(send.index)
          this.#sequences.rewind(send.key, outcome.rewindTo)
        } else if (outcome.type === 'failed' && outcome.appendedAfterRefusal) {
          // Appended after a refused batch of the same partition: the sequence rule did not hold.
          failures.push({ write: send.index, topic: w.topic, partition: w.partition, error: 'APPENDED_AFTER_REFUSED_BATCH', message: null, retriable: true, requestError: new KmirrorError(ErrorCodes.PRODUCE, `${this.#cluster.label} appended a batch of ${w.topic}-${w.partition} after refusing an earlier one; writing again with a new producer id`, { retriable: true }) })
        } else if (outcome.type === 'failed' && response instanceof Error) {
          const wrapped = toKmirrorError(response, ErrorCodes.PRODUCE, `write to broker ${node} of ${this.#cluster.label}`, this.#cluster)
          failures.push({ write: send.index, topic: w.topic, partition: w.partition, error: wrapped.message, message: null, retriable: wrapped.retriable, requestError: wrapped })
        } else if (outcome.type === 'failed') {
          failures.push({ write: send.index, topic: w.topic, partition: w.partition, error: name!, message: p?.errorMessage ?? null, retriable: p === undefined || isRetriableKafkaError(p.errorCode) })
        }
      }
      if (!(response instanceof Error) && response.throttleTimeMs > 0) throttledUntil = Date.now() + response.throttleTimeMs
      if (acks.length > 0) await report(acks)
    }
    // Quota throttling (KIP-219): the broker answers at once and expects no request from us for a while.
    let throttledUntil = this.#throttledUntil.get(node) ?? 0
    for (;;) {
      if (throttledUntil > Date.now()) {
        while (inFlight.length > 0) await settle()
        await delay(throttledUntil - Date.now())
      }
      const topics = new Map<string, { name: string, partitions: { index: number, batch: Buffer }[] }>()
      const entries: Entry[] = []
      let bytes = 0
      for (const send of sends) {
        if (!send.hasNext()) continue
        if (bytes > 0 && bytes >= this.#options.maxRequestBytes) break
        const w = send.write
        const b = send.take()
        const batch = w.batches[b]!
        const sequence = this.#sequences.take(send.key, batch.recordCount)
        const bytesOut = batch.build(producer, sequence)
        const topic = topics.get(w.topic) ?? { name: w.topic, partitions: [] }
        topic.partitions.push({ index: w.partition, batch: bytesOut })
        topics.set(w.topic, topic)
        entries.push({ send, batch: b, sequence })
        bytes += bytesOut.length
      }
      if (entries.length === 0) break
      const request = { transactionalId: this.#options.transactionalId ?? null, acks: ProduceAcks.ALL, timeoutMs: this.#options.timeoutMs, topics: [...topics.values()] as ProduceTopic[] }
      this.#checkFence()
      const sent = this.#send(connection, ProduceApi, request, this.#cluster.label).catch((err: unknown) => err instanceof Error ? err : new Error(String(err)))
      inFlight.push({ sent, entries })
      if (inFlight.length >= this.#options.maxInFlight) await settle()
    }
    while (inFlight.length > 0) await settle()
    this.#throttledUntil.set(node, throttledUntil)
  }

  /**
   * The refused partitions of a write; throws the first failure of a whole request instead. Any failure ends
   * this producer id (the sequences of the refused partitions are unknown now).
   */
  #failed (failures: Failure[]): PartitionFailure[] {
    if (failures.length === 0) return []
    const id = this.#options.transactionalId
    const request = failures.find(f => f.requestError !== undefined)
    if (id !== undefined && request === undefined) {
      this.#renewAfterTransaction = true
      this.#throwTransactionFailure(failures, id)
    } else {
      this.#reset()
    }
    if (request !== undefined) throw request.requestError
    return failures.map(f => ({
      write: f.write, topic: f.topic, partition: f.partition, error: f.error, message: f.message, retriable: f.retriable,
      ...(f.operation === undefined ? {} : { operation: f.operation }),
      kind: kafkaErrorInfo(f.error).kind,
      refusedBatch: isRefusedBatchError(f.error),
      hint: kafkaErrorHint(f.error, this.#cluster.alias)
    }))
  }

  /** A produce answer that concerns the whole transactional producer, not the partition: thrown. */
  #throwTransactionFailure (failures: readonly Failure[], id: string): void {
    const fenced = failures.find(f => f.error === 'PRODUCER_FENCED' || f.error === 'INVALID_PRODUCER_EPOCH')
    if (fenced !== undefined) throw fencedError(`write to ${this.#cluster.label}`, fenced.error, id)
    const txn = failures.find(f => ['TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'INVALID_TXN_STATE', 'INVALID_PRODUCER_ID_MAPPING', 'TRANSACTION_ABORTABLE'].includes(f.error))
    if (txn === undefined) return
    const what = `write ${txn.topic}-${txn.partition} in the transaction of ${id} on ${this.#cluster.label}`
    if (txn.error === 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED') throw this.#coordinator.refused(what, id)
    throw new KmirrorError(ErrorCodes.PRODUCE, `${what}: Kafka error ${txn.error}; the transaction is aborted and the round written again`, { retriable: true, details: { kafkaErrors: [txn.error] } })
  }

  /** Which of these partitions their leader answers for now (a ListOffsets probe; errors count as not ready). */
  async #ready (writes: readonly PartitionWrite[]): Promise<PartitionWrite[]> {
    try {
      const { brokers, byLeader } = await this.#byLeader(writes, w => w)
      const ready: PartitionWrite[] = []
      await Promise.all([...byLeader].map(async ([node, list]) => {
        const errors = await this.#probeLeader(await this.#pool.get(brokers.get(node)!), list)
        for (const w of list) if (errors.get(partitionKey(w.topic, w.partition)) === 0) ready.push(w)
      }))
      return ready
    } catch {
      return []
    }
  }

  /**
   * The items grouped by the leader of their partition. Partitions the target does not have yet (a remote topic
   * still being created or grown) or without a leader right now are `leaderless`, so the others are not held
   * up by them.
   */
  async #byLeader<T> (items: readonly T[], partitionOf: (item: T) => PartitionWrite): Promise<{ brokers: Map<number, Broker>, byLeader: Map<number, T[]>, leaderless: T[], refused: { item: T, errorCode: number }[] }> {
    const metadata = await this.#metadata([...new Set(items.map(i => partitionOf(i).topic))])
    // A topic the target refuses to describe (no DESCRIBE) is refused, not "no leader yet": waiting would be silent.
    const refused = items.flatMap(item => {
      const errorCode = metadata.refused.get(partitionOf(item).topic)
      return errorCode === undefined ? [] : [{ item, errorCode }]
    })
    const byLeader = groupBy(items.filter(item => !metadata.refused.has(partitionOf(item).topic)), item => leaderOf(metadata, partitionOf(item).topic, partitionOf(item).partition))
    const leaderless = byLeader.get(-1) ?? []
    byLeader.delete(-1)
    return { brokers: metadata.brokers, byLeader, leaderless, refused }
  }

  /**
   * Asks the partitions' leader for their log end, only to learn whether it leads them now: a remote topic's leader
   * is in the metadata before the broker has loaded the partition. The error code per partition (0 = ready): a
   * few bytes, where a produce attempt would carry the data again.
   */
  async #probeLeader (connection: Connection, writes: readonly PartitionWrite[]): Promise<Map<string, number>> {
    const topics = [...groupBy(writes, w => w.topic)].map(([name, list]) => ({ name, partitions: list.map(w => ({ partition: w.partition, timestamp: ListOffsetTimestamps.LATEST })) }))
    const response = await this.#send(connection, ListOffsetsApi, { isolationLevel: 0, topics }, this.#cluster.label)
    const errors = new Map<string, number>()
    for (const t of response.topics) for (const p of t.partitions) errors.set(partitionKey(t.name, p.partition), p.errorCode)
    return errors
  }

  /** Fresh every write (a remote topic may just have been created or grown): no cache. */
  async #metadata (topics: readonly string[]): Promise<ReturnType<typeof toLeaderMetadata>> {
    try {
      const connection = await this.#pool.getFirstAvailable(this.#brokers)
      const metadata = toLeaderMetadata(await this.#send(connection, MetadataApi, { topics }, this.#cluster.label))
      if (metadata.brokers.size > 0) this.#brokers = [...metadata.brokers.values(), ...this.#bootstrap]
      return metadata
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.PRODUCE, `read the metadata of ${this.#cluster.label} before writing`, this.#cluster)
    }
  }

  async #ensureProducer (brokers: Map<number, Broker>): Promise<ProducerIdentity> {
    if (this.#producer !== null) return this.#producer
    const id = this.#options.transactionalId
    if (id !== undefined) {
      this.#producer = await this.#coordinator.initProducerId(id)
      this.#sequences.clear()
      return this.#producer
    }
    // A fresh cluster answers COORDINATOR_LOAD_IN_PROGRESS for a moment; waiting here briefly keeps the first
    // record from paying the replication loop's back-off.
    for (let attempt = 1; ; attempt++) {
      try {
        const connection = await this.#pool.getFirstAvailable([...brokers.values()])
        const response = await this.#send(connection, InitProducerIdApi, { transactionalId: null, transactionTimeoutMs: 60_000 }, this.#cluster.label)
        if (response.errorCode !== 0) throw kafkaResponseError(response.errorCode, ErrorCodes.PRODUCE, `get an idempotent producer id from ${this.#cluster.label}`, this.#cluster)
        this.#producer = { id: response.producerId, epoch: response.producerEpoch }
        this.#sequences.clear()
        return this.#producer
      } catch (err) {
        const wrapped = toKmirrorError(err, ErrorCodes.PRODUCE, `get an idempotent producer id from ${this.#cluster.label} (${this.#clientId})`, this.#cluster)
        if (!wrapped.retriable || attempt >= 20) throw wrapped
        await delay(Math.min(500, 10 * attempt))
      }
    }
  }

  async close (): Promise<void> {
    await this.#pool.close().catch(() => undefined)
  }
}
