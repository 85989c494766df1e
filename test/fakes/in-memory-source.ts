/**
 * An in-memory source cluster behind FlowReplicator's `SourceReader` port: partitions are sorted lists of
 * records whose offsets may have gaps (transaction markers, aborted data, compaction), with a log start
 * (retention) and a high watermark.
 *
 * A fetch at X returns the records in [X, X + maxSpan) below the high watermark and `nextOffset = X + maxSpan`
 * (capped at the high watermark), as a real fetch does when the window ends in a control batch or a gap.
 * The records travel as real v2 record batch bytes (source-batches.ts), CRCs included, like RecordFetcher's
 * `fetchBatches`: consecutive offsets, at most `batchRecords` per batch, in the codec `codec`.
 */
import { partitionKey } from '../../src/topic-partition.ts'
import { FetchOutcomes, type FetchedBatches, type FetchedRecord, type FetchOutcome, type PartitionError, type PartitionPosition, type RetryReason } from '../../src/kafka/record-fetcher.ts'
import type { Codec } from '../../src/replication/batch-plan.ts'
import type { SourceReader } from '../../src/replication/flow-replicator.ts'
import { sourceBatches } from './source-batches.ts'

interface Partition {
  readonly topic: string
  readonly partition: number
  records: FetchedRecord[]
  logStart: number
  highWatermark: number
}

export type FetchListener = (positions: readonly PartitionPosition[], results: readonly FetchedBatches[]) => void

/** The record the source holds at `offset`: its value names where it came from, so copies are easy to compare. */
export function sourceRecord (topic: string, partition: number, offset: number): FetchedRecord {
  return {
    offset,
    timestamp: 1_700_000_000_000n + BigInt(offset),
    key: offset % 5 === 0 ? null : Buffer.from(`k${offset}`),
    value: offset % 7 === 0 ? null : Buffer.from(`${topic}-${partition}@${offset}`),
    headers: [[Buffer.from('h'), Buffer.from('1')], [Buffer.from('h'), null], [Buffer.from('trace'), Buffer.from(String(offset))]]
  }
}

export class InMemorySource implements SourceReader {
  /** How many offsets one fetch of a partition spans. */
  maxSpan = 5
  /** Records per batch at most: a fetch usually returns several batches. */
  batchRecords = 3
  /** Compression of the batches the source returns. */
  codec: Codec = 'none'
  /**
   * Batches span offset gaps, as the log cleaner leaves them after compaction (the gaps sit inside a batch);
   * otherwise a gap starts a new batch (transaction markers, aborted batches).
   */
  compacted = false
  /**
   * Records before the fetch offset included in the first batch, as a broker returns the whole batch that
   * holds the fetch offset: the data path must drop them (they were copied already).
   */
  leadingRecords = 0
  readonly fetchCalls: PartitionPosition[][] = []
  readonly listOffsetsCalls: { partitions: { topic: string, partition: number }[], which: 'earliest' | 'latest' }[] = []
  /** Topic ids answered with records (Kafka 2.8+ sources); none when unset. */
  readonly topicIds = new Map<string, string>()
  readonly #partitions = new Map<string, Partition>()
  readonly #listeners: FetchListener[] = []
  readonly #fetchFailures: unknown[] = []
  readonly #listOffsetsFailures: unknown[] = []
  readonly #scripted = new Map<string, FetchOutcome[]>()
  readonly #refusedReads = new Map<string, PartitionError>()

