/**
 * The transaction coordinator of a transactional id on the target: finds it (FindCoordinator TRANSACTION), gets
 * the producer id and epoch (InitProducerId with the transactional id), adds partitions to the open transaction
 * (AddPartitionsToTxn v3 at most) and ends it (EndTxn).
 *
 * Invariants:
 * - InitProducerId with a transactional id bumps its epoch: every producer with an older epoch is fenced (its
 *   next request answers PRODUCER_FENCED or INVALID_PRODUCER_EPOCH) and its open transaction is aborted. That is
 *   how `fenceTransactionalIds` fences a lost member (ids carry the pid and start time: a restarted kmirror has a
 *   new one, and its previous incarnation is fenced as a lost member).
 * - AddPartitionsToTxn answering UNKNOWN_TOPIC_OR_PARTITION for a partition is never asked again here: the partition
 *   is returned refused, and the writer waits for it "not now" (writer-transaction.ts), re-reading the metadata and
 *   the topic's id before it asks again. Asking again by name would add a topic deleted and created again meanwhile
 *   (a remote topic re-created by a refresh), and the old position would be written into the new topic.
 * - A coordinator that moved (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, or its connection failed) is looked up
 *   again; a transaction still being completed (CONCURRENT_TRANSACTIONS) and a coordinator loading are waited out,
 *   within a deadline (`coordinatorError`: the one table of errors.ts says which answer is which). A coordinator
 *   found at another broker than before (its broker died, or handed its __transaction_state partition over) is
 *   reported to `onMoved`, once per move: the flow logs it. A request held off by "not yet" answers for long is
 *   reported to `onWaiting` (transaction-waits.ts): once while it lasts, once when it ends.
 * - Fencing answers throw FENCED; a refused transactional id throws NOT_AUTHORIZED naming the grant.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { Broker, Connection, ConnectionPool } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { describeGrant } from './acl-grant.ts'
import { askAnyBroker } from './broker-suspects.ts'
import type { ClusterContext } from './connection-hints.ts'
import { coordinatorError, CoordinatorErrors, isTransactionError, kafkaErrorName, kafkaResponseError, toKmirrorError } from './errors.ts'
import type { ApiSpec } from './protocol/api.ts'
import { AddPartitionsToTxnApi, type AddPartitionsToTxnResponse } from './protocol/add-partitions-to-txn.ts'
import { DescribeTransactionsApi, type DescribedTransaction } from './protocol/describe-transactions.ts'
import { EndTxnApi } from './protocol/end-txn.ts'
import { CoordinatorKeyTypes, findCoordinator } from './protocol/find-coordinator.ts'
import { InitProducerIdApi } from './protocol/init-producer-id.ts'
import type { ProducerIdentity } from './record-batch.ts'
import { TransactionWait, type WaitReporter } from './transaction-waits.ts'
import { partitionKey } from '../topic-partition.ts'

export type SendFn = <Req, Res>(connection: Connection, spec: ApiSpec<Req, Res>, request: Req, cluster: string) => Promise<Res>

/** Connect's default transaction timeout for source tasks is the producer's 60 s; kmirror's rounds are short. */
export const TRANSACTION_TIMEOUT_MS = 60_000

/** How long "not yet" answers and a moving coordinator are waited out, per request. */
const TRANSACTION_RETRY_DEADLINE_MS = 30_000
const FENCED_ERRORS = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH'])

/** Whether a Kafka error name says another producer of the transactional id initialised it since (`fencedError`). */
export function isFencingError (name: string): boolean {
  return FENCED_ERRORS.has(name)
}

export interface TransactionCoordinatorDeps {
  readonly pool: Pick<ConnectionPool, 'get' | 'getFirstAvailable'>
  readonly send: SendFn
  /** Where to ask for the coordinator: the brokers the last metadata named, then the bootstrap ones. */
  readonly brokers: () => Broker[]
  readonly cluster: ClusterContext
  /** `User:name` of kmirror's principal on this cluster, for the grant a refusal names. */
  readonly principal: string
  /**
   * The prefix kmirror's transactional ids share (`<group id>-`): a refusal names the prefixed WRITE grant that
   * covers every id of the flow (an id carries the pid and start time). Without it, the refused id itself.
   */
  readonly grantPrefix?: string
  readonly onMoved?: (move: TransactionCoordinatorMove) => void
  /** A request held off by CONCURRENT_TRANSACTIONS or COORDINATOR_LOAD_IN_PROGRESS for long, and its end (transaction-waits.ts). */
  readonly onWaiting?: WaitReporter
  /** How the coordinator of a transactional id is found; by default FindCoordinator to any broker (unit tests replace it). */
  readonly locate?: (transactionalId: string) => Promise<Broker & { nodeId: number }>
  /** After how long a held request is reported (`WAIT_REPORT_MS` by default). */
  readonly reportWaitAfterMs?: number
}

