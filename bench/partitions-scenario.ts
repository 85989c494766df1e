/**
 * Issue 11's scale scenario: 1,000 topics × 5 partitions (5,000 partitions) with a few records each, copied by
 * MM2 and then kmirror on the same clusters. What it costs is per partition (topic creation, fetch rounds over
 * every partition, per-partition state and metrics), not bytes: timed until every partition is complete.
 */
import { produce, withAdmin, type TestRecord } from '../test/helpers/kafka.ts'
import { uniqueName, waitFor } from '../test/helpers/wait.ts'
import { comparing, measureReplicator, type BenchContext, type Figures } from './lib/measure.ts'
import { TargetWatch } from './lib/target-watch.ts'
import { cpuBetween, formatCpu, threadTicks } from './lib/thread-cpu.ts'
import { jsonPayload } from './lib/payloads.ts'
import { createReadyTopics, freshTargetNote, readEveryPartition } from './lib/warm-up.ts'
import type { Scenario } from './scenarios.ts'

/** MM2's tasks, as in the other scenarios. */
const TASKS = 8
/** How often the target watch polls, for the replicators and the limit alike. */
const POLL_MS = 500
const PAYLOAD_BYTES = 768

/** Fetch rounds over every source partition at its end after the read from the start (long polls: see warmSource). */
const WARM_IDLE_ROUNDS = 10

/**
 * Reads every partition of NAMES on the source once from the start, then WARM_IDLE_ROUNDS rounds at the end in a
 * fetch session, as a replicator does, before any contender runs. Why: the source broker was started moments ago,
 * and a cold JVM spends seconds of CPU compiling its fetch path over 5,000 partitions (4.5-4.9 of the 8-9.5 CPU
 * seconds the source used during kmirror's run, session 44), on the 2 cores the target needs to create the
 * partitions; a production source has served its consumers for days. Without it whichever contender runs first
 * pays the source's JIT (MM2 in full runs; kmirror with --without-mm2).
 */
