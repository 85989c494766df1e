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
 *   InitProducerId aborts it); `recover` makes sure of it before the caller rewinds its positions.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { ErrorCodes, isKmirrorError, KmirrorError } from '../errors.ts'
import type { BatchWriter, OutBatch, PartitionFailure } from '../kafka/batch-writer.ts'
import { encodeRecords, type OutRecord } from '../kafka/record-batch.ts'
import type { OffsetSegment, PartitionBatch, RecordWriter } from '../kafka/record-writer.ts'

export type TransactionalWriter = Pick<BatchWriter, 'write' | 'commitTransaction' | 'abortTransaction' | 'transactionalId'>

/** How a round's transaction ended: committed (it held records), aborted, or empty (nothing was written). */
export type RoundOutcome = 'committed' | 'aborted' | 'empty'

/** Internal records per batch: well under the brokers' 1 MiB default for kmirror's small records. */
const RECORDS_PER_BATCH = 1000

export class TransactionRounds {
  readonly #writer: TransactionalWriter
  readonly #onEnd: (outcome: RoundOutcome) => void
  readonly #inRound = new AsyncLocalStorage<true>()
  #lock: Promise<unknown> = Promise.resolve()
  /** Writes internal records inside the current round's transaction, or as a transaction of their own. */
  readonly records: Pick<RecordWriter, 'write'>

  constructor (writer: TransactionalWriter, onEnd: (outcome: RoundOutcome) => void = () => undefined) {
    this.#writer = writer
    this.#onEnd = onEnd
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
      try {
        const value = await fn()
        this.#onEnd(await this.#writer.commitTransaction() ? 'committed' : 'empty')
        return value
      } catch (err) {
        // A fenced producer must not initialise its id again: that would fence the instance that owns it now.
        if (!(isKmirrorError(err) && err.code === ErrorCodes.FENCED)) await this.#writer.abortTransaction().catch(() => undefined)
        this.#onEnd('aborted')
        throw err
      }
    }))
    this.#lock = result.catch(() => undefined)
    return result
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
      throw new KmirrorError(ErrorCodes.PRODUCE, `the target cannot take records of ${w.topic}-${w.partition} yet (no leader); the round's transaction is aborted and written again`, { retriable: true })
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
