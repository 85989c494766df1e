/**
 * `kmirror offsets set`: plans moving consumer groups' committed offsets on one cluster, per partition in scope,
 * to a chosen position (offset-spec.ts), with the rules of plan.ts. Reads only; apply.ts writes.
 *
 * Scope, as kafka-consumer-groups.sh --reset-offsets: groups are `--group` (one or more) or `--all-groups`
 * (every consumer group of the cluster); partitions are `--topic T` (every partition), `--topic T:0,2`,
 * `--all-topics` (the partitions the group has committed offsets for) or the lines of `--from-file`.
 */
import type { ClusterClientConfig } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { parsePartitionKey } from '../topic-partition.ts'
import { withDeadline } from './clients.ts'
import type { OffsetsPlan } from './failover.ts'
import { resolveOffset, type OffsetSpec, type PartitionSpec } from './offset-spec.ts'
import { partitionId, PlanKinds, planGroup, type GroupPlan, type WantedOffset } from './plan.ts'

export interface TopicScope {
  readonly topic: string
  /** Undefined: every partition of the topic. */
  readonly partitions?: readonly number[]
}

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

/** Throws a USAGE KmirrorError (exit 2) for a missing topic or partition and for positions out of range. */
export async function planOffsetsSet (request: OffsetsSetRequest): Promise<OffsetsSetPlan> {
  const { cluster } = request
  const clients = new ClusterClients(cluster, 'offsets-set')
  try {
    return await withDeadline((async () => {
      await clients.checkBrokers()
      const groups = await groupsInScope(clients, request)
      const plans: GroupPlan[] = []
      const positions: PlannedPosition[] = []
      const errors: string[] = []
      for (const group of groups) {
        const planned = await planOneGroup(clients, request, group)
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
  return listed.filter(g => g.protocolType === 'consumer' || g.protocolType === '').map(g => g.groupId).sort()
}

/** The partitions of `group` in scope, per topic, checked against the topics' partition counts. */
async function partitionsInScope (clients: Clients, request: OffsetsSetRequest, group: string, committed: ReadonlyMap<string, number>): Promise<Map<string, number[]>> {
  const wanted = new Map<string, number[] | undefined>()
  if (request.spec.kind === 'file') {
    for (const p of request.spec.positions.filter(p => p.group === undefined || p.group === group)) wanted.set(p.topic, [...(wanted.get(p.topic) ?? []), p.partition])
  } else if (request.topics !== undefined) {
    for (const t of request.topics) wanted.set(t.topic, t.partitions === undefined ? undefined : [...(wanted.get(t.topic) ?? []), ...t.partitions])
  } else {
    for (const key of committed.keys()) {
      const { topic, partition } = parsePartitionKey(key)
      wanted.set(topic, [...(wanted.get(topic) ?? []), partition])
    }
  }
  const described = await clients.admin.describeTopics([...wanted.keys()])
  const out = new Map<string, number[]>()
  for (const [topic, partitions] of wanted) {
    const count = described.get(topic)?.partitions
    if (count === undefined) throw new KmirrorError(ErrorCodes.USAGE, `topic ${topic} does not exist on cluster ${request.cluster.alias}`)
    const bad = (partitions ?? []).filter(p => p >= count)
    if (bad.length > 0) throw new KmirrorError(ErrorCodes.USAGE, `topic ${topic} on cluster ${request.cluster.alias} has partitions 0..${count - 1}, not ${bad.join(', ')}`)
    out.set(topic, partitions === undefined ? Array.from({ length: count }, (_, p) => p) : [...new Set(partitions)].sort((a, b) => a - b))
  }
  return out
}

async function planOneGroup (clients: Clients, request: OffsetsSetRequest, group: string): Promise<{ plan: GroupPlan, positions: PlannedPosition[] } | { errors: string[] }> {
  const state = (await clients.admin.groups.describeGroups([group])).get(group)
  const current = new Map((await clients.admin.groups.listCommittedOffsets(group)).map(c => [partitionId(c.topic, c.partition), c.offset]))
  const scope = await partitionsInScope(clients, request, group, current)
  const wanted: WantedOffset[] = []
  const errors: string[] = []
  for (const [topic, partitions] of scope) {
    const ranges = await rangesOf(clients, topic, partitions, request.spec)
    partitions.forEach((p, i) => {
      const now = current.get(partitionId(topic, p)) ?? null
      const spec = partitionSpec(request.spec, group, topic, p)
      const resolved = resolveOffset(spec, { current: now, ...ranges[i]! }, `${topic}-${p}`)
      if ('error' in resolved) errors.push(`group ${group}: ${resolved.error}`)
      else wanted.push({ topic, partition: p, offset: resolved.offset, exact: true, processed: now })
    })
  }
  if (errors.length > 0) return { errors }
  const plan = planGroup({
    kind: PlanKinds.OFFSETS_SET, group, cluster: request.cluster.alias, force: request.force,
    state: state?.state ?? 'Dead', members: state?.members ?? 0, current, wanted
  })
  return { plan, positions: wanted.map(w => ({ group, topic: w.topic, partition: w.partition, offset: w.offset })) }
}

async function rangesOf (clients: Clients, topic: string, partitions: readonly number[], spec: OffsetSpec): Promise<{ earliest: number, latest: number, atTime?: number }[]> {
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
