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
 * - Any failure ends this producer id: the next write starts with a fresh one (InitProducerId) and sequences
 *   from 0. Re-sent batches are then never deduplicated against the failed attempt: duplicates, never loss.
 * - A batch is only sent once the metadata knows its partition and leader (see record-writer.ts for the
 *   library's modulo pitfall; this writer addresses partitions explicitly and never maps them).
 */
import { setTimeout as delay } from 'node:timers/promises'
import { ConnectionPool, initProducerIdV5, Producer, ProduceAcks, type Broker, type Connection } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { toConnectOptions } from './client-options.ts'
import { isRetriableKafkaError, kafkaErrorHint, kafkaErrorName, kafkaErrorNames, toKmirrorError } from './errors.ts'
import { rawProduce, type RawProduceResponse, type RawProduceTopic } from './protocol/raw-apis.ts'
import type { ProducerIdentity } from './record-batch.ts'

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

/** Why the target refused a batch, per partition, when it refused the batch itself (too large, invalid). */
export interface RefusedBatch {
  readonly topic: string
  readonly partition: number
  readonly error: string
}

export interface BatchWriterOptions {
  /** Produce requests in flight per broker connection (at most 5: the broker's idempotence window). */
  readonly maxInFlight: number
  /** A request is closed once its batches reach this many bytes (a single larger batch still goes alone). */
  readonly maxRequestBytes: number
  readonly timeoutMs: number
}

/** Errors that say the batch itself is unacceptable as it is, rather than the moment. */
const REFUSED_BATCH_ERRORS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE', 'INVALID_TIMESTAMP', 'UNSUPPORTED_COMPRESSION_TYPE'])
const MAX_SEQUENCE = 2 ** 31

/**
 * Errors that say "not now" for a partition: leadership is moving or a new topic is not loaded on its leader
 * yet. The batch was not appended; the partition is left incomplete (its position stays at its last
 * acknowledged batch) and tried again with fresh metadata, while the other partitions carry on.
 */
const NOT_NOW_ERRORS = new Set(['NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH'])

interface Failure {
  readonly write: number
  readonly topic: string
  readonly partition: number
  readonly error: string
  readonly message: string | null
  readonly retriable: boolean
}

export class BatchWriter {
  readonly #metadataClient: Producer
  readonly #pool: ConnectionPool
  readonly #options: BatchWriterOptions
  readonly #clientId: string
  #producer: ProducerIdentity | null = null
  #forceMetadata = false
  readonly #throttledUntil = new Map<number, number>()
  readonly #sequences = new Map<string, number>()

  constructor (props: ClientProps, clientId: string, options: BatchWriterOptions) {
    const connect = toConnectOptions(props, clientId)
    this.#clientId = clientId
    this.#options = { ...options, maxInFlight: Math.max(1, Math.min(5, options.maxInFlight)) }
    // Used for metadata only; batches go through the writer's own connections.
    // Short metadata retries: right after a remote topic is created its leader is unknown for a few ms, and
    // the first records should not wait the general retry.backoff.ms for it.
    this.#metadataClient = new Producer({ ...connect, retryDelay: Math.min(connect.retryDelay, 20), autocreateTopics: false })
    this.#pool = new ConnectionPool(clientId, { ...connect, maxInflights: this.#options.maxInFlight })
  }

  /**
   * Gets the producer id and opens the connections ahead of the first write, so start-up steps overlap with it
   * (a fresh cluster can take a moment to hand out producer ids). Failures are left for the first write.
   */
  async prepare (): Promise<void> {
    try {
      const metadata = await this.#metadataClient.metadata({ topics: [] })
      await this.#ensureProducer(metadata.brokers)
      await Promise.all([...metadata.brokers.values()].map(broker => this.#pool.get(broker)))
    } catch {
      // The first write gets the producer id again and reports what is wrong.
    }
  }

  /**
   * Writes every batch and reports each acknowledged one. Resolves with the writes left incomplete for a
   * "not now" reason (no leader known yet, leadership moving: NOT_NOW_ERRORS): their acknowledged batches
   * were reported, the rest was not written, and the caller tries them again later. Any other failure
   * throws, after every acknowledgement that came back was reported.
   */
  async write (writes: readonly PartitionWrite[], onAcked: OnBatchesAcked): Promise<{ incomplete: number[] }> {
    const incomplete: number[] = []
    if (writes.every(w => w.batches.length === 0)) return { incomplete }
    const metadata = await this.#leaders(writes)
    const byLeader = new Map<number, number[]>()
    writes.forEach((w, i) => {
      if (w.batches.length === 0) return
      const leader = metadata.leaders.get(`${w.topic}\u0000${w.partition}`)
      if (leader === undefined) {
        incomplete.push(i)
        return
      }
      const list = byLeader.get(leader) ?? []
      list.push(i)
      byLeader.set(leader, list)
    })
    const failures: Failure[] = []
    let reporting: Promise<void> = Promise.resolve()
    const report = (acks: BatchAck[]): Promise<void> => {
      reporting = reporting.then(() => onAcked(acks))
      return reporting
    }
    if (byLeader.size === 0) return { incomplete }
    const producer = await this.#ensureProducer(metadata.brokers)
    try {
      const results = await Promise.allSettled([...byLeader].map(([node, indexes]) =>
        this.#writeToBroker(metadata.brokers.get(node)!, node, writes, indexes, producer, failures, report)))
      await reporting
      for (const r of results) if (r.status === 'rejected') throw r.reason
    } catch (err) {
      this.#reset()
      throw err
    }
    if (failures.length > 0) {
      // The producer id ends with any failure (see the invariants), "not now" ones included.
      this.#reset()
      this.#forceMetadata = true
      if (!failures.every(f => NOT_NOW_ERRORS.has(f.error))) throw this.#failed(failures)
      incomplete.push(...failures.map(f => f.write))
    }
    return { incomplete }
  }

  /** Whatever the broker appended of a failed attempt cannot be told apart from what it did not: start afresh. */
  #reset (): void {
    this.#producer = null
    this.#sequences.clear()
  }

  async #writeToBroker (
    broker: Broker, node: number, writes: readonly PartitionWrite[], indexes: number[], producer: ProducerIdentity,
    failures: Failure[], report: (acks: BatchAck[]) => Promise<void>
  ): Promise<void> {
    let connection: Connection
    try {
      connection = await this.#pool.get(broker)
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.PRODUCE, `connect to target broker ${node} (${broker.host}:${broker.port})`)
    }
    const next = new Map<number, number>(indexes.map(i => [i, 0]))
    const failed = new Set<number>()
    const inFlight: { sent: Promise<RawProduceResponse | Error>, entries: { write: number, batch: number }[] }[] = []
    const settle = async (): Promise<void> => {
      const { sent, entries } = inFlight.shift()!
      const response = await sent
      const acks: BatchAck[] = []
      const answered = new Map<string, { errorCode: number, baseOffset: bigint, errorMessage: string | null }>()
      if (!(response instanceof Error)) {
        for (const t of response.responses) for (const p of t.partitions) answered.set(`${t.name}\u0000${p.index}`, p)
      }
      for (const { write, batch } of entries) {
        if (failed.has(write)) continue
        const w = writes[write]!
        const p = answered.get(`${w.topic}\u0000${w.partition}`)
        if (p !== undefined && p.errorCode === 0) {
          acks.push({ write, batch, baseOffset: Number(p.baseOffset) })
          continue
        }
        failed.add(write)
        if (response instanceof Error) {
          const wrapped = toKmirrorError(response, ErrorCodes.PRODUCE, `write to target broker ${node}`)
          failures.push({ write, topic: w.topic, partition: w.partition, error: wrapped.message, message: null, retriable: wrapped.retriable })
        } else {
          const name = p === undefined ? 'NO_RESPONSE' : kafkaErrorName(p.errorCode)
          failures.push({ write, topic: w.topic, partition: w.partition, error: name, message: p?.errorMessage ?? null, retriable: p === undefined || isRetriableKafkaError(p.errorCode) || REFUSED_BATCH_ERRORS.has(name) })
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
      const entries: { write: number, batch: number }[] = []
      let bytes = 0
      for (const i of indexes) {
        const b = next.get(i)!
        const w = writes[i]!
        if (failed.has(i) || b >= w.batches.length) continue
        if (bytes > 0 && bytes >= this.#options.maxRequestBytes) break
        const batch = w.batches[b]!
        const key = `${w.topic}\u0000${w.partition}`
        const sequence = this.#sequences.get(key) ?? 0
        const bytesOut = batch.build(producer, sequence)
        this.#sequences.set(key, (sequence + batch.recordCount) % MAX_SEQUENCE)
        next.set(i, b + 1)
        const topic = topics.get(w.topic) ?? { name: w.topic, partitions: [] }
        topic.partitions.push({ index: w.partition, batch: bytesOut })
        topics.set(w.topic, topic)
        entries.push({ write: i, batch: b })
        bytes += bytesOut.length
      }
      if (entries.length === 0) break
      const request: RawProduceTopic[] = [...topics.values()]
      inFlight.push({ sent: rawProduce(connection, ProduceAcks.ALL, this.#options.timeoutMs, request).catch((err: unknown) => err instanceof Error ? err : new Error(String(err))), entries })
      if (inFlight.length >= this.#options.maxInFlight) await settle()
    }
    while (inFlight.length > 0) await settle()
    this.#throttledUntil.set(node, throttledUntil)
  }

  #failed (failures: Failure[]): KmirrorError {
    this.#reset()
    const refused: RefusedBatch[] = failures.filter(f => REFUSED_BATCH_ERRORS.has(f.error)).map(f => ({ topic: f.topic, partition: f.partition, error: f.error }))
    const hint = failures.map(f => kafkaErrorHint(f.error)).find(h => h !== undefined)
    const shown = failures.slice(0, 5).map(f => `${f.topic}-${f.partition}: ${f.error}${f.message === null ? '' : ` (${f.message})`}`).join('; ')
    const more = failures.length > 5 ? ` and ${failures.length - 5} more` : ''
    const denied = failures.some(f => f.error.endsWith('_AUTHORIZATION_FAILED'))
    return new KmirrorError(denied ? ErrorCodes.NOT_AUTHORIZED : ErrorCodes.PRODUCE, `the target refused records for ${shown}${more}${hint === undefined ? '' : `; ${hint}`}`, {
      retriable: !denied && failures.every(f => f.retriable),
      details: { kafkaErrors: [...new Set(failures.map(f => f.error))], refused }
    })
  }

  /**
   * The leader of each partition to write. Partitions the target does not have yet (a remote topic still being
   * created or grown) or without a leader right now are left out, so the others are not held up by them.
   */
  async #leaders (writes: readonly PartitionWrite[]): Promise<{ brokers: Map<number, Broker>, leaders: Map<string, number> }> {
    const topics = [...new Set(writes.map(w => w.topic))]
    const leaderOf = (metadata: { topics: Map<string, { partitions: { leader: number }[] }>, brokers: Map<number, Broker> }, w: PartitionWrite): number | undefined => {
      const leader = metadata.topics.get(w.topic)?.partitions[w.partition]?.leader
      return leader !== undefined && leader >= 0 && metadata.brokers.has(leader) ? leader : undefined
    }
    try {
      let metadata = await this.#metadataClient.metadata({ topics, forceUpdate: this.#forceMetadata })
      this.#forceMetadata = false
      if (writes.some(w => leaderOf(metadata, w) === undefined)) metadata = await this.#metadataClient.metadata({ topics, forceUpdate: true })
      const leaders = new Map<string, number>()
      for (const w of writes) {
        const leader = leaderOf(metadata, w)
        if (leader !== undefined) leaders.set(`${w.topic}\u0000${w.partition}`, leader)
      }
      return { brokers: metadata.brokers, leaders }
    } catch (err) {
      // One topic unknown to the target (its remote topic not created yet) fails the whole request: then
      // each topic is asked alone and the unknown ones are left out.
      const unknownTopic = kafkaErrorNames(err).includes('UNKNOWN_TOPIC_OR_PARTITION') || /unknown topic/i.test(String(err))
      if (!unknownTopic) throw toKmirrorError(err, ErrorCodes.PRODUCE, 'read target metadata before writing')
      if (topics.length === 1) return { brokers: new Map(), leaders: new Map() }
      const leaders = new Map<string, number>()
      let brokers = new Map<number, Broker>()
      for (const topic of topics) {
        const one = await this.#leaders(writes.filter(w => w.topic === topic))
        for (const [k, v] of one.leaders) leaders.set(k, v)
        if (one.brokers.size > 0) brokers = one.brokers
      }
      return { brokers, leaders }
    }
  }

  async #ensureProducer (brokers: Map<number, Broker>): Promise<ProducerIdentity> {
    if (this.#producer !== null) return this.#producer
    // A fresh cluster answers COORDINATOR_LOAD_IN_PROGRESS for a moment; waiting here briefly keeps the first
    // record from paying the replication loop's back-off.
    for (let attempt = 1; ; attempt++) {
      try {
        const connection = await this.#pool.getFirstAvailable([...brokers.values()])
        const response = await initProducerIdV5.api.async(connection, null, 60_000, undefined, undefined)
        this.#producer = { id: response.producerId, epoch: response.producerEpoch }
        this.#sequences.clear()
        return this.#producer
      } catch (err) {
        const wrapped = toKmirrorError(err, ErrorCodes.PRODUCE, `get an idempotent producer id from the target (${this.#clientId})`)
        if (!wrapped.retriable || attempt >= 20) throw wrapped
        await delay(Math.min(500, 10 * attempt))
      }
    }
  }

  async close (): Promise<void> {
    await this.#pool.close().catch(() => undefined)
    await this.#metadataClient.close(true).catch(() => undefined)
  }
}
