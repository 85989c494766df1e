/**
 * The producer a BatchWriter writes as (batch-writer.ts): its producer id and epoch, the sequences of its
 * partitions (partition-send.ts) and, in at-least-once mode, its batches in doubt (in-doubt.ts); initialised when a
 * write needs it, and renewed when a write leaves its sequences unknown.
 *
 * Invariants:
 * - A new producer id starts with no sequence and nothing in doubt. A renewal (`reset`) forgets the producer id,
 *   every sequence, everything in doubt and the open transaction's partitions: the next write initialises a fresh
 *   producer (InitProducerId) and sends from sequence 0, never deduplicated against what failed.
 * - Exactly-once mode: a write that throws, a request that failed as a whole or a broker out of step with the
 *   sequences renews the producer at once (the transaction is aborted); partitions refused alone renew it only after
 *   the transaction ends (writer-transaction.ts `refused`).
 * - At-least-once mode: a refusal, or a broker out of step with the sequences, renews it; a request that failed as
 *   a whole keeps it, and what is in doubt is sent again with the same sequences (unless a batch in doubt has no
 *   source span to send again: renewed too).
 * - Exactly-once mode, once a membership ended the producer (`endMembership`), the next one is initialised only
 *   while the `fence` hook holds (under the lease of a new membership); one initialised while the membership it
 *   began under was lost is not kept.
 */
import type { Broker } from '@platformatic/kafka'
import type { BatchWriterOptions, PartitionWrite } from './batch-writer-types.ts'
import type { Failure, WriterTransport } from './broker-produce.ts'
import type { ClusterContext } from './connection-hints.ts'
import { initIdempotentProducer } from './idempotent-producer-id.ts'
import { InDoubtBatches } from './in-doubt.ts'
import { Sequences, type PartitionSend } from './partition-send.ts'
import type { ProducerIdentity } from './record-batch.ts'
import type { TransactionCoordinator } from './transactions.ts'
import type { WriteGate } from './write-gate.ts'
import type { WriterTransaction } from './writer-transaction.ts'

export interface WriterProducerDeps {
  readonly transport: WriterTransport
  readonly cluster: ClusterContext
  readonly clientId: string
  /** `transactionalId` (exactly-once mode) and the timeout of its transactions. */
  readonly options: Pick<BatchWriterOptions, 'transactionalId' | 'transactionTimeoutMs'>
  readonly coordinator: TransactionCoordinator
  /** Exactly-once mode: the open transaction; null otherwise. */
  readonly transaction: WriterTransaction | null
  /** The lease and the membership writes go out under (write-gate.ts). */
  readonly gate: WriteGate
}

type Sends = Map<number, PartitionSend<PartitionWrite>>

export class WriterProducer {
  readonly sequences = new Sequences()
  /** At-least-once mode: batches of this producer id whose outcome is unknown (in-doubt.ts). */
  readonly doubts = new InDoubtBatches()
  readonly #deps: WriterProducerDeps
  #identity: ProducerIdentity | null = null
  /** A membership ended a producer (`endMembership`): the next one is initialised only under the lease. */
  #renewUnderLease = false

  constructor (deps: WriterProducerDeps) {
    this.#deps = deps
  }

  /** The producer now; null until the next write initialises one. */
  get identity (): ProducerIdentity | null {
    return this.#identity
  }

  /** Whether a membership ended a producer: the next one is initialised only under the lease. */
  get renewsUnderLease (): boolean {
    return this.#renewUnderLease
  }

  /** Whatever the broker appended of a failed attempt cannot be told apart from what it did not: start afresh. */
  reset (): void {
    this.#identity = null
    this.sequences.clear()
    this.doubts.clear()
    this.#deps.transaction?.clear()
  }

  /** Exactly-once mode: the membership the producer wrote under is lost; the producer ends with it. */
  endMembership (): void {
    this.reset()
    this.#renewUnderLease = true
  }

  /**
   * After a write, successful or not. Exactly-once mode: any failure ends the producer (the transaction is
   * aborted). At-least-once mode: a refusal, or a broker out of step with the sequences, renews the producer id;
   * otherwise the producer id stays and what is in doubt is kept to be sent again (in-doubt.ts).
   */
  afterFailure (sends: Sends, failures: readonly Failure[], outOfStep: readonly number[]): void {
    if (this.#deps.transaction !== null || outOfStep.length > 0 || failures.some(f => f.inDoubt !== true) || !this.doubts.settle(sends.values(), this.sequences)) this.reset()
  }

  /**
   * After a write that threw nothing, with its refused partitions and failed requests. A refusal ends this producer
   * id (the sequences of the refused partitions are unknown now); a request in doubt does not in at-least-once mode
   * (`afterFailure`).
   */
  afterWrite (sends: Sends, failures: readonly Failure[], outOfStep: readonly number[]): void {
    if (failures.length === 0 && outOfStep.length === 0) {
      if (this.doubts.size > 0 && !this.doubts.settle(sends.values(), this.sequences)) this.reset()
      return
    }
    const request = failures.find(f => f.requestError !== undefined)
    if (this.#deps.transaction !== null && request === undefined && outOfStep.length === 0) {
      this.#deps.transaction.refused(failures)
    } else {
      this.afterFailure(sends, failures, outOfStep)
    }
  }

  /** The producer, initialised first if there is none (InitProducerId through one of BROKERS, or the coordinator). */
  async ensure (brokers: Map<number, Broker>): Promise<ProducerIdentity> {
    if (this.#identity !== null) return this.#identity
    const { transport, cluster, clientId, options, coordinator, transaction, gate } = this.#deps
    const id = options.transactionalId
    if (id !== undefined && this.#renewUnderLease) gate.check()
    const era = transaction?.era
    // The idempotent producer id is asked again briefly while a fresh cluster loads (idempotent-producer-id.ts).
    const producer = id === undefined
      ? await initIdempotentProducer(transport, brokers, cluster, clientId)
      : await coordinator.initProducerId(id, options.transactionTimeoutMs)
    // A membership lost while InitProducerId was under way: the group's leader fences that producer before handing
    // the work out, so it is not kept; the next producer is initialised under the next membership's lease.
    transaction?.throwIfEnded(era!)
    this.#identity = producer
    this.sequences.clear()
    this.doubts.clear()
    return this.#identity
  }
}