  /** A partition holding a record at each of `offsets`; the high watermark defaults to one past the last. */
  addPartition (topic: string, partition: number, offsets: readonly number[], options: { logStart?: number, highWatermark?: number, tag?: string } = {}): void {
    // TAG: other records at the same offsets (a topic deleted and created again)
    const records = offsets.map(o => {
      const r = sourceRecord(topic, partition, o)
      return options.tag === undefined || r.value === null ? r : { ...r, value: Buffer.from(`${options.tag}:${r.value.toString()}`) }
    })
    const last = offsets.at(-1) ?? -1
    this.#partitions.set(partitionKey(topic, partition), {
      topic, partition, records, logStart: options.logStart ?? offsets[0] ?? 0, highWatermark: options.highWatermark ?? last + 1
    })
  }

  /** Retention: records before `offset` are gone and the log starts there. */
  deleteBefore (topic: string, partition: number, offset: number): void {
    const p = this.#get(topic, partition)
    p.records = p.records.filter(r => r.offset >= offset)
    p.logStart = offset
  }

  records (topic: string, partition: number): readonly FetchedRecord[] {
    return this.#get(topic, partition).records
  }

  highWatermark (topic: string, partition: number): number {
    return this.#get(topic, partition).highWatermark
  }

  /** Called after every fetch with what was asked and answered (e.g. to stop the replicator when caught up). */
  onFetch (listener: FetchListener): void {
    this.#listeners.push(listener)
  }

  /** Calls `fn` at the first fetch that asks every partition at its high watermark: everything was copied. */
  whenCaughtUp (fn: () => void): void {
    // The last offset asked per partition: a fetch may leave out a partition that is cooling down.
    const asked = new Map<string, PartitionPosition>()
    this.onFetch(positions => {
      for (const p of positions) asked.set(partitionKey(p.topic, p.partition), p)
      if ([...asked.values()].every(p => p.offset === this.highWatermark(p.topic, p.partition))) fn()
    })
  }

  failNextFetch (err: unknown): void {
    this.#fetchFailures.push(err)
  }

  failNextListOffsets (err: unknown): void {
    this.#listOffsetsFailures.push(err)
  }

  /** The next fetches of the partition answer these outcomes (without records) instead of reading the log. */
  scriptOutcomes (topic: string, partition: number, ...outcomes: FetchOutcome[]): void {
    this.#scripted.set(partitionKey(topic, partition), outcomes)
  }

  /**
   * Partitions whose leader is out of reach (its broker down), by `partitionKey`: their fetches answer RETRY with
   * this reason and no offsets, as RecordFetcher's do, until deleted.
   */
  readonly unreachable = new Map<string, RetryReason>()

  /**
   * Partitions an open transaction holds, by `partitionKey`: the offset of its first record, their last stable offset
   * (read_committed: nothing from it on is given, the high watermark still counts it) until deleted.
   */
  readonly openTransactions = new Map<string, number>()

  /** Fetches of the partition answer FAILED with this error (e.g. READ revoked) until `refuseReads(…, null)`. */
  refuseReads (topic: string, partition: number, failure: PartitionError | null): void {
    if (failure === null) this.#refusedReads.delete(partitionKey(topic, partition))
    else this.#refusedReads.set(partitionKey(topic, partition), failure)
  }

  /**
   * Answer as a broker's incremental fetch session does (KIP-227): a partition whose answer has no records and whose
   * high watermark and log start did not change since it was last included is left out (OK, no offsets, as
   * RecordFetcher returns it). A last stable offset that moved alone is no change.
   */
  sessionAnswers = false
  readonly #lastIncluded = new Map<string, { highWatermark: number, logStart: number }>()

  /** While set, a fetch waits for it after it was asked (a round held open, as by a slow broker). */
  holdFetch: Promise<void> | null = null

  async fetchBatches (positions: readonly PartitionPosition[]): Promise<FetchedBatches[]> {
    this.fetchCalls.push(positions.map(p => ({ ...p })))
    if (this.holdFetch !== null) await this.holdFetch
    const failure = this.#fetchFailures.shift()
    if (failure !== undefined) throw failure
    const results = positions.map(position => this.#leaveOut(this.#fetchOne(position)))
    for (const listener of this.#listeners) listener(positions, results)
    return results
  }

  async listOffsets (partitions: readonly { topic: string, partition: number }[], which: 'earliest' | 'latest'): Promise<Map<string, number>> {
    this.listOffsetsCalls.push({ partitions: partitions.map(p => ({ topic: p.topic, partition: p.partition })), which })
    const failure = this.#listOffsetsFailures.shift()
    if (failure !== undefined) throw failure
    const out = new Map<string, number>()
    for (const { topic, partition } of partitions) {
      const p = this.#get(topic, partition)
      out.set(partitionKey(topic, partition), which === 'earliest' ? p.logStart : p.highWatermark)
    }
    return out
  }

  /** Partitions without a leader: `listOffsetsSettled` answers LEADER_NOT_AVAILABLE for them until `online`. */
  readonly offline = new Set<string>()

  async listOffsetsSettled (partitions: readonly { topic: string, partition: number }[], which: 'earliest' | 'latest'): Promise<{ offsets: Map<string, number>, failed: Map<string, string> }> {
    const down = partitions.filter(p => this.offline.has(partitionKey(p.topic, p.partition)))
    const offsets = await this.listOffsets(partitions.filter(p => !down.includes(p)), which)
    return { offsets, failed: new Map(down.map(p => [partitionKey(p.topic, p.partition), 'LEADER_NOT_AVAILABLE'])) }
  }

  #leaveOut (r: FetchedBatches): FetchedBatches {
    if (!this.sessionAnswers || r.outcome !== FetchOutcomes.OK) return r
    const key = partitionKey(r.topic, r.partition)
    const last = this.#lastIncluded.get(key)
    if (r.batches.length === 0 && last?.highWatermark === r.highWatermark && last.logStart === r.logStartOffset) {
      return { ...r, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1 }
    }
    this.#lastIncluded.set(key, { highWatermark: r.highWatermark, logStart: r.logStartOffset })
    return r
  }

  #fetchOne (position: PartitionPosition): FetchedBatches {
    const p = this.#get(position.topic, position.partition)
    const stable = Math.min(this.openTransactions.get(partitionKey(p.topic, p.partition)) ?? p.highWatermark, p.highWatermark)
    const offsets = { highWatermark: p.highWatermark, lastStableOffset: stable, logStartOffset: p.logStart }
    const empty = { topic: p.topic, partition: p.partition, fromOffset: position.offset, batches: [], nextOffset: position.offset, ...offsets }
    const refused = this.#refusedReads.get(partitionKey(p.topic, p.partition))
    if (refused !== undefined) return { ...empty, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, outcome: FetchOutcomes.FAILED, failure: refused }
    const unreached = this.unreachable.get(partitionKey(p.topic, p.partition))
    if (unreached !== undefined) return { ...empty, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, outcome: FetchOutcomes.RETRY, retryReason: unreached }
    const scripted = this.#scripted.get(partitionKey(p.topic, p.partition))?.shift()
    if (scripted !== undefined) return { ...empty, outcome: scripted }
    if (position.offset < p.logStart || position.offset > p.highWatermark) return { ...empty, outcome: FetchOutcomes.OUT_OF_RANGE }
    const end = Math.max(position.offset, Math.min(position.offset + this.maxSpan, stable))
    const records = p.records.filter(r => r.offset >= position.offset && r.offset < end)
    if (records.length > 0 && this.leadingRecords > 0) {
      const before = p.records.filter(r => r.offset < position.offset).slice(-this.leadingRecords)
      records.unshift(...before)
    }
    // Like RecordFetcher: a batch wholly before the fetch offset is not returned.
    const batches = sourceBatches(records, { batchRecords: this.batchRecords, codec: this.codec, compacted: this.compacted })
      .filter(b => b.lastOffset >= position.offset)
    const topicId = this.topicIds.get(p.topic)
    return { ...empty, outcome: FetchOutcomes.OK, batches, nextOffset: end, ...(topicId === undefined ? {} : { topicId }) }
  }

  #get (topic: string, partition: number): Partition {
    const p = this.#partitions.get(partitionKey(topic, partition))
    if (p === undefined) throw new Error(`the fake source has no partition ${topic}-${partition}`)
    return p
  }
}
