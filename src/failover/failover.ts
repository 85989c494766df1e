/**
 * Gathers the facts of `kmirror failover` (groups of A move to the remote topics on B) and `kmirror failback`
 * (groups that ran on B move back to A's topics) and plans each group with plan.ts. Reads only.
 *
 * Failover takes the group's commits on A and translates them exactly through the flow's history on B. When
 * A does not answer, it takes the newest checkpoints of the group on B (`A.checkpoints.internal`, written
 * every emit.checkpoints.interval.seconds), re-translated through the history when it covers them, and says
 * that commits made on A after those checkpoints are unknown. Failback translates the group's commits on the
 * remote topics of B back to A (the inverse function of the same history); both clusters must answer.
 */
import type { AdminClient } from '../kafka/admin-client.ts'
import type { FlowConfig } from '../config/types.ts'
import { isConsumerProtocol, isInactive, type CommittedOffset, type GroupDescription, type GroupListing } from '../kafka/group-admin.ts'
import { compileJavaRegexList } from '../policy/java-regex.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { readLastCheckpoints, type StoredCheckpoint } from './checkpoint-reader.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { withDeadline } from './clients.ts'
import { errorMessage } from '../errors.ts'
import { loadFlowHistory, type FlowHistory } from './flow-history.ts'
import type { Translation } from '../checkpoint/offset-history.ts'
import { activeMembers, partitionId, PlanKinds, planGroup, problemPlan, type GroupFacts, type GroupPlan, type PlanKind, type WantedOffset } from './plan.ts'

export interface GroupSelection {
  /** Explicit group ids, or... */
  readonly groups?: readonly string[]
  /** ...a Java regex matched against whole group ids. */
  readonly groupsRegex?: string
}

export interface MoveOptions {
  readonly selection: GroupSelection
  readonly force: boolean
  /** How long to wait for the cluster that may be gone (failover's source). */
  readonly sourceTimeoutMs: number
}

export interface OffsetsPlan {
  readonly kind: PlanKind
  readonly flow: string
  readonly from: string
  readonly to: string
  /** Where the translated positions come from. */
  readonly basis: 'source-commits' | 'checkpoints' | 'target-commits' | 'manual'
  readonly notes: readonly string[]
  readonly groups: readonly GroupPlan[]
  /** `offsets set --to-datetime`: the instant the position was resolved for, ISO-8601 in UTC. */
  readonly instant?: string
}

interface Selected {
  readonly groups: string[]
  /** Plan-level notes: the groups a regex matched but left out. */
  readonly notes: string[]
}

/**
 * The groups to plan. A regex takes consumer groups only, as `offsets set --all-groups` does: another program's
 * group (Connect workers, kmirror's own instances) has no consumer offsets to move; the ones it matched are named.
 */
async function selectGroups (selection: GroupSelection, available: () => Promise<readonly Pick<GroupListing, 'groupId' | 'protocolType'>[]>): Promise<Selected> {
  if (selection.groups !== undefined && selection.groups.length > 0) return { groups: [...new Set(selection.groups)].sort(), notes: [] }
  const regex = compileJavaRegexList([selection.groupsRegex ?? ''])
  const matched = (await available()).filter(g => regex?.test(g.groupId) === true).sort((x, y) => (x.groupId < y.groupId ? -1 : x.groupId > y.groupId ? 1 : 0))
  return {
    groups: matched.filter(g => isConsumerProtocol(g.protocolType)).map(g => g.groupId),
    notes: matched.filter(g => !isConsumerProtocol(g.protocolType))
      .map(g => `group ${g.groupId} (protocol type ${g.protocolType}) matches --groups but is not a consumer group: left out, it has no consumer offsets to move`)
  }
}

/** What a plan compares with on the destination, per group: its state, its stable commits, an open transaction. */
type DestinationFacts = Pick<GroupFacts, 'state' | 'members' | 'current' | 'inTransaction'>

/**
 * The partitions of each group's moves are asked for by name (`present`): Kafka sees a transaction holding a commit
 * open only on partitions asked for, or on those already committed to.
 */
