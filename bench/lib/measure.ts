/**
 * One measured run: a replicator copying existing source topics until the target holds every record, or
 * the machine's limit (ConsumerPerformance reading the source while ProducerPerformance writes the target).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestCluster } from '../../test/helpers/clusters.ts'
import { createTopic } from '../../test/helpers/kafka.ts'
import { uniqueName } from '../../test/helpers/wait.ts'
import { consumerPerfArgs, parseConsumerPerf, parseProducerPerf, producerPerfArgs, startTool } from './perf-tools.ts'
import { ProcessTreeSampler } from './process-tree.ts'
import { SOURCE_ALIAS, startKmirror, startMm2, writeFlowFile, type RunningReplicator, type Tool } from './replicators.ts'
import { TargetWatch } from './target-watch.ts'

export interface BenchContext {
  source: TestCluster
  target: TestCluster
  /** Scratch files (configs, payload files). */
  workDir: string
  log (line: string): void
  /** Notes topics the run created, to delete them afterwards on clusters the harness does not own. */
  created (cluster: 'source' | 'target', topics: readonly string[]): void
  /** The tools this scenario runs: MM2 and kmirror, or kmirror alone (`--compare`, `--without-mm2`). */
  tools: readonly Tool[]
  /** Whether the scenario's limit row is measured (scenarios named by `--compare`, with or without MM2). */
  limit: boolean
  /**
   * Wipes the target cluster and starts it again, empty, then (full size) warms it up with topics of its own
   * (lib/warm-up.ts; KMIRROR_BENCH_COLD_TARGET=1 leaves it cold): set only when the harness owns its clusters.
   * `topics` and `partitions` give each contender a fresh target with it: no run inherits a broker another warmed up.
   */
  freshTarget?: () => Promise<void>
  /** A broker's process id, when the harness owns the clusters (its CPU during a run). */
  brokerPid?: (cluster: 'source' | 'target') => number
}

/** True when the scenario measures its limit row (`--compare`; with `--without-mm2` kmirror and the limit only). */
export function comparing (ctx: BenchContext): boolean {
  return ctx.limit
}

export interface Latency {
  p50Ms: number
  p99Ms: number
  maxMs: number
}

/** What one run measured. Rates are per second over `seconds`; `steady*` from the first record on. */
export interface Figures {
  label: 'MM2' | 'kmirror' | 'limit'
  records: number
  bytes: number
  /** Start of the process(es) until the target held every record. */
  seconds: number
  recordsPerSecond: number
  /**
   * Records per second from the first record on the target until the last; undefined when both were seen
   * less than two polls apart (too short a window to give a rate).
   */
  steadyRecordsPerSecond?: number
  firstRecordSeconds?: number
  cpuSeconds: number
  peakRssMiB: number
  latency?: Latency
}

const DEFAULT_POLL_MS = 200

export const LABEL: Readonly<Record<Tool, 'MM2' | 'kmirror'>> = { mm2: 'MM2', kmirror: 'kmirror' }

export function newWorkDir (): string {
  return mkdtempSync(join(tmpdir(), 'kmirror-bench-'))
}

export interface ReplicatorRun {
  tool: Tool
  sourceTopics: readonly string[]
  records: number
  bytes: number
  compression: 'lz4' | 'none'
  tasksMax: number
  timeoutMs: number
  /** Poll interval of the target's end offsets (200 ms by default). */
  pollMs?: number
  /** Both tools in exactly-once mode (replicators.ts `exactlyOnceLines`). */
  exactlyOnce?: boolean
}

export function remoteTopic (tool: Tool, topic: string): string {
  return `${SOURCE_ALIAS[tool]}.${topic}`
}

export function topicRegex (topics: readonly string[]): string {
  return topics.length === 1 ? topics[0]! : `${commonPrefix(topics)}.*`
}

function commonPrefix (names: readonly string[]): string {
  let prefix = names[0] ?? ''
  for (const n of names) while (!n.startsWith(prefix)) prefix = prefix.slice(0, -1)
  return prefix
}

