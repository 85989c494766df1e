/**
 * Exactly-once mode: each replication round of a flow is one target transaction. The data batches, the Connect
 * progress records, the offset syncs (target-located) and the offset-history records of the round are written
 * by one transactional BatchWriter, then committed together.
 *
 * Invariants:
 * - One transaction at a time: `run` holds a lock for the whole round; internal records written outside a round
 *   (the history trim job) wait for it and are their own small transaction.
 * - Inside a round (`run`'s callback and everything it awaits: AsyncLocalStorage), `records.write` joins the
 *   round's transaction; nothing it writes is visible to read_committed readers before the commit.
 * - A round that fails is aborted before `run` rethrows (or, if the abort itself fails, the next
 *   InitProducerId aborts it); `recover` makes sure of it before the caller rewinds its positions. A round whose
 *   commit failed without an answer that says how (a timeout, a lost connection) may have been committed: it is
 *   counted (`onEnd`) only once the caller read the committed progress and `settleDoubt` says which.
 * - A round open for ROUND_LIMIT of the transaction timeout is not committed: the coordinator aborts a transaction
 *   older than its timeout (and bumps the producer epoch, so the commit would read as fenced). It is aborted and
 *   written again, with a retriable error naming transaction.timeout.ms. A FENCED answer to a round that old is
 *   reported as that timeout, not as another producer (it still stops the flow: kmirror never takes its id back).
 *   So the commit waits for a coordinator moving or busy only until ROUND_LIMIT of the timeout (`#commitBudget`):
 *   given up then, before the coordinator's abort, it is in doubt (settled by the committed progress), not fenced.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { ErrorCodes, isKmirrorError, KmirrorError } from '../errors.ts'
import type { BatchWriter, OutBatch, PartitionFailure } from '../kafka/batch-writer.ts'
import { TRANSACTION_TIMEOUT_MS } from '../kafka/transactions.ts'
import { encodeRecords, type OutRecord } from '../kafka/record-batch.ts'
import type { OffsetSegment, PartitionBatch, RecordWriter } from '../kafka/record-writer.ts'

export type TransactionalWriter = Pick<BatchWriter, 'write' | 'commitTransaction' | 'abortTransaction' | 'transactionalId' | 'endMembership' | 'inTransaction' | 'transactionAdditions'>

/**
 * How a round's transaction ended: committed (it held records), aborted, or empty (no transaction was opened: nothing
 * was written, also when the round failed before its first write, e.g. the source out of reach).
 */
export type RoundOutcome = 'committed' | 'aborted' | 'empty'

/**
 * The part of the transaction timeout a round may last before its commit is given up. The round is timed from its
 * start, before its first write opens the transaction: the coordinator's count starts later, never earlier.
 */
export const ROUND_LIMIT = 0.9

export interface TransactionRoundsOptions {
  /** The transaction timeout the producer id was initialised with (TRANSACTION_TIMEOUT_MS). */
  readonly timeoutMs?: number
  /** The key that sets it, for the messages (`B.producer.transaction.timeout.ms`). */
  readonly timeoutKey?: string
  readonly now?: () => number
}

/** Internal records per batch: well under the brokers' 1 MiB default for kmirror's small records. */
const RECORDS_PER_BATCH = 1000

export class TransactionRounds {
  readonly #writer: TransactionalWriter
  readonly #onEnd: (outcome: RoundOutcome, cause?: unknown) => void
  #lastCommitted = false
  readonly #timeoutMs: number
  readonly #timeoutKey: string
  readonly #now: () => number
  readonly #inRound = new AsyncLocalStorage<true>()
  #lock: Promise<unknown> = Promise.resolve()
  /** The last round failed at its commit, with no answer: its cause, until `settleDoubt`. */
  #doubt: { readonly cause: unknown } | null = null
  /** Writes internal records inside the current round's transaction, or as a transaction of their own. */
  readonly records: Pick<RecordWriter, 'write'>