async function destinationFacts (clients: ClusterClients, groups: readonly string[], present: (group: string) => { wanted: readonly WantedOffset[] }): Promise<(group: string) => DestinationFacts> {
  const descriptions = await clients.admin.groups.describeGroups(groups)
  const commits = await clients.admin.groups.stableCommittedOffsetsOf(groups, 'DESCRIBE', { partitions: new Map(groups.map(g => [g, present(g).wanted])) })
  return group => {
    const read = commits.get(group)
    return {
      ...stateOf(descriptions.get(group)),
      current: new Map((read?.offsets ?? []).map(c => [partitionId(c.topic, c.partition), c.offset])),
      inTransaction: read?.inTransaction === true
    }
  }
}

/**
 * Per group, its wanted offsets on partitions the destination has, and a note naming the others (their topic
 * deleted there, or not created yet): a commit to them would fail for those partitions alone, leaving the group
 * half written, so they are left out, and said.
 */
export async function onDestination (clients: { readonly label: string, readonly admin: Pick<AdminClient, 'describeTopics'> }, byGroup: ReadonlyMap<string, readonly WantedOffset[]>): Promise<(group: string) => { wanted: WantedOffset[], missing: string[] }> {
  const topics = new Set([...byGroup.values()].flatMap(w => w.map(o => o.topic)))
  const described = topics.size === 0 ? new Map<string, { partitions: number }>() : await clients.admin.describeTopics([...topics])
  return group => {
    const all = byGroup.get(group) ?? []
    const has = (o: WantedOffset): boolean => o.partition < (described.get(o.topic)?.partitions ?? 0)
    const absent = all.filter(o => !has(o))
    const named = absent.slice(0, 10).map(o => `${o.topic}-${o.partition}`).join(', ')
    return {
      wanted: all.filter(has),
      missing: absent.length === 0 ? [] : [`${absent.length} partition(s) not moved: ${clients.label} does not have them (topic deleted, or not created yet), or does not let kmirror describe them (DESCRIBE on the topic): ${named}${absent.length > 10 ? ', ...' : ''}`]
    }
  }
}

function activeElsewhere (description: GroupDescription | undefined, cluster: string): string[] {
  if (description === undefined || isInactive(description.state)) return []
  return [`group still has ${activeMembers(description.members, description.state)} on ${cluster} (state ${description.state}): what it commits there after this plan is not included; stop its consumers first`]
}

