/**
 * `kmirror offsets set`: plans moving consumer groups' committed offsets on one cluster, per partition in scope,
 * to a chosen position (offset-spec.ts), with the rules of plan.ts. Reads only; apply.ts writes.
 *
 * Scope, as kafka-consumer-groups.sh --reset-offsets: groups are `--group` (one or more) or `--all-groups`
 * (every consumer group of the cluster); partitions are `--topic T` (every partition), `--topic T:0,2`,
 * `--all-topics` (the partitions the group has committed offsets for) or the lines of `--from-file`
 * (offsets-set-scope.ts).
 *
 * Every group is planned from a few requests for all of them (DescribeGroups and OffsetFetch for every group in
 * scope, Metadata for every topic, ListOffsets once per topic), not a round of requests per group: `--all-groups`
 * on a cluster with hundreds of groups took a second per 25 groups before.
 */
import type { ClusterClientConfig } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { toolClusterOf } from '../kafka/tool-command.ts'
import { isConsumerProtocol, type StableCommits } from '../kafka/group-admin.ts'
import { withDeadline } from './clients.ts'
import type { OffsetsPlan } from './failover.ts'
import { resolveOffset, type OffsetSpec, type PartitionSpec } from './offset-spec.ts'
import { checkScope, wantedScope, type GroupScope, type TopicScope } from './offsets-set-scope.ts'
import { partitionId, PlanKinds, planGroup, type GroupPlan, type WantedOffset } from './plan.ts'

export type { TopicScope } from './offsets-set-scope.ts'

export interface OffsetsSetRequest {
  readonly cluster: ClusterClientConfig
  /** Undefined: every consumer group of the cluster (`--all-groups`), or the groups of a four-column file. */
  readonly groups?: readonly string[]
  /** Undefined: `--all-topics`, or the partitions of `--from-file`. */
  readonly topics?: readonly TopicScope[]
  readonly spec: OffsetSpec
  readonly force: boolean
  readonly timeoutMs: number
}

/** One partition of one group with the offset the plan sets (moved or already there), for `--export`. */
export interface PlannedPosition {
  readonly group: string
  readonly topic: string
  readonly partition: number
  readonly offset: number
}

export interface OffsetsSetPlan extends OffsetsPlan {
  readonly positions: readonly PlannedPosition[]
}

type Clients = ClusterClients
type Range = { earliest: number, latest: number, atTime?: number }

/** Throws a USAGE KmirrorError (exit 2) for a missing topic or partition and for positions out of range. */
export async function planOffsetsSet (request: OffsetsSetRequest): Promise<OffsetsSetPlan> {
  const { cluster } = request
  const clients = new ClusterClients(cluster, 'offsets-set')
  try {
    return await withDeadline((async () => {
      await clients.checkBrokers()
      const groups = await groupsInScope(clients, request)
      const states = await clients.admin.groups.describeGroups(groups)
      const { committed, scopes } = await commitsAndScopes(clients, request, groups)
      const current = new Map(groups.map(g => [g, currentOf(committed.get(g))]))
      const ranges = await rangesOfScopes(clients, [...scopes.values()], request.spec)
      const plans: GroupPlan[] = []
      const positions: PlannedPosition[] = []
      const errors: string[] = []
      for (const group of groups) {
        const state = states.get(group)
        const facts = { state: state?.state ?? 'Dead', members: state?.members ?? 0, inTransaction: committed.get(group)?.inTransaction === true }
        const planned = planOneGroup(request, group, facts, current.get(group)!, scopes.get(group)!, ranges)
        if ('errors' in planned) errors.push(...planned.errors)
        else {
          plans.push(planned.plan)
          positions.push(...planned.positions)
        }
      }
      if (errors.length > 0) throw new KmirrorError(ErrorCodes.USAGE, errors.join('; '))
      const instant = request.spec.kind === 'datetime' ? { instant: new Date(request.spec.timestampMs).toISOString() } : {}
      return { kind: PlanKinds.OFFSETS_SET, flow: '', from: cluster.alias, to: cluster.alias, basis: 'manual' as const, notes: [], groups: plans, positions, ...instant }
    })(), request.timeoutMs, cluster)
  } finally {
    await clients.close()
  }
}

async function groupsInScope (clients: Clients, request: OffsetsSetRequest): Promise<string[]> {
  const fileGroups = request.spec.kind === 'file' && request.spec.positions.some(p => p.group !== undefined)
    ? [...new Set(request.spec.positions.map(p => p.group ?? ''))]
    : undefined
  if (request.groups !== undefined) {
    const missing = fileGroups === undefined ? [] : request.groups.filter(g => !fileGroups.includes(g))
    if (missing.length > 0) throw new KmirrorError(ErrorCodes.USAGE, `the --from-file CSV has no line for group(s) ${missing.join(', ')}`)
    return [...new Set(request.groups)].sort()
  }
  if (fileGroups !== undefined) return fileGroups.sort()
  const listed = await clients.admin.groups.listGroups()
  return listed.filter(g => isConsumerProtocol(g.protocolType)).map(g => g.groupId).sort()
}

/**
 * Every group's commits (read stable) and partitions in scope. A scope named by the command (topics, a file) is
 * known first, and its partitions are asked for by name: Kafka sees a transaction holding a commit open only on
 * partitions asked for, or on those already committed to. `--all-topics` takes the partitions with a commit.
 */
