/**
 * `kmirror status <file>`: per flow and partition, the last replicated source offset, its target offset, the
 * source log end and the lag in records and seconds. Reads only. Exit 0; 2 bad configuration; 3 when no flow
 * could be read at all; 4 on an internal error (a bug), as every command.
 */
import { ExitCodes } from '../errors.ts'
import type { MembershipStatus } from '../runtime/flow-status.ts'
import { readFlowStatus, type FlowReplicationStatus, type MembershipReader, type StatusReaders } from '../runtime/status.ts'
import { writeJson } from '../redactor.ts'
import { renderTransactions } from '../runtime/transaction-status.ts'
import { loadInput, loadSelectedFlows } from './config-input.ts'
import { reportCommandFailure } from './unexpected-errors.ts'

export interface StatusOptions {
  readonly clusters: string[] | undefined
  readonly json: boolean
}

export async function statusCommand (file: string, options: StatusOptions, readMembership?: MembershipReader, readers?: StatusReaders): Promise<number> {
  const input = loadInput(() => loadSelectedFlows(file, options.clusters).flows)
  if (!input.ok) return input.exitCode
  const flows = input.value
  let statuses: FlowReplicationStatus[]
  try {
    statuses = await Promise.all(flows.map(async flow => await readFlowStatus(flow, Date.now, readMembership, readers)))
  } catch (err) {
    // Only a bug escapes readFlowStatus (a cluster that cannot be read is in its result): reported as in every command, exit 4.
    return reportCommandFailure(err, 'cannot read the status')
  }
  for (const s of statuses) if (s.error !== undefined) process.stderr.write(`kmirror: flow ${s.flow}: ${s.error}\n`)
  if (options.json) writeJson(process.stdout, { flows: statuses })
  else process.stdout.write(statuses.map(renderStatus).join('\n'))
  return statuses.length > 0 && statuses.every(s => !s.targetReachable) ? ExitCodes.START_FAILED : ExitCodes.OK
}

const show = (n: number | null): string => n === null ? '?' : String(n)

export function renderStatus (status: FlowReplicationStatus): string {
  if (!status.targetReachable) return `flow ${status.flow}: unknown (${status.error ?? 'the target could not be read'})\n`
  const head = `flow ${status.flow}${status.sourceReachable ? '' : ': source unreachable, showing what the target knows (? = unknown)'}` +
    (status.membership === undefined ? '' : `\n${renderMembership(status.membership)}`) +
    (status.exactlyOnce === undefined ? '' : `\n${renderTransactions(status.exactlyOnce).join('\n')}`)
  if (status.partitions.length === 0) return `${head}\n  nothing replicated yet\n`
  const header = ['TOPIC', 'PARTITION', 'LAST REPLICATED', 'TARGET TOPIC', 'TARGET OFFSET', 'SOURCE END', 'LAG RECORDS', 'LAG SECONDS']
  const rows = status.partitions.map(p => [
    p.topic, String(p.partition), String(p.lastReplicatedOffset), p.remoteTopic,
    p.targetOffset === null ? `unknown: ${p.targetOffsetUnknown ?? ''}` : String(p.targetOffset),
    p.sourceLogEndUnknown === undefined ? show(p.sourceLogEnd) : `? (${p.sourceLogEndUnknown})`, show(p.lagRecords), show(p.lagSeconds)
  ])
  const held = status.partitions.filter(p => p.heldAt !== undefined).map(p =>
    // (its age: that of the first record not copied, the transaction's own when the position is its first offset)
    `  ${p.topic}-${p.partition}: held at offset ${p.heldAt} by a transaction open on the source${p.lagSeconds === null || p.heldAt !== p.lastReplicatedOffset + 1 ? '' : ` for ${p.lagSeconds} s`} ` +
    '(read read_committed; short holds are normal with transactional producers): nothing past it is copied until it commits or aborts; ' +
    'see "A source partition held by a transaction left open" in docs/operations.md')
  return `${[head, ...table(header, rows), ...held].join('\n')}\n`
}

function table (header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => r[i]!.length)))
  const render = (cells: string[]): string => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd()
  return [render(header), ...rows.map(render)]
}

/** The flow's group: its generation and leader, then one line per member with what it owns. */
export function renderMembership (m: MembershipStatus): string {
  const rows = m.members.map(member => [
    `${member.name}${member.name === m.leader ? ' (leader)' : ''}${member.name === m.self ? ' (this instance)' : ''}`,
    String(member.partitions), member.jobs.length === 0 ? '-' : member.jobs.join(',')
  ])
  return [`  group ${m.group}, generation ${m.generation}, ${m.members.length} member(s)`, ...table(['MEMBER', 'PARTITIONS', 'JOBS'], rows)].join('\n')
}
