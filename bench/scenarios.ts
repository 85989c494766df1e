/**
 * The workloads of issue 5. Each preloads fresh source topics (unique names), runs MM2 and then kmirror
 * on the same data (each to its own remote topics), and where it makes sense measures the machine's limit.
 */
import { join } from 'node:path'
import { createTopic, produce, type TestRecord } from '../test/helpers/kafka.ts'
import { uniqueName } from '../test/helpers/wait.ts'
import { measureLatency } from './lib/measure-latency.ts'
import { comparing, measureLimit, measureReplicator, type BenchContext, type Figures } from './lib/measure.ts'
import { jsonPayload, writePayloadFile } from './lib/payloads.ts'
import { producerPerfArgs, startTool } from './lib/perf-tools.ts'
import { createReadyTopics, freshTargetNote, readEveryPartition } from './lib/warm-up.ts'
import type { ScenarioResult } from './lib/report.ts'
import { instances } from './instances-scenario.ts'
import { partitions } from './partitions-scenario.ts'

export type Size = 'full' | 'tiny'

export interface Scenario {
  name: string
  run (ctx: BenchContext, size: Size): Promise<ScenarioResult>
}

const PARTITIONS = 8
/** The producer settings of the preload and of the limit, as a tuned producer would write. */
const PRODUCER_PROPS = { acks: 'all', 'batch.size': '262144', 'linger.ms': '10' }

interface PreloadedTopic {
  name: string
  records: number
  payloadBytes: number
  compression: 'lz4' | 'none'
  payload: { file: string } | { size: number }
}

/** A fresh 8-partition topic filled by ProducerPerformance as fast as it can. */
async function preload (ctx: BenchContext, prefix: string, records: number, payload: PreloadedTopic['payload'], payloadBytes: number, compression: 'lz4' | 'none'): Promise<PreloadedTopic> {
  const name = uniqueName(prefix)
  ctx.created('source', [name])
  await createTopic(ctx.source, name, { partitions: PARTITIONS })
  const started = Date.now()
  await startTool(producerPerfArgs({ bootstrap: ctx.source.bootstrap, topic: name, records, payload, throughput: -1, props: { ...PRODUCER_PROPS, 'compression.type': compression } })).done
  ctx.log(`${prefix}: preloaded ${records.toLocaleString()} records into ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return { name, records, payloadBytes, compression, payload }
}

/** MM2, kmirror and the limit on one preloaded topic. */
async function copyPreloaded (ctx: BenchContext, topic: PreloadedTopic, timeoutMs: number): Promise<Figures[]> {
  const runs: Figures[] = []
  const bytes = topic.records * topic.payloadBytes
  for (const tool of ctx.tools) {
    ctx.log(`${tool}: copying ${topic.name}`)
    runs.push(await measureReplicator(ctx, { tool, sourceTopics: [topic.name], records: topic.records, bytes, compression: topic.compression, tasksMax: PARTITIONS, timeoutMs }))
    ctx.log(`${tool}: ${Math.round(runs.at(-1)!.recordsPerSecond).toLocaleString()} records/s`)
  }
  if (!comparing(ctx)) return runs
  ctx.log('limit: ConsumerPerformance on the source with ProducerPerformance on the target')
  runs.push(await measureLimit(ctx, { sourceTopic: topic.name, partitions: PARTITIONS, records: topic.records, bytes, payload: topic.payload, producerProps: { ...PRODUCER_PROPS, 'compression.type': topic.compression } }))
  return runs
}

const bulk: Scenario = {
  name: 'bulk',
  async run (ctx, size) {
    const records = size === 'full' ? 1_000_000 : 2_000
    const file = join(ctx.workDir, 'payloads-1k.json')
    writePayloadFile(file, 2_000, 1024)
    const topic = await preload(ctx, 'bulk', records, { file }, 1024, 'lz4')
    return {
      name: 'bulk',
      workload: `${records.toLocaleString()} records of 1 KiB JSON (2,000 distinct order events), ${PARTITIONS} partitions, lz4 batches, preloaded.`,
      runs: await copyPreloaded(ctx, topic, size === 'full' ? 600_000 : 120_000),
      notes: []
    }
  }
}

const eos: Scenario = {
  name: 'eos',
  async run (ctx, size) {
    const records = size === 'full' ? 500_000 : 2_000
    const file = join(ctx.workDir, 'payloads-1k.json')
    writePayloadFile(file, 2_000, 1024)
    const topic = await preload(ctx, 'eos', records, { file }, 1024, 'lz4')
    const runs: Figures[] = []
    for (const tool of ctx.tools) {
      ctx.log(`${tool}: copying ${topic.name} exactly once`)
      runs.push(await measureReplicator(ctx, { tool, sourceTopics: [topic.name], records, bytes: records * 1024, compression: 'lz4', tasksMax: PARTITIONS, timeoutMs: size === 'full' ? 600_000 : 120_000, exactlyOnce: true }))
      ctx.log(`${tool}: ${Math.round(runs.at(-1)!.recordsPerSecond).toLocaleString()} records/s`)
    }
    return {
      name: 'eos',
      workload: `${records.toLocaleString()} records of 1 KiB JSON, ${PARTITIONS} partitions, lz4, preloaded; both tools exactly-once (\`T.exactly.once.source.support = enabled\`, source read read_committed; MM2 in dedicated mode with \`dedicated.mode.enable.internal.rest = true\` and \`listeners\`, \`tasks.max = ${PARTITIONS}\`).`,
      runs,
      notes: [
        'Timed until the target\'s end offsets reach the record count: they include one transaction marker per partition per transaction, so the finish line is crossed up to a few transactions early (the same for both tools).',
        'No limit row: the limit tools are not transactional.'
      ]
    }
  }
}

