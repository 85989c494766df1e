/**
 * The send state of the partitions of one BatchWriter (batch-writer.ts): per partition of a write, which batch
 * is acknowledged, which goes out next and whether it may; per partition of the producer id, its next sequence.
 *
 * Invariants:
 * - `acked <= next <= batches.length`; a batch goes out only while the partition is SENDING, in order.
 * - A partition that answered "not now" (NOT_NOW) sends nothing more in this attempt; its producer sequence is
 *   rewound to the refused batch's (the broker appended neither it nor any later batch of the partition), so the
 *   next attempt sends it again with the same sequence. Later answers of that attempt change nothing, except an
 *   acknowledgement after the refusal: the sequence rule did not hold, and the partition FAILS.
 * - A FAILED partition reports no acknowledgement after its failure: its progress stops at the last batch
 *   acknowledged before it.
 */
import { partitionKey } from '../topic-partition.ts'

export const SendStatuses = { SENDING: 'sending', NOT_NOW: 'not-now', FAILED: 'failed' } as const
export type SendStatus = (typeof SendStatuses)[keyof typeof SendStatuses]

/** The largest sequence number plus one: sequences wrap to 0 there, as the Java producer's do. */
export const MAX_SEQUENCE = 2 ** 31

/** Next sequence number per partition of the current producer id. */
export class Sequences {
  readonly #next = new Map<string, number>()

  /** The base sequence of a batch of `count` records of partition `key`, and the next one moves past it. */
  take (key: string, count: number): number {
    const base = this.#next.get(key) ?? 0
    this.#next.set(key, (base + count) % MAX_SEQUENCE)
    return base
  }

  /** The batch sent with `sequence` was not appended, nor any later one: it goes out again with the same sequence. */
  rewind (key: string, sequence: number): void {
    this.#next.set(key, sequence)
  }

  /** A new producer id: every partition starts again at 0. */
  clear (): void {
    this.#next.clear()
  }
}

/** What one answer of the broker for one sent batch meant. */
export type AnswerOutcome =
  | { readonly type: 'acked' }
  | { readonly type: 'not-now', readonly rewindTo: number }
  | { readonly type: 'failed', readonly appendedAfterRefusal: boolean }
  | { readonly type: 'ignored' }

export class PartitionSend<W extends { readonly topic: string, readonly partition: number, readonly batches: readonly unknown[] }> {
  readonly index: number
  readonly write: W
  readonly key: string
  /** The first batch not acknowledged yet. */
  acked = 0
  /** The next batch to send in this attempt. */
  next = 0
  status: SendStatus = SendStatuses.SENDING

  constructor (index: number, write: W) {
    this.index = index
    this.write = write
    this.key = partitionKey(write.topic, write.partition)
  }

  /** A new attempt (a probe found the leader ready): send again from the first unacknowledged batch. */
  resume (): void {
    if (this.status === SendStatuses.FAILED) return
    this.status = SendStatuses.SENDING
    this.next = this.acked
  }

  hasNext (): boolean {
    return this.status === SendStatuses.SENDING && this.next < this.write.batches.length
  }

  /** The batch to send now. */
  take (): number {
    return this.next++
  }

  /** The broker acknowledged batch `batch`. */
  ack (batch: number): AnswerOutcome {
    if (this.status === SendStatuses.FAILED) return { type: 'ignored' }
    if (this.status === SendStatuses.NOT_NOW) {
      this.status = SendStatuses.FAILED
      return { type: 'failed', appendedAfterRefusal: true }
    }
    this.acked = batch + 1
    return { type: 'acked' }
  }

  /** The broker refused the batch sent with `sequence`; `notNow`: for a "not now" reason (leader moving). */
  refuse (sequence: number, notNow: boolean): AnswerOutcome {
    if (this.status !== SendStatuses.SENDING) return { type: 'ignored' }
    if (notNow) {
      this.status = SendStatuses.NOT_NOW
      return { type: 'not-now', rewindTo: sequence }
    }
    this.status = SendStatuses.FAILED
    return { type: 'failed', appendedAfterRefusal: false }
  }
}