async function warmSource (ctx: BenchContext, names: readonly string[], perTopic: number): Promise<void> {
  const started = Date.now()
  const bytes = await readEveryPartition(ctx.source, names, perTopic, WARM_IDLE_ROUNDS)
  ctx.log(`partitions: source warmed up (every partition read once, ${(bytes / 1_048_576).toFixed(0)} MiB, then ${WARM_IDLE_ROUNDS} idle rounds) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

/**
 * The brokers' processes: the harness's own clusters, or on given clusters those KMIRROR_BENCH_TARGET_PID and
 * KMIRROR_BENCH_SOURCE_PID name (clusters of `scripts/kafka-local.sh`: their .state/kafka/NAME/pid).
 */
function brokerPids (ctx: BenchContext): { target: number | string | undefined; source: number | string | undefined } {
  return {
    target: ctx.brokerPid?.('target') ?? process.env['KMIRROR_BENCH_TARGET_PID'],
    source: ctx.brokerPid?.('source') ?? process.env['KMIRROR_BENCH_SOURCE_PID']
  }
}

/**
 * Runs STEP on a fresh target when the harness owns it, and logs the CPU seconds each broker used during it, split by
 * what its threads do (thread-cpu.ts): what a replicator's requests cost the brokers while the target creates the
 * partitions (on 2 shared cores, CPU the target broker does not get), apart from their JIT compiling their own code.
 */
async function withBrokerCpu<T> (ctx: BenchContext, label: string, step: () => Promise<T>): Promise<T> {
  // A fresh target per contender: a broker's first 5,000 partitions cost it several times the later ones (its JIT
  // compiles the creation path meanwhile), so on a shared broker the run order decided the figures (RESULTS.md).
  if (ctx.freshTarget) await ctx.freshTarget()
  const pids = brokerPids(ctx)
  const before = { target: threadTicks(pids.target), source: threadTicks(pids.source) }
  const result = await step()
  const used = (side: 'target' | 'source'): string => {
    const cpu = cpuBetween(before[side], threadTicks(pids[side]))
    return cpu === null ? '' : ` ${side} ${formatCpu(cpu)}`
  }
  const line = `${used('target')}${used('source')}`
  if (line !== '') ctx.log(`${label}: broker CPU:${line}`)
  return result
}

/**
 * The target broker alone: seconds to create the scenario's topics on it (one CreateTopics request per 100 topics;
 * kmirror sends one per group of topics with the same settings) until one record produced to every partition is
 * acknowledged. What a replicator cannot beat, whatever it does: kmirror/limit on the seconds row says how much of
 * kmirror's time is the broker making the partitions writable.
 *
 * Timed like the replicators: by a TargetWatch polling from the start, and never before the acknowledgement. A
 * replicator's time ends at the watch's first poll that sees every record, a poll cycle over 1,000 topics after the
 * last one landed; timed by the acknowledgement alone, the limit would be spared that latency.
 */
export async function measureCreateLimit (ctx: BenchContext, count: number, perTopic: number, records: number): Promise<Figures> {
  const prefix = uniqueName('limit-parts')
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`)
  ctx.created('target', names)
  const start = Date.now()
  const watch = new TargetWatch(ctx.target.bootstrap)
  const seen = watch.waitForRecords(names, count * perTopic, start, { timeoutMs: 600_000, intervalMs: POLL_MS })
  seen.catch(() => undefined) // awaited below; a failure before that must not be an unhandled rejection
  try {
    const led = await createAndLead(ctx, names, perTopic, start)
    const acked = await produceOnEvery(ctx, names, perTopic) - start
    const arrival = await seen
    const seconds = Math.max(acked, arrival.completeMs) / 1000
    ctx.log(`limit: one record on every partition acknowledged after ${(acked / 1000).toFixed(1)} s, seen by the watch after ${(arrival.completeMs / 1000).toFixed(1)} s`)
    // Not a replicator: no CPU or memory of its own to show ("—"); records/s = the scenario's records over that time.
    return { label: 'limit', records, bytes: records * PAYLOAD_BYTES, seconds, recordsPerSecond: records / seconds, firstRecordSeconds: led / 1000, cpuSeconds: Number.NaN, peakRssMiB: Number.NaN }
  } finally {
    await watch.close()
  }
}

/** Creates NAMES on the target and waits until every partition has a leader; resolves with the ms since START. */
async function createAndLead (ctx: BenchContext, names: readonly string[], perTopic: number, start: number): Promise<number> {
  const count = names.length
  await withAdmin(ctx.target, async admin => {
    for (let i = 0; i < names.length; i += 100) await admin.createTopics({ topics: names.slice(i, i + 100), partitions: perTopic, replicas: 1 })
    ctx.log(`limit: CreateTopics answered after ${((Date.now() - start) / 1000).toFixed(1)} s`)
    await waitFor(async () => {
      const metadata = await admin.metadata({ topics: [...names], forceUpdate: true })
      const led = [...metadata.topics.values()].reduce((n, t) => n + t.partitions.filter(p => p.leader >= 0).length, 0)
      return { done: led === count * perTopic, state: `${led} of ${count * perTopic} partitions have a leader` }
    }, { timeoutMs: 300_000, intervalMs: 250, message: `every partition of ${count} new topics has a leader` })
  })
  const led = Date.now() - start
  ctx.log(`limit: every partition has a leader after ${(led / 1000).toFixed(1)} s`)
  return led
}

/**
 * Produces one record to every partition of NAMES until acknowledged; resolves with the epoch ms of the
 * acknowledgement. A leader is in the metadata seconds before the broker has loaded the partition: the producer's
 * own retries can run out meanwhile on a cold broker, so it is sent again (a partition may get its record twice:
 * the limit times the broker taking one record on every partition, not the records).
 */
