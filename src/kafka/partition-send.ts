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
 * - A partition whose leader could not be reached (no connection: nothing sent) is NOT_NOW too, its sequence
 *   untouched.
 * - A FAILED partition reports no acknowledgement after its failure: its progress stops at the last batch
 *   acknowledged before it.
 * - A partition whose request failed as a whole (connection lost, no answer in time) is IN_DOUBT: the broker may
 *   have appended the batch and any later one sent. Like a FAILED one it reports nothing more; the writer keeps
 *   what is in doubt (in-doubt.ts) and sends it again with the same sequences, which the broker deduplicates.
 * - A partition sent again after a doubt and refused for its sequence (OUT_OF_STEP: the broker no longer knows the
 *   batches in doubt, e.g. after a restart) reports nothing more; the writer renews the producer id.
 */
import { partitionKey } from '../topic-partition.ts'

export const SendStatuses = { SENDING: 'sending', NOT_NOW: 'not-now', FAILED: 'failed', IN_DOUBT: 'in-doubt', OUT_OF_STEP: 'out-of-step' } as const
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

  /** The base sequence the next batch of partition `key` takes. */
  peek (key: string): number {
    return this.#next.get(key) ?? 0
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
  /** A batch acknowledged after the partition failed (refused, or maybe appended): out of order on the target. */
  | { readonly type: 'appended-after-failure' }
  | { readonly type: 'in-doubt' }
  | { readonly type: 'out-of-step' }
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
  /**
   * The partition's first batches were in doubt when this write started (in-doubt.ts): they go out with the
   * sequences they had, and a refusal of their sequence means the broker cannot deduplicate them (OUT_OF_STEP).
   */
  resent = false
  /**
   * A batch went out with sequence 0 (the first of this producer id on the partition) and is not answered yet. A
   * broker with no state of a producer on a partition appends a batch of any sequence (Kafka 2.5+, KIP-360): a
   * later batch sent beside it would be appended even if the broker refused this one for its content (too large,
   * a timestamp out of range), ahead of it. So nothing more of the partition goes out until its answer.
   */
  opening = false
  /**
   * A batch of it went out and was answered NOT_LEADER_OR_FOLLOWER: a leader that lost its leadership while the batch
   * waited for its replicas answers so for a batch it appended, which the new leader may hold: until a resend with the
   * same sequence is acknowledged (the broker deduplicates it), the batch may be in the log. (The other "not now"
   * answers come before any append.)
   */
  refusedNotNow = false
  /** An acknowledgement after a refusal was reported (once: the write fails with it). */
  #appendReported = false
  /** The base sequence each batch was last sent with, by batch index. */
  readonly #sequences: number[] = []

  constructor (index: number, write: W) {
    this.index = index
    this.write = write
    this.key = partitionKey(write.topic, write.partition)
  }

  /** A new attempt (a probe found the leader ready): send again from the first unacknowledged batch. */
  resume (): void {
    if (this.#over()) return
    this.status = SendStatuses.SENDING
    this.next = this.acked
    this.opening = false
  }

  hasNext (): boolean {
    return this.status === SendStatuses.SENDING && this.next < this.write.batches.length
  }

  /** Whether a batch may go out now: one is left, and no first batch of the producer id waits for its answer. */
  mayTakeNext (): boolean {
    return this.hasNext() && !this.opening
  }

  /** The batch to send now. */
  take (): number {
    return this.next++
  }

  /** Batch `batch` went out with base sequence `sequence`. */
  sent (batch: number, sequence: number): void {
    this.#sequences[batch] = sequence
    if (sequence === 0) this.opening = true
  }

  /** The base sequence batch `batch` was last sent with; undefined if it was not sent. */
  sequenceOf (batch: number): number | undefined {
    return this.#sequences[batch]
  }

  /** The broker acknowledged batch `batch`. */
  ack (batch: number): AnswerOutcome {
    this.opening = false
    // A batch appended after an earlier one of the partition was refused: out of order on the target (in exactly-once
    // mode, inside the transaction), whatever made the broker take it.
    if (this.status === SendStatuses.FAILED && !this.#appendReported) {
      this.#appendReported = true
      return { type: 'appended-after-failure' }
    }
    if (this.#over()) return { type: 'ignored' }
    if (this.status === SendStatuses.NOT_NOW) {
      this.#appendReported = true
      this.status = SendStatuses.FAILED
      return { type: 'failed', appendedAfterRefusal: true }
    }
    this.acked = batch + 1
    return { type: 'acked' }
  }

  /** The request carrying one of its batches failed as a whole: what the broker appended is unknown. */
  lost (): AnswerOutcome {
    if (this.status !== SendStatuses.SENDING) return { type: 'ignored' }
    this.status = SendStatuses.IN_DOUBT
    return { type: 'in-doubt' }
  }

  /** Its leader could not be reached, so nothing of it was sent: it waits "not now", its sequence untouched. */
  unreachable (): boolean {
    // A send still NOT_NOW from an earlier attempt of the write (resume runs only once connected) waits too: left
    // out, it would be reported as written.
    if (this.#over()) return false
    this.status = SendStatuses.NOT_NOW
    return true
  }

  /**
   * The broker refused the batch sent with `sequence`; `notNow`: for a "not now" reason (leader moving);
   * `maybeAppended`: with an answer a leader also gives for a batch it appended (NOT_LEADER_OR_FOLLOWER).
   */
  refuse (sequence: number, notNow: boolean, outOfStep = false, maybeAppended = false): AnswerOutcome {
    if (this.status !== SendStatuses.SENDING) return { type: 'ignored' }
    if (outOfStep && this.resent) {
      this.status = SendStatuses.OUT_OF_STEP
      return { type: 'out-of-step' }
    }
    if (notNow) {
      this.status = SendStatuses.NOT_NOW
      if (maybeAppended) this.refusedNotNow = true
      return { type: 'not-now', rewindTo: sequence }
    }
    this.status = SendStatuses.FAILED
    return { type: 'failed', appendedAfterRefusal: false }
  }

  /** Nothing more of this write is sent or reported for the partition. */
  #over (): boolean {
    return this.status === SendStatuses.FAILED || this.status === SendStatuses.IN_DOUBT || this.status === SendStatuses.OUT_OF_STEP
  }
}

/**
 * The incomplete writes, plus any other not wholly acknowledged and not refused (not among `failed`): whatever path
 * left one out, it is tried again rather than taken as written (the data path would advance past it).
 */
export function unacknowledged<W extends { readonly topic: string, readonly partition: number, readonly batches: readonly unknown[] }> (
  sends: ReadonlyMap<number, PartitionSend<W>>, incomplete: number[], failed: readonly number[]): number[] {
  const known = new Set([...incomplete, ...failed])
  for (const [i, send] of sends) if (send.acked < send.write.batches.length && !known.has(i)) incomplete.push(i)
  return incomplete
}
