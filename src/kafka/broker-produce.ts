/**
 * One broker's share of a batch writer's write (batch-writer.ts): the partitions it leads, their batches packed
 * into produce requests, several requests in flight, each answer matched back to its batches.
 *
 * Invariants:
 * - A request carries at most one batch per partition, and at most `maxRequestBytes` (a single larger batch still
 *   goes alone); a partition's batches go in order, each with the next sequence number of the producer id. The
 *   first batch of a producer id on a partition (sequence 0) goes alone: the partition's next one waits for its
 *   answer (a broker without the producer's state appends any sequence, so a later batch could overtake a refused one).
 * - At most `maxInFlight` requests are in flight on the connection; answers are settled in the order sent, and
 *   acknowledgements are reported per answer, one report at a time.
 * - A "not now" refusal (no leader yet, leader moving) rewinds the partition's sequence to the refused batch
 *   (partition-send.ts) and lists the partition in `notNow`; any other refusal is listed in `failures`, and so is a
 *   request that failed as a whole, marked `inDoubt` (the broker may have appended it: in-doubt.ts). A partition
 *   sent again after a doubt whose sequence the broker refuses is listed in `outOfStep`.
 * - At-least-once mode, a broker that cannot be connected to (refused, no route) is sent nothing and its
 *   partitions are listed in `notNow`: one dead broker holds up no other broker's partitions.
 * - Quota throttling (KIP-219): the broker answers at once and expects no request for a while; nothing more is
 *   sent to it until then, in this write or the next.
 * - `checkFence` is asked synchronously right before each request is handed to the connection, and again when the
 *   library writes it to the socket.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { ConnectionPool, ProduceAcks, type Broker, type Connection } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { isUnreachable, type ClusterContext } from './connection-hints.ts'
import { isRetriableKafkaError, kafkaErrorInfo, kafkaErrorName, toKmirrorError } from './errors.ts'
import type { ApiSpec } from './protocol/api.ts'
import { sendRequest } from './protocol/negotiation.ts'
import { ProduceApi, type ProduceResponse, type ProduceTopic } from './protocol/produce.ts'
import type { ProducerIdentity } from './record-batch.ts'
import type { TransactionCoordinatorDeps } from './transactions.ts'
import { partitionKey } from '../topic-partition.ts'
import type { PartitionSend, Sequences } from './partition-send.ts'
import type { BatchAck, PartitionFailure, PartitionWrite } from './batch-writer.ts'

/**
 * How the writer reaches the brokers: the library's connection pool and kmirror's versioned requests by default;
 * unit tests give fakes (test/fakes/fake-produce-brokers.ts).
 */
export interface WriterTransport {
  readonly pool: Pick<ConnectionPool, 'get' | 'getFirstAvailable' | 'close'>
  /** BEFORE_WRITE: asked right before the library writes the request to the socket (negotiation.ts `sendAt`). */
  readonly send: <Req, Res>(connection: Connection, spec: ApiSpec<Req, Res>, request: Req, cluster: string, beforeWrite?: () => void) => Promise<Res>
  /** How a transactional id's coordinator is found; FindCoordinator by default (transactions.ts `locate`: unit tests replace it). */
  readonly locate?: TransactionCoordinatorDeps['locate']
}

/** kmirror's versioned request at the highest version both sides speak, the gate asked as it goes to the socket. */
export const gatedSend: WriterTransport['send'] = async (connection, spec, request, cluster, beforeWrite) =>
  await sendRequest(connection, spec, request, cluster, spec.maxVersion, beforeWrite)

/**
 * A refused partition, or a request that failed as a whole (connection lost, timeout): `requestError`, and
 * `inDoubt` when the broker may have appended its batches (in-doubt.ts).
 */
export type Failure = Omit<PartitionFailure, 'kind' | 'refusedBatch' | 'hint'> & { readonly requestError?: KmirrorError, readonly inDoubt?: true }

export interface BrokerProduceDeps {
  readonly transport: WriterTransport
  readonly cluster: ClusterContext
  readonly maxInFlight: number
  readonly maxRequestBytes: number
  readonly timeoutMs: number
  readonly transactionalId: string | null
  readonly sequences: Sequences
  /** Per broker: no request before this time (quota throttling), kept from one write to the next. */
  readonly throttledUntil: Map<number, number>
}