async function produceOnEvery (ctx: BenchContext, names: readonly string[], perTopic: number): Promise<number> {
  const one: TestRecord[] = names.flatMap(topic => Array.from({ length: perTopic }, (_, partition) => ({
    topic, partition, key: null, value: Buffer.from(jsonPayload(partition, PAYLOAD_BYTES)), headers: [], timestamp: BigInt(Date.now())
  })))
  let attempts = 0
  await waitFor(async () => {
    attempts++
    await produce(ctx.target, one, { compression: 'lz4' })
    return true
  }, { timeoutMs: 300_000, intervalMs: 250, message: `one record acknowledged on every partition of ${names.length} new topics` })
  if (attempts > 1) ctx.log(`limit: the records were acknowledged at attempt ${attempts}`)
  return Date.now()
}

export const partitions: Scenario = {
  name: 'partitions',
  async run (ctx, size) {
    const [count, perTopic, perPartition] = size === 'full' ? [1_000, 5, 10] : [5, 5, 4]
    const prefix = uniqueName('parts')
    const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`)
    ctx.created('source', names)
    const created = Date.now()
    await createReadyTopics(ctx.source, names, perTopic)
    ctx.log(`partitions: created ${count} topics × ${perTopic} partitions in ${((Date.now() - created) / 1000).toFixed(1)} s`)
    const records: TestRecord[] = names.flatMap((topic, t) => Array.from({ length: perTopic * perPartition }, (_, i) => ({
      topic, partition: i % perTopic, key: null, value: Buffer.from(jsonPayload(t * perTopic * perPartition + i, PAYLOAD_BYTES)), headers: [], timestamp: BigInt(Date.now())
    })))
    await produce(ctx.source, records, { compression: 'lz4' })
    ctx.log(`partitions: preloaded ${records.length.toLocaleString()} records`)
    // (the tiny size, a smoke test of the scenario, has nothing worth warming up)
    if (size === 'full') await warmSource(ctx, names, perTopic)
    const runs: Figures[] = []
    const limitFirst = process.env['KMIRROR_BENCH_LIMIT_FIRST'] === '1' && comparing(ctx)
    if (limitFirst) runs.push(await withBrokerCpu(ctx, 'limit', () => measureCreateLimit(ctx, count, perTopic, records.length)))
    for (const tool of ctx.tools) {
      ctx.log(`${tool}: copying ${count * perTopic} partitions`)
      runs.push(await withBrokerCpu(ctx, tool, () => measureReplicator(ctx, { tool, sourceTopics: names, records: records.length, bytes: records.length * PAYLOAD_BYTES, compression: 'lz4', tasksMax: TASKS, timeoutMs: size === 'full' ? 600_000 : 120_000, pollMs: POLL_MS })))
      ctx.log(`${tool}: all partitions on the target after ${runs.at(-1)!.seconds.toFixed(1)} s, peak RSS ${runs.at(-1)!.peakRssMiB.toFixed(0)} MiB`)
    }
    const limit = comparing(ctx)
    if (limit && !limitFirst) runs.push(await withBrokerCpu(ctx, 'limit', () => measureCreateLimit(ctx, count, perTopic, records.length)))
    return {
      name: 'partitions',
      workload: `${count.toLocaleString()} topics × ${perTopic} partitions (${(count * perTopic).toLocaleString()}) × ${perPartition} records of ${PAYLOAD_BYTES}-byte JSON (lz4), preloaded; timed until every partition is complete on the target. MM2 with \`tasks.max = ${TASKS}\`.`,
      runs,
      notes: limit ? [`${freshTargetNote(ctx, size)}Limit: the target broker alone creating the same topics (CreateTopics, 100 topics a request) until one record produced to every partition is acknowledged, timed like the replicators by the target watch (its first poll that sees them, never before the acknowledgement); its "first record" figure is when every partition had a leader. No CPU or memory: it is the broker's work. kmirror/limit on the seconds row is how close kmirror comes to the broker making the partitions writable.`] : []
    }
  }
}
