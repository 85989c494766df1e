/**
 * An in-memory target cluster behind FlowReplicator's `TargetWriter` port (BatchWriter's `write`). Each
 * partition is a log that gives consecutive offsets to what is appended, like a broker. Every batch is built
 * for this fake's producer id and per-partition sequence and checked as a broker would: one v2 batch, CRC
 * valid, producer fields and sequence set, not transactional, record count and offset deltas consistent.
 * Its records are decoded from the bytes, so a copy holds exactly what travelled.
 *
 * Like BatchWriter, a write sends its partitions' batches in rounds (one batch per partition per request)
 * and acknowledges each round's batches in order per partition. Another producer may append between two of
 * our batches (`foreignRecordsBetweenSegments`), and a write can fail on demand, before or after some of its
 * batches were appended and acknowledged.
 */
import assert from 'node:assert/strict'
import type { OnBatchesAcked, PartitionWrite, WriteResult } from '../../src/kafka/batch-writer.ts'
import { isRefusedBatchError, kafkaErrorHint, kafkaErrorInfo } from '../../src/kafka/errors.ts'
import { BatchAttributes, decodeRecords, scanBatches, verifyCrc, type FetchedRecord, type OutRecord, type ProducerIdentity } from '../../src/kafka/record-batch.ts'
import { partitionKey } from '../../src/topic-partition.ts'
import type { TargetWriter } from '../../src/replication/flow-replicator.ts'

export interface StoredRecord {
  readonly offset: number
  readonly record: OutRecord
  /** Appended by another producer, not by the replicator. */
  readonly foreign: boolean
}

/** What the target received of one batch of ours. */
export interface ReceivedBatch {
  readonly topic: string
  readonly partition: number
  readonly baseOffset: number
  readonly recordCount: number
  /** The batch's compression attribute bits (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd). */
  readonly compression: number
  readonly bytes: number
}

interface PlannedFailure {
  readonly err: unknown
  readonly afterSegments: number
}

const FOREIGN: OutRecord = { key: null, value: Buffer.from('foreign'), headers: [], timestamp: 0n }

export class InMemoryTarget implements TargetWriter {
  /** Records another producer appends to a partition right before each of our batches after a write's first. */
  foreignRecordsBetweenSegments = 0
  writeCalls = 0
  /** Partitions (`partitionKey` of the remote topic) without a leader yet: writes to them are returned incomplete. */
  readonly leaderless = new Set<string>()
  /** See refuseWrites. */
  readonly #refused = new Map<string, { error: string, left: number }>()
  /** Every batch appended, in order. */
  readonly received: ReceivedBatch[] = []
  readonly #logs = new Map<string, { next: number, records: StoredRecord[], sequence: number }>()
  readonly #failures: PlannedFailure[] = []
  #beforeWrite: (() => void) | null = null
  #beforeProbe: (() => void) | null = null
  probeCalls = 0
  /** Like BatchWriter, a failure ends the producer id; the next write starts a new one with sequences from 0. */
  #producer: ProducerIdentity = { id: 1000n, epoch: 0 }

  /** The partition already holds data: our first record lands at `offset`. */
  startAt (topic: string, partition: number, offset: number): void {
    this.#log(topic, partition).next = offset
  }

  /**
   * The next `times` writes of the remote partition are refused with Kafka error `error` (e.g.
   * TOPIC_AUTHORIZATION_FAILED, MESSAGE_TOO_LARGE): they come back in `failed`, nothing of them appended.
   */
  refuseWrites (topic: string, partition: number, error: string, times = Number.POSITIVE_INFINITY): void {
    this.#refused.set(partitionKey(topic, partition), { error, left: times })
  }

