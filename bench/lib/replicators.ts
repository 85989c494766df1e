/**
 * The two replicators under test, started from the same mm2.properties: the real Apache MirrorMaker 2
 * (dedicated mode, through `kafka-local.sh mm2`) and kmirror (`node src/cli/main.ts run`).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { REPO_ROOT, runKafkaLocal } from '../../test/helpers/clusters.ts'
import { mm2ExactlyOnceLines } from '../../test/helpers/mm2.ts'
import { spawnKmirror } from '../../test/helpers/process.ts'

export const TOOLS = ['mm2', 'kmirror'] as const
export type Tool = (typeof TOOLS)[number]

/**
 * The source alias of each tool's run: remote topics `M.<topic>` and `K.<topic>` never collide, and with
 * target alias T no internal topic collides with those of the tests' A and B either.
 */
export const SOURCE_ALIAS: Readonly<Record<Tool, string>> = { mm2: 'M', kmirror: 'K' }
export const TARGET_ALIAS = 'T'

export interface FlowSettings {
  sourceBootstrap: string
  targetBootstrap: string
  tool: Tool
  /** Java regex of the source topics to copy. */
  topics: string
  tasksMax: number
  /** The source batches' codec: the target producer writes the same. */
  compression: 'lz4' | 'none'
  /** Exactly-once for both tools (MM2 in dedicated mode with its internal REST, as Kafka's docs/ops.html says). */
  exactlyOnce?: boolean
  /** The source alias, instead of the tool's (`instances`: one per run, so each run has its own remote topics and group). */
  sourceAlias?: string
  /** More lines (flow settings such as the group's session timeout). */
  extraLines?: readonly string[]
}

/** MM2's internal REST port in exactly-once runs (dedicated mode needs it for zombie fencing, KIP-710). */
const MM2_REST_PORT = 38083

/** Exactly-once for the flow into T (test/helpers/mm2.ts: MM2's switch, read_committed source, internal REST). */
export function exactlyOnceLines (source: string): string[] {
  return mm2ExactlyOnceLines({ sourceAlias: source, targetAlias: TARGET_ALIAS, restPort: MM2_REST_PORT })
}

/** The tuning lines, the same for both tools (kmirror ignores tasks.max and batch.size, and says so). */
export function tuningLines (tasksMax: number, compression: string): string[] {
  return [
    `tasks.max = ${tasksMax}`,
    `${TARGET_ALIAS}.producer.compression.type = ${compression}`,
    `${TARGET_ALIAS}.producer.batch.size = 262144`,
    `${TARGET_ALIAS}.producer.linger.ms = 10`,
    'refresh.topics.interval.seconds = 1',
    'sync.topic.acls.enabled = false',
    'emit.checkpoints.enabled = false',
    'emit.heartbeats.enabled = false',
    'heartbeats.replication.enabled = false'
  ]
}

export function flowProperties (s: FlowSettings): string {
  const source = s.sourceAlias ?? SOURCE_ALIAS[s.tool]
  const rf = ['replication.factor', 'offset-syncs.topic.replication.factor', 'checkpoints.topic.replication.factor',
    'heartbeats.topic.replication.factor', 'offset.storage.replication.factor', 'status.storage.replication.factor',
    'config.storage.replication.factor']
  return [
    `clusters = ${source}, ${TARGET_ALIAS}`,
    `${source}.bootstrap.servers = ${s.sourceBootstrap}`,
    `${TARGET_ALIAS}.bootstrap.servers = ${s.targetBootstrap}`,
    `${source}->${TARGET_ALIAS}.enabled = true`,
    `${source}->${TARGET_ALIAS}.topics = ${s.topics}`,
    ...rf.map(key => `${key} = 1`),
    ...tuningLines(s.tasksMax, s.compression),
    ...(s.exactlyOnce === true ? exactlyOnceLines(source) : []),
    ...(s.extraLines ?? []),
    ''
  ].join('\n')
}

export interface RunningReplicator {
  pid: number
  /** Rejects if the replicator fails to start or exits early. */
  failed: Promise<never>
  stop (): Promise<void>
  /** The end of its log, for error messages. */
  logTail (): string
}

function stateDir (): string {
  return process.env.KMIRROR_STATE ?? join(REPO_ROOT, '.state')
}

