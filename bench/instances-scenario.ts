/**
 * Issue 11's multi-instance scenario: several `kmirror run` processes on one mm2.properties share a flow through
 * its group on the target. Part one starts 1, then 2, then 3 instances together on a fresh 24-partition topic (each
 * run its own topic and source alias, so its own remote topic and group), waits for their group to split it, then
 * writes the records and measures the time until all is on the target, the records and CPU and memory of each
 * process. Part two, on a topic with live traffic, times the rebalances: an instance joining a running one (then a
 * third), one of three leaving (SIGTERM) and one of two dying (kill -9, bounded by `session.timeout.ms`). MM2 does
 * not run here: its multi-node mode needs a Connect worker per node (dedicated mode) on this same machine, which
 * would measure three JVMs on two cores.
 */
import { randomBytes } from 'node:crypto'
import { createTopic, endOffsets, produce, startOffsets, type TestRecord } from '../test/helpers/kafka.ts'
import { uniqueName, waitFor, waitForValue } from '../test/helpers/wait.ts'
import { instanceView, recordsCopied, settled, startInstance, startInstances, stopInstance, type BenchInstance } from './lib/instances.ts'
import type { BenchContext } from './lib/measure.ts'
import { jsonPayload } from './lib/payloads.ts'
import { TARGET_ALIAS, writeFlowFile } from './lib/replicators.ts'
import { TargetWatch } from './lib/target-watch.ts'
import { instancesTables, type RebalanceFigure, type ScaleRun, type TargetCount } from './instances-report.ts'
import type { Scenario, Size } from './scenarios.ts'

const PARTITIONS = 24
const PAYLOAD_BYTES = 1024
const POLL_MS = 200
/**
 * Part of every source alias of this run: its remote topics, internal topics (`mm2-offsets.<alias>.internal`, ...)
 * and groups are its own, so a rerun on the same clusters never sees an earlier run's state.
 */
const RUN = randomBytes(3).toString('hex')

/** Records per produce call of the harness's writes. */
const CHUNK = 24_000

interface Settings {
  records: number
  /** The instance counts of part one. */
  counts: readonly number[]
  /** Part two: how many instances join one by one (2 or 3; with 3, one of three also leaves by SIGTERM). */
  grow: 2 | 3
  sessionTimeoutMs: number
  heartbeatMs: number
  timeoutMs: number
}

function settingsFor (size: Size): Settings {
  // Full size: the group defaults (Connect's) an operator gets; tiny: the broker's shortest session, to stay cheap.
  return size === 'full'
    ? { records: 480_000, counts: [1, 2, 3], grow: 3, sessionTimeoutMs: 10_000, heartbeatMs: 3_000, timeoutMs: 600_000 }
    : { records: 2_400, counts: [2], grow: 2, sessionTimeoutMs: 6_000, heartbeatMs: 1_000, timeoutMs: 120_000 }
}

/** A flow file for ALIAS -> T on TOPIC, with its own group and the scenario's session settings. */
function flowFile (ctx: BenchContext, alias: string, topic: string, s: Settings): string {
  return writeFlowFile(ctx.workDir, {
    sourceBootstrap: ctx.source.bootstrap, targetBootstrap: ctx.target.bootstrap, tool: 'kmirror', sourceAlias: alias,
    topics: topic, tasksMax: PARTITIONS, compression: 'lz4',
    extraLines: [`${alias}->${TARGET_ALIAS}.group.id = ${uniqueName(`bench-${alias}`)}`, `session.timeout.ms = ${s.sessionTimeoutMs}`,
      `heartbeat.interval.ms = ${s.heartbeatMs}`, 'offset.flush.interval.ms = 1000']
  })
}

/** Rejects as soon as one of INSTANCES exits on its own. */
function anyExit (instances: readonly BenchInstance[]): { failed: Promise<never>, cancel: () => void } {
  let timer: NodeJS.Timeout | undefined
  const failed = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      const gone = instances.find(i => i.process.exitStatus !== null)
      if (gone !== undefined) reject(new Error(`instance ${gone.name} exited early: ${JSON.stringify(gone.process.exitStatus)}\n${gone.process.stderr.slice(-3000)}`))
    }, POLL_MS)
  })
  failed.catch(() => undefined)
  return { failed, cancel: () => clearInterval(timer) }
}

