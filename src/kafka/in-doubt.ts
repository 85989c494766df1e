/**
 * The batches of the data path's idempotent producer (batch-writer.ts, at-least-once mode) whose outcome is
 * unknown: their produce request failed as a whole (connection lost or cut, no answer in time), so the broker may
 * have appended them or not. They are sent again under the same producer id with the same sequences, and the
 * broker appends what it lacks and answers the offsets of what it has, as the Java producer's retries do: a lost
 * acknowledgement copies nothing twice.
 *
 * Invariants:
 * - A batch in doubt is sent again only as the same source records: a write of a partition in doubt must start
 *   with batches of the same source span (first and last source offset, record count) as those in doubt, in the
 *   same order (`admits`). A broker that has the batch then answers its original offset, so offset syncs stay
 *   exact. Anything else (the partition resumed elsewhere, batches cut differently, no source span known) renews
 *   the producer id first: nothing is deduplicated then, and records may be copied twice, never lost.
 * - A partition's doubt starts at its first unacknowledged batch and holds every batch sent after it whose outcome
 *   is unknown, plus what was in doubt before and not sent again; the producer's sequence of the partition is
 *   rewound to the first of them (`settle`).
 * - Doubts belong to one producer id: a new producer id clears them (batch-writer.ts `#reset`).
 * - The broker deduplicates only the last 5 batches of a producer per partition: at most `maxInFlight` (at most 5)
 *   batches of a partition are in flight, so every batch in doubt is within them, unless the broker lost that
 *   memory (a restart keeps only the last batch); it then refuses the sequence, the partition is OUT_OF_STEP and the
 *   writer renews the producer id.
 */
import { partitionKey } from '../topic-partition.ts'
import type { OutBatch, PartitionWrite } from './batch-writer-types.ts'
import { SendStatuses, type PartitionSend, type Sequences } from './partition-send.ts'

/** Which source records a batch carries: the same span from the same partition is the same records. */
interface SourceSpan {
  readonly firstOffset: number
  readonly lastOffset: number
  readonly recordCount: number
}

interface Doubt {
  /** The base sequence of the first batch in doubt. */
  readonly sequence: number
  readonly batches: readonly SourceSpan[]
}

function spanOf (batch: OutBatch): SourceSpan | null {
  const { firstOffset, lastOffset, recordCount } = batch
  return firstOffset === undefined || lastOffset === undefined ? null : { firstOffset, lastOffset, recordCount }
}

function sameSpan (batch: OutBatch, span: SourceSpan): boolean {
  return batch.firstOffset === span.firstOffset && batch.lastOffset === span.lastOffset && batch.recordCount === span.recordCount
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
