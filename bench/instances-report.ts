/**
 * The tables of the `instances` scenario: one column per instance count (figures of the whole run, then of each
 * process, listed in start order), and one row per rebalance event.
 */
import type { TreeUsage } from './lib/process-tree.ts'

export interface InstanceFigures extends TreeUsage {
  /** Partitions it owned when the target held everything (the group settled before any record was written). */
  partitions: number
  /** Its own `kmirror_records_copied_total`. */
  records: number
}

export interface ScaleRun {
  instances: number
  records: number
  /** Processes started until their group had split every partition evenly (nothing to copy yet). */
  settleSeconds: number
  /** The harness writing every record to the source, from the settled group on (copied while it is written). */
  writeSeconds: number
  /** From the settled group until the target held every record. */
  seconds: number
  firstRecordSeconds: number
  each: InstanceFigures[]
  /** What the remote topic holds once every instance stopped (counted on the target, not by kmirror). */
  onTarget: TargetCount
}

export interface TargetCount {
  records: number
  /** Summed over partitions: records beyond the source's count. */
  twice: number
  /** Summed over partitions: records short of the source's count. */
  missing: number
  partitionsWithDuplicates: number
}

export interface RebalanceFigure {
  event: string
  seconds: number
}

const n0 = (v: number): string => Math.round(v).toLocaleString('en-US')
const n1 = (v: number): string => v.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })
const each = (run: ScaleRun, f: (i: InstanceFigures) => string): string => run.each.map(f).join(' / ')

const ROWS: readonly [string, (run: ScaleRun) => string][] = [
  ['group settled (s, processes started → even split)', r => n1(r.settleSeconds)],
  ['source written by the harness (s, from the settled group on)', r => n1(r.writeSeconds)],
  ['seconds (settled → all on target)', r => n1(r.seconds)],
  ['first record on target (s, from settled)', r => n1(r.firstRecordSeconds)],
  ['records/s, all instances (settled → all on target)', r => n0(r.records / r.seconds)],
  ['partitions per instance', r => each(r, i => String(i.partitions))],
  ['records copied per instance', r => each(r, i => n0(i.records))],
  ['records copied twice, kmirror\'s counters (sum − records)', r => n0(r.each.reduce((n, i) => n + i.records, 0) - r.records)],
  ['records on the target (its offsets, after the instances stopped)', r => n0(r.onTarget.records)],
  ['records copied twice, on the target (partitions holding more than the source)', r => `${n0(r.onTarget.twice)} (${r.onTarget.partitionsWithDuplicates} partitions)`],
  ['records missing on the target', r => n0(r.onTarget.missing)],
  ['records/s per instance (its records / run seconds)', r => each(r, i => n0(i.records / r.seconds))],
  ['CPU seconds per instance', r => each(r, i => n1(i.cpuSeconds))],
  ['CPU seconds, all instances', r => n1(r.each.reduce((n, i) => n + i.cpuSeconds, 0))],
  ['peak RSS per instance (MiB)', r => each(r, i => n0(i.peakRssMiB))],
  ['peak RSS, all instances (MiB)', r => n0(r.each.reduce((n, i) => n + i.peakRssMiB, 0))]
]

export function instancesTables (runs: readonly ScaleRun[], rebalances: readonly RebalanceFigure[]): string[] {
  const scale = [
    `| figure | ${runs.map(r => `${r.instances} instance${r.instances === 1 ? '' : 's'}`).join(' | ')} |`,
    `|---|${runs.map(() => '---:').join('|')}|`,
    ...ROWS.map(([name, value]) => `| ${name} | ${runs.map(value).join(' | ')} |`)
  ]
  const events = [
    '| rebalance (live traffic) | seconds |',
    '|---|---:|',
    ...rebalances.map(r => `| ${r.event} | ${n1(r.seconds)} |`)
  ]
  return [scale.join('\n'), events.join('\n')]
}
