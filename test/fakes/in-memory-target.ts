/**
 * An in-memory target cluster behind FlowReplicator's `TargetWriter` port. Each partition is a log that gives
 * consecutive offsets to what is appended, like a broker; another producer may append between two of our
 * segments (`foreignRecordsBetweenSegments`), and a write can fail on demand, before or after some of its
 * segments were appended (a real write is acknowledged chunk by chunk).
 */
import { partitionKey } from '../../src/kafka/record-fetcher.ts'
import type { OffsetSegment, OnAcked, OutRecord, PartitionBatch } from '../../src/kafka/record-writer.ts'
import type { TargetWriter } from '../../src/replication/flow-replicator.ts'

export interface StoredRecord {
  readonly offset: number
  readonly record: OutRecord
  /** Appended by another producer, not by the replicator. */
  readonly foreign: boolean
}

interface PlannedFailure {
  readonly err: unknown
  readonly afterSegments: number
}

const FOREIGN: OutRecord = { key: null, value: Buffer.from('foreign'), headers: [], timestamp: 0n }

export class InMemoryTarget implements TargetWriter {
  /** Records per segment: a batch longer than this is appended in several segments, like RecordWriter's chunks. */
  segmentRecords = Number.POSITIVE_INFINITY
  /** Records another producer appends to a partition right before each of our segments after the first. */
  foreignRecordsBetweenSegments = 0
  writeCalls = 0
  readonly #logs = new Map<string, { next: number, records: StoredRecord[] }>()
  readonly #failures: PlannedFailure[] = []
  #beforeWrite: (() => void) | null = null

  /** The partition already holds data: our first record lands at `offset`. */
  startAt (topic: string, partition: number, offset: number): void {
    this.#log(topic, partition).next = offset
  }

  /** The next write appends `afterSegments` segments (all batches, in order) and then throws `err`. */
  failNextWrite (err: unknown, options: { afterSegments?: number } = {}): void {
    this.#failures.push({ err, afterSegments: options.afterSegments ?? 0 })
  }

  /** Runs before each write, e.g. to stop the replicator at a chosen moment. */
  beforeWrite (fn: () => void): void {
    this.#beforeWrite = fn
  }

  /** Everything the partition holds, ours and foreign, in offset order. */
  stored (topic: string, partition: number): readonly StoredRecord[] {
    return this.#log(topic, partition).records
  }

  /** Only the records the replicator wrote, in offset order. */
  copied (topic: string, partition: number): OutRecord[] {
    return this.stored(topic, partition).filter(r => !r.foreign).map(r => r.record)
  }

  /** Like RecordWriter: each segment is a produce round, reported through `onAcked` once "acknowledged". */
  async write (batches: readonly PartitionBatch[], onAcked?: OnAcked): Promise<OffsetSegment[][]> {
    this.writeCalls++
    this.#beforeWrite?.()
    const failure = this.#failures.shift()
    let budget = failure?.afterSegments ?? Number.POSITIVE_INFINITY
    const out: OffsetSegment[][] = []
    for (const [index, batch] of batches.entries()) {
      const segments: OffsetSegment[] = []
      const log = this.#log(batch.topic, batch.partition)
      for (let start = 0; start < batch.records.length; start += this.segmentRecords) {
        if (budget-- <= 0) throw failure!.err
        if (start > 0) this.#appendForeign(log)
        const baseOffset = log.next
        segments.push({ start, baseOffset })
        const chunk = batch.records.slice(start, start + this.segmentRecords)
        for (const record of chunk) {
          // Only what a produce request carries: the source record's offset does not travel.
          const copy = { key: record.key, value: record.value, headers: record.headers, timestamp: record.timestamp }
          log.records.push({ offset: log.next++, record: copy, foreign: false })
        }
        if (onAcked !== undefined) await onAcked([{ batch: index, start, end: start + chunk.length, baseOffset }])
      }
      out.push(segments)
    }
    if (failure !== undefined) throw failure.err
    return out
  }

  #appendForeign (log: { next: number, records: StoredRecord[] }): void {
    for (let i = 0; i < this.foreignRecordsBetweenSegments; i++) log.records.push({ offset: log.next++, record: FOREIGN, foreign: true })
  }

  #log (topic: string, partition: number): { next: number, records: StoredRecord[] } {
    const key = partitionKey(topic, partition)
    let log = this.#logs.get(key)
    if (log === undefined) {
      log = { next: 0, records: [] }
      this.#logs.set(key, log)
    }
    return log
  }
}
