/**
 * Actors of the disaster and failback drills: a producer that keeps writing numbered values, and a real
 * consumer that joins a group, records every value it processed and commits after each record (as an
 * application with manual commits does). Both survive their cluster being killed: they just stop.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { Consumer, MessagesStreamModes, ProduceAcks, Producer } from '@platformatic/kafka'
import { readLastCheckpoints, type StoredCheckpoint } from '../../src/failover/checkpoint-reader.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { RecordFetcher } from '../../src/kafka/record-fetcher.ts'
import { ensureClusters, getCluster, isClusterRunning, resolveCluster, restartCluster, type ClusterRef } from './clusters.ts'
import { clientOptions, type Cleanup } from './kafka-clients.ts'
import { createTopic, deleteTopics, listTopics } from './kafka.ts'
import { isAliasTopic, uniqueAlias } from './multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from './process.ts'
import { readCommitted } from './replication.ts'
import { uniqueName } from './wait.ts'

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

/** WORK's result, or undefined when it fails or takes longer than MS (a client of a killed cluster may do either). */
async function within<T> (work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([work.catch(() => undefined), new Promise<undefined>(resolve => { timer = setTimeout(() => resolve(undefined), ms) })])
  } finally { clearTimeout(timer) }
}

/** Writes `<prefix>-<n>` values round-robin over the partitions, a small batch at a time, until stopped or failing. */
export class DrillProducer {
  readonly acknowledged: string[] = []
  #stopped = false
  #done: Promise<void> | undefined
  readonly #producer: Producer<Buffer, Buffer, Buffer, Buffer>
  readonly topic: string
  readonly partitions: number
  readonly prefix: string
  readonly pauseMs: number

  constructor (cluster: ClusterRef, topic: string, partitions: number, prefix: string, pauseMs = 20) {
    this.topic = topic
    this.partitions = partitions
    this.prefix = prefix
    this.pauseMs = pauseMs
    this.#producer = new Producer({ ...clientOptions(cluster, 'drill-producer'), acks: ProduceAcks.ALL, idempotent: true, retries: 1 })
  }