async function waitForPidFile (file: string, starting: Promise<unknown>): Promise<number> {
  let settled = false
  const watch = starting.finally(() => { settled = true })
  watch.catch(() => undefined) // awaited below only if it settles before the pid file appears
  for (let i = 0; i < 600; i++) {
    if (existsSync(file)) {
      const pid = Number(readFileSync(file, 'utf8').trim())
      if (pid > 0) return pid
    }
    if (settled) await watch // rethrows a failed start; a successful one has written the file
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  throw new Error(`no pid file ${file} after 12 s`)
}

/** Starts the real MM2 on FILE (dedicated mode, --clusters B); resolves as soon as its JVM pid is known. */
export async function startMm2 (name: string, file: string): Promise<RunningReplicator> {
  const pidFile = join(stateDir(), 'mm2', name, 'pid')
  rmSync(pidFile, { force: true })
  const starting = runKafkaLocal(['mm2', name, file, '--clusters', TARGET_ALIAS])
  const pid = await waitForPidFile(pidFile, starting)
  const log = join(stateDir(), 'logs', `mm2-${name}.log`)
  const failed = starting.then(() => new Promise<never>(() => undefined))
  failed.catch(() => undefined)
  return {
    pid,
    failed,
    stop: async () => { await runKafkaLocal(['mm2-down', name]) },
    logTail: () => (existsSync(log) ? readFileSync(log, 'utf8').slice(-4000) : '')
  }
}

/**
 * KMIRROR_BENCH_LOGS=DIR: where kmirror's logs and request traces are kept, made if missing (a run that only finds
 * out at its first stop would have spent minutes for nothing); undefined when unset. An absolute path: the trace is
 * written by a child with a working directory of its own.
 */
export function benchLogsDir (): string | undefined {
  const logs = process.env['KMIRROR_BENCH_LOGS']
  if (logs === undefined || logs === '') return undefined
  const dir = resolve(logs)
  mkdirSync(dir, { recursive: true })
  return dir
}

/** Starts kmirror on FILE (--clusters B) as users run it. */
export function startKmirror (file: string): RunningReplicator {
  // KMIRROR_BENCH_LOGS=DIR also traces every Kafka request of kmirror's start (bench/startup-hook.ts).
  const logs = benchLogsDir()
  const trace = logs === undefined ? {} : { NODE_OPTIONS: `--import ${join(REPO_ROOT, 'bench', 'startup-hook.ts')}`, KMIRROR_STARTUP_TRACE: join(logs, `kmirror-${Date.now()}.trace`) }
  // KMIRROR_BENCH_CPU_PROF=DIR: a V8 CPU profile of the measured kmirror run (where its CPU goes in a scenario).
  const profiles = process.env['KMIRROR_BENCH_CPU_PROF']
  const options = [trace.NODE_OPTIONS, profiles === undefined ? undefined : `--cpu-prof --cpu-prof-dir=${profiles}`].filter(o => o !== undefined)
  const kmirror = spawnKmirror(['run', file, '--clusters', TARGET_ALIAS], { env: { ...trace, ...(options.length > 0 ? { NODE_OPTIONS: options.join(' ') } : {}) } })
  let stopping = false
  const failed = new Promise<never>((_, reject) => {
    const check = setInterval(() => {
      if (kmirror.exitStatus === null) return
      clearInterval(check)
      if (!stopping) reject(new Error(`kmirror exited early: ${JSON.stringify(kmirror.exitStatus)}\n${kmirror.stderr.slice(-4000)}`))
    }, 200)
  })
  failed.catch(() => undefined)
  return {
    pid: kmirror.pid,
    failed,
    stop: async () => {
      stopping = true
      kmirror.kill('SIGTERM')
      try {
        await kmirror.waitForExit(15_000)
      } catch {
        kmirror.kill('SIGKILL')
        await kmirror.waitForExit(5_000)
      }
      // KMIRROR_BENCH_LOGS=DIR keeps each run's log (with KMIRROR_LOG_LEVEL=debug: where the time went).
      if (logs !== undefined) writeFileSync(join(logs, `kmirror-${kmirror.pid}.log`), kmirror.stderr)
    },
    logTail: () => kmirror.stderr.slice(-4000)
  }
}

export function writeFlowFile (dir: string, s: FlowSettings): string {
  const file = join(dir, `${s.sourceAlias ?? s.tool}.properties`)
  writeFileSync(file, flowProperties(s))
  return file
}