/** Starts TOOL on the run's topics and measures it until the target holds every record, then stops it. */
export async function measureReplicator (ctx: BenchContext, run: ReplicatorRun): Promise<Figures> {
  const file = writeFlowFile(ctx.workDir, {
    sourceBootstrap: ctx.source.bootstrap, targetBootstrap: ctx.target.bootstrap, tool: run.tool,
    topics: topicRegex(run.sourceTopics), tasksMax: run.tasksMax, compression: run.compression, exactlyOnce: run.exactlyOnce === true
  })
  const watch = new TargetWatch(ctx.target.bootstrap)
  const sampler = new ProcessTreeSampler()
  const start = Date.now()
  let replicator: RunningReplicator | undefined
  try {
    replicator = run.tool === 'mm2' ? await startMm2(uniqueName('bench-mm2'), file) : startKmirror(file)
    sampler.watch(replicator.pid)
    const remotes = run.sourceTopics.map(t => remoteTopic(run.tool, t))
    ctx.created('target', remotes)
    const arrival = await Promise.race([
      watch.waitForRecords(remotes, run.records, start, { timeoutMs: run.timeoutMs, intervalMs: run.pollMs ?? DEFAULT_POLL_MS }),
      replicator.failed
    ])
    const usage = sampler.stop()
    const seconds = arrival.completeMs / 1000
    const window = arrival.completeMs - arrival.firstRecordMs
    return {
      label: LABEL[run.tool], records: run.records, bytes: run.bytes, seconds,
      recordsPerSecond: run.records / seconds,
      steadyRecordsPerSecond: window >= 2 * (run.pollMs ?? DEFAULT_POLL_MS) ? run.records / (window / 1000) : undefined,
      firstRecordSeconds: arrival.firstRecordMs / 1000, ...usage
    }
  } catch (error) {
    throw new Error(`${LABEL[run.tool]} run failed: ${(error as Error).message}\n--- log tail ---\n${replicator?.logTail() ?? ''}`, { cause: error })
  } finally {
    sampler.stop()
    await replicator?.stop().catch(e => ctx.log(`stopping ${run.tool}: ${(e as Error).message}`))
    await watch.close()
  }
}

export interface LimitRun {
  sourceTopic: string
  partitions: number
  records: number
  bytes: number
  payload: { file: string } | { size: number }
  producerProps: Record<string, string>
}

/**
 * The machine's ceiling: ConsumerPerformance reads the source topic while ProducerPerformance writes as
 * many records of the same payloads to a fresh target topic, at once, as a replicator would. The rate is
 * the slower of the two tools' own figures; CPU and memory are those of both JVMs together.
 */
export async function measureLimit (ctx: BenchContext, run: LimitRun): Promise<Figures> {
  const targetTopic = uniqueName('limit')
  ctx.created('target', [targetTopic])
  await createTopic(ctx.target, targetTopic, { partitions: run.partitions })
  const sampler = new ProcessTreeSampler()
  const start = Date.now()
  try {
    const consumer = startTool(consumerPerfArgs({ bootstrap: ctx.source.bootstrap, topic: run.sourceTopic, records: run.records, group: uniqueName('bench-limit') }))
    const producer = startTool(producerPerfArgs({ bootstrap: ctx.target.bootstrap, topic: targetTopic, records: run.records, payload: run.payload, throughput: -1, props: run.producerProps }))
    sampler.watch(consumer.pid)
    sampler.watch(producer.pid)
    const [consumed, produced] = await Promise.all([consumer.done, producer.done])
    const usage = sampler.stop()
    const read = parseConsumerPerf(consumed)
    const written = parseProducerPerf(produced)
    const rate = Math.min(read.recordsPerSecond, written.recordsPerSecond)
    ctx.log(`limit: ConsumerPerformance ${Math.round(read.recordsPerSecond)} records/s, ProducerPerformance ${Math.round(written.recordsPerSecond)} records/s`)
    return {
      label: 'limit', records: run.records, bytes: run.bytes, seconds: (Date.now() - start) / 1000,
      recordsPerSecond: rate, steadyRecordsPerSecond: rate, ...usage
    }
  } finally {
    sampler.stop()
  }
}
