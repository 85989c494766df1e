/**
 * Kafka's own ProducerPerformance and ConsumerPerformance (4.1 flags), run through
 * `scripts/kafka-local.sh tool`, which execs the JVM: the spawned pid is the JVM's.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { REPO_ROOT } from '../../test/helpers/clusters.ts'

const KAFKA_LOCAL = join(REPO_ROOT, 'scripts', 'kafka-local.sh')

export interface ToolRun {
  pid: number
  /** Resolves with stdout once the tool exited 0; rejects with its output otherwise. */
  done: Promise<string>
}

/** Starts `kafka-local.sh tool ARGS` in the background. */
export function startTool (args: readonly string[]): ToolRun {
  const child = spawn('bash', [KAFKA_LOCAL, 'tool', ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const done = new Promise<string>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', code => {
      if (code === 0) resolve(stdout)
      else reject(new Error(`kafka-local.sh tool ${args.join(' ')} exited ${code}\n${stdout.slice(-3000)}\n${stderr.slice(-3000)}`))
    })
  })
  return { pid: child.pid ?? -1, done }
}

export interface ProducerPerfOptions {
  bootstrap: string
  topic: string
  records: number
  /** One payload per line (`--payload-file`), or a fixed size of random letters (`--record-size`). */
  payload: { file: string } | { size: number }
  /** Records per second; -1 for as fast as it can. */
  throughput: number
  /** Producer settings (`--producer-props`), besides bootstrap.servers. */
  props: Record<string, string>
}

export function producerPerfArgs (o: ProducerPerfOptions): string[] {
  const payload = 'file' in o.payload ? ['--payload-file', o.payload.file] : ['--record-size', String(o.payload.size)]
  const props = Object.entries({ 'bootstrap.servers': o.bootstrap, ...o.props }).map(([k, v]) => `${k}=${v}`)
  return ['producer-perf', '--topic', o.topic, '--num-records', String(o.records), ...payload,
    '--throughput', String(o.throughput), '--producer-props', ...props]
}

export interface ProducerPerfResult {
  records: number
  recordsPerSecond: number
  mbPerSecond: number
  avgLatencyMs: number
  maxLatencyMs: number
}

/**
 * The final line: "N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, ..."
 * (progress lines every 5 s have the same start but no percentiles).
 */
export function parseProducerPerf (stdout: string): ProducerPerfResult {
  const re = /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, \d+ ms 50th/m
  const match = stdout.match(re)
  if (!match) throw new Error(`no ProducerPerformance summary line in:\n${stdout.slice(-2000)}`)
  return {
    records: Number(match[1]),
    recordsPerSecond: Number(match[2]),
    mbPerSecond: Number(match[3]),
    avgLatencyMs: Number(match[4]),
    maxLatencyMs: Number(match[5])
  }
}

export interface ConsumerPerfOptions {
  bootstrap: string
  topic: string
  records: number
  group: string
}

export function consumerPerfArgs (o: ConsumerPerfOptions): string[] {
  return ['consumer-perf', '--bootstrap-server', o.bootstrap, '--topic', o.topic, '--messages', String(o.records),
    '--group', o.group, '--timeout', '60000']
}

export interface ConsumerPerfResult {
  mb: number
  mbPerSecond: number
  records: number
  recordsPerSecond: number
  rebalanceMs: number
  fetchMs: number
}

/**
 * The line after the header "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg,
 * nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec".
 */
export function parseConsumerPerf (stdout: string): ConsumerPerfResult {
  const lines = stdout.split('\n').map(l => l.trim()).filter(Boolean)
  const header = lines.findIndex(l => l.startsWith('start.time,'))
  const fields = header >= 0 ? (lines[header + 1] ?? '').split(',').map(f => f.trim()) : []
  if (fields.length < 10) throw new Error(`no ConsumerPerformance result line in:\n${stdout.slice(-2000)}`)
  const n = (i: number): number => Number(fields[i])
  return { mb: n(2), mbPerSecond: n(3), records: n(4), recordsPerSecond: n(5), rebalanceMs: n(6), fetchMs: n(7) }
}
