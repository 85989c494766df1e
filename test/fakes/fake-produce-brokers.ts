/**
 * A cluster for BatchWriter unit tests, behind its WriterTransport: Metadata names broker 1 as the leader of every
 * partition asked (broker 2 for the topics in `ledBy2`), InitProducerId hands out producer ids 100, 101, ..., Produce answers by a script
 * per partition (default: appended), ListOffsets probes answer "ready" (NOT_LEADER_OR_FOLLOWER for the partitions in
 * `unready`). Produce answers wait for `release()` when
 * `holdProduce` is set, so a test can see how many requests are in flight at once.
 *
 * With `idempotence` set, Produce checks each batch's producer id and sequence (read from the batch header) as a
 * Kafka broker does: a batch equal to one of the producer's last 5 of the partition is answered with its original
 * offset and not appended again, the next sequence is appended, any other is refused OUT_OF_ORDER_SEQUENCE_NUMBER;
 * with `anyFirstSequence`, the first batch of a producer on a partition is appended whatever its sequence (Kafka 2.5+,
 * KIP-360).
 * `loseAnswers` makes the next requests fail as a lost connection does after the broker handled them.
 * Transactions: broker 1 is every transactional id's coordinator; AddPartitionsToTxn adds every partition but those
 * of `missingTopics` (UNKNOWN_TOPIC_OR_PARTITION; the others of that request OPERATION_NOT_ATTEMPTED, as Kafka
 * answers), EndTxn always succeeds and ends the transaction. A transactional Produce for a partition not added to
 * the open transaction is refused INVALID_TXN_STATE, as a Kafka broker does (nothing appended).
 */
import type { Connection } from '@platformatic/kafka'
import type { WriterTransport } from '../../src/kafka/batch-writer.ts'
import type { ApiSpec } from '../../src/kafka/protocol/api.ts'
import type { ListOffsetsRequest, ListOffsetsResponse } from '../../src/kafka/protocol/list-offsets.ts'
import type { MetadataRequest, MetadataResponse } from '../../src/kafka/protocol/metadata.ts'
import type { ProduceRequest, ProduceResponse } from '../../src/kafka/protocol/produce.ts'
import type { AddPartitionsToTxnRequest, AddPartitionsToTxnResponse } from '../../src/kafka/protocol/add-partitions-to-txn.ts'
import type { EndTxnRequest } from '../../src/kafka/protocol/end-txn.ts'
import { partitionKey } from '../../src/topic-partition.ts'

const CONNECTION = { port: 9092 } as unknown as Connection
const BROKER = { nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }
/** Leads the topics in `ledBy2`. */
const CONNECTION_2 = { port: 9093 } as unknown as Connection
const BROKER_2 = { nodeId: 2, host: '127.0.0.1', port: 9093, rack: null }

export interface SentBatch {
  readonly topic: string
  readonly partition: number
  readonly at: number
  /** The topic id the last Metadata answer gave the topic (what the writer believed it wrote to). */
  readonly topicId: string | null
}

export class FakeProduceBrokers {
  /** Per partition key: the Kafka error codes of its next produce answers (0 = appended); then always 0. */
  readonly script = new Map<string, number[]>()
  /** Throttle time (ms) of the next produce answers, in order; then 0. */
  readonly throttles: number[] = []
  /** Topics whose metadata the broker refuses, with the error code (e.g. 29 TOPIC_AUTHORIZATION_FAILED). */
  readonly refusedTopics = new Map<string, number>()
  /** Partition keys whose leader is not ready: ListOffsets probes answer NOT_LEADER_OR_FOLLOWER. */
  readonly unready = new Set<string>()
  /** Partition keys without a leader in the metadata (leader -1: its only replica's broker is down). */
  readonly noLeader = new Set<string>()
  /** Topics led by broker 2 (every other topic by broker 1). */
  readonly ledBy2 = new Set<string>()
  /** Brokers (node ids) nothing can connect to (killed): every connection attempt is refused. */
  readonly unreachable = new Set<number>()
  /** Runs as a connection to broker NODE is asked for (a test may make it unreachable from then on). */
  beforeConnect: ((node: number) => void) | null = null
  /** Brokers (node ids) whose ListOffsets probes fail as a broker restarting does: the connection is lost. */
  readonly failingProbes = new Set<number>()
  /** Metadata requests fail (the connection is lost) while set. */
  failingMetadata = false
  /** Topic ids the metadata answers (a topic deleted and created again gets a new one); null for topics not here. */
  readonly topicIds = new Map<string, string>()
  /** The topic ids a broker whose metadata lags behind still answers (the old id of a topic created again). */
  readonly laggingTopicIds = new Map<string, string>()
  /** Which broker answers each next Metadata request (`lagging`: `laggingTopicIds` first); then always the other. */
  readonly metadataFrom: ('current' | 'lagging')[] = []
  readonly #answeredIds = new Map<string, string | null>()
  holdProduce = false
  inFlight = 0
  maxInFlight = 0
  producerIds = 0
  /** Metadata and ListOffsets (probe) requests answered so far. */
  metadataRequests = 0
  probes = 0
  readonly sent: SentBatch[] = []
  readonly #held: (() => void)[] = []
  readonly #logEnd = new Map<string, number>()
  /** Check producer ids and sequences as a broker does (see above). */
  idempotence = false
  /** With `idempotence`: a producer without state on a partition may start at any sequence (Kafka 2.5+, KIP-360). */
  anyFirstSequence = false
  /** The next this many produce requests are handled, then answered with a connection error. */
  loseAnswers = 0
  /** Per partition key: the `producerId/baseSequence` of each batch appended, in log order. */
  readonly appended = new Map<string, string[]>()
  readonly #producers = new Map<string, { next: number, recent: { first: number, last: number, offset: number }[] }>()

