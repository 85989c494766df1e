/**
 * The batches of the data path's idempotent producer (batch-writer.ts, at-least-once mode) whose outcome is
 * unknown: their produce request failed as a whole (connection lost or cut, no answer in time), so the broker may
 * have appended them or not. They are sent again under the same producer id with the same sequences, and the
 * broker appends what it lacks and answers the offsets of what it has, as the Java producer's retries do: a lost
 * acknowledgement copies nothing twice.
 *
 * Invariants:
 * - A batch in doubt is sent again only as the same source records: a write of a partition in doubt must start
 *   with batches of the same source span (first and last source offset, record count) and the same records (their
 *   fingerprint: offsets, timestamps, keys, values, headers) as those in doubt, in the same order (`admits`). A
 *   broker that has the batch then answers its original offset, so offset syncs stay exact; equal offsets alone
 *   are not enough (a source topic deleted and created again reuses them for other records). Anything else (the
 *   partition resumed elsewhere, batches cut differently, no span or fingerprint known) renews the producer id
 *   first: nothing is deduplicated then, and records may be copied twice, never lost.
 * - A partition's doubt starts at its first unacknowledged batch and holds every batch sent after it whose outcome
 *   is unknown, plus what was in doubt before and not sent again; the producer's sequence of the partition is
 *   rewound to the first of them (`settle`).
 * - Doubts belong to one producer id: a new producer id clears them (batch-writer.ts `#reset`).
 * - The broker deduplicates only the last 5 batches of a producer per partition: at most `maxInFlight` (at most 5)
 *   batches of a partition are in flight, so every batch in doubt is within them, unless the broker lost that
 *   memory: a restart keeps only a producer's last batch, so a resend of an earlier one is refused
 *   (OUT_OF_ORDER_SEQUENCE_NUMBER; UNKNOWN_PRODUCER_ID from brokers before 2.5 that forgot the producer), the
 *   partition is OUT_OF_STEP and the writer renews the producer id. A broker from 2.5 on that forgot the producer
 *   altogether (its records all deleted) appends the resend: a duplicate, never a gap.
 */
import { partitionKey } from '../topic-partition.ts'
import type { OutBatch, PartitionWrite } from './batch-writer-types.ts'
import { SendStatuses, type PartitionSend, type Sequences } from './partition-send.ts'

/** Which source records a batch carries: its source offsets, and a checksum of the records themselves. */
interface SourceSpan {
  readonly firstOffset: number
  readonly lastOffset: number
  readonly recordCount: number
  readonly fingerprint: number
}

interface Doubt {
  /** The base sequence of the first batch in doubt. */
  readonly sequence: number
  readonly batches: readonly SourceSpan[]
}

const NO_CUTS: ReadonlySet<number> = new Set()

function spanOf (batch: OutBatch): SourceSpan | null {
  const { firstOffset, lastOffset, recordCount, fingerprint } = batch
  if (firstOffset === undefined || lastOffset === undefined || fingerprint === undefined) return null
  return { firstOffset, lastOffset, recordCount, fingerprint: fingerprint() }
}

function sameSpan (batch: OutBatch, span: SourceSpan): boolean {
  return batch.firstOffset === span.firstOffset && batch.lastOffset === span.lastOffset && batch.recordCount === span.recordCount &&
    batch.fingerprint?.() === span.fingerprint
}

export class InDoubtBatches {
  /** By partition key (`partitionKey` of the remote partition). */
  readonly #doubts = new Map<string, Doubt>()

  get size (): number {
    return this.#doubts.size
  }

  has (key: string): boolean {
    return this.#doubts.has(key)
  }

  clear (): void {
    this.#doubts.clear()
  }

  /**
   * The last source offset of each batch in doubt of a partition (empty when none is): the data path ends its
   * planned batches there, so that what was in doubt is planned again as the same batches (batch-plan.ts).
   */
  cutPoints (key: string): ReadonlySet<number> {
    const doubt = this.#doubts.get(key)
    return doubt === undefined ? NO_CUTS : new Set(doubt.batches.map(b => b.lastOffset))
  }

  /** Whether every write of a partition in doubt starts with exactly the batches in doubt (see the invariants). */
  admits (writes: readonly PartitionWrite[]): boolean {
    if (this.#doubts.size === 0) return true
    return writes.every(w => {
      const doubt = this.#doubts.get(partitionKey(w.topic, w.partition))
      return doubt === undefined || (w.batches.length >= doubt.batches.length && doubt.batches.every((span, i) => sameSpan(w.batches[i]!, span)))
    })
  }

  /**
   * After a write whose partitions all ended acknowledged, "not now", in doubt or unsent (none refused): records
   * each partition's doubt and rewinds its sequence to it. False when a batch in doubt has no source span: the
   * caller must renew the producer id.
   */
  settle (sends: Iterable<PartitionSend<PartitionWrite>>, sequences: Sequences): boolean {
    for (const send of sends) {
      const before = this.#doubts.get(send.key)?.batches.length ?? 0
      // A "not now" refusal means neither the refused batch nor a later one was appended: only what was in doubt
      // before stays so. Otherwise everything sent and not acknowledged is in doubt too.
      const end = send.status === SendStatuses.NOT_NOW ? before : Math.max(send.next, before)
      const from = send.acked
      if (from >= end) {
        this.#doubts.delete(send.key)
        continue
      }
      const spans = send.write.batches.slice(from, end).map(spanOf)
      if (spans.some(s => s === null)) return false
      // Batches go out in order: when the first in doubt was not sent by this write, nothing later was either, and
      // the partition's next sequence is still its own.
      const sequence = send.sequenceOf(from) ?? sequences.peek(send.key)
      this.#doubts.set(send.key, { sequence, batches: spans as SourceSpan[] })
      sequences.rewind(send.key, sequence)
    }
    return true
  }
}