  /**
   * The remote topic is deleted and created again (a new topic id): its partitions are empty, and the next write of
   * each partition written before fails with REMOTE_TOPIC_RECREATED, nothing of it appended, as BatchWriter does.
   */
  recreateTopic (topic: string): void {
    for (const [key, log] of [...this.#logs]) {
      if (!log.records.some(r => !r.foreign) || !key.startsWith(`${topic}\u0000`)) continue
      this.#logs.delete(key)
      this.#refused.set(key, { error: 'REMOTE_TOPIC_RECREATED', left: 1 })
    }
  }

  /** Writes of the remote partition are accepted again. */
  acceptWrites (topic: string, partition: number): void {
    this.#refused.delete(partitionKey(topic, partition))
  }

  /** The next write appends and acknowledges `afterSegments` batches (round by round) and then throws `err`. */
  failNextWrite (err: unknown, options: { afterSegments?: number } = {}): void {
    this.#failures.push({ err, afterSegments: options.afterSegments ?? 0 })
  }

  /** Runs before each write, e.g. to stop the replicator at a chosen moment. */
  beforeWrite (fn: () => void): void {
    this.#beforeWrite = fn
  }

  /** Runs before each readiness probe (`probeReady`). */
  beforeProbe (fn: () => void): void {
    this.#beforeProbe = fn
  }

  /** Like BatchWriter's: the probed remote partitions that have a leader (not in `leaderless`). */
  async probeReady (partitions: readonly { topic: string, partition: number }[]): Promise<Set<string>> {
    this.probeCalls++
    this.#beforeProbe?.()
    return new Set(partitions.map(p => partitionKey(p.topic, p.partition)).filter(key => !this.leaderless.has(key)))
  }

  /** Like BatchWriter's: why a remote partition in `leaderless` is not ready. */
  waitReason (topic: string, partition: number): { error: string, detail: string } | undefined {
    return this.leaderless.has(partitionKey(topic, partition)) ? { error: 'LEADER_NOT_AVAILABLE', detail: 'no broker of cluster B leads it' } : undefined
  }

  /** Everything the partition holds, ours and foreign, in offset order. */
  stored (topic: string, partition: number): readonly StoredRecord[] {
    return this.#log(topic, partition).records
  }

  /** Only the records the replicator wrote, in offset order. */
  copied (topic: string, partition: number): OutRecord[] {
    return this.stored(topic, partition).filter(r => !r.foreign).map(r => r.record)
  }

  async write (writes: readonly PartitionWrite[], onAcked: OnBatchesAcked): Promise<WriteResult> {
    this.writeCalls++
    this.#beforeWrite?.()
    const incomplete = writes.flatMap((w, i) => w.batches.length > 0 && this.leaderless.has(partitionKey(w.topic, w.partition)) ? [i] : [])
    const failed = writes.flatMap((w, i) => {
      const key = partitionKey(w.topic, w.partition)
      const refusal = w.batches.length > 0 ? this.#refused.get(key) : undefined
      if (refusal === undefined) return []
      if (--refusal.left <= 0) this.#refused.delete(key)
      const { error } = refusal
      const info = kafkaErrorInfo(error)
      return [{ write: i, topic: w.topic, partition: w.partition, error, kind: info.kind, message: null, retriable: info.retriable, refusedBatch: isRefusedBatchError(error), hint: kafkaErrorHint(error, { alias: 'B' }) }]
    })
    if (failed.length > 0) this.#newProducer()
    const skipped = new Set([...incomplete, ...failed.map(f => f.write)])
    const failure = this.#failures.shift()
    let budget = failure?.afterSegments ?? Number.POSITIVE_INFINITY
    const rounds = Math.max(0, ...writes.map(w => w.batches.length))
    try {
      for (let b = 0; b < rounds; b++) {
        const acks: { write: number, batch: number, baseOffset: number }[] = []
        for (const [index, w] of writes.entries()) {
          const batch = w.batches[b]
          if (batch === undefined || skipped.has(index)) continue
          if (budget-- <= 0) {
            if (acks.length > 0) await onAcked(acks)
            throw failure!.err
          }
          const log = this.#log(w.topic, w.partition)
          if (b > 0) this.#appendForeign(log)
          acks.push({ write: index, batch: b, baseOffset: this.#append(w.topic, w.partition, batch.build(this.#producer, log.sequence), batch.recordCount) })
        }
        if (acks.length > 0) await onAcked(acks)
      }
    } catch (err) {
      this.#newProducer()
      throw err
    }
    if (failure !== undefined) {
      this.#newProducer()
      throw failure.err
    }
    return { incomplete, failed }
  }

  #newProducer (): void {
    this.#producer = { id: this.#producer.id + 1n, epoch: 0 }
    for (const log of this.#logs.values()) log.sequence = 0
  }

  /** Checks the batch as a broker would and appends its records; returns the base offset it got. */
  #append (topic: string, partition: number, bytes: Buffer, recordCount: number): number {
    const log = this.#log(topic, partition)
    const batches = scanBatches(bytes, topic, partition)
    assert.equal(batches.length, 1, 'one batch per partition per request')
    const batch = batches[0]!
    assert.equal(batch.bytes.length, bytes.length, 'the batch is complete')
    verifyCrc(batch, topic, partition)
    assert.equal(batch.producerId, this.#producer.id, 'producer id')
    assert.equal(bytes.readInt16BE(51), this.#producer.epoch, 'producer epoch')
    assert.equal(bytes.readInt32BE(53), log.sequence, 'base sequence')
    assert.equal(bytes.readInt32BE(12), -1, 'partition leader epoch')
    assert.equal(batch.attributes & (BatchAttributes.TRANSACTIONAL | BatchAttributes.CONTROL), 0, 'neither transactional nor control')
    assert.equal(batch.recordCount, recordCount, 'record count as announced')
    assert.equal(batch.lastOffset - batch.baseOffset, recordCount - 1, 'last offset delta')
    const records: FetchedRecord[] = []
    decodeRecords(batch, batch.baseOffset, records)
    assert.deepEqual(records.map(r => r.offset - batch.baseOffset), records.map((_, i) => i), 'offset deltas 0..n-1')
    const baseOffset = log.next
    for (const r of records) {
      // Only what a produce request carries: the source record's offset does not travel.
      log.records.push({ offset: log.next++, record: { key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp }, foreign: false })
    }
    log.sequence += recordCount
    this.received.push({ topic, partition, baseOffset, recordCount, compression: batch.attributes & BatchAttributes.COMPRESSION_MASK, bytes: bytes.length })
    return baseOffset
  }

  #appendForeign (log: { next: number, records: StoredRecord[] }): void {
    for (let i = 0; i < this.foreignRecordsBetweenSegments; i++) log.records.push({ offset: log.next++, record: FOREIGN, foreign: true })
  }

  #log (topic: string, partition: number): { next: number, records: StoredRecord[], sequence: number } {
    const key = partitionKey(topic, partition)
    let log = this.#logs.get(key)
    if (log === undefined) {
      log = { next: 0, records: [], sequence: 0 }
      this.#logs.set(key, log)
    }
    return log
  }
}
