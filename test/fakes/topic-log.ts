/**
 * One partition of a (compacted) topic in memory, without compaction: what a store writes through `write`, it reads
 * back through `fetch` and `listOffsets`. Stands in for both the writer and the fetcher of the internal-topic
 * stores (offset history, ACL ownership).
 */
import { FetchOutcomes, type FetchedPartition, type FetchedRecord, type PartitionPosition } from '../../src/kafka/record-fetcher.ts'
import type { OffsetSegment, PartitionBatch } from '../../src/kafka/record-writer.ts'
import { partitionKey } from '../../src/topic-partition.ts'

export class TopicLog {
  readonly records: FetchedRecord[] = []
  /**
   * A transaction open from this offset on (read_committed readers see nothing from it: the last stable offset);
   * null while none is open. `listOffsets('written')` still answers the high watermark.
   */
  openTransactionAt: number | null = null
  readonly #onWrite: ((topic: string, record: FetchedRecord) => void) | undefined

  /** ON_WRITE sees every record written, with the topic it was written to (for tests that log events in order). */
  constructor (onWrite?: (topic: string, record: FetchedRecord) => void) {
    this.#onWrite = onWrite
  }

  async write (batches: readonly PartitionBatch[]): Promise<OffsetSegment[][]> {
    return batches.map(b => {
      const base = this.records.length
      for (const r of b.records) {
        const record = { offset: this.records.length, timestamp: r.timestamp, key: r.key, value: r.value, headers: [...r.headers] }
        this.records.push(record)
        this.#onWrite?.(b.topic, record)
      }
      return [{ start: 0, baseOffset: base }]
    })
  }

  get #stable (): number {
    return this.openTransactionAt ?? this.records.length
  }

  async fetch (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> {
    return positions.map(p => ({
      topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records: this.records.slice(p.offset, Math.max(p.offset, this.#stable)), nextOffset: Math.max(p.offset, this.#stable),
      highWatermark: this.records.length, lastStableOffset: this.#stable, logStartOffset: 0, bytes: 0
    }))
  }

  async listOffsets (partitions: readonly { topic: string, partition: number }[], which: 'earliest' | 'latest' | 'written'): Promise<Map<string, number>> {
    return new Map(partitions.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : which === 'written' ? this.records.length : this.#stable]))
  }
}