  /** Topics the transaction coordinator does not know: AddPartitionsToTxn answers UNKNOWN_TOPIC_OR_PARTITION for them. */
  readonly missingTopics = new Set<string>()
  /** Runs as each AddPartitionsToTxn request is handled, with the topics it asks for (before `missingTopics` is read). */
  beforeAddPartitions: ((topics: string[]) => void) | null = null
  /** How long each AddPartitionsToTxn answer takes (a coordinator busy right after a commit answers late). */
  addPartitionsDelayMs = 0
  /** Per AddPartitionsToTxn request: the partition keys it added. */
  readonly added: string[][] = []
  /** Per EndTxn request: whether it committed. */
  readonly ended: boolean[] = []
  /** The partitions added to the open transaction (one transactional id per test). */
  readonly #inTransaction = new Set<string>()

  /** Runs as each request (named by its API) is about to be written to the socket, before the writer's last gate. */
  beforeSocketWrite: ((api: string) => void) | null = null

  readonly transport: WriterTransport = {
    pool: {
      get: async broker => {
        const node = broker.port === BROKER_2.port ? 2 : 1
        this.beforeConnect?.(node)
        if (this.unreachable.has(node)) throw Object.assign(new Error(`connect ECONNREFUSED ${broker.host}:${broker.port}`), { code: 'ECONNREFUSED' })
        return node === 2 ? CONNECTION_2 : CONNECTION
      },
      getFirstAvailable: async () => CONNECTION, close: async () => undefined },
    locate: async () => BROKER,
    send: async <Req, Res>(connection: Connection, spec: ApiSpec<Req, Res>, request: Req, _cluster: string, beforeWrite?: () => void): Promise<Res> => {
      // As the library does: the gate runs as the request is written; what it throws fails the request unsent.
      await Promise.resolve()
      this.beforeSocketWrite?.(spec.name)
      beforeWrite?.()
      const node = connection === CONNECTION_2 ? 2 : 1
      if (spec.name === 'ListOffsets' && this.failingProbes.has(node)) throw new Error(`connection to broker ${node} lost`)
      return await this.#answer(spec.name, request) as Res
    }
  }

  /** A broker restart: of each producer's recent batches, only the last is remembered (a snapshot keeps one). */
  restart (): void {
    for (const state of this.#producers.values()) state.recent.splice(0, state.recent.length - 1)
  }

  /** Lets every held produce request answer. */
  release (): void {
    for (const answer of this.#held.splice(0)) answer()
  }

  async #answer (api: string, request: unknown): Promise<unknown> {
    if (api === 'Metadata') {
      if (this.failingMetadata) throw new Error('connection to broker 1 lost')
      this.metadataRequests++
      return this.#metadata(request as MetadataRequest)
    }
    if (api === 'InitProducerId') return { throttleTimeMs: 0, errorCode: 0, producerId: BigInt(100 + this.producerIds++), producerEpoch: 0 }
    if (api === 'ListOffsets') {
      this.probes++
      return this.#probe(request as ListOffsetsRequest)
    }
    if (api === 'Produce') return await this.#produce(request as ProduceRequest)
    if (api === 'AddPartitionsToTxn') {
      if (this.addPartitionsDelayMs > 0) await new Promise(resolve => setTimeout(resolve, this.addPartitionsDelayMs))
      return this.#addPartitions(request as AddPartitionsToTxnRequest)
    }
    if (api === 'EndTxn') {
      this.ended.push((request as EndTxnRequest).committed)
      this.#inTransaction.clear()
      return { throttleTimeMs: 0, errorCode: 0 }
    }
    throw new Error(`the fake brokers do not answer ${api}`)
  }

  #metadata (request: MetadataRequest): MetadataResponse {
    const lagging = this.metadataFrom.shift() === 'lagging'
    const idOf = (name: string): string | null => (lagging ? this.laggingTopicIds.get(name) : undefined) ?? this.topicIds.get(name) ?? null
    for (const name of request.topics ?? []) this.#answeredIds.set(name, idOf(name))
    const topics = new Map((request.topics ?? []).map(name => [name, {
      name, errorCode: this.refusedTopics.get(name) ?? 0, id: idOf(name), isInternal: false, partitions: Array.from({ length: 4 }, (_, index) => ({ index, errorCode: 0, leader: this.noLeader.has(partitionKey(name, index)) ? -1 : this.ledBy2.has(name) ? 2 : 1, leaderEpoch: 0 }))
    }]))
    return { throttleTimeMs: 0, brokers: new Map([[1, BROKER], [2, BROKER_2]]), clusterId: 'fake', controllerId: 1, topics }
  }

