/**
 * Writes ready-made record batches to the target as one idempotent producer (acks=all), several requests in
 * flight per broker, and reports the base offset each batch received. Its parts: target-leaders.ts (fresh
 * metadata, partitions by leader, the readiness probe), broker-produce.ts (one broker's share: requests packed,
 * in flight, answers matched to batches), not-now-wait.ts (partitions waiting for their leader, probed before their
 * data goes out again), writer-producer.ts (the producer id, its sequences and batches in doubt, and when a write
 * renews it), writer-transaction.ts (the open transaction in exactly-once mode), write-screen.ts (which partitions
 * may be sent: refused metadata, re-created remote topics, ids read again after a slow producer id or transaction).
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
 * - A refusal ends this producer id: the next write starts with a fresh one (InitProducerId) and sequences
 *   from 0. Re-sent batches are then never deduplicated against the failed attempt: duplicates, never loss.
 * - At-least-once mode, a request that failed as a whole (connection lost or cut, no answer in time) keeps the
 *   producer id: its batches are in doubt (in-doubt.ts) and the next write of their partition sends them again
 *   with the same sequences, so the broker appends only what it lacks. A next write that does not start with the
 *   same source records, or a broker that no longer knows the sequences (OUT_OF_STEP: the partition is returned
 *   incomplete), renews the producer id as a refusal does.
 *   The exception are "not now" errors (`notNow` in errors.ts: no leader yet, leader moving), where the broker
 *   appended neither the batch nor any later one of that partition: the partition's sequence is rewound to the
 *   refused batch (partition-send.ts) and it is sent again, with the same producer id, once a probe finds its
 *   leader ready, for a few seconds at most; later writes probe it first too (not-now-wait.ts).
 * - A partition the target refuses (authorization, too large, invalid) is returned in `failed` as a typed
 *   PartitionFailure, never thrown: the other partitions of the write are acknowledged as usual. Only a failure of
 *   a whole request (connection, metadata, producer id) throws; at-least-once mode, a broker that cannot be
 *   connected to at all was sent nothing, and its partitions wait "not now" instead (broker-produce.ts).
 * - A partition whose remote topic has another topic id than at its last write (deleted and created again) is sent
 *   nothing: it fails with REMOTE_TOPIC_RECREATED (remote-topic-ids.ts), so no record lands in the new topic at the
 *   old position; the data path copies it again from the source's log start. A broker still answering the old
 *   (retired) id has stale metadata: the partition waits "not now", and is copied again once, not twice. A write
 *   whose producer id or AddPartitionsToTxn took long reads the ids again before it produces (write-screen.ts).
 * - A batch is only sent once the metadata knows its partition and leader (see record-writer.ts for the
 *   library's modulo pitfall; this writer addresses partitions explicitly and never maps them).
 * - `fence` is asked synchronously right before each produce request (and each EndTxn commit) is handed to the
 *   connection: a reason means nothing is sent and the write throws FENCED. So does a write begun under a group
 *   membership that was lost since (`endMembership`), even when the lease of a new membership holds by then: its
 *   partitions went with the old one.
 * - Exactly-once mode (`transactionalId`): the producer id comes from InitProducerId with that id (fencing older
 *   producers of it, aborting their open transaction); every partition is added to the open transaction
 *   (AddPartitionsToTxn) before its first batch; batches carry the transactional bit; `commitTransaction` ends it.
 *   A partition whose topic the coordinator does not know waits "not now" and is sent nothing; the metadata and
 *   topic id are read again before it is added again (writer-transaction.ts).
 *   A failure of a whole request drops the producer: the next one is initialised again, which aborts whatever the
 *   failed transaction held. A refused partition's sequences are unknown: the producer is renewed after the
 *   transaction ends, never in the middle of one (that would abort what was acknowledged). Fencing answers
 *   (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH) throw FENCED; TRANSACTIONAL_ID_AUTHORIZATION_FAILED throws
 *   NOT_AUTHORIZED naming the grant.
 * - Exactly-once mode in a group (`endMembership`): when the membership the producer wrote under is lost, the
 *   producer is ended with it (its fencing, expected then, forgotten; a write of that membership still under way
 *   sends nothing more and fails with a retriable FENCED). From then on a producer is initialised (InitProducerId)
 *   only while the `fence` hook holds, that is under the lease of a new membership, after the leader of any
 *   generation without this member fenced its id: a new epoch, never fenced by that leader afterwards.
 */