export async function planFailover (flow: FlowConfig, options: MoveOptions): Promise<OffsetsPlan> {
  const policy = createReplicationPolicy(flow.replicationPolicy)
  const source = new ClusterClients(flow.source, 'failover')
  const target = new ClusterClients(flow.target, 'failover')
  try {
    await target.checkBrokers()
    const history = await loadFlowHistory(flow, policy, target.admin, target.reader)
    let fromSource: Selected & { commits: Map<string, CommittedOffset[]>, descriptions: Map<string, GroupDescription> } | undefined
    let sourceError = ''
    try {
      fromSource = await withDeadline((async () => {
        const { groups, notes } = await selectGroups(options.selection, () => source.admin.groups.listGroups())
        const commits = new Map<string, CommittedOffset[]>()
        for (const g of groups) commits.set(g, await source.admin.groups.listCommittedOffsets(g))
        return { groups, notes, commits, descriptions: await source.admin.groups.describeGroups(groups) }
      })(), options.sourceTimeoutMs, flow.source)
    } catch (err) {
      sourceError = errorMessage(err)
    }
    if (fromSource !== undefined) {
      const { groups, notes, commits, descriptions } = fromSource
      const present = await onDestination(target, new Map(groups.map(g => [g, wantedFromCommits(commits.get(g)!, history, policy.formatRemoteTopic.bind(policy, flow.source.alias))])))
      const dest = await destinationFacts(target, groups, present)
      const plans = groups.map(group => {
        const { wanted, missing } = present(group)
        return planGroup({
          kind: PlanKinds.FAILOVER, group, cluster: flow.target.alias, force: options.force,
          ...dest(group), wanted,
          notes: [...activeElsewhere(descriptions.get(group), flow.source.alias), ...nothingToTranslate(wanted, group, flow.source.alias), ...notCopiedYet(commits.get(group)!, history, flow), ...missing]
        })
      })
      return { kind: PlanKinds.FAILOVER, flow: flow.name, from: flow.source.alias, to: flow.target.alias, basis: 'source-commits', notes, groups: plans }
    }
    const checkpoints = await readLastCheckpoints(policy.checkpointsTopic(flow.source.alias), target.admin, target.reader)
    // Checkpoints are written for consumer groups only.
    const { groups } = await selectGroups(options.selection, async () => [...checkpoints.keys()].map(groupId => ({ groupId, protocolType: 'consumer' })))
    const present = await onDestination(target, new Map(groups.map(g => [g, wantedFromCheckpoints([...(checkpoints.get(g)?.values() ?? [])], history)])))
    const dest = await destinationFacts(target, groups, present)
    const plans = groups.map(group => {
      const stored = [...(checkpoints.get(group)?.values() ?? [])]
      if (stored.length === 0) {
        return problemPlan(group, flow.target.alias, `cluster ${flow.source.alias} is unreachable and group ${group} has no checkpoint on ${flow.target.alias} (${policy.checkpointsTopic(flow.source.alias)}): nothing to translate. Is it in the flow's groups filter, and were checkpoints emitted?`)
      }
      const oldest = Math.min(...stored.map(c => c.writtenAt))
      const { wanted, missing } = present(group)
      return planGroup({
        kind: PlanKinds.FAILOVER, group, cluster: flow.target.alias, force: options.force,
        ...dest(group), wanted,
        notes: [`using the group's checkpoints on ${flow.target.alias}, the oldest written at ${new Date(oldest).toISOString()} (${Math.round((Date.now() - oldest) / 1000)} s ago): commits made on ${flow.source.alias} after them are not known, so the consumer re-reads what it processed since; partitions with no checkpoint are not moved`, ...missing]
      })
    })
    return {
      kind: PlanKinds.FAILOVER, flow: flow.name, from: flow.source.alias, to: flow.target.alias, basis: 'checkpoints',
      notes: [`source cluster ${flow.source.alias} unreachable (${sourceError}): planned from the last checkpoints on ${flow.target.alias}; the group's state on ${flow.source.alias} could not be checked`],
      groups: plans
    }
  } finally {
    await Promise.all([source.close(), target.close()])
  }
}

function nothingToTranslate (wanted: readonly WantedOffset[], group: string, cluster: string): string[] {
  return wanted.length > 0 ? [] : [`group ${group} has no committed offset on ${cluster} for a partition this flow has replicated: nothing to move (check the group name and the flow's topics)`]
}

/**
 * The group's commits on partitions of a topic the flow copies that have nothing copied yet (e.g. partitions just
 * added): they are not moved, and on the target the group has no position there, so its consumers start there by
 * their auto.offset.reset; said, not left out silently.
 */
export function notCopiedYet (commits: readonly CommittedOffset[], history: FlowHistory, flow: FlowConfig): string[] {
  const copied = new Set(history.partitions.map(p => p.topic))
  const missing = commits.filter(c => copied.has(c.topic) && (history.toTarget(c.topic, c.partition, c.offset)?.offset ?? -1) < 0)
  if (missing.length === 0) return []
  const named = missing.slice(0, 10).map(c => `${c.topic}-${c.partition} (committed ${c.offset})`).join(', ')
  return [`${missing.length} partition(s) the group committed on ${flow.source.alias} have nothing copied to ${flow.target.alias} yet and are not moved: ${named}${missing.length > 10 ? ', ...' : ''}; on ${flow.target.alias} its consumers would start there by auto.offset.reset`]
}

function stateOf (description: GroupDescription | undefined): Pick<GroupPlan, 'state' | 'members'> {
  return { state: description?.state ?? 'Dead', members: description?.members ?? 0 }
}

