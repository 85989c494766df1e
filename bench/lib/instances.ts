/**
 * kmirror instances for the `instances` scenario: `kmirror run` processes on one mm2.properties, each with its
 * HTTP endpoint on a free port, read through their own `/metrics` (records copied) and `/status` (partitions
 * owned, the group's members), and measured per process (CPU, memory).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnKmirror, type KmirrorProcess } from '../../test/helpers/process.ts'
import { ProcessTreeSampler, type TreeUsage } from './process-tree.ts'
import { benchLogsDir } from './replicators.ts'

export interface BenchInstance {
  readonly name: string
  readonly process: KmirrorProcess
  /** Epoch ms the process was spawned. */
  readonly startedAt: number
  readonly sampler: ProcessTreeSampler
  /** The HTTP endpoint's port (known once the process logged it). */
  port: number
  /** Epoch ms the process had logged its HTTP endpoint: its start-up before joining a group. */
  listeningAt: number
}

export interface InstanceView {
  /** `topic-partition` of every partition this instance copies now. */
  readonly partitions: readonly string[]
  /** Members of the flow's group as this instance last heard it (0 when it is in no group yet). */
  readonly members: number
  readonly generation: number
}

/** Every instance started and not yet stopped: killed when the harness exits, whatever made it exit. */
const running = new Set<KmirrorProcess>()
process.on('exit', () => { for (const p of running) p.kill('SIGKILL') })

/** Spawns `kmirror run FILE --clusters TARGET` with its HTTP endpoint on a free port (resolves once it listens). */
export async function startInstance (name: string, file: string, target: string): Promise<BenchInstance> {
  const startedAt = Date.now()
  const child = spawnKmirror(['run', file, '--clusters', target, '--http-port', '0', '--http-host', '127.0.0.1'])
  running.add(child)
  const sampler = new ProcessTreeSampler()
  sampler.watch(child.pid)
  const instance: BenchInstance = { name, process: child, startedAt, sampler, port: 0, listeningAt: 0 }
  try {
    // Two minutes: on a machine loaded far beyond its two cores a start-up took more than one.
    instance.port = Number((await child.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 120_000))[1])
  } catch (error) {
    await stopInstance(instance, 'SIGKILL')
    throw error
  }
  instance.listeningAt = Date.now()
  return instance
}

/** Starts N instances at once; if one fails to start, stops the others and rethrows. */
export async function startInstances (names: readonly string[], file: string, target: string): Promise<BenchInstance[]> {
  const started = await Promise.allSettled(names.map(async name => await startInstance(name, file, target)))
  const failed = started.find(s => s.status === 'rejected')
  const instances = started.flatMap(s => (s.status === 'fulfilled' ? [s.value] : []))
  if (failed === undefined) return instances
  await Promise.all(instances.map(async i => await stopInstance(i, 'SIGKILL')))
  throw failed.reason
}

async function get (instance: BenchInstance, path: string): Promise<string | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${instance.port}${path}`, { signal: AbortSignal.timeout(5000) })
    return response.ok ? await response.text() : null
  } catch {
    return null
  }
}

/** The sum of `kmirror_records_copied_total` over every label set: records this instance wrote and had acknowledged. */
export async function recordsCopied (instance: BenchInstance): Promise<number> {
  const text = await get(instance, '/metrics')
  if (text === null) return 0
  let total = 0
  for (const line of text.split('\n')) {
    const match = /^kmirror_records_copied_total(?:\{[^}]*\})? ([\d.e+]+)$/.exec(line)
    if (match !== null) total += Number(match[1])
  }
  return total
}

interface StatusBody {
  flows: { partitions: { topic: string, partition: number }[], membership?: { generation: number, members: unknown[] } }[]
}

/** What this instance's `/status` says of its one flow; null when it does not answer. */
export async function instanceView (instance: BenchInstance): Promise<InstanceView | null> {
  const text = await get(instance, '/status')
  if (text === null) return null
  const flow = (JSON.parse(text) as StatusBody).flows[0]
  if (flow === undefined) return null
  return {
    partitions: flow.partitions.map(p => `${p.topic}-${p.partition}`),
    members: flow.membership?.members.length ?? 0,
    generation: flow.membership?.generation ?? -1
  }
}

/**
 * True when INSTANCES agree on one generation of exactly their number of members and own TOTAL partitions between
 * them, each one and none twice, split evenly (counts differ by at most one).
 */
export function settled (views: readonly (InstanceView | null)[], total: number): boolean {
  if (views.some(v => v === null)) return false
  const all = views as InstanceView[]
  const owned = all.flatMap(v => v.partitions)
  const counts = all.map(v => v.partitions.length)
  return all.every(v => v.members === all.length && v.generation === all[0]!.generation) &&
    owned.length === total && new Set(owned).size === total && Math.max(...counts) - Math.min(...counts) <= 1
}

/** Stops INSTANCE (SIGTERM, then SIGKILL after 15 s); keeps its log in KMIRROR_BENCH_LOGS if set. Returns its usage. */
export async function stopInstance (instance: BenchInstance, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<TreeUsage> {
  const usage = instance.sampler.stop()
  running.delete(instance.process)
  instance.process.kill(signal)
  try {
    await instance.process.waitForExit(15_000)
  } catch {
    instance.process.kill('SIGKILL')
    await instance.process.waitForExit(5_000)
  }
  const logs = benchLogsDir()
  if (logs !== undefined) writeFileSync(join(logs, `kmirror-${instance.name}-${instance.process.pid}.log`), instance.process.stderr)
  return usage
}