/** A fresh, empty 24-partition source topic. */
async function sourceTopic (ctx: BenchContext): Promise<string> {
  const topic = uniqueName('instances')
  ctx.created('source', [topic])
  await createTopic(ctx.source, topic, { partitions: PARTITIONS })
  return topic
}

/**
 * RECORDS records written to TOPIC, the same number in every partition (2,000 distinct 1 KiB JSON payloads, lz4),
 * from this process: a JVM tool would take longer to start than a tiny run lasts.
 */
async function fill (ctx: BenchContext, topic: string, records: number): Promise<void> {
  const payloads = Array.from({ length: 2_000 }, (_, i) => Buffer.from(jsonPayload(i, PAYLOAD_BYTES)))
  for (let from = 0; from < records; from += CHUNK) {
    const chunk: TestRecord[] = Array.from({ length: Math.min(CHUNK, records - from) }, (_, i) => ({
      topic, partition: (from + i) % PARTITIONS, key: null, value: payloads[(from + i) % payloads.length]!, headers: [], timestamp: BigInt(Date.now())
    }))
    await produce(ctx.source, chunk, { compression: 'lz4' })
  }
}

/**
 * N instances started together on a fresh, empty topic; once their group has split its partitions evenly, RECORDS
 * records are written to it and copied while they arrive. Settling first makes the split what is measured: on a
 * quiet machine one instance copies 480,000 preloaded records (about 5 s) before a second one has joined (about
 * 5 s), so a preloaded topic measured the join, not N instances copying.
 */
async function copyWith (ctx: BenchContext, n: number, s: Settings): Promise<ScaleRun> {
  const topic = await sourceTopic(ctx)
  const alias = `K${n}r${RUN}`
  const file = flowFile(ctx, alias, topic, s)
  const remote = `${alias}.${topic}`
  ctx.created('target', [remote])
  const started = Date.now()
  const instances = await startInstances(Array.from({ length: n }, (_, i) => `${alias}-${i + 1}`), file, TARGET_ALIAS)
  const watch = new TargetWatch(ctx.target.bootstrap)
  const exits = anyExit(instances)
  try {
    await Promise.race([waitFor(async () => settled(await Promise.all(instances.map(instanceView)), PARTITIONS),
      { timeoutMs: s.timeoutMs, intervalMs: POLL_MS, message: `${n} instances split ${PARTITIONS} partitions` }), exits.failed])
    const start = Date.now()
    const written = fill(ctx, topic, s.records).then(() => (Date.now() - start) / 1000)
    const arrival = await Promise.race([watch.waitForRecords([remote], s.records, start, { timeoutMs: s.timeoutMs, intervalMs: POLL_MS }), exits.failed])
    const writeSeconds = await written
    const usage = instances.map(i => i.sampler.stop())
    const views = await Promise.all(instances.map(instanceView))
    // An acknowledgement is counted a moment after the target has the record: wait for the counters to catch up.
    const copied = await waitForValue(async () => {
      const each = await Promise.all(instances.map(recordsCopied))
      return { done: each.reduce((a, b) => a + b, 0) >= s.records, state: each }
    }, { timeoutMs: 10_000, intervalMs: POLL_MS, message: `the instances' kmirror_records_copied_total reach ${s.records}` }).catch(() => undefined)
    const each = copied ?? await Promise.all(instances.map(recordsCopied))
    exits.cancel()
    await Promise.all(instances.map(async i => await stopInstance(i)))
    return {
      instances: n, records: s.records, settleSeconds: (start - started) / 1000, writeSeconds, seconds: arrival.completeMs / 1000, firstRecordSeconds: arrival.firstRecordMs / 1000,
      each: instances.map((_, i) => ({ partitions: views[i]?.partitions.length ?? 0, records: each[i] ?? 0, ...usage[i]! })),
      onTarget: await countOnTarget(ctx, remote, s.records / PARTITIONS)
    }
  } finally {
    exits.cancel()
    await Promise.all(instances.filter(i => i.process.exitStatus === null).map(async i => await stopInstance(i)))
    await watch.close()
  }
}

/**
 * What the target holds of REMOTE once every instance stopped, per partition against the PER_PARTITION records
 * the source holds (the harness writes as many to each): records beyond them were copied twice, records short of
 * them are missing. Counted from the target's offsets (a fresh, non-transactional, uncompacted topic: every
 * offset between log start and end is one record), not from kmirror's counters.
 */