/** The group's commits on A, translated to the remote topics on B; partitions the flow does not replicate are left out. */
function wantedFromCommits (commits: readonly CommittedOffset[], history: FlowHistory, remoteTopicOf: (topic: string) => string): WantedOffset[] {
  const out: WantedOffset[] = []
  for (const c of commits) {
    const t = history.toTarget(c.topic, c.partition, c.offset)
    if (t === undefined || t.offset < 0) continue
    out.push({ topic: remoteTopicOf(c.topic), partition: c.partition, ...wantedOf(t) })
  }
  return out
}

/** A translation as the offset a partition should get; the group processed everything before it. */
function wantedOf (t: Translation): Omit<WantedOffset, 'topic' | 'partition'> {
  return { offset: t.offset, exact: t.exact, ...(t.reason === undefined ? {} : { reason: t.reason }), processed: t.offset, ...(t.maySkip === true ? { maySkip: true as const } : {}) }
}

/** Checkpoints re-translated through the history (exact, and complete if replication went on after them). */
function wantedFromCheckpoints (checkpoints: readonly StoredCheckpoint[], history: FlowHistory): WantedOffset[] {
  return checkpoints.map(c => {
    const sourceTopic = history.sourceTopicOf(c.topic)
    const t = sourceTopic === undefined ? undefined : history.toTarget(sourceTopic, c.partition, c.upstreamOffset)
    // A checkpoint before the history's start (MM2 wrote it before a hand-over): its own offset never skips.
    if (t !== undefined && t.offset >= 0 && !(t.maySkip === true && c.downstreamOffset <= t.offset)) return { topic: c.topic, partition: c.partition, ...wantedOf(t) }
    if (t?.maySkip === true) {
      return { topic: c.topic, partition: c.partition, offset: c.downstreamOffset, exact: false, reason: `the checkpoint's offset as written: ${t.reason ?? 'before the offset history'}`, processed: c.downstreamOffset }
    }
    return { topic: c.topic, partition: c.partition, offset: c.downstreamOffset, exact: false, reason: 'the checkpoint\'s offset as written; the offset history does not cover this partition', processed: c.downstreamOffset }
  })
}

/** `failback --from B --to A`: `flow` is the A->B flow whose history on B maps the remote topics back. */
export async function planFailback (flow: FlowConfig, options: MoveOptions): Promise<OffsetsPlan> {
  const policy = createReplicationPolicy(flow.replicationPolicy)
  const original = new ClusterClients(flow.source, 'failback')
  const remote = new ClusterClients(flow.target, 'failback')
  try {
    await remote.checkBrokers()
    const history = await loadFlowHistory(flow, policy, remote.admin, remote.reader)
    const { groups, notes } = await selectGroups(options.selection, () => remote.admin.groups.listGroups())
    const onRemote = await remote.admin.groups.describeGroups(groups)
    const wantedByGroup = new Map<string, WantedOffset[]>()
    for (const group of groups) {
      const wanted: WantedOffset[] = []
      for (const c of await remote.admin.groups.listCommittedOffsets(group)) {
        const sourceTopic = history.sourceTopicOf(c.topic)
        const t = sourceTopic === undefined ? undefined : history.toSource(sourceTopic, c.partition, c.offset)
        if (sourceTopic === undefined || t === undefined || t.offset < 0) continue
        wanted.push({ topic: sourceTopic, partition: c.partition, ...wantedOf(t) })
      }
      wantedByGroup.set(group, wanted)
    }
    const present = await withDeadline(onDestination(original, wantedByGroup), options.sourceTimeoutMs, flow.source)
    const dest = await withDeadline(destinationFacts(original, groups, present), options.sourceTimeoutMs, flow.source)
    const plans = groups.map(group => {
      const { wanted, missing } = present(group)
      return planGroup({
        kind: PlanKinds.FAILBACK, group, cluster: flow.source.alias, force: options.force,
        ...dest(group), wanted,
        notes: [...activeElsewhere(onRemote.get(group), flow.target.alias), ...nothingToTranslate(wanted, group, flow.target.alias), ...missing]
      })
    })
    return { kind: PlanKinds.FAILBACK, flow: flow.name, from: flow.target.alias, to: flow.source.alias, basis: 'target-commits', notes, groups: plans }
  } finally {
    await Promise.all([original.close(), remote.close()])
  }
}