  /** ON_END: how each round's transaction ended, with the failure of an aborted one. */
  constructor (writer: TransactionalWriter, onEnd: (outcome: RoundOutcome, cause?: unknown) => void = () => undefined, options: TransactionRoundsOptions = {}) {
    this.#writer = writer
    this.#onEnd = onEnd
    this.#timeoutMs = options.timeoutMs ?? TRANSACTION_TIMEOUT_MS
    this.#timeoutKey = options.timeoutKey ?? 'transaction.timeout.ms'
    this.#now = options.now ?? Date.now
    this.records = {
      write: async batches => this.#inRound.getStore() === true ? await this.#writeRecords(batches) : await this.run(() => this.#writeRecords(batches))
    }
  }

  get transactionalId (): string {
    return this.#writer.transactionalId ?? ''
  }

  /** Runs FN as one transaction: committed when FN resolves, aborted when FN or the commit rejects. */
  run<T> (fn: () => Promise<T>): Promise<T> {
    const result = this.#lock.then(() => this.#inRound.run(true, async () => {
      const startedAt = this.#now()
      const additions = this.#writer.transactionAdditions
      let committing = false
      this.#doubt = null
      try {
        const value = await fn()
        this.#checkAge(startedAt)
        committing = true
        const committed = await this.#writer.commitTransaction(this.#commitBudget(startedAt))
        // None open at the commit though the round opened one: a lost membership dropped it (its leader aborts it).
        const dropped = !committed && this.#writer.transactionAdditions !== additions
        this.#lastCommitted = committed
        if (dropped) this.#onEnd('aborted', this.#dropped())
        else this.#onEnd(committed ? 'committed' : 'empty')
        return value
      } catch (err) {
        // A fenced producer must not initialise its id again: that would fence the instance that owns it now.
        if (!(isKmirrorError(err) && err.code === ErrorCodes.FENCED)) await this.#writer.abortTransaction().catch(() => undefined)
        const explained = this.#explainFenced(err, startedAt)
        if (this.#writer.transactionAdditions === additions) this.#onEnd('empty', explained)
        // A commit without its answer may have gone through: counted once `settleDoubt` knows (the committed progress says).
        else if (committing && !(isKmirrorError(explained) && explained.code === ErrorCodes.FENCED)) this.#doubt = { cause: explained }
        else this.#onEnd('aborted', explained)
        throw explained
      }
    }))
    this.#lock = result.catch(() => undefined)
    return result
  }

  /**
   * Whether the last round that resolved committed a transaction (false when it had nothing to commit, or a lost
   * membership dropped its transaction: its records are aborted by the group's leader).
   */
  get lastCommitted (): boolean {
    return this.#lastCommitted
  }

  /** Whether the last round failed at its commit with no answer that says how it ended (`settleDoubt` tells). */
  get commitInDoubt (): boolean {
    return this.#doubt !== null
  }

  /**
   * The commit in doubt of the last round ended as COMMITTED says (the committed progress, read once the
   * transaction is complete, holds that round's positions or not): counted then, once.
   */
  settleDoubt (committed: boolean): void {
    const doubt = this.#doubt
    if (doubt === null) return
    this.#doubt = null
    if (committed) this.#onEnd('committed')
    else this.#onEnd('aborted', doubt.cause)
  }

  #dropped (): KmirrorError {
    return new KmirrorError(ErrorCodes.FENCED, `the round's transaction ${this.transactionalId} was dropped before its commit: the group membership it was written ` +
      'under is lost, and the group\'s leader aborts it (fencing the id) before handing its work out; the instance that owns the work now copies it', { retriable: true })
  }

  /**
   * The group membership the rounds wrote under is lost: the producer is ended at once, not after the round in flight
   * (that round sends nothing more and fails). Returns the fencing it forgets, if one was answered already.
   */
  endMembership (): KmirrorError | null {
    return this.#writer.endMembership()
  }

  /**
   * After a failed round: the last transaction is complete (aborted, or committed if its commit got through before
   * the failure) once this resolves, so committed progress read now is final.
   */
  async recover (): Promise<void> {
    const done = this.#lock.then(() => this.#writer.abortTransaction())
    this.#lock = done.catch(() => undefined)
    await done
  }

  /** Throws (retriable) instead of committing a round the coordinator may have aborted for its age. */
  #checkAge (startedAt: number): void {
    const ageMs = this.#now() - startedAt
    // A round that opened no transaction (nothing to write) has nothing the coordinator could abort.
    if (ageMs < this.#timeoutMs * ROUND_LIMIT || !this.#writer.inTransaction) return
    throw new KmirrorError(ErrorCodes.PRODUCE, `the round's transaction ${this.transactionalId} was open ${ageMs} ms, too close to the transaction timeout ` +
      `(${this.#timeoutKey} = ${this.#timeoutMs}), after which the target's coordinator aborts it: it is aborted and written again. ` +
      `A round this long means writing to the target is slow: check the target brokers (request latency, throttling, leaders moving), or raise ${this.#timeoutKey} ` +
      '(at most the brokers\' transaction.max.timeout.ms)', { retriable: true, details: { ageMs, transactionTimeoutMs: this.#timeoutMs } })
  }

  /**
   * How long the commit may wait for a coordinator that moves or is busy: until ROUND_LIMIT of the timeout from the
   * round's start (at least a second). Past that the coordinator may abort the transaction for its age, and an
   * answer then reads as fenced, which stops the flow; given up before, the commit is in doubt and settled by the
   * committed progress.
   */
  #commitBudget (startedAt: number): number {
    return Math.max(1000, this.#timeoutMs * ROUND_LIMIT - (this.#now() - startedAt))
  }

  /** A FENCED answer to a round older than the transaction timeout: the coordinator aborted it for its age. */
  #explainFenced (err: unknown, startedAt: number): unknown {
    const ageMs = this.#now() - startedAt
    if (!isKmirrorError(err) || err.code !== ErrorCodes.FENCED || err.details['transactionalId'] === undefined || ageMs < this.#timeoutMs * ROUND_LIMIT) return err
    return new KmirrorError(ErrorCodes.FENCED, `the round's transaction ${this.transactionalId} was open ${ageMs} ms, past the transaction timeout ` +
      `(${this.#timeoutKey} = ${this.#timeoutMs}): the target's coordinator aborted it and bumped the producer epoch, so the target answers as if ` +
      `this producer were fenced (${err.message}). Nothing of the round is visible to read_committed readers; this instance stops writing. Restart ` +
      'kmirror (it resumes from the last committed round: nothing lost, nothing twice) and check why writing to the target took that long ' +
      '(target broker latency, throttling, leaders moving)', { cause: err, details: { ...err.details, ageMs, transactionTimeoutMs: this.#timeoutMs } })
  }

  async #writeRecords (batches: readonly PartitionBatch[]): Promise<OffsetSegment[][]> {
    const writes = batches.map(b => ({ topic: b.topic, partition: b.partition, batches: chunk(b.records) }))
    const segments: OffsetSegment[][] = batches.map(() => [])
    const result = await this.#writer.write(writes, acks => {
      for (const ack of acks) segments[ack.write]!.push({ start: ack.batch * RECORDS_PER_BATCH, baseOffset: ack.baseOffset })
    })
    const failed = result.failed[0]
    if (failed !== undefined) throw refusal(failed)
    if (result.incomplete.length > 0) {
      const w = writes[result.incomplete[0]!]!
      throw new KmirrorError(ErrorCodes.PRODUCE, `the target cannot take records of ${w.topic}-${w.partition} yet (no leader, or a topic its transaction coordinator does not know yet); the round's transaction is aborted and written again`, { retriable: true })
    }
    return segments
  }
}

function chunk (records: readonly OutRecord[]): OutBatch[] {
  const out: OutBatch[] = []
  for (let start = 0; start < records.length; start += RECORDS_PER_BATCH) {
    const part = records.slice(start, start + RECORDS_PER_BATCH)
    out.push({ recordCount: part.length, build: (producer, sequence) => encodeRecords(part, 'none', producer, sequence) })
  }
  return out
}

function refusal (f: PartitionFailure): KmirrorError {
  const code = f.kind === 'authorization' ? ErrorCodes.NOT_AUTHORIZED : ErrorCodes.PRODUCE
  return new KmirrorError(code, `writing ${f.topic}-${f.partition} in the round's transaction was refused: ${f.error}${f.message === null ? '' : ` (${f.message})`}` +
    `${f.hint === undefined ? '' : `; ${f.hint}`}`, { retriable: f.retriable, details: { kafkaErrors: [f.error] } })
}