import { ConnectionPool } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { partitionKey } from '../topic-partition.ts'
import { parseBrokerAddress } from './broker-address.ts'
import { toConnectOptions } from './client-options.ts'
import type { ClusterContext } from './connection-hints.ts'
import { watchedPool } from './silent-brokers.ts'
import { openTransactions, type OpenTransactions } from './open-transactions.ts'
import { PartitionSend, unacknowledged } from './partition-send.ts'
import { describePrincipal } from './principal.ts'
import { fenceTransactionalIds, TransactionCoordinator } from './transactions.ts'
import { gatedSend, produceToBroker, type BrokerProduceDeps, type Failure, type WriterTransport } from './broker-produce.ts'
import { NotNowWait } from './not-now-wait.ts'
import { RemoteTopicIds } from './remote-topic-ids.ts'
import { TargetLeaders, type ByLeader, type Unready } from './target-leaders.ts'
import { WriterTransaction } from './writer-transaction.ts'
import { WriterProducer } from './writer-producer.ts'
import { WriteGate } from './write-gate.ts'
import { partitionFailures, REMOTE_TOPIC_RECREATED } from './write-failures.ts'
import { checkAgain, RECHECK_IDS_AFTER_MS, setAside, type WriteScreenDeps } from './write-screen.ts'
import type { BatchAck, BatchWriterOptions, OnBatchesAcked, PartitionFailure, PartitionWrite, WriteResult } from './batch-writer-types.ts'

export type { WriterTransport } from './broker-produce.ts'
export type { Unready } from './target-leaders.ts'

export type {
  BatchAck, BatchWriterOptions, OnBatchesAcked, OutBatch, PartitionFailure, PartitionWrite, WriteResult
} from './batch-writer-types.ts'

/** A write attempt with no partition to send: only probes (fresh each time: its lists are the attempt's to fill). */
const nothingToSend = (): ByLeader<number> => ({ brokers: new Map(), byLeader: new Map(), leaderless: [], refused: [], ids: new Map() })

export class BatchWriter {
  readonly #pool: WriterTransport['pool']
  readonly #send: WriterTransport['send']
  readonly #options: BatchWriterOptions
  readonly #cluster: ClusterContext
  readonly #leaders: TargetLeaders
  /** The producer id, its sequences and batches in doubt; when a write renews it (writer-producer.ts). */
  readonly #producer: WriterProducer
  /** Partitions (`partitionKey`) whose last answer was "not now": probed before their data goes out (not-now-wait.ts). */
  readonly #unready = new Set<string>()
  /** The topic id each remote partition was last written under (remote-topic-ids.ts). */
  readonly #topicIds = new RemoteTopicIds()
  /** What screens a write's partitions before they are sent (write-screen.ts). */
  readonly #screen: WriteScreenDeps
  readonly #coordinator: TransactionCoordinator
  /** Exactly-once mode: the open transaction; null otherwise. */
  readonly #transaction: WriterTransaction | null
  /** What each broker's share of a write needs (broker-produce.ts). */
  readonly #produce: BrokerProduceDeps
  /** The lease and the membership writes go out under (write-gate.ts). */
  readonly #gate: WriteGate
  /** `User:name` of kmirror's principal on this cluster, for the grant a refused topic names. */
  readonly #principal: string