/** What one write hands each broker, and where its outcomes go. */
export interface BrokerShare {
  readonly broker: Broker
  readonly node: number
  readonly sends: readonly PartitionSend<PartitionWrite>[]
  readonly producer: ProducerIdentity
  readonly failures: Failure[]
  readonly notNow: number[]
  /** Writes sent again after a doubt whose sequence the broker refused (it cannot deduplicate them). */
  readonly outOfStep: number[]
  readonly report: (acks: BatchAck[]) => Promise<void>
  /** Throws when this write may send nothing more: the group lease, or the membership it began under, ended. */
  readonly checkFence: () => void
}

type Entry = { readonly send: PartitionSend<PartitionWrite>, readonly batch: number, readonly sequence: number }

/**
 * Errors that say "not now" for a partition (`notNow` in errors.ts: leadership moving, a new topic not loaded
 * on its leader yet). The batch was not appended; the partition is left incomplete (its position stays at its
 * last acknowledged batch) and tried again with fresh metadata, while the other partitions carry on.
 */
function isNotNow (name: string): boolean {
  return kafkaErrorInfo(name).notNow === true
}

/** Refusals of a producer's sequence: the broker does not know the batches before it (in-doubt.ts). */
const OUT_OF_STEP = new Set(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'DUPLICATE_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID'])

/**
 * Sends the batches of `share.sends` from their first unacknowledged one on to one broker, up to maxInFlight
 * requests at once.
 */
export async function produceToBroker (deps: BrokerProduceDeps, share: BrokerShare): Promise<void> {
  const { broker, node, sends } = share
  let connection: Connection
  try {
    connection = await deps.transport.pool.get(broker)
  } catch (err) {
    // At-least-once mode, a broker nothing can connect to (killed: refused; no route to it) was sent nothing: its
    // partitions wait "not now" like leaderless ones, and the other brokers' carry on. Its controller fences it
    // within seconds and their leadership moves (or they show no leader). Exactly-once mode fails the round: they
    // are in its transaction already.
    if (deps.transactionalId === null && isUnreachable(err)) {
      for (const send of sends) if (send.unreachable()) share.notNow.push(send.index)
      return
    }
    throw toKmirrorError(err, ErrorCodes.PRODUCE, `connect to broker ${node} (${broker.host}:${broker.port}) of ${deps.cluster.label}`, deps.cluster)
  }
  for (const send of sends) send.resume()
  const inFlight: { sent: Promise<ProduceResponse | Error>, entries: Entry[] }[] = []
  let throttledUntil = deps.throttledUntil.get(node) ?? 0
  const settle = async (): Promise<void> => {
    const { sent, entries } = inFlight.shift()!
    const response = await sent
    if (!(response instanceof Error) && response.throttleTimeMs > 0) throttledUntil = Date.now() + response.throttleTimeMs
    const acks = settleAnswer(deps, share, entries, response)
    if (acks.length > 0) await share.report(acks)
  }
  for (;;) {
    if (throttledUntil > Date.now()) {
      while (inFlight.length > 0) await settle()
      await delay(throttledUntil - Date.now())
    }
    const { topics, entries } = nextRequest(deps, sends, share.producer)
    if (entries.length === 0) {
      // Batches left only behind a first batch of the producer id that waits for its answer (PartitionSend `opening`).
      if (inFlight.length > 0 && sends.some(s => s.hasNext())) {
        await settle()
        continue
      }
      break
    }
    const request = { transactionalId: deps.transactionalId, acks: ProduceAcks.ALL, timeoutMs: deps.timeoutMs, topics }
    share.checkFence()
    // Asked again as the request goes to the socket: an ApiVersions exchange or other requests' continuations may
    // run between here and there. A fencing there fails this request unsent, which counts as in doubt (safe).
    const sent = deps.transport.send(connection, ProduceApi, request, deps.cluster.label, share.checkFence).catch((err: unknown) => err instanceof Error ? err : new Error(String(err)))
    inFlight.push({ sent, entries })
    if (inFlight.length >= deps.maxInFlight) await settle()
  }
  while (inFlight.length > 0) await settle()
  deps.throttledUntil.set(node, throttledUntil)
}

