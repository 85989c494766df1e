/**
 * The batch writer's open transaction in exactly-once mode (batch-writer.ts): which partitions it holds, whether
 * the producer must be renewed once it ends, and whether another producer took the transactional id.
 *
 * Invariants:
 * - Every partition is added to the open transaction (AddPartitionsToTxn) before its first batch; one refused for
 *   itself (topic authorization) is failed like a refused produce (set aside by the data path, invariant 22), and the
 *   other partitions are still written. One whose topic the coordinator does not know (UNKNOWN_TOPIC_OR_PARTITION: a
 *   remote topic just created, or deleted) waits "not now", nothing sent: the writer probes its leader and reads the
 *   metadata again, topic id included, before it is added again, so a topic deleted and created again meanwhile is
 *   set aside as REMOTE_TOPIC_RECREATED, never written at the old position.
 * - A refused partition's sequences are unknown: the producer is renewed after the transaction ends, never in the
 *   middle of one (that would abort what was acknowledged).
 * - Once another producer took the transactional id (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH), every later call
 *   throws that FENCED error: initialising the id again would fence the instance that owns it now. Only the end of
 *   the membership the producer wrote under (`endMembership`: the group's leader fences a lost member's id before
 *   handing its work out, so that fencing was expected) forgets it; a fencing answered to a request of an ended
 *   membership (`era`) is never remembered.
 * - A partition refused with an error the broker answers after appending (NOT_ENOUGH_REPLICAS_AFTER_APPEND, a
 *   partition's REQUEST_TIMED_OUT) aborts the round: its batch may be in the transaction, which must not commit.
 * - So does a partition whose batch was answered NOT_LEADER_OR_FOLLOWER and still waits at the end of the write (`notNowInDoubt`):
 *   the leader may have appended it before it lost its leadership, and the round's progress would stop before it.
 * - A produce answer about the whole transactional producer is thrown, not returned per partition: fencing throws
 *   FENCED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED throws NOT_AUTHORIZED naming the grant, and a transaction the
 *   broker cannot go on with throws a retriable PRODUCE error (the round is aborted and written again).
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { ClusterContext } from './connection-hints.ts'
import { isTransactionError, kafkaErrorInfo, KafkaErrorKinds } from './errors.ts'
import type { ProducerIdentity } from './record-batch.ts'
import { partitionKey } from '../topic-partition.ts'
import type { PartitionSend } from './partition-send.ts'
import type { Unready } from './target-leaders.ts'
import { fencedError, isFencingError, type TransactionCoordinator } from './transactions.ts'
import type { Failure } from './broker-produce.ts'
import type { PartitionWrite } from './batch-writer.ts'

/**
 * Partition errors a broker answers for a batch it may have appended: NOT_ENOUGH_REPLICAS_AFTER_APPEND (appended,
 * then the in-sync replicas shrank) and REQUEST_TIMED_OUT (appended, not replicated in time).
 */