  constructor (props: ClientProps, clientId: string, options: BatchWriterOptions, transport?: WriterTransport) {
    const connect = toConnectOptions(props, clientId)
    this.#cluster = options.cluster ?? { label: clientId }
    this.#options = { ...options, maxInFlight: Math.max(1, Math.min(5, options.maxInFlight)) }
    this.#gate = new WriteGate(options.fence, this.#cluster)
    this.#pool = transport?.pool ?? watchedPool(new ConnectionPool(clientId, { ...connect, maxInflights: this.#options.maxInFlight }), this.#cluster.label)
    this.#send = transport?.send ?? gatedSend
    this.#leaders = new TargetLeaders({ pool: this.#pool, send: this.#send }, connect.bootstrapBrokers.map(parseBrokerAddress), this.#cluster)
    this.#principal = describePrincipal(props, this.#cluster.alias ?? clientId)
    this.#screen = { topicIds: this.#topicIds, leaders: this.#leaders, cluster: this.#cluster }
    this.#coordinator = new TransactionCoordinator({
      pool: this.#pool, send: this.#send, brokers: () => this.#leaders.brokers, cluster: this.#cluster,
      principal: this.#principal,
      ...(options.transactionalIdPrefix === undefined ? {} : { grantPrefix: options.transactionalIdPrefix }),
      ...(options.onCoordinatorMoved === undefined ? {} : { onMoved: options.onCoordinatorMoved }),
      ...(options.onCoordinatorWaiting === undefined ? {} : { onWaiting: options.onCoordinatorWaiting }),
      ...(transport?.locate === undefined ? {} : { locate: transport.locate })
    })
    this.#transaction = options.transactionalId === undefined ? null : new WriterTransaction(options.transactionalId, this.#coordinator, this.#cluster)
    this.#producer = new WriterProducer({
      transport: { pool: this.#pool, send: this.#send }, cluster: this.#cluster, clientId, options: this.#options,
      coordinator: this.#coordinator, transaction: this.#transaction, gate: this.#gate
    })
    const { maxInFlight, maxRequestBytes, timeoutMs } = this.#options
    this.#produce = {
      transport: { pool: this.#pool, send: this.#send }, cluster: this.#cluster, maxInFlight, maxRequestBytes, timeoutMs,
      transactionalId: options.transactionalId ?? null, sequences: this.#producer.sequences, throttledUntil: new Map()
    }
  }

  /** The transactional id in exactly-once mode, else null. */
  get transactionalId (): string | null {
    return this.#options.transactionalId ?? null
  }

  /**
   * Exactly-once mode: AddPartitionsToTxn calls that may have opened a transaction so far (added a partition, or
   * failed without an answer; 0 otherwise). A round during which it did not move opened no transaction, even if it
   * failed.
   */
  get transactionAdditions (): number {
    return this.#transaction?.additionsSent ?? 0
  }

  /** Whether a transaction is open (a partition was added to it since the last commit or abort). */
  get inTransaction (): boolean {
    return this.#transaction?.open ?? false
  }

  /**
   * Commits the open transaction; false when none is open (nothing to commit). Throws FENCED, or the failure (the
   * outcome is then unknown: `abortTransaction` settles it).
   */
  async commitTransaction (retryForMs?: number): Promise<boolean> {
    const transaction = this.#transaction
    if (transaction === null || !transaction.open) return false
    transaction.throwIfFenced()
    const era = transaction.era
    try {
      const producer = this.#producer.identity
      if (producer === null) throw new KmirrorError(ErrorCodes.INTERNAL, `no producer for the open transaction of ${transaction.id}`)
      this.#gate.check()
      await transaction.end(producer, true, retryForMs)
      if (transaction.renewAfter) this.#producer.reset()
      else transaction.clear()
      return true
    } catch (err) {
      this.#producer.reset()
      throw transaction.noteFenced(err, era)
    }
  }

  /**
   * Ends the open transaction without its records: EndTxn(abort) while the producer is valid, then a fresh
   * InitProducerId, which also completes a commit or abort left in doubt by a failed request. When this resolves,
   * a read_committed reader sees either all of the last transaction or none of it.
   */
  async abortTransaction (): Promise<void> {
    const transaction = this.#transaction
    if (transaction === null) return
    transaction.throwIfFenced()
    const producer = this.#producer.identity
    if (producer !== null && transaction.open) await transaction.end(producer, false).catch(() => undefined)
    this.#producer.reset()
    // After a lost membership, outside the lease: the next write initialises the producer (and aborts what the
    // lost membership left open, if the leader has not fenced it already).
    if (this.#producer.renewsUnderLease && this.#gate.reason() !== null) return
    const metadata = await this.#leaders.metadata([])
    await this.#producer.ensure(metadata.brokers)
  }

  /**
   * Fences every producer of these transactional ids on this cluster (InitProducerId with each id and no producer
   * id: epoch bumped, open transaction aborted). A refusal throws NOT_AUTHORIZED naming the WRITE grant.
   */
  async fenceTransactionalIds (ids: readonly string[]): Promise<void> {
    await this.#leaders.metadata([])
    // With the flow's own timeout: a broker refuses one above its transaction.max.timeout.ms (INVALID_TRANSACTION_TIMEOUT).
    await fenceTransactionalIds(this.#coordinator, ids, this.#options.transactionTimeoutMs)
  }

  /** The open transactions on this cluster whose id starts with PREFIX (open-transactions.ts). */
  async openTransactions (prefix: string): Promise<OpenTransactions | null> {
    const { brokers } = await this.#leaders.metadata([])
    return await openTransactions({ pool: this.#pool, send: this.#send, brokers: [...brokers.values()], cluster: this.#cluster, describe: async id => await this.#coordinator.describe(id) }, prefix)
  }

  /**
   * The group membership this writer wrote under is lost (see the invariants): a write begun under it sends no
   * request more. Exactly-once mode also ends the producer; returns the fencing of that producer, if one was
   * answered already; null otherwise (and always in at-least-once mode).
   */
  endMembership (): KmirrorError | null {
    this.#gate.endMembership()
    if (this.#transaction === null) return null
    const fenced = this.#transaction.endMembership()
    this.#producer.endMembership()
    return fenced
  }

  /**
   * Which of these partitions their leader answers for now (a probe, no data: target-leaders.ts `ready`), by
   * `partitionKey`, but those whose topic the transaction coordinator answered unknown, within its back-off; those
   * returned leave the "not now" set, so their next write sends at once.
   */
  async probeReady (partitions: readonly { topic: string, partition: number }[]): Promise<Set<string>> {
    const ready = new Set((await this.#readyToAdd(partitions)).map(p => partitionKey(p.topic, p.partition)))
    for (const key of ready) this.#unready.delete(key)
    return ready
  }

  /**
   * Which of these partitions their leader answers for now (target-leaders.ts `ready`); exactly-once mode, only
   * those the transaction coordinator may be asked for again (writer-transaction.ts `mayAdd`: its back-off after
   * answering their topic unknown).
   */
  async #readyToAdd<T extends { topic: string, partition: number }> (partitions: readonly T[]): Promise<T[]> {
    const transaction = this.#transaction
    const asked = transaction === null ? partitions : partitions.filter(p => transaction.mayAdd(partitionKey(p.topic, p.partition)))
    return asked.length === 0 ? [] : await this.#leaders.ready(asked)
  }

  /**
   * Why the last probe found this remote partition not ready (target-leaders.ts `unready`), or, exactly-once mode,
   * why the transaction coordinator did not add it (writer-transaction.ts `unknownTopic`); undefined if neither.
   */
  waitReason (topic: string, partition: number): Unready | undefined {
    return this.#leaders.unready(topic, partition) ?? this.#transaction?.unknownTopic(topic, partition)
  }

  /**
   * Gets the producer id and opens the connections ahead of the first write, so start-up steps overlap with it
   * (a fresh cluster can take a moment to hand out producer ids). Failures are left for the first write.
   */
  async prepare (): Promise<void> {
    try {
      const metadata = await this.#leaders.metadata([])
      await this.#producer.ensure(metadata.brokers)
      await Promise.all([...metadata.brokers.values()].map(broker => this.#pool.get(broker)))
    } catch {
      // The first write gets the producer id again and reports what is wrong.
    }
  }

  /**
   * Writes every batch and reports each acknowledged one. Resolves with the writes left incomplete for a
   * "not now" reason (no leader known yet, leadership moving: isNotNow; exactly-once mode, a topic the transaction
   * coordinator does not know yet) and the partitions the target refused
   * (`failed`): their acknowledged batches were reported, the rest was not written, and the caller tries them
   * again later. A failure of a whole request or broker (connection, metadata, producer id) throws, after every
   * acknowledgement that came back was reported.
   */
  async write (writes: readonly PartitionWrite[], onAcked: OnBatchesAcked): Promise<WriteResult> {
    // One send state per write with batches (partition-send.ts).
    const sends = new Map<number, PartitionSend<PartitionWrite>>()
    writes.forEach((w, i) => { if (w.batches.length > 0) sends.set(i, new PartitionSend(i, w)) })
    if (sends.size === 0) return { incomplete: [], failed: [] }
    this.#transaction?.throwIfFenced()
    const era = this.#transaction?.era ?? 0
    const membership = this.#gate.membership
    const checkFence = (): void => { this.#gate.check(membership) }
    if (!this.#producer.doubts.admits(writes)) this.#producer.reset()
    for (const send of sends.values()) send.resent = this.#producer.doubts.has(send.key)
    const failures: Failure[] = []
    const outOfStep: number[] = []
    let reporting: Promise<void> = Promise.resolve()
    let acked = false
    const report = (acks: BatchAck[]): Promise<void> => {
      acked = true
      reporting = reporting.then(() => onAcked(acks))
      return reporting
    }
    const wait = new NotNowWait({ unready: this.#unready, keyOf: i => sends.get(i)!.key, item: i => writes[i]!, ready: ws => this.#readyToAdd(ws), acked: () => acked }, [...sends.keys()])
    let toSend = wait.first
    const screened = { writes, sends, failures }
    try {
      for (;;) {
        const leaders = toSend.length === 0 ? nothingToSend() : await this.#leaders.byLeader(toSend, i => writes[i]!)
        const checkedAt = Date.now()
        let { brokers, byLeader, leaderless: notNow } = setAside(this.#screen, screened, leaders)
        if (byLeader.size > 0) {
          this.#transaction?.throwIfEnded(era)
          const producer = await this.#producer.ensure(brokers)
          await this.#transaction?.add(writes, byLeader, sends, failures, producer, notNow)
          // (a producer id or AddPartitionsToTxn that took a while: the topic ids are read again, write-screen.ts)
          if (byLeader.size > 0 && Date.now() - checkedAt > RECHECK_IDS_AFTER_MS) ({ brokers, byLeader } = await checkAgain(this.#screen, screened, byLeader, notNow))
          const results = await Promise.allSettled([...byLeader].map(([node, indexes]) =>
            produceToBroker(this.#produce, { broker: brokers.get(node)!, node, sends: indexes.map(i => sends.get(i)!), producer, failures, notNow, outOfStep, report, checkFence })))
          for (const r of results) if (r.status === 'rejected') throw r.reason
        }
        // "Not now" partitions (a new remote topic not loaded on its leader yet, a leader moving) are tried
        // again for a few seconds, as the Java producer does, without giving up the producer id.
        toSend = await wait.next(notNow, failures.length > 0)
        if (toSend.length === 0) break
      }
      await reporting
      this.#transaction?.throwIfEnded(era)
    } catch (err) {
      this.#producer.afterFailure(sends, failures, outOfStep)
      throw this.#noteFenced(err, era)
    }
    try {
      this.#transaction?.notNowInDoubt(wait.waiting.map(i => sends.get(i)!))
      const failed = this.#failed(sends, failures, outOfStep)
      for (const f of failed) {
        if (f.error !== REMOTE_TOPIC_RECREATED) continue
        this.#topicIds.reported(f.topic, f.partition)
        // (the topic created again is another: its partition starts without the old one's back-off)
        this.#transaction?.forget(f.topic, f.partition)
      }
      return { incomplete: unacknowledged(sends, [...wait.waiting, ...outOfStep], failed.map(f => f.write)), failed }
    } catch (err) {
      throw this.#noteFenced(err, era)
    }
  }

  /**
   * The partitions whose remote topic has another topic id than at their last write (or check), from fresh
   * metadata: how a partition with nothing to write notices that its topic was deleted and created again.
   */
  async recreatedPartitions (partitions: readonly { topic: string, partition: number }[]): Promise<{ topic: string, partition: number }[]> {
    if (partitions.length === 0) return []
    const metadata = await this.#leaders.metadata([...new Set(partitions.map(p => p.topic))])
    const recreated = partitions.filter(p => this.#topicIds.check(p.topic, p.partition, metadata.topics.get(p.topic)?.id).kind === 'recreated')
    for (const p of recreated) this.#topicIds.reported(p.topic, p.partition)
    return recreated
  }

  /**
   * Where the batches of a remote partition must end so that those in doubt are sent again as they were (the last
   * source offset of each; empty when none is in doubt, and always in exactly-once mode).
   */
  cutPoints (topic: string, partition: number): ReadonlySet<number> {
    return this.#producer.doubts.cutPoints(partitionKey(topic, partition))
  }

  /**
   * A partition left the data path (released, its topic removed): its next write learns its topic id afresh and is
   * not probed for an old "not now" first.
   */
  forgetPartition (topic: string, partition: number): void {
    this.#topicIds.forget(topic, partition)
    this.#leaders.forget(topic, partition)
    this.#transaction?.forget(topic, partition)
    this.#unready.delete(partitionKey(topic, partition))
  }

  #noteFenced (err: unknown, era: number): unknown {
    return this.#transaction === null ? err : this.#transaction.noteFenced(err, era)
  }

  /**
   * The refused partitions of a write; throws the first failure of a whole request instead. What they mean for the
   * producer: `WriterProducer.afterWrite`.
   */
  #failed (sends: Map<number, PartitionSend<PartitionWrite>>, failures: Failure[], outOfStep: readonly number[]): PartitionFailure[] {
    this.#producer.afterWrite(sends, failures, outOfStep)
    if (failures.length === 0 && outOfStep.length === 0) return []
    const request = failures.find(f => f.requestError !== undefined)
    if (request !== undefined) throw request.requestError
    return partitionFailures(failures, this.#principal, this.#cluster)
  }

  async close (): Promise<void> {
    await this.#pool.close().catch(() => undefined)
  }
}