/** The next request's batches: one per partition with a batch left, up to `maxRequestBytes`. */
function nextRequest (deps: BrokerProduceDeps, sends: readonly PartitionSend<PartitionWrite>[], producer: ProducerIdentity): { topics: ProduceTopic[], entries: Entry[] } {
  const topics = new Map<string, { name: string, partitions: { index: number, batch: Buffer }[] }>()
  const entries: Entry[] = []
  let bytes = 0
  for (const send of sends) {
    if (!send.mayTakeNext()) continue
    if (bytes > 0 && bytes >= deps.maxRequestBytes) break
    const w = send.write
    const b = send.take()
    const batch = w.batches[b]!
    const sequence = deps.sequences.take(send.key, batch.recordCount)
    send.sent(b, sequence)
    const bytesOut = batch.build(producer, sequence)
    const topic = topics.get(w.topic) ?? { name: w.topic, partitions: [] }
    topic.partitions.push({ index: w.partition, batch: bytesOut })
    topics.set(w.topic, topic)
    entries.push({ send, batch: b, sequence })
    bytes += bytesOut.length
  }
  return { topics: [...topics.values()] as ProduceTopic[], entries }
}

/** Matches an answer (or the failure of its request) to its batches: the acknowledged ones, in order. */
function settleAnswer (deps: BrokerProduceDeps, share: BrokerShare, entries: readonly Entry[], response: ProduceResponse | Error): BatchAck[] {
  const { node, failures, notNow, outOfStep } = share
  const label = deps.cluster.label
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
    const outcome = ok ? send.ack(batch) : name === null ? send.lost() : send.refuse(sequence, isNotNow(name), OUT_OF_STEP.has(name), name === 'NOT_LEADER_OR_FOLLOWER')
    if (outcome.type === 'acked') {
      acks.push({ write: send.index, batch, baseOffset: Number(p!.baseOffset) })
    } else if (outcome.type === 'not-now') {
      notNow.push(send.index)
      deps.sequences.rewind(send.key, outcome.rewindTo)
    } else if (outcome.type === 'out-of-step') {
      outOfStep.push(send.index)
    } else if (outcome.type === 'in-doubt') {
      const wrapped = toKmirrorError(response, ErrorCodes.PRODUCE, `write to broker ${node} (${share.broker.host}:${share.broker.port}) of ${label}`, deps.cluster)
      failures.push({ write: send.index, topic: w.topic, partition: w.partition, error: wrapped.message, message: null, retriable: wrapped.retriable, requestError: wrapped, inDoubt: true })
    } else if (outcome.type === 'failed' && outcome.appendedAfterRefusal) {
      // Appended after a refused batch of the same partition: the sequence rule did not hold.
      failures.push({ write: send.index, topic: w.topic, partition: w.partition, error: 'APPENDED_AFTER_REFUSED_BATCH', message: null, retriable: true, requestError: new KmirrorError(ErrorCodes.PRODUCE, `${label} appended a batch of ${w.topic}-${w.partition} after refusing an earlier one; writing again with a new producer id`, { retriable: true }) })
    } else if (outcome.type === 'failed') {
      failures.push({ write: send.index, topic: w.topic, partition: w.partition, error: name!, message: p?.errorMessage ?? null, retriable: p === undefined || isRetriableKafkaError(p.errorCode) })
    } else if (outcome.type === 'appended-after-failure' && deps.transactionalId !== null) {
      // In the transaction, after a batch refused (or appended, NOT_ENOUGH_REPLICAS_AFTER_APPEND): it must not commit.
      // At least once the partition's failure stands alone (set aside and retried; what was appended is copied again).
      failures.push({ write: send.index, topic: w.topic, partition: w.partition, error: 'APPENDED_AFTER_REFUSED_BATCH', message: null, retriable: true, requestError: new KmirrorError(ErrorCodes.PRODUCE, `${label} appended a batch of ${w.topic}-${w.partition} after refusing an earlier one in the transaction of ${deps.transactionalId}; the transaction is aborted and the round written again`, { retriable: true }) })
    }
  }
  return acks
}