async function countOnTarget (ctx: BenchContext, remote: string, perPartition: number): Promise<TargetCount> {
  const [starts, ends] = await Promise.all([startOffsets(ctx.target, remote), endOffsets(ctx.target, remote)])
  const counts = ends.map((end, p) => Number(end - (starts[p] ?? 0n)))
  return {
    records: counts.reduce((a, b) => a + b, 0),
    twice: counts.reduce((n, c) => n + Math.max(0, c - perPartition), 0),
    missing: counts.reduce((n, c) => n + Math.max(0, perPartition - c), 0),
    partitionsWithDuplicates: counts.filter(c => c > perPartition).length
  }
}

/** One record per partition of TOPIC every round (about 5 rounds a second) until stopped. */
function liveTraffic (ctx: BenchContext, topic: string): { stop: () => Promise<void> } {
  let running = true
  // A failed produce ends the traffic; stop() rethrows it (an unawaited rejection would end the harness at once).
  const loop = (async () => {
    for (let round = 0; running; round++) {
      const records: TestRecord[] = Array.from({ length: PARTITIONS }, (_, partition) => ({
        topic, partition, key: null, value: Buffer.from(jsonPayload(round, 512)), headers: [], timestamp: BigInt(Date.now())
      }))
      await produce(ctx.source, records)
      await new Promise(resolve => setTimeout(resolve, 150)) // pacing the traffic, not waiting for a condition
    }
  })()
  loop.catch(() => undefined)
  return { stop: async () => { running = false; await loop } }
}

interface LiveGroup {
  ctx: BenchContext
  watch: TargetWatch
  remote: string
  file: string
  members: BenchInstance[]
}

/** Seconds from START until the members' views agree on an even split of every partition. */
async function untilSettled (g: LiveGroup, start: number, timeoutMs: number, what: string): Promise<number> {
  let last = ''
  await waitFor(async () => {
    const views = await Promise.all(g.members.map(instanceView))
    const state = JSON.stringify(views.map(v => v === null ? null : [v.generation, v.members, v.partitions.length]))
    if (state !== last) g.ctx.log(`instances: +${((Date.now() - start) / 1000).toFixed(1)} s [generation, members, partitions] per instance: ${state}`)
    last = state
    return { done: settled(views, PARTITIONS), state }
  }, { timeoutMs, intervalMs: POLL_MS, message: what })
  return (Date.now() - start) / 1000
}

/** A new instance joins G: seconds until the split settled, and until it had copied a record. */
async function joinGroup (g: LiveGroup, name: string, timeoutMs: number): Promise<RebalanceFigure[]> {
  const joining = await startInstance(name, g.file, TARGET_ALIAS)
  g.members.push(joining)
  const n = g.members.length
  const settledAfter = await untilSettled(g, joining.startedAt, timeoutMs, `${n} instances split ${PARTITIONS} partitions`)
  await waitFor(async () => (await recordsCopied(joining)) > 0, { timeoutMs, intervalMs: POLL_MS, message: `instance ${name} copies` })
  const copying = (Date.now() - joining.startedAt) / 1000
  g.ctx.log(`instances: instance ${n} settled after ${settledAfter.toFixed(1)} s, copying after ${copying.toFixed(1)} s`)
  return [
    { event: `instance ${n} joins ${n - 1}: its start → its HTTP endpoint up (process start-up, before it joins)`, seconds: (joining.listeningAt - joining.startedAt) / 1000 },
    { event: `instance ${n} joins ${n - 1}: its start → assignment settled (${PARTITIONS / n} partitions each)`, seconds: settledAfter },
    { event: `instance ${n} joins ${n - 1}: its start → its first record acknowledged`, seconds: copying }
  ]
}

/**
 * One member of G leaves by SIGNAL: seconds from the signal until the others split every partition again and
 * every partition it had holds a record written after it exited.
 */
