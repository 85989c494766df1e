/**
 * Markdown for bench/RESULTS.md: a header naming the machine, date, Kafka version and command, then one
 * table per scenario with a row per figure and a column per tool, plus kmirror/MM2 and kmirror/limit.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { REPO_ROOT } from '../../test/helpers/clusters.ts'
import type { Figures } from './measure.ts'

export interface ScenarioResult {
  name: string
  /** One line: the workload. */
  workload: string
  runs: Figures[]
  notes: string[]
  /** Markdown tables of their own, in place of the tool-by-tool table (`instances`: one column per instance count). */
  tables?: readonly string[]
}

const MIB = 1024 * 1024
const GB = 1e9

interface Row {
  name: string
  value (f: Figures): number | undefined
  digits: number
}

const ROWS: readonly Row[] = [
  { name: 'records/s (start → all on target)', value: f => f.recordsPerSecond, digits: 0 },
  { name: 'MB/s (start → all on target)', value: f => (f.recordsPerSecond * f.bytes) / f.records / MIB, digits: 1 },
  { name: 'records/s (first record → all)', value: f => f.steadyRecordsPerSecond, digits: 0 },
  { name: 'seconds (start → all on target)', value: f => f.seconds, digits: 1 },
  { name: 'first record on target (s)', value: f => f.firstRecordSeconds, digits: 1 },
  { name: 'CPU seconds (user + system)', value: f => f.cpuSeconds, digits: 1 },
  { name: 'CPU seconds per GB', value: f => f.cpuSeconds / (f.bytes / GB), digits: 1 },
  { name: 'peak RSS (MiB)', value: f => f.peakRssMiB, digits: 0 },
  { name: 'latency p50 (ms)', value: f => f.latency?.p50Ms, digits: 0 },
  { name: 'latency p99 (ms)', value: f => f.latency?.p99Ms, digits: 0 },
  { name: 'latency max (ms)', value: f => f.latency?.maxMs, digits: 0 }
]

function format (value: number | undefined, digits: number): string {
  if (value === undefined || !Number.isFinite(value)) return '—'
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

function ratio (a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '—'
  return `${(a / b).toFixed(2)}×`
}

export function scenarioTable (result: ScenarioResult): string {
  const by = (label: Figures['label']): Figures | undefined => result.runs.find(r => r.label === label)
  const mm2 = by('MM2')
  const kmirror = by('kmirror')
  const limit = by('limit')
  const lines = [
    `### ${result.name}`,
    '',
    result.workload,
    ''
  ]
  if (result.tables !== undefined) {
    lines.push(...result.tables.flatMap(table => [table, '']))
    if (result.notes.length > 0) lines.push(...result.notes.map(n => `- ${n}`))
    return `${lines.join('\n').trimEnd()}\n`
  }
  lines.push(
    '| figure | MM2 | kmirror | limit | kmirror/MM2 | kmirror/limit |',
    '|---|---:|---:|---:|---:|---:|'
  )
  for (const row of ROWS) {
    const [m, k, l] = [mm2, kmirror, limit].map(f => (f ? row.value(f) : undefined))
    if ([m, k, l].every(v => v === undefined)) continue
    lines.push(`| ${row.name} | ${format(m, row.digits)} | ${format(k, row.digits)} | ${format(l, row.digits)} | ${ratio(k, m)} | ${ratio(k, l)} |`)
  }
  if (result.notes.length > 0) lines.push('', ...result.notes.map(n => `- ${n}`))
  return `${lines.join('\n')}\n`
}

export function kafkaVersion (): string {
  try {
    const jar = readdirSync(join(REPO_ROOT, 'kafka', 'lib')).find(f => /^kafka-clients-.*\.jar$/.test(f))
    return jar?.replace(/^kafka-clients-|\.jar$/g, '') ?? 'unknown'
  } catch {
    return 'unknown'
  }
}

/**
 * The kmirror code measured: the commit, and the files under src/ that differ from it. kmirror is started
 * from the working tree for every run, so an edit made during a run shows in the later scenarios.
 */
export function kmirrorRevision (): string {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' })
    const commit = git('rev-parse', '--short', 'HEAD').trim()
    const dirty = git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).map(l => l.slice(3))
    return dirty.length === 0 ? `commit ${commit}` : `commit ${commit} plus uncommitted changes in ${dirty.join(', ')}`
  } catch {
    return 'unknown revision (no git)'
  }
}

export function runHeader (command: string, date: Date, totalSeconds: number, revision: string): string {
  const cpu = cpus()
  return [
    `## ${date.toISOString().replace(/\.\d+Z$/, 'Z')}`,
    '',
    `- command: \`${command}\` (${totalSeconds.toFixed(0)} s in all)`,
    `- machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB memory, Linux`,
    `- kmirror: ${revision} (at the start of the run)`,
    `- Kafka ${kafkaVersion()} (Maven Central jars, one single-node KRaft cluster each for source and target), Node ${process.version}`,
    ''
  ].join('\n')
}
