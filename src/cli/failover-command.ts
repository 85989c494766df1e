/**
 * `kmirror failover`, `kmirror failback` and `kmirror offsets set`: a plan by default, `--apply` writes exactly
 * what the plan shows. Exit codes: 0 nothing to do or applied, 1 dry run with moves, 2 bad input, 3 a cluster
 * or a group's data could not be read, 5 a group was refused as unsafe (nothing written for it).
 */
import { loadCheckedConfig } from './config-input.ts'
import type { ClusterClientConfig, KmirrorConfig } from '../config/types.ts'
import { ConfigError, ErrorCodes, ExitCodes, isKmirrorError } from '../errors.ts'
import { applyPlan } from '../failover/apply.ts'
import type { GroupSelection, OffsetsPlan } from '../failover/failover.ts'
import { parseOffsetSpec } from '../failover/offset-spec.ts'
import { exitCodeOf, isWritable, type GroupPlan } from '../failover/plan.ts'
import { findFlow, planFailbackOf, planFailoverOf, planOffsetsSetOf } from '../runtime/offsets.ts'
import { writeJson } from '../redactor.ts'

export interface MoveCommandOptions {
  readonly from: string
  readonly to: string
  readonly group?: readonly string[]
  readonly groups?: string
  readonly apply: boolean
  readonly force: boolean
  readonly json: boolean
  readonly timeoutSeconds: number
}

export interface OffsetsSetCommandOptions {
  readonly cluster: string
  readonly group: string
  readonly topic: string
  readonly partition?: string
  readonly toOffset?: string
  readonly toEarliest?: boolean
  readonly toLatest?: boolean
  readonly toDatetime?: string
  readonly shiftBy?: string
  readonly apply: boolean
  readonly force: boolean
  readonly json: boolean
  /** `--timeout`: every cluster read and write of the command is bounded by it. */
  readonly timeoutSeconds: number
}

class UsageError extends Error {}

function selectionOf (options: MoveCommandOptions): GroupSelection {
  const hasList = options.group !== undefined && options.group.length > 0
  if (hasList === (options.groups !== undefined)) throw new UsageError('give either --group G (one or more) or --groups REGEX')
  return hasList ? { groups: options.group } : { groupsRegex: options.groups }
}

export async function failoverCommand (file: string, options: MoveCommandOptions): Promise<number> {
  return await runMove(file, options, 'failover')
}

export async function failbackCommand (file: string, options: MoveCommandOptions): Promise<number> {
  return await runMove(file, options, 'failback')
}

async function runMove (file: string, options: MoveCommandOptions, kind: 'failover' | 'failback'): Promise<number> {
  return await guarded(async () => {
    const selection = selectionOf(options)
    if (!(options.timeoutSeconds > 0)) throw new UsageError('--timeout must be a number of seconds above 0')
    // failover --from A --to B uses the A->B flow; failback --from B --to A uses the same A->B flow backwards.
    const [from, to] = kind === 'failover' ? [options.from, options.to] : [options.to, options.from]
    const flow = loadCheckedConfig(file, config => findFlow(config, from, to), f => [f.source, f.target]).picked
    const move = { selection, force: options.force, sourceTimeoutMs: options.timeoutSeconds * 1000 }
    const plan = kind === 'failover' ? await planFailoverOf(flow, move) : await planFailbackOf(flow, move)
    const destination = kind === 'failover' ? flow.target : flow.source
    return await finish(plan, destination, options)
  })
}

export async function offsetsSetCommand (file: string, options: OffsetsSetCommandOptions): Promise<number> {
  return await guarded(async () => {
    const spec = parseOffsetSpec(options)
    if ('error' in spec) throw new UsageError(spec.error)
    if (options.partition !== undefined && !/^\d+$/.test(options.partition)) throw new UsageError(`--partition must be a partition number, got '${options.partition}'`)
    const cluster = loadCheckedConfig(file, config => clusterOf(config, options.cluster), c => [c]).picked
    const plan = await planOffsetsSetOf({
      cluster, group: options.group, topic: options.topic, spec, force: options.force, timeoutMs: options.timeoutSeconds * 1000,
      ...(options.partition === undefined ? {} : { partition: Number(options.partition) })
    })
    return await finish(plan, cluster, options)
  })
}

function clusterOf (config: KmirrorConfig, alias: string): ClusterClientConfig {
  for (const flow of config.flows) {
    if (flow.source.alias === alias) return flow.source
    if (flow.target.alias === alias) return flow.target
  }
  throw new UsageError(`--cluster ${alias} is not one of clusters = ${config.clusters.join(', ')}`)
}

