/**
 * `kmirror failover`, `kmirror failback` and `kmirror offsets set`: a plan by default, `--apply` writes exactly
 * what the plan shows. Exit codes: 0 nothing to do or applied, 1 dry run with moves, 2 bad input, 3 a cluster
 * or a group's data could not be read, or a write failed (the groups written before it say so), 4 a bug
 * (reportCommandFailure), 5 a group was refused as unsafe (nothing written for it).
 */
import { reportCommandFailure } from './unexpected-errors.ts'
import { readFileSync } from 'node:fs'
import { loadCheckedConfig } from './config-input.ts'
import type { ClusterClientConfig, KmirrorConfig } from '../config/types.ts'
import { ConfigError, ErrorCodes, ExitCodes, isKmirrorError } from '../errors.ts'
import { applyPlan } from '../failover/apply.ts'
import type { GroupSelection, OffsetsPlan } from '../failover/failover.ts'
import { parseOffsetSpec, type OffsetSpecOptions } from '../failover/offset-spec.ts'
import { parseOffsetsCsv, writeOffsetsCsv } from '../failover/offsets-csv.ts'
import type { OffsetsSetPlan, TopicScope } from '../failover/offsets-set.ts'
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

export interface OffsetsSetCommandOptions extends Omit<OffsetSpecOptions, 'fromFile'> {
  readonly cluster: string
  readonly group?: readonly string[]
  readonly allGroups?: boolean
  readonly topic?: readonly TopicScope[]
  readonly allTopics?: boolean
  readonly partition?: string
  /** `--from-file`: the path of a kafka-consumer-groups CSV. */
  readonly fromFile?: string
  /** `--export`: print the plan as kafka-consumer-groups CSV instead of a table. */
  readonly export?: boolean
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
    const { groups, topics } = offsetsScope(options)
    const positions = options.fromFile === undefined ? undefined : readCsv(options.fromFile)
    if (positions !== undefined && positions[0]!.group === undefined && groups?.length !== 1) {
      throw new UsageError(`${options.fromFile} has lines topic,partition,offset: give exactly one --group (lines group,topic,partition,offset name their groups)`)
    }
    const spec = parseOffsetSpec({ ...options, fromFile: positions })
    if ('error' in spec) throw new UsageError(spec.error)
    const cluster = loadCheckedConfig(file, config => clusterOf(config, options.cluster), c => [c]).picked
    const plan = await planOffsetsSetOf({
      cluster, spec, force: options.force, timeoutMs: options.timeoutSeconds * 1000,
      ...(groups === undefined ? {} : { groups }), ...(topics === undefined ? {} : { topics })
    })
    if (options.export === true) return await finishExport(plan, cluster, options, groups?.length === 1)
    return await finish(plan, cluster, options)
  })
}

/** Groups and partitions as kafka-consumer-groups.sh takes them; exactly one way each, --from-file standing for the partitions. */
function offsetsScope (options: OffsetsSetCommandOptions): { groups?: readonly string[], topics?: readonly TopicScope[] } {
  const hasGroups = options.group !== undefined && options.group.length > 0
  if (hasGroups && options.allGroups === true) throw new UsageError('give either --group G (one or more) or --all-groups, not both')
  if (!hasGroups && options.allGroups !== true && options.fromFile === undefined) throw new UsageError('give --group G (one or more) or --all-groups')
  const hasTopics = options.topic !== undefined && options.topic.length > 0
  const scopes = [hasTopics, options.allTopics === true, options.fromFile !== undefined].filter(Boolean).length
  if (scopes !== 1) throw new UsageError('give exactly one of --topic T (or T:0,2; one or more), --all-topics, --from-file CSV')
  let topics = options.topic
  if (options.partition !== undefined) {
    if (!/^\d+$/.test(options.partition)) throw new UsageError(`--partition must be a partition number, got '${options.partition}'`)
    if (topics?.length !== 1 || topics[0]!.partitions !== undefined) throw new UsageError('--partition goes with one --topic T; for several, write --topic T:0,2')
    topics = [{ topic: topics[0]!.topic, partitions: [Number(options.partition)] }]
  }
  return { ...(hasGroups ? { groups: options.group } : {}), ...(hasTopics ? { topics } : {}) }
}

function readCsv (path: string): ReturnType<typeof parseOffsetsCsv> {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new UsageError(`--from-file ${path} cannot be read: ${err instanceof Error ? err.message : String(err)}`)
  }
  try {
    return parseOffsetsCsv(text, path)
  } catch (err) {
    throw new UsageError(`--from-file ${err instanceof Error ? err.message : String(err)}`)
  }
}

/** `--export`: the CSV on stdout (what kafka-consumer-groups.sh prints), the plan's verdict as the exit code; messages on stderr. */
async function finishExport (plan: OffsetsSetPlan, cluster: ClusterClientConfig, options: { apply: boolean, timeoutSeconds: number }, oneGroup: boolean): Promise<number> {
  let shown: OffsetsPlan = plan
  if (options.apply) ({ plan: shown } = await applyPlan(plan, cluster, options.timeoutSeconds * 1000))
  process.stdout.write(writeOffsetsCsv(plan.positions, !oneGroup))
  for (const g of shown.groups) for (const line of [...g.refusals, ...(g.problem === undefined ? [] : [g.problem])]) process.stderr.write(`kmirror: group ${g.group}: ${line}\n`)
  for (const g of shown.groups) for (const note of g.notes) process.stderr.write(`kmirror: NOTE: ${note}\n`)
  return exitCodeOf(shown.groups, options.apply)
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
    return reportCommandFailure(err, '', '; nothing was written')
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
    ? (apply && g.moves.length > 0 ? 'NOT APPLIED (see PROBLEM)' : 'NOT PLANNED')
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