const MAYBE_APPENDED: ReadonlySet<string> = new Set(['NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'REQUEST_TIMED_OUT'])

/** AddPartitionsToTxn's answer for a topic its coordinator does not know (yet, or any more): "not now", never a failure. */
const UNKNOWN_TOPIC = 'UNKNOWN_TOPIC_OR_PARTITION'
/** How long a partition answered UNKNOWN_TOPIC_OR_PARTITION is not asked for again: doubling per answer in a row, up to the max. */
const UNKNOWN_BACKOFF_MS = 100
// (2 s at most: the internal records of a round wait for their partitions, and abort the round while they cannot be added)
const UNKNOWN_BACKOFF_MAX_MS = 2_000

export class WriterTransaction {
  readonly #id: string
  readonly #coordinator: TransactionCoordinator
  readonly #cluster: ClusterContext
  /** Partitions added to the open transaction. */
  readonly #partitions = new Set<string>()
  /**
   * Partitions whose topic the coordinator did not know at their last AddPartitionsToTxn (`unknownTopic`): how many
   * times in a row, and until when it is not asked again (`mayAdd`).
   */
  readonly #unknown = new Map<string, { readonly answers: number, readonly until: number }>()
  /** A partition was refused mid-transaction: its sequences are unknown, the producer is renewed after the transaction. */
  #renewAfter = false
  #fencedBy: KmirrorError | null = null
  /**
   * AddPartitionsToTxn calls that may have opened a transaction, ever (never cleared): those that added a partition
   * or failed without an answer. A round without one opened no transaction at the coordinator, whatever `open` says
   * after a failure cleared it; nor did one whose every partition was refused (a topic the coordinator does not know
   * yet), which must not be told as a transaction aborted.
   */
  #additionsSent = 0
  /** Counts the memberships ended (`endMembership`): a request of an earlier era speaks for a producer that is gone. */
  #era = 0

  constructor (id: string, coordinator: TransactionCoordinator, cluster: ClusterContext) {
    this.#id = id
    this.#coordinator = coordinator
    this.#cluster = cluster
  }

  get id (): string {
    return this.#id
  }

  /** Whether a partition was added since the last commit or abort. */
  get open (): boolean {
    return this.#partitions.size > 0
  }

  /** AddPartitionsToTxn calls that may have opened a transaction so far (see `#additionsSent`). */
  get additionsSent (): number {
    return this.#additionsSent
  }

  /** Whether the producer must be renewed now that the transaction ended. */
  get renewAfter (): boolean {
    return this.#renewAfter
  }

  /** The transaction ended (committed, aborted, or its producer dropped). */
  clear (): void {
    this.#partitions.clear()
    this.#renewAfter = false
  }

  /** The membership era requests are sent in: taken before a request, handed to `noteFenced` with its failure. */
  get era (): number {
    return this.#era
  }

  throwIfFenced (): void {
    if (this.#fencedBy !== null) throw this.#fencedBy
  }

  /**
   * Remembers a fencing by another producer of the transactional id (not the `fence` hook's: that one is asked each
   * time), unless the request was sent in an era that has ended since.
   */
  noteFenced (err: unknown, era: number): unknown {
    if (era === this.#era && isTransactionFencing(err)) this.#fencedBy = err
    return err
  }

  /**
   * The group membership this producer wrote under is lost: its fencing (remembered, or still to come from a
   * request in flight) is forgotten and the open transaction dropped. Returns the fencing it forgets, if any.
   */
  endMembership (): KmirrorError | null {
    const fenced = this.#fencedBy
    this.#era++
    this.#fencedBy = null
    this.clear()
    return fenced
  }

  /** A write of a membership that ended while it ran sends nothing more, and its transaction is not committed. */
  throwIfEnded (era: number): void {
    if (era === this.#era) return
    throw new KmirrorError(ErrorCodes.FENCED, `not writing to ${this.#cluster.label}: the group membership this write of ${this.#id} began under is lost; ` +
      'this instance writes again once its group assigns it work under a new membership', { retriable: true, details: { fence: 'membership lost' } })
  }

  /**
   * Adds the partitions of these writes the open transaction does not hold yet. Those the coordinator refuses are
   * taken out of `byLeader`: an unknown topic's go to `notNow` (sent nothing, to be probed and tried again), the
   * others' send is refused and listed in `failures`.
   */
  async add (
    writes: readonly PartitionWrite[], byLeader: Map<number, number[]>, sends: Map<number, PartitionSend<PartitionWrite>>, failures: Failure[], producer: ProducerIdentity, notNow: number[]
  ): Promise<void> {
    const fresh = new Map<string, PartitionWrite>()
    for (const i of [...byLeader.values()].flat()) {
      const w = writes[i]!
      const key = partitionKey(w.topic, w.partition)
      if (!this.#partitions.has(key)) fresh.set(key, w)
    }
    if (fresh.size === 0) return
    let refused: Map<string, string>
    try {
      refused = await this.#coordinator.addPartitions(this.#id, producer, [...fresh.values()].map(w => ({ topic: w.topic, partition: w.partition })))
    } catch (err) {
      this.#additionsSent++
      throw err
    }
    if (refused.size < fresh.size) this.#additionsSent++
    for (const key of fresh.keys()) {
      if (refused.get(key) === UNKNOWN_TOPIC) {
        const answers = (this.#unknown.get(key)?.answers ?? 0) + 1
        this.#unknown.set(key, { answers, until: Date.now() + Math.min(UNKNOWN_BACKOFF_MAX_MS, UNKNOWN_BACKOFF_MS * 2 ** (answers - 1)) })
      } else {
        this.#unknown.delete(key)
        if (!refused.has(key)) this.#partitions.add(key)
      }
    }
    if (refused.size === 0) return
    for (const [node, indexes] of byLeader) {
      const kept = indexes.filter(i => {
        const w = writes[i]!
        const error = refused.get(partitionKey(w.topic, w.partition))
        if (error === undefined) return true
        if (error === UNKNOWN_TOPIC) {
          notNow.push(i)
          return false
        }
        sends.get(i)!.refuse(0, false)
        const info = kafkaErrorInfo(error)
        failures.push({
          write: i, topic: w.topic, partition: w.partition, error, message: `${this.#cluster.label} refused to add ${w.topic}-${w.partition} to the transaction of ${this.#id}`,
          retriable: info.retriable, ...(info.kind === KafkaErrorKinds.AUTHORIZATION ? { operation: 'WRITE' } : {})
        })
        return false
      })
      if (kept.length === 0) byLeader.delete(node)
      else byLeader.set(node, kept)
    }
  }

  /**
   * Why this partition waits, when its last AddPartitionsToTxn found its topic unknown to the coordinator (the
   * leader's probe may find it ready meanwhile); undefined otherwise. What `health.stall.threshold.ms` reports.
   */
  unknownTopic (topic: string, partition: number): Unready | undefined {
    if (!this.#unknown.has(partitionKey(topic, partition))) return undefined
    return {
      error: UNKNOWN_TOPIC,
      detail: `the transaction coordinator of ${this.#id} on ${this.#cluster.label} does not know its topic (created moments ago and not known to that broker yet, ` +
        'or deleted), though its leader does: it is added to the transaction once the coordinator knows it',
      remedy: 'if it stays unknown, look for a broker of that cluster whose metadata lags behind (its log; in KRaft mode, kafka-metadata-quorum.sh ' +
        'describe --replication shows each broker\'s lag) and restart it'
    }
  }

  /**
   * Whether partition KEY may be added now: its topic was never answered unknown since it was last added, or the
   * back-off since that answer (UNKNOWN_BACKOFF_MS doubling to UNKNOWN_BACKOFF_MAX_MS) has passed. Its leader knowing
   * the topic says nothing of the coordinator: without it, a topic the coordinator keeps not knowing would be asked
   * for every few ms, and the write of every round held up by it.
   */
  mayAdd (key: string, now = Date.now()): boolean {
    const unknown = this.#unknown.get(key)
    return unknown === undefined || now >= unknown.until
  }

  /** The partition is no longer written: what was remembered of it goes. */
  forget (topic: string, partition: number): void {
    this.#unknown.delete(partitionKey(topic, partition))
  }

  /**
   * Partitions were refused in the transaction: the producer is renewed once it ends, and an answer about the
   * whole transactional producer is thrown (see the invariants).
   */
  refused (failures: readonly Failure[]): void {
    this.#renewAfter = true
    const fenced = failures.find(f => isFencingError(f.error))
    if (fenced !== undefined) throw fencedError(`write to ${this.#cluster.label}`, fenced.error, this.#id)
    // Refused after the broker appended it (or maybe): it is in the transaction, and would be committed with the
    // partition's progress still before it, then copied again.
    const appended = failures.find(f => MAYBE_APPENDED.has(f.error))
    if (appended !== undefined) {
      throw new KmirrorError(ErrorCodes.PRODUCE, `write ${appended.topic}-${appended.partition} in the transaction of ${this.#id} on ${this.#cluster.label}: Kafka error ` +
        `${appended.error}, answered for a batch the broker may have appended; the transaction is aborted and the round written again`, { retriable: true, details: { kafkaErrors: [appended.error] } })
    }
    const txn = failures.find(f => isTransactionError(f.error))
    if (txn === undefined) return
    const what = `write ${txn.topic}-${txn.partition} in the transaction of ${this.#id} on ${this.#cluster.label}`
    if (txn.error === 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED') throw this.#coordinator.refused(what, this.#id)
    throw new KmirrorError(ErrorCodes.PRODUCE, `${what}: Kafka error ${txn.error}; the transaction is aborted and the round written again`, { retriable: true, details: { kafkaErrors: [txn.error] } })
  }

  /**
   * At the end of a write: throws when a batch answered "not now" was not acknowledged since (SENDS still waiting,
   * their send refused after it went out), as a batch answered after an append (see the invariants).
   */
  notNowInDoubt (waiting: readonly PartitionSend<PartitionWrite>[]): void {
    const doubtful = waiting.find(send => send.refusedNotNow && send.acked < send.write.batches.length)
    if (doubtful === undefined) return
    // Its sequence was rewound to the batch's: a batch of other records sent with it after the abort would be taken
    // by the broker for the aborted one (a duplicate, not appended). A new epoch starts the sequences again.
    this.#renewAfter = true
    throw new KmirrorError(ErrorCodes.PRODUCE, `write ${doubtful.write.topic}-${doubtful.write.partition} in the transaction of ${this.#id} on ${this.#cluster.label}: its leader moved ` +
      'while a batch waited for its replicas, and no new leader took it in time; the batch may be in the transaction, which is aborted, and the round written again', { retriable: true })
  }

  /** EndTxn for the open transaction (commit or abort) with this producer; RETRY_FOR_MS: see `endTxn`. */
  async end (producer: ProducerIdentity, commit: boolean, retryForMs?: number): Promise<void> {
    await this.#coordinator.endTxn(this.#id, producer, commit, retryForMs)
  }
}

/** FENCED by another producer of the transactional id (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH), not by the group lease. */
export function isTransactionFencing (err: unknown): err is KmirrorError {
  return err instanceof KmirrorError && err.code === ErrorCodes.FENCED && err.details['transactionalId'] !== undefined
}