  start (): void {
    this.#done = (async () => {
      let n = this.acknowledged.length
      while (!this.#stopped) {
        const values = Array.from({ length: 10 }, () => `${this.prefix}-${n++}`)
        try {
          await this.#producer.send({ messages: values.map((v, i) => ({ topic: this.topic, partition: (n - values.length + i) % this.partitions, value: Buffer.from(v) })) })
          this.acknowledged.push(...values)
        } catch {
          return // the cluster is gone
        }
        await sleep(this.pauseMs) // pacing of the workload, not a wait for a condition
      }
    })()
  }

  async stop (): Promise<void> {
    this.#stopped = true
    await within(this.#done ?? Promise.resolve(), 15_000)
    await within(this.#producer.close(true), 5000)
  }
}

export interface Processed {
  readonly value: string
  readonly partition: number
  readonly offset: number
}

interface ConsumerSpec {
  readonly bootstrap: string
  readonly group: string
  readonly topic: string
}

/**
 * A group member processing `topic` in a child process (so that it can really die): records what it
 * processed, commits offset+1 after each record, and remembers the last successful commit per partition.
 * The child reports each record before committing it, on a pipe (synchronous on Linux), so nothing it
 * processed goes unreported even when it is SIGKILLed.
 */
export class DrillConsumer {
  readonly processed: Processed[] = []
  readonly committed = new Map<number, number>()
  readonly cluster: ClusterRef
  readonly group: string
  readonly topic: string
  #child: ChildProcess | undefined
  #exited: Promise<void> | undefined

  constructor (cluster: ClusterRef, group: string, topic: string) {
    this.cluster = cluster
    this.group = group
    this.topic = topic
  }

  async start (): Promise<void> {
    const spec: ConsumerSpec = { bootstrap: resolveCluster(this.cluster).bootstrap, group: this.group, topic: this.topic }
    const child = spawn(process.execPath, [import.meta.filename], { env: { ...process.env, KMIRROR_DRILL_CONSUMER: JSON.stringify(spec) }, stdio: ['ignore', 'pipe', 'inherit'] })
    this.#child = child
    this.#exited = new Promise(resolve => child.once('close', () => resolve()))
    createInterface({ input: child.stdout }).on('line', line => {
      const m = JSON.parse(line) as { v?: string, c?: number, p: number, o: number }
      if (m.v !== undefined) this.processed.push({ value: m.v, partition: m.p, offset: m.o })
      else this.committed.set(m.p, m.o)
    })
  }

  /** Stops it gracefully: it leaves the group (when its cluster answers) and exits. */
  async stop (): Promise<void> {
    if (this.#child === undefined || this.#child.exitCode !== null || this.#child.signalCode !== null) return await this.#exited
    this.#child.kill('SIGTERM')
    if (await within(this.#exited!.then(() => true), 20_000) !== true) await this.kill()
  }

  /** SIGKILL: the application dies without leaving the group; resolves once everything it reported is read. */
  async kill (): Promise<void> {
    this.#child?.kill('SIGKILL')
    await this.#exited
  }

  values (): string[] {
    return this.processed.map(p => p.value)
  }
}

/** The child process of DrillConsumer. */
async function runConsumerChild (spec: ConsumerSpec): Promise<void> {
  const consumer = new Consumer({
    clientId: uniqueName('drill-consumer'), bootstrapBrokers: [spec.bootstrap], groupId: spec.group, autocommit: false,
    sessionTimeout: 10_000, heartbeatInterval: 500, rebalanceTimeout: 10_000, maxWaitTime: 200, retries: 5, retryDelay: 200
  })
  let stopping = false
  process.once('SIGTERM', () => {
    stopping = true
    void within(consumer.close(true), 15_000).then(() => process.exit(0))
  })
  const stream = await consumer.consume({ topics: [spec.topic], mode: MessagesStreamModes.COMMITTED, fallbackMode: 'earliest', autocommit: false, isolationLevel: 1 })
  try {
    for await (const message of stream) {
      if (stopping) break
      const offset = Number(message.offset)
      process.stdout.write(`${JSON.stringify({ v: message.value.toString(), p: message.partition, o: offset })}\n`)
      await message.commit()
      process.stdout.write(`${JSON.stringify({ c: 1, p: message.partition, o: offset + 1 })}\n`)
    }
  } catch {
    // its cluster went away: an application would stop here too
  }
  await within(consumer.close(true), 15_000)
  process.exit(0)
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs one kmirror command to its end (60 s at most). */
export async function runKmirror (args: readonly string[], t: Cleanup): Promise<CliResult> {
  const cli = spawnKmirror(args, { t })
  const { code } = await cli.waitForExit(60_000)
  return { code, stdout: cli.stdout, stderr: cli.stderr }
}

export interface JsonMove { topic: string, partition: number, current: number | null, next: number, reRead: number, skip: number, exact: boolean, reason?: string }
export interface JsonGroup { group: string, cluster: string, state: string, members: number, moves: JsonMove[], unchanged: number, refusals: string[], notes: string[], problem?: string, written: boolean }
export interface JsonPlan { command: string, basis: string, notes: string[], groups: JsonGroup[] }

/** Runs a failover/failback/offsets-set command with --json and parses its plan. */
export async function runPlan (args: readonly string[], t: Cleanup): Promise<CliResult & { plan: JsonPlan }> {
  const result = await runKmirror([...args, '--json'], t)
  let plan: JsonPlan
  try {
    plan = JSON.parse(result.stdout) as JsonPlan
  } catch (err) {
    throw new Error(`kmirror ${args.join(' ')} exited ${result.code} without a JSON plan\n${result.stdout}\n${result.stderr}`, { cause: err })
  }
  return { ...result, plan }
}

/** The group's committed offsets on a cluster, `topic-partition` → offset. */
export async function committedOffsets (cluster: ClusterRef, group: string): Promise<Map<string, number>> {
  const admin = new AdminClient({ 'bootstrap.servers': resolveCluster(cluster).bootstrap }, 'drill-admin', { label: 'test' })
  try {
    return new Map((await admin.groups.listCommittedOffsets(group)).map(c => [`${c.topic}-${c.partition}`, c.offset]))
  } finally { await admin.close() }
}

export interface Drill {
  readonly a: string
  readonly b: string
  readonly topic: string
  readonly remote: string
  readonly group: string
  readonly partitions: number
  readonly file: string
  kmirror: KmirrorProcess
  /** Starts kmirror again if it stopped (it keeps retrying while the source is down, and may have given up). */
  ensureKmirror: () => void
}

/**
 * A flow from `third` (A, the cluster the drill kills) to `target` (B) under unique aliases, copying one
 * 3-partition topic with checkpoints every second. Cleanup brings `third` back if the drill left it down,
 * stops kmirror and deletes every topic the drill made on both clusters.
 */
export async function setUpDrill (t: Cleanup, name: string): Promise<Drill> {
  await ensureClusters(['third'])
  const a = uniqueAlias('a')
  const b = uniqueAlias('b')
  const topic = uniqueName(name)
  const group = uniqueName(`${name}-group`)
  const partitions = 3
  const file = writeTempFile(mm2Properties({
    source: 'third', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `${a}->${b}.groups = ${group}`, 'emit.checkpoints.interval.seconds = 1', `${b}.offset.flush.interval.ms = 300`, 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const drill: Drill = {
    a, b, topic, remote: `${a}.${topic}`, group, partitions, file,
    kmirror: spawnKmirror(['run', file], { t }),
    ensureKmirror: () => {
      if (drill.kmirror.exitStatus !== null) drill.kmirror = spawnKmirror(['run', file], { t })
    }
  }
  t.after(async () => {
    if (!isClusterRunning('third')) await restartCluster('third')
    drill.kmirror.kill('SIGTERM')
    await drill.kmirror.waitForExit(15_000).catch(() => drill.kmirror.kill('SIGKILL'))
    await deleteTopics('third', [topic])
    for (const cluster of ['third', 'target'] as const) await deleteTopics(cluster, (await listTopics(cluster)).filter(tp => isAliasTopic(tp, [a, b])))
  })
  await createTopic('third', topic, { partitions })
  return drill
}

/** Every value on the cluster's topic, per partition in order. */
export async function topicValues (cluster: ClusterRef, topic: string, partitions: number): Promise<string[]> {
  const out: string[] = []
  for (let p = 0; p < partitions; p++) out.push(...(await readCommitted(cluster, topic, p)).map(r => r.value?.toString() ?? ''))
  return out
}

/** The newest checkpoint of GROUP per partition (remote topic) on B. */
export async function lastCheckpoints (drill: Drill): Promise<Map<number, StoredCheckpoint>> {
  const props = { 'bootstrap.servers': getCluster('target').bootstrap }
  const admin = new AdminClient(props, 'drill-checkpoints-admin', { label: 'target' })
  const reader = new RecordFetcher(props, 'drill-checkpoints-reader', { isolation: 'read_committed', maxWaitMs: 100, maxBytes: 10_000_000, maxPartitionBytes: 1_000_000 })
  try {
    const all = await readLastCheckpoints(`${drill.a}.checkpoints.internal`, admin, reader)
    return new Map([...(all.get(drill.group)?.values() ?? [])].map(c => [c.partition, c]))
  } finally { await Promise.all([admin.close(), reader.close()]) }
}

/** Values processed by both. */
export function processedTwice (first: readonly string[], second: readonly string[]): string[] {
  const seen = new Set(first)
  return second.filter(v => seen.has(v))
}

const childSpec = process.env.KMIRROR_DRILL_CONSUMER
if (childSpec !== undefined && process.argv[1] === import.meta.filename) await runConsumerChild(JSON.parse(childSpec) as ConsumerSpec)

export interface DrillTraffic {
  readonly drill: Drill
  readonly producer: DrillProducer
  readonly onA: DrillConsumer
}

/** The common "given" of the drills: a drill set up, a producer writing to A and a consumer group on A processing. */
export async function startDrillTraffic (t: Cleanup, name: string): Promise<DrillTraffic> {
  const drill = await setUpDrill(t, name)
  const producer = new DrillProducer('third', drill.topic, drill.partitions, 'v')
  t.after(() => producer.stop())
  producer.start()
  const onA = new DrillConsumer('third', drill.group, drill.topic)
  t.after(() => onA.stop())
  await onA.start()
  return { drill, producer, onA }
}