/** The coordinator of a transactional id found at another broker than before (`host:port` of both). */
export interface TransactionCoordinatorMove {
  readonly transactionalId: string
  readonly cluster: string
  readonly from: string
  readonly to: string
  readonly nodeId: number
}

export class TransactionCoordinator {
  readonly #deps: TransactionCoordinatorDeps
  readonly #coordinators = new Map<string, Broker>()
  /** `host:port` of the coordinator found last per transactional id (kept when forgotten, to tell a move). */
  readonly #lastFound = new Map<string, string>()

  constructor (deps: TransactionCoordinatorDeps) {
    this.#deps = deps
  }

  /** A producer id and a new epoch for `transactionalId`: fences older producers of that id, aborts their transaction. */
  async initProducerId (transactionalId: string, timeoutMs = TRANSACTION_TIMEOUT_MS): Promise<ProducerIdentity> {
    const response = await this.#call(transactionalId, 'get a producer id for', InitProducerIdApi, { transactionalId, transactionTimeoutMs: timeoutMs }, r => r.errorCode)
    return { id: response.producerId, epoch: response.producerEpoch, transactional: true }
  }

  /**
   * Adds partitions to the open transaction of `producer` (one is opened by the first of them). Partitions refused
   * for themselves (`partitionRefusals`: a topic the principal may not write, one the coordinator does not know)
   * are left out and returned with their error, never asked again here (see the invariants), while the others are
   * added (one refused partition fails the whole request: the others answer OPERATION_NOT_ATTEMPTED, and are asked
   * again without it).
   * An error of the transaction itself (fenced, coordinator moved or busy) concerns every partition: it is thrown.
   */
  async addPartitions (transactionalId: string, producer: ProducerIdentity, partitions: readonly { topic: string, partition: number }[]): Promise<Map<string, string>> {
    const refused = new Map<string, string>()
    let remaining = [...partitions]
    while (remaining.length > 0) {
      const byTopic = new Map<string, number[]>()
      for (const p of remaining) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition])
      const request = { transactionalId, producerId: producer.id, producerEpoch: producer.epoch, topics: [...byTopic].map(([name, list]) => ({ name, partitions: list })) }
      let dropped: { key: string, error: string }[] = []
      await this.#call(transactionalId, 'add partitions to the transaction of', AddPartitionsToTxnApi, request, r => {
        const answer = partitionRefusals(r)
        dropped = answer.refused
        return answer.errorCode
      })
      if (dropped.length === 0) break
      for (const d of dropped) refused.set(d.key, d.error)
      remaining = remaining.filter(p => !refused.has(partitionKey(p.topic, p.partition)))
    }
    return refused
  }

  /**
   * Commits (`commit` true) or aborts the open transaction of `producer`. A coordinator moving or busy is asked again
   * for up to RETRY_FOR_MS (30 s by default): a commit must give up before the transaction's timeout, after which the
   * coordinator aborts it and bumps the epoch (the answer would then read as fenced); given up, it is in doubt.
   */
  async endTxn (transactionalId: string, producer: ProducerIdentity, commit: boolean, retryForMs = TRANSACTION_RETRY_DEADLINE_MS): Promise<void> {
    const request = { transactionalId, producerId: producer.id, producerEpoch: producer.epoch, committed: commit }
    await this.#call(transactionalId, commit ? 'commit the transaction of' : 'abort the transaction of', EndTxnApi, request, r => r.errorCode, Math.min(retryForMs, TRANSACTION_RETRY_DEADLINE_MS))
  }

  /**
   * What the coordinator of `transactionalId` knows of it (DescribeTransactions, Kafka 3.0+): its state, producer
   * and open transaction. An id it does not know answers TRANSACTIONAL_ID_NOT_FOUND (thrown).
   */
  async describe (transactionalId: string): Promise<DescribedTransaction | undefined> {
    const response = await this.#call(transactionalId, 'describe', DescribeTransactionsApi, { transactionalIds: [transactionalId] }, r => r.transactions[0]?.errorCode ?? 0)
    return response.transactions[0]
  }

  /** Sends REQUEST to the coordinator of `transactionalId`, following it when it moves and waiting out busy answers. */
  async #call<Req, Res> (transactionalId: string, action: string, spec: ApiSpec<Req, Res>, request: Req, errorOf: (response: Res) => number, retryForMs = TRANSACTION_RETRY_DEADLINE_MS): Promise<Res> {
    const wait = new TransactionWait({ transactionalId, cluster: this.#deps.cluster.label, action, deadlineMs: retryForMs }, this.#deps.onWaiting, this.#deps.reportWaitAfterMs)
    let response: Res
    try {
      response = await this.#attempts(transactionalId, action, wait, spec, request, errorOf, retryForMs)
    } catch (err) {
      // (a wait given up at the deadline was reported so already: this adds nothing then)
      wait.end('failed', err instanceof Error ? err.message : String(err))
      throw err
    }
    wait.end('answered')
    return response
  }

  async #attempts<Req, Res> (transactionalId: string, action: string, wait: TransactionWait, spec: ApiSpec<Req, Res>, request: Req, errorOf: (response: Res) => number, retryForMs: number): Promise<Res> {
    const { cluster } = this.#deps
    const what = `${action} transactional id ${transactionalId} on ${cluster.label}`
    const deadline = Date.now() + retryForMs
    for (let attempt = 1; ; attempt++) {
      let errorCode: number
      let response: Res
      let coordinator: Broker
      try {
        coordinator = await this.#coordinator(transactionalId)
        response = await this.#deps.send(await this.#deps.pool.get(coordinator), spec, request, cluster.label)
        errorCode = errorOf(response)
      } catch (err) {
        this.#coordinators.delete(transactionalId)
        const wrapped = toKmirrorError(err, ErrorCodes.PRODUCE, what, cluster)
        if (!wrapped.retriable || Date.now() > deadline) throw wrapped
        await delay(Math.min(1000, 50 * attempt))
        continue
      }
      if (errorCode === 0) return response
      const name = kafkaErrorName(errorCode)
      if (FENCED_ERRORS.has(name)) throw fencedError(what, name, transactionalId)
      if (name === 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED') throw this.refused(what, transactionalId)
      const state = coordinatorError(name)
      if (state === CoordinatorErrors.MOVED) this.#coordinators.delete(transactionalId)
      else if (state !== undefined) wait.held(`${coordinator.host}:${coordinator.port}`, name)
      if (state !== undefined && Date.now() <= deadline) {
        await delay(Math.min(500, 20 * attempt))
        continue
      }
      if (state !== undefined) wait.end('gave-up')
      throw kafkaResponseError(errorCode, ErrorCodes.PRODUCE, what, cluster)
    }
  }

  async #coordinator (transactionalId: string): Promise<Broker> {
    const known = this.#coordinators.get(transactionalId)
    if (known !== undefined) return known
    const found = await (this.#deps.locate ?? this.#locate.bind(this))(transactionalId)
    const broker = { host: found.host, port: found.port }
    const [from, to] = [this.#lastFound.get(transactionalId), `${found.host}:${found.port}`]
    if (from !== undefined && from !== to) this.#deps.onMoved?.({ transactionalId, cluster: this.#deps.cluster.label, from, to, nodeId: found.nodeId })
    this.#lastFound.set(transactionalId, to)
    this.#coordinators.set(transactionalId, broker)
    return broker
  }

  /** FindCoordinator TRANSACTION of `transactionalId`, asked to any broker. */
  async #locate (transactionalId: string): Promise<Broker & { nodeId: number }> {
    const { cluster } = this.#deps
    const [found] = await askAnyBroker(this.#deps.pool, this.#deps.brokers(), async connection => await findCoordinator(connection, CoordinatorKeyTypes.TRANSACTION, [transactionalId], cluster.label))
    if (found === undefined || found.errorCode !== 0) {
      const name = found === undefined ? 'NO_RESPONSE' : kafkaErrorName(found.errorCode)
      if (name === 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED') throw this.refused(`find the coordinator of transactional id ${transactionalId} on ${cluster.label}`, transactionalId)
      throw new KmirrorError(ErrorCodes.PRODUCE, `find the transaction coordinator of ${transactionalId} on ${cluster.label}: ${name}` +
        `${found?.errorMessage == null ? '' : ` (${found.errorMessage})`}; a cluster whose __transaction_state topic cannot be created (transaction.state.log.replication.factor above the broker count, transaction.state.log.min.isr) answers this forever`, { retriable: true })
    }
    return { host: found.host, port: found.port, nodeId: found.nodeId }
  }

  /** NOT_AUTHORIZED for a refused transactional id, naming the grant. */
  refused (what: string, transactionalId: string): KmirrorError {
    const prefix = this.#deps.grantPrefix
    const names = prefix !== undefined && transactionalId.startsWith(prefix) ? [prefix] : [transactionalId]
    const grant = describeGrant({ operation: 'WRITE', resourceType: 'transactional-id', names, prefixed: names[0] === prefix }, this.#deps.principal, this.#deps.cluster)
    return new KmirrorError(ErrorCodes.NOT_AUTHORIZED, `${what} was refused (TRANSACTIONAL_ID_AUTHORIZATION_FAILED): ${grant}`, {
      details: { kafkaErrors: ['TRANSACTIONAL_ID_AUTHORIZATION_FAILED'] }
    })
  }
}

/**
 * AddPartitionsToTxn answers about one partition rather than the transaction: that partition is returned refused
 * (writer-transaction.ts sets it aside, or, for a topic unknown, waits "not now").
 */
const PARTITION_ERRORS = new Set(['TOPIC_AUTHORIZATION_FAILED', 'UNKNOWN_TOPIC_OR_PARTITION'])
/** Answers about the transaction or its coordinator: never one partition's, whatever the other partitions say. */
const isTransactionOrCoordinatorError = (name: string): boolean => FENCED_ERRORS.has(name) || isTransactionError(name) || coordinatorError(name) !== undefined

/**
 * Splits an AddPartitionsToTxn answer (whose errors are all per partition, even those of the whole request) into
 * the partitions refused for themselves, and the error code of the request (0 when the rest may be asked again
 * without them, or when all were added). A partition is refused for itself when its error names the partition
 * (PARTITION_ERRORS), or when the broker answered OPERATION_NOT_ATTEMPTED for others (its sign that it refused
 * some partitions and did not try the rest), unless its error is the transaction's or its coordinator's (`isTransactionOrCoordinatorError`).
 */
export function partitionRefusals (response: AddPartitionsToTxnResponse): { refused: { key: string, error: string }[], errorCode: number } {
  const errors = response.results.flatMap(t => t.partitions.map(p => ({ key: partitionKey(t.name, p.index), code: p.errorCode, error: kafkaErrorName(p.errorCode) })))
    .filter(e => e.code !== 0)
  const notAttempted = errors.some(e => e.error === 'OPERATION_NOT_ATTEMPTED')
  const refused = errors.filter(e => e.error !== 'OPERATION_NOT_ATTEMPTED' && !isTransactionOrCoordinatorError(e.error) && (notAttempted || PARTITION_ERRORS.has(e.error)))
  if (refused.length > 0) return { refused: refused.map(({ key, error }) => ({ key, error })), errorCode: 0 }
  const codes = errors.map(e => e.code)
  return { refused: [], errorCode: codes.find(c => kafkaErrorName(c) !== 'OPERATION_NOT_ATTEMPTED') ?? codes[0] ?? 0 }
}

/** FENCED: this producer's epoch is no longer the transactional id's (another producer initialised it since). */
export function fencedError (what: string, kafkaError: string, transactionalId: string): KmirrorError {
  return new KmirrorError(ErrorCodes.FENCED, `${what}: ${kafkaError}: another producer with transactional id ${transactionalId} initialised it since ` +
    '(a second kmirror with the same configuration and instance name, or a group leader that fenced this instance); this instance stops writing', {
    details: { kafkaErrors: [kafkaError], transactionalId }
  })
}

/**
 * Fences every producer of these transactional ids (InitProducerId with the id and no producer id: the epoch is
 * bumped and any open transaction aborted), as Kafka's Admin.fenceProducers does.
 */
export async function fenceTransactionalIds (coordinator: TransactionCoordinator, ids: readonly string[], timeoutMs?: number): Promise<void> {
  await Promise.all(ids.map(id => coordinator.initProducerId(id, timeoutMs)))
}