async function leave (g: LiveGroup, signal: 'SIGTERM' | 'SIGKILL', timeoutMs: number): Promise<number> {
  const leaving = g.members.pop()!
  const view = await instanceView(leaving)
  const mine = (view?.partitions ?? []).map(p => Number(p.slice(p.lastIndexOf('-') + 1)))
  const start = Date.now()
  await stopInstance(leaving, signal)
  const before = await g.watch.partitionEnds(g.remote)
  await untilSettled(g, start, timeoutMs, `${g.members.length} instances split ${PARTITIONS} partitions after ${signal}`)
  await waitFor(async () => {
    const ends = await g.watch.partitionEnds(g.remote)
    const waiting = mine.filter(p => (ends[p] ?? 0n) <= (before[p] ?? 0n))
    return { done: waiting.length === 0, state: `partitions ${waiting.join(', ')} not copied again yet` }
  }, { timeoutMs, intervalMs: POLL_MS, message: `the partitions of the instance stopped by ${signal} copied again` })
  return (Date.now() - start) / 1000
}

/** Part two: joins and departures on a topic with live traffic; every figure in seconds. */
async function rebalances (ctx: BenchContext, s: Settings): Promise<RebalanceFigure[]> {
  const topic = uniqueName('instances-live')
  ctx.created('source', [topic])
  await createTopic(ctx.source, topic, { partitions: PARTITIONS })
  const remote = `KRr${RUN}.${topic}`
  ctx.created('target', [remote])
  const g: LiveGroup = { ctx, watch: new TargetWatch(ctx.target.bootstrap), remote, file: flowFile(ctx, `KRr${RUN}`, topic, s), members: [] }
  const traffic = liveTraffic(ctx, topic)
  const timeoutMs = Math.max(60_000, 4 * s.sessionTimeoutMs)
  try {
    const first = await startInstance('KR-1', g.file, TARGET_ALIAS)
    g.members.push(first)
    const alone = await untilSettled(g, first.startedAt, timeoutMs, `one instance owns ${PARTITIONS} partitions`)
    const figures: RebalanceFigure[] = [{ event: 'instance 1 alone: its start → assignment settled (all partitions)', seconds: alone }]
    figures.push(...await joinGroup(g, 'KR-2', timeoutMs))
    if (s.grow === 3) {
      figures.push(...await joinGroup(g, 'KR-3', timeoutMs))
      const term = await leave(g, 'SIGTERM', timeoutMs)
      ctx.log(`instances: SIGTERM of one of three handed over in ${term.toFixed(1)} s`)
      figures.push({ event: 'SIGTERM of one of three → its partitions copied again by the other two', seconds: term })
    }
    const kill = await leave(g, 'SIGKILL', timeoutMs)
    ctx.log(`instances: kill -9 of one of two taken over in ${kill.toFixed(1)} s`)
    figures.push({ event: `kill -9 of one of two → its partitions copied again by the other (session.timeout.ms = ${s.sessionTimeoutMs})`, seconds: kill })
    return figures
  } finally {
    await traffic.stop()
    await Promise.all(g.members.map(async i => await stopInstance(i)))
    await g.watch.close()
  }
}

export const instances: Scenario = {
  name: 'instances',
  async run (ctx, size) {
    const s = settingsFor(size)
    const runs: ScaleRun[] = []
    for (const n of s.counts) {
      ctx.log(`instances: ${n} kmirror instance(s): settling, then copying ${s.records.toLocaleString()} records as they are written`)
      runs.push(await copyWith(ctx, n, s))
      ctx.log(`instances: ${n} instance(s): all on the target after ${runs.at(-1)!.seconds.toFixed(1)} s`)
    }
    const figures = await rebalances(ctx, s)
    return {
      name: 'instances',
      workload: `${s.records.toLocaleString()} records of 1 KiB JSON, ${PARTITIONS} partitions, lz4, written to a fresh topic once ${s.counts.join(', then ')} kmirror process(es) started together on one mm2.properties had split its partitions (one group; each run its own topic and source alias, so its own remote topic and group), and copied as they arrive; then joins and departures on a ${PARTITIONS}-partition topic with live traffic (${PARTITIONS} records of 512 bytes every ~0.2 s). \`session.timeout.ms = ${s.sessionTimeoutMs}\`, \`heartbeat.interval.ms = ${s.heartbeatMs}\`. kmirror only: MM2's multi-node mode needs a Connect worker per node.`,
      runs: [],
      tables: instancesTables(runs, figures),
      notes: [
        'Every instance, both brokers and this harness share the same two cores: more instances add parallel work but no CPU, so records/s cannot grow with the instance count here (bench/RESULTS.md, "Scaling").',
        'Per-instance records are each process\'s own `kmirror_records_copied_total` (its /metrics); their sum equals the record count when no record was copied twice.'
      ]
    }
  }
}