const small: Scenario = {
  name: 'small',
  async run (ctx, size) {
    const records = size === 'full' ? 2_000_000 : 5_000
    const topic = await preload(ctx, 'small', records, { size: 100 }, 100, 'none')
    return {
      name: 'small',
      workload: `${records.toLocaleString()} records of 100 bytes (ProducerPerformance \`--record-size 100\`), ${PARTITIONS} partitions, uncompressed, preloaded.`,
      runs: await copyPreloaded(ctx, topic, size === 'full' ? 600_000 : 120_000),
      notes: []
    }
  }
}

/** Idle fetch rounds over the source's topics after reading them once, as `partitions` runs. */
const WARM_IDLE_ROUNDS = 10

/** Seconds STEP took, as text, for the log line that says what the untimed preparation cost. */
async function timed (step: () => Promise<unknown>): Promise<string> {
  const started = Date.now()
  await step()
  return ((Date.now() - started) / 1000).toFixed(1)
}

const topics: Scenario = {
  name: 'topics',
  async run (ctx, size) {
    const [count, perTopic] = size === 'full' ? [500, 100] : [5, 10]
    const prefix = uniqueName('topics')
    const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`)
    ctx.created('source', names)
    await createReadyTopics(ctx.source, names, 1)
    const records: TestRecord[] = names.flatMap((topic, t) => Array.from({ length: perTopic }, (_, i) => ({
      topic, partition: 0, key: null, value: Buffer.from(jsonPayload(t * perTopic + i, 768)), headers: [], timestamp: BigInt(Date.now())
    })))
    await produce(ctx.source, records, { compression: 'lz4' })
    ctx.log(`topics: preloaded ${count} topics × ${perTopic} records`)
    // As in `partitions`: the source read once before any contender, so that the first does not pay its JIT alone.
    if (size === 'full') ctx.log(`topics: source warmed up (every topic read once) in ${await timed(() => readEveryPartition(ctx.source, names, 1, WARM_IDLE_ROUNDS))} s`)
    const runs: Figures[] = []
    for (const tool of ctx.tools) {
      ctx.log(`${tool}: copying ${count} topics`)
      // As in `partitions`: each contender creates its topics on a fresh broker, whatever ran before it.
      if (ctx.freshTarget) await ctx.freshTarget()
      runs.push(await measureReplicator(ctx, { tool, sourceTopics: names, records: records.length, bytes: records.length * 768, compression: 'lz4', tasksMax: PARTITIONS, timeoutMs: size === 'full' ? 600_000 : 120_000, pollMs: 500 }))
      ctx.log(`${tool}: all topics on the target after ${runs.at(-1)!.seconds.toFixed(1)} s`)
    }
    return {
      name: 'topics',
      workload: `${count} topics × 1 partition × ${perTopic} records of 768-byte JSON (lz4), preloaded; timed until every topic is complete on the target. MM2 with \`tasks.max = ${PARTITIONS}\`.`,
      runs,
      notes: [`${freshTargetNote(ctx, size)}No limit row: the cost here is topic creation and start-up, not bytes.`]
    }
  }
}

const latency: Scenario = {
  name: 'latency',
  async run (ctx, size) {
    const [rate, seconds] = size === 'full' ? [2_000, 60] : [100, 3]
    const file = join(ctx.workDir, 'payloads-1k.json')
    writePayloadFile(file, 2_000, 1024)
    const runs: Figures[] = []
    for (const tool of ctx.tools) {
      const sourceTopic = uniqueName('latency')
      ctx.created('source', [sourceTopic])
      await createTopic(ctx.source, sourceTopic, { partitions: PARTITIONS })
      ctx.log(`${tool}: ${rate} records/s for ${seconds} s`)
      runs.push(await measureLatency(ctx, { tool, sourceTopic, partitions: PARTITIONS, ratePerSecond: rate, seconds, payloadFile: file, payloadBytes: 1024 }))
      ctx.log(`${tool}: p99 ${runs.at(-1)!.latency?.p99Ms} ms`)
    }
    return {
      name: 'latency',
      workload: `${rate.toLocaleString()} records/s of 1 KiB JSON for ${seconds} s (ProducerPerformance \`--throughput ${rate}\`, lz4, acks=all, default linger) into an ${PARTITIONS}-partition topic while the replicator runs; latency = arrival at a consumer on the target minus the producer's record timestamp. Measured after a warm-up of a quarter second of records.`,
      runs,
      notes: ['Throughput rows here are the offered rate, not a capacity; CPU and memory cover the whole run including start-up and warm-up.']
    }
  }
}

export const SCENARIOS: readonly Scenario[] = [bulk, small, topics, latency, eos, partitions, instances]
