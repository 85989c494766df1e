/**
 * The text `kmirror verify` prints: a verdict line, a table of partitions, then under each partition that is not
 * plainly equal its difference ranges with their offsets, what is not copied yet and its notes.
 */
import type { DifferenceRange, OffsetSpan } from '../verify/differences.ts'
import type { OffsetRange } from '../verify/pairing.ts'
import type { PartitionReport, VerifyReport } from '../verify/verify.ts'

function offsets (s: OffsetSpan): string {
  return s.first === s.last ? `offset ${s.first}` : `offsets ${s.first}-${s.last}`
}

function records (n: number): string {
  return `${n} record${n === 1 ? '' : 's'}`
}

export function describeDifference (d: DifferenceRange): string {
  const source = d.source === null ? '' : `source ${offsets(d.source)}`
  const target = d.target === null ? '' : `target ${offsets(d.target)}`
  switch (d.kind) {
    case 'missing':
      return `missing on the target: ${source} (${records(d.records)})${d.target === null ? '' : `, expected at ${target}`}`
    case 'extra':
      return `extra on the target: ${target} (${records(d.records)}), no source record pairs with them`
    case 'differing':
      return `differing: ${source} vs ${target} (${records(d.records)}; ${(d.fields ?? []).join(', ')} differ)`
    case 'duplicate':
      return `duplicate on the target: ${target} (${records(d.records)}), copies of ${source} copied again after a restart (at-least-once), not a difference`
    case 'compacted':
      return `compacted away on the ${d.side ?? 'target'}: ${d.side === 'source' ? target : source} (${records(d.records)}), not a difference`
  }
}

function statusOf (p: PartitionReport): string {
  if (p.status === 'equal') return p.counts.duplicate > 0 ? `equal, ${p.counts.duplicate} duplicate` : 'equal'
  if (p.status === 'not-copied') return 'nothing copied yet'
  const parts = (['missing', 'extra', 'differing', 'duplicate'] as const).filter(k => p.counts[k] > 0).map(k => `${p.counts[k]} ${k}`)
  return `DIFFERENT: ${parts.join(', ')}`
}

function detailLines (p: PartitionReport, span: (r: OffsetRange) => string): string[] {
  const out = p.differences.map(d => `    ${describeDifference(d)}`)
  if (p.omittedDifferences > 0) out.push(`    ... and ${records(p.omittedDifferences)} more in ranges not listed (the counts above are complete)`)
  if (p.notCopied !== null) out.push(`    not copied yet: source offsets ${span(p.notCopied)} (past the flow's stored position; not a difference)`)
  if (p.inFlight !== null) out.push(`    in flight: target offsets ${span(p.inFlight)} written past the stored position, not compared`)
  for (const note of p.notes) out.push(`    note: ${note}`)
  return out
}

export function renderVerifyReport (report: VerifyReport, span: (r: OffsetRange) => string): string {
  const different = report.partitions.filter(p => p.status === 'different').length
  const verdict = report.equal
    ? `EQUAL: every compared record of ${report.partitions.length} partition(s) is on ${report.to} as on ${report.from}`
    : `DIFFERENT: ${different} of ${report.partitions.length} partition(s) differ`
  const lines = [`verify ${report.from} -> ${report.to} (flow ${report.flow}): ${verdict}`]
  if (report.since !== null) lines.push(`since ${report.since}: records before it are not compared`)
  for (const note of report.notes) lines.push(`NOTE: ${note}`)
  if (report.partitions.length > 0) {
    const header = ['TOPIC', 'PARTITION', 'TARGET TOPIC', 'SOURCE OFFSETS', 'SOURCE RECORDS', 'TARGET RECORDS', 'STATUS']
    const rows = report.partitions.map(p => [p.topic, String(p.partition), p.remoteTopic, p.compared === null ? '-' : span(p.compared), String(p.sourceRecords), String(p.targetRecords), statusOf(p)])
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => r[i]!.length)))
    const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()
    lines.push('', line(header))
    for (const [i, p] of report.partitions.entries()) lines.push(line(rows[i]!), ...detailLines(p, span))
  }
  return `${lines.join('\n')}\n`
}