  #addPartitions (request: AddPartitionsToTxnRequest): AddPartitionsToTxnResponse {
    this.beforeAddPartitions?.(request.topics.map(t => t.name))
    const refused = request.topics.some(t => this.missingTopics.has(t.name))
    if (!refused) {
      const keys = request.topics.flatMap(t => t.partitions.map(p => partitionKey(t.name, p)))
      this.added.push(keys)
      for (const key of keys) this.#inTransaction.add(key)
    }
    const errorOf = (name: string): number => this.missingTopics.has(name) ? 3 : refused ? 55 : 0
    return { throttleTimeMs: 0, results: request.topics.map(t => ({ name: t.name, partitions: t.partitions.map(index => ({ index, errorCode: errorOf(t.name) })) })) }
  }

  #probe (request: ListOffsetsRequest): ListOffsetsResponse {
    return { throttleTimeMs: 0, topics: request.topics.map(t => ({ name: t.name, partitions: t.partitions.map(p => ({ partition: p.partition, errorCode: this.unready.has(partitionKey(t.name, p.partition)) ? 6 : 0, timestamp: -1n, offset: 0n, leaderEpoch: 0 })) })) }
  }

  async #produce (request: ProduceRequest): Promise<ProduceResponse> {
    this.inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    const at = Date.now()
    for (const t of request.topics) for (const p of t.partitions) this.sent.push({ topic: t.name, partition: p.index, at, topicId: this.#answeredIds.get(t.name) ?? null })
    if (this.holdProduce) await new Promise<void>(resolve => this.#held.push(resolve))
    else await new Promise(resolve => setImmediate(resolve))
    this.inFlight--
    const responses = request.topics.map(t => ({
      name: t.name,
      partitions: t.partitions.map(p => {
        const key = partitionKey(t.name, p.index)
        const notAdded = (request.transactionalId ?? null) !== null && !this.#inTransaction.has(key)
        const scripted = notAdded ? 48 /* INVALID_TXN_STATE */ : this.script.get(key)?.shift() ?? 0
        const { errorCode, baseOffset } = scripted === 0 ? this.#append(key, p.batch) : { errorCode: scripted, baseOffset: -1 }
        return { index: p.index, errorCode, baseOffset: BigInt(baseOffset), errorMessage: null, recordErrors: [] }
      })
    }))
    if (this.loseAnswers > 0) {
      this.loseAnswers--
      throw new Error('connection closed before the answer')
    }
    return { throttleTimeMs: this.throttles.shift() ?? 0, responses }
  }

  /** Appends a batch (one offset per batch), or answers a duplicate's offset or an out-of-order refusal. */
  #append (key: string, batch: Buffer): { errorCode: number, baseOffset: number } {
    const end = this.#logEnd.get(key) ?? 0
    if (!this.idempotence) {
      this.#logEnd.set(key, end + 1)
      return { errorCode: 0, baseOffset: end }
    }
    const producerId = batch.readBigInt64BE(43)
    const first = batch.readInt32BE(53)
    const last = first + batch.readInt32BE(57) - 1
    const stateKey = `${producerId}|${key}`
    // With `anyFirstSequence`, a broker with no state of the producer on the partition takes any sequence (Kafka 2.5+, KIP-360).
    const state = this.#producers.get(stateKey) ?? { next: this.anyFirstSequence ? first : 0, recent: [] }
    this.#producers.set(stateKey, state)
    const duplicate = state.recent.find(r => r.first === first && r.last === last)
    if (duplicate !== undefined) return { errorCode: 0, baseOffset: duplicate.offset }
    if (first !== state.next) return { errorCode: 45, baseOffset: -1 } // OUT_OF_ORDER_SEQUENCE_NUMBER
    state.next = last + 1
    state.recent.push({ first, last, offset: end })
    if (state.recent.length > 5) state.recent.shift()
    this.#logEnd.set(key, end + 1)
    this.appended.set(key, [...(this.appended.get(key) ?? []), `${producerId}/${first}`])
    return { errorCode: 0, baseOffset: end }
  }
}