async function finish (plan: OffsetsPlan, destination: ClusterClientConfig, options: { apply: boolean, json: boolean, timeoutSeconds: number }): Promise<number> {
  let shown = plan
  let applied: readonly string[] = []
  if (options.apply) ({ plan: shown, applied } = await applyPlan(plan, destination, options.timeoutSeconds * 1000))
  if (options.json) writeJson(process.stdout, toJson(shown, options.apply, applied))
  else process.stdout.write(render(shown, options.apply, applied))
  return exitCodeOf(shown.groups, options.apply)
}

/** Runs a command body and maps failures to exit codes; every message goes to stderr. */
async function guarded (body: () => Promise<number>): Promise<number> {
  try {
    return await body()
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError || (isKmirrorError(err) && err.code === ErrorCodes.USAGE)) {
      process.stderr.write(`kmirror: ${(err as Error).message}\n`)
      return ExitCodes.BAD_INPUT
    }
    process.stderr.write(`kmirror: ${err instanceof Error ? err.message : String(err)}${isKmirrorError(err) ? ` (${err.code})` : ''}; nothing was written\n`)
    return ExitCodes.START_FAILED
  }
}

function toJson (plan: OffsetsPlan, apply: boolean, applied: readonly string[]): unknown {
  return {
    command: plan.kind, flow: plan.flow, from: plan.from, to: plan.to, basis: plan.basis,
    ...(plan.instant === undefined ? {} : { instant: plan.instant }), apply, notes: plan.notes,
    groups: plan.groups.map(g => ({ ...g, written: applied.includes(g.group) }))
  }
}

const BASIS = {
  'source-commits': 'the group\'s commits on the source, translated exactly',
  checkpoints: 'the last checkpoints on the target',
  'target-commits': 'the group\'s commits on the remote topics, translated back exactly',
  manual: 'the position asked for'
} as const

function render (plan: OffsetsPlan, apply: boolean, applied: readonly string[]): string {
  const moves = plan.groups.reduce((n, g) => n + g.moves.length, 0)
  const title = plan.kind === 'offsets-set' ? `offsets set on ${plan.to}` : `${plan.kind} ${plan.from} -> ${plan.to} (flow ${plan.flow})`
  const lines = [`${title}: ${plan.groups.length} group(s), ${moves} partition(s) to move; offsets from ${BASIS[plan.basis]}`]
  if (plan.instant !== undefined) lines.push(`instant: ${plan.instant} (each partition moves to its first record at or after it, or to its end)`)
  for (const note of plan.notes) lines.push(`NOTE: ${note}`)
  for (const g of plan.groups) lines.push('', ...renderGroup(g, apply, applied.includes(g.group)))
  if (plan.groups.length === 0) lines.push('no group matched')
  if (!apply && plan.groups.some(isWritable)) lines.push('', 'dry run: nothing written; run again with --apply to write exactly these moves')
  return `${lines.join('\n')}\n`
}

function renderGroup (g: GroupPlan, apply: boolean, written: boolean): string[] {
  const verdict = g.problem !== undefined
    ? 'NOT PLANNED'
    : g.moves.length === 0 ? 'nothing to do' : g.refusals.length > 0 ? 'REFUSED, nothing written' : apply ? (written ? 'written' : 'not written') : 'would be written'
  const out = [`group ${g.group} on ${g.cluster} (state ${g.state}, ${g.members} member(s)): ${g.moves.length} to move, ${g.unchanged} already there: ${verdict}`]
  if (g.problem !== undefined) out.push(`  PROBLEM: ${g.problem}`)
  if (g.moves.length > 0) {
    const header = ['TOPIC', 'PARTITION', 'CURRENT', 'NEW', 'RE-READ', 'SKIP', 'EXACT']
    const rows = g.moves.map(m => [m.topic, String(m.partition), m.current === null ? '-' : String(m.current), String(m.next), String(m.reRead), String(m.skip), m.exact ? 'yes' : `no: ${m.reason ?? ''}`])
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => r[i]!.length)))
    const line = (cells: string[]): string => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}`
    out.push(line(header), ...rows.map(line))
  }
  for (const r of g.refusals) out.push(`  REFUSED: ${r}`)
  for (const n of g.notes) out.push(`  NOTE: ${n}`)
  return out
}