async function commitsAndScopes (clients: Clients, request: OffsetsSetRequest, groups: readonly string[]): Promise<{ committed: Map<string, StableCommits>, scopes: Map<string, GroupScope> }> {
  const fromCommits = request.spec.kind !== 'file' && request.topics === undefined
  if (fromCommits) {
    const committed = await clients.admin.groups.stableCommittedOffsetsOf(groups)
    return { committed, scopes: await scopesOf(clients, request, groups, new Map(groups.map(g => [g, currentOf(committed.get(g))]))) }
  }
  const scopes = await scopesOf(clients, request, groups, new Map(groups.map(g => [g, new Map<string, number>()])))
  const partitions = new Map([...scopes].map(([g, scope]) => [g, [...scope.partitions].flatMap(([topic, ps]) => ps.map(partition => ({ topic, partition })))]))
  return { committed: await clients.admin.groups.stableCommittedOffsetsOf(groups, 'DESCRIBE', { partitions }), scopes }
}

function currentOf (read: StableCommits | undefined): Map<string, number> {
  return new Map((read?.offsets ?? []).map(c => [partitionId(c.topic, c.partition), c.offset]))
}

/** Every group's partitions in scope, checked against one Metadata answer for every topic any group names. */
async function scopesOf (clients: Clients, request: OffsetsSetRequest, groups: readonly string[], current: ReadonlyMap<string, ReadonlyMap<string, number>>): Promise<Map<string, GroupScope>> {
  const wanted = new Map(groups.map(g => [g, wantedScope(request.spec, request.topics, g, current.get(g)!)]))
  const topics = [...new Set([...wanted.values()].flatMap(w => [...w.topics.keys()]))]
  const described = await clients.admin.describeTopics(topics)
  const counts = new Map([...described].map(([name, d]) => [name, d.partitions]))
  return new Map(groups.map(g => [g, checkScope(wanted.get(g)!, counts, g, toolClusterOf(request.cluster.alias, request.cluster.admin))]))
}

type PlanState = { readonly state: GroupPlan['state'], readonly members: number, readonly inTransaction: boolean }

function planOneGroup (request: OffsetsSetRequest, group: string, state: PlanState, current: ReadonlyMap<string, number>, scope: GroupScope,
  ranges: ReadonlyMap<string, Range>): { plan: GroupPlan, positions: PlannedPosition[] } | { errors: string[] } {
  const wanted: WantedOffset[] = []
  const errors: string[] = []
  for (const [topic, partitions] of scope.partitions) {
    for (const p of partitions) {
      const now = current.get(partitionId(topic, p)) ?? null
      const spec = partitionSpec(request.spec, group, topic, p)
      const resolved = resolveOffset(spec, { current: now, ...ranges.get(partitionId(topic, p))! }, `${topic}-${p}`)
      if ('error' in resolved) errors.push(`group ${group}: ${resolved.error}`)
      else wanted.push({ topic, partition: p, offset: resolved.offset, exact: true, processed: now })
    }
  }
  if (errors.length > 0) return { errors }
  const plan = planGroup({
    kind: PlanKinds.OFFSETS_SET, group, cluster: request.cluster.alias, force: request.force,
    state: state.state, members: state.members, inTransaction: state.inTransaction, current, wanted, notes: scope.notes
  })
  return { plan, positions: wanted.map(w => ({ group, topic: w.topic, partition: w.partition, offset: w.offset })) }
}

/** The range (and the offset at the instant) of every partition any scope holds: one lookup per topic. */
async function rangesOfScopes (clients: Clients, scopes: readonly GroupScope[], spec: OffsetSpec): Promise<Map<string, Range>> {
  const byTopic = new Map<string, Set<number>>()
  for (const scope of scopes) {
    for (const [topic, partitions] of scope.partitions) {
      const set = byTopic.get(topic) ?? new Set<number>()
      for (const p of partitions) set.add(p)
      byTopic.set(topic, set)
    }
  }
  const out = new Map<string, Range>()
  for (const [topic, set] of byTopic) {
    const partitions = [...set].sort((a, b) => a - b)
    const ranges = await rangesOf(clients, topic, partitions, spec)
    partitions.forEach((p, i) => out.set(partitionId(topic, p), ranges[i]!))
  }
  return out
}

async function rangesOf (clients: Clients, topic: string, partitions: readonly number[], spec: OffsetSpec): Promise<Range[]> {
  const lookup = clients.lookup
  const [earliest, latest, atTime] = await Promise.all([
    lookup.earliest(topic, partitions), lookup.latest(topic, partitions),
    spec.kind === 'datetime' ? lookup.forTimestamp(topic, partitions, spec.timestampMs) : Promise.resolve(undefined)
  ])
  return partitions.map((_, i) => ({ earliest: earliest[i]!, latest: latest[i]!, ...(atTime === undefined ? {} : { atTime: atTime[i]! }) }))
}

/** A file's offset for this partition of this group; every other spec applies to every partition alike. */
function partitionSpec (spec: OffsetSpec, group: string, topic: string, partition: number): PartitionSpec {
  if (spec.kind !== 'file') return spec
  const row = spec.positions.find(p => (p.group === undefined || p.group === group) && p.topic === topic && p.partition === partition)
  return { kind: 'offset', offset: row?.offset ?? -1 }
}
