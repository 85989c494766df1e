/** A FlowReplicator wired to in-memory fakes, plus the comparisons the data-path tests share. */
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import type { FetchedRecord, OutRecord } from '../../src/kafka/record-batch.ts'
import { FlowReplicator, type BatchingOptions, type ExactlyOnceDeps } from '../../src/replication/flow-replicator.ts'
import type { Metrics } from '../../src/metrics/metrics.ts'
import type { WriteTarget } from '../../src/replication/replicator-ports.ts'
import { InMemorySource } from './in-memory-source.ts'
import { InMemoryTarget } from './in-memory-target.ts'
import { memoryLogger, type MemoryLogger } from './memory-logger.ts'
import { RecordingProgress, RecordingSyncs } from './recording-sinks.ts'

export interface Harness {
  readonly source: InMemorySource
  readonly target: InMemoryTarget
  readonly progress: RecordingProgress
  readonly syncs: RecordingSyncs
  readonly logs: MemoryLogger
  readonly replicator: FlowReplicator
}

export interface HarnessOptions {
  readonly offsetLagMax?: number
  /** Large by default, so progress is written only by the final flush at stop. */
  readonly offsetFlushIntervalMs?: number
  readonly startAt?: 'earliest' | 'latest'
  /**
   * How batches are planned. By default every exact source batch is forwarded (minForwardBytes 0), so each
   * source batch is one target batch; pass `{}` for the replicator's own defaults (small batches merged).
   */
  readonly batching?: Partial<BatchingOptions>
  readonly metrics?: Metrics
  /** How long a topic's counters and histograms stay after it left (`FlowReplicatorDeps.countedSeriesKeptMs`). */
  readonly countedSeriesKeptMs?: number
  /** Exactly-once mode: rounds as transactions (the fake target keeps aborted records: tests compare the tail). */
  readonly exactlyOnce?: ExactlyOnceDeps
  /** The group lease gate (`FlowReplicatorDeps.fence`). */
  readonly fence?: () => string | null
  readonly flushWhenCaughtUp?: boolean
  /** A target writer without `probeReady`: partitions the target cannot take yet only cool down (target-wait.ts). */
  readonly withoutReadyProbe?: boolean
  /** How long a partition waits for the target before it is reported (the flow's health.stall.threshold.ms). */
  readonly healthStallThresholdMs?: number
  /** How long an open source transaction holds a partition before it is reported (health.transaction.hang.threshold.ms). */
  readonly transactionHangThresholdMs?: number
  /** What the sync sink names in its failure lines (`OffsetSyncSink.writesTo`). */
  readonly syncsWriteTo?: WriteTarget
  /** The source topic id of each partition's last copy (`FlowReplicatorDeps.copiedFrom`: the offset history's). */
  readonly copiedFrom?: (key: string) => string | undefined
}

export function createHarness (options: HarnessOptions = {}): Harness {
  const source = new InMemorySource()
  const target = new InMemoryTarget()
  if (options.withoutReadyProbe === true) Object.defineProperty(target, 'probeReady', { value: undefined })
  const progress = new RecordingProgress()
  const syncs = new RecordingSyncs(options.syncsWriteTo)
  const logs = memoryLogger()
  const replicator = new FlowReplicator({
    flow: {
      name: 'A->B', offsetLagMax: options.offsetLagMax ?? 100, offsetFlushIntervalMs: options.offsetFlushIntervalMs ?? 3_600_000,
      ...(options.healthStallThresholdMs === undefined ? {} : { healthStallThresholdMs: options.healthStallThresholdMs }),
      ...(options.transactionHangThresholdMs === undefined ? {} : { transactionHangThresholdMs: options.transactionHangThresholdMs })
    },
    fetcher: source,
    writer: target,
    progress,
    syncs,
    log: logs.log,
    clusters: { source: { alias: 'A', brokers: 'a:9092', protocol: 'PLAINTEXT', principal: 'User:mirror' }, target: { alias: 'B', brokers: 'b:9092', protocol: 'PLAINTEXT' } },
    failureBackoff: { baseMs: 20, maxMs: 100 },
    startAt: options.startAt ?? 'earliest',
    batching: options.batching ?? { minForwardBytes: 0 },
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.countedSeriesKeptMs === undefined ? {} : { countedSeriesKeptMs: options.countedSeriesKeptMs }),
    ...(options.exactlyOnce === undefined ? {} : { exactlyOnce: options.exactlyOnce }),
    ...(options.fence === undefined ? {} : { fence: options.fence }),
    ...(options.flushWhenCaughtUp === undefined ? {} : { flushWhenCaughtUp: options.flushWhenCaughtUp }),
    ...(options.copiedFrom === undefined ? {} : { copiedFrom: options.copiedFrom })
  })
  return { source, target, progress, syncs, logs, replicator }
}

/** Offsets first..last (inclusive) minus those in `missing`. */
export function offsetsWithGaps (first: number, last: number, missing: readonly number[] = []): number[] {
  const skip = new Set(missing)
  const out: number[] = []
  for (let o = first; o <= last; o++) if (!skip.has(o)) out.push(o)
  return out
}

/** What a copy must keep of a source record: everything but its offset. */
export function asCopied (r: FetchedRecord): OutRecord {
  return { key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp }
}

/** Asserts record-by-record that the target partition holds exactly the source records, in order. */
export function assertExactCopy (h: Harness, topic: string, partition: number, remote: string, fromOffset = 0): void {
  const expected = h.source.records(topic, partition).filter(r => r.offset >= fromOffset).map(asCopied)
  assert.deepEqual(h.target.copied(remote, partition), expected)
}

/**
 * Adds TOPICS and runs the replicator until the test ends; each fetch takes a millisecond, so that changes made
 * between rounds (a topic created again, more records) meet a running data path as they would a real one.
 */
export async function startCopying (h: Harness, t: { after: (fn: () => Promise<void>) => void }, topics: { source: string, remote: string, partitions: number }[]): Promise<void> {
  const fetchBatches = h.source.fetchBatches.bind(h.source)
  h.source.fetchBatches = async positions => { await delay(1); return await fetchBatches(positions) }
  await h.replicator.addTopics(topics)
  const running = h.replicator.run()
  t.after(async () => { h.replicator.stop(); await running })
}
