/**
 * Writes a plan's moves, group by group, exactly as planned. Just before writing a group it checks again
 * that the group has no active member and that its committed offsets are still the plan's `current`; if
 * either changed, the group is refused (nothing written) and the operator plans again.
 *
 * A group that fails otherwise stops the apply: it and the groups after it are reported with a problem (exit 3),
 * and the groups written before it are reported written; the output never claims less was written than was.
 */
import type { ClusterClientConfig } from '../config/types.ts'
import { isInactive, type GroupAdmin } from '../kafka/group-admin.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { errorMessage, KmirrorError } from '../errors.ts'
import { withDeadline } from './clients.ts'
import { activeMembers, inTransactionRefusal, isWritable, partitionId, type GroupPlan } from './plan.ts'
import type { OffsetsPlan } from './failover.ts'

export interface ApplyResult {
  readonly plan: OffsetsPlan
  /** Groups whose offsets were written. */
  readonly applied: readonly string[]
}

export async function applyPlan (plan: OffsetsPlan, destination: ClusterClientConfig, timeoutMs: number): Promise<ApplyResult> {
  const clients = new ClusterClients(destination, `${plan.kind}-apply`)
  try {
    return await applyWith(clients.admin.groups, plan, destination, timeoutMs)
  } finally {
    await clients.close()
  }
}

/** `applyPlan` through ADMIN, the destination's group admin. */
export async function applyWith (admin: Pick<GroupAdmin, 'describeGroups' | 'stableCommittedOffsetsOf' | 'alterCommittedOffsets'>, plan: OffsetsPlan, destination: ClusterClientConfig, timeoutMs: number): Promise<ApplyResult> {
  const applied: string[] = []
  const groups: GroupPlan[] = []
  let stoppedAt: string | undefined
  for (const group of plan.groups) {
    if (stoppedAt !== undefined && isWritable(group)) {
      groups.push({ ...group, problem: `not written: the apply stopped when group ${stoppedAt} failed; plan again` })
      continue
    }
    const outcome = isWritable(group) ? await applyGroup(admin, group, destination, timeoutMs) : { plan: group, written: false }
    if (outcome.written) applied.push(group.group)
    if (outcome.plan.problem !== undefined && group.problem === undefined) stoppedAt = group.group
    groups.push(outcome.plan)
  }
  return { plan: { ...plan, groups }, applied }
}

/**
 * Checks one group again and writes its moves. A failure other than a refusal (the cluster out of reach, a missing
 * grant, a timeout) becomes the group's problem, worded by how far it got: before the write nothing was written;
 * during it some partitions may be (a commit is per partition, and one given up on may still land).
 */
async function applyGroup (admin: Pick<GroupAdmin, 'describeGroups' | 'stableCommittedOffsetsOf' | 'alterCommittedOffsets'>, group: GroupPlan, destination: ClusterClientConfig, timeoutMs: number): Promise<{ plan: GroupPlan, written: boolean }> {
  let changed: string | undefined
  try {
    changed = await withDeadline(changedSincePlan(admin, group), timeoutMs, destination)
  } catch (err) {
    return { plan: { ...group, problem: `group ${group.group} could not be checked again before writing (${errorMessage(err)}): nothing written for it; plan again` }, written: false }
  }
  if (changed !== undefined) return { plan: { ...group, refusals: [changed] }, written: false }
  try {
    await withDeadline(admin.alterCommittedOffsets(group.group, group.moves.map(m => ({ topic: m.topic, partition: m.partition, offset: m.next }))), timeoutMs, destination)
    return { plan: group, written: true }
  } catch (err) {
    const members = refusedForMembers(err, group)
    if (members !== undefined) return { plan: { ...group, refusals: [members] }, written: false }
    return {
      plan: { ...group, problem: `writing the offsets of group ${group.group} on ${group.cluster} failed (${errorMessage(err)}): some of its partitions may be written; plan again to see where it stands` },
      written: false
    }
  }
}

async function changedSincePlan (admin: Pick<GroupAdmin, 'describeGroups' | 'stableCommittedOffsetsOf'>, plan: GroupPlan): Promise<string | undefined> {
  const description = (await admin.describeGroups([plan.group])).get(plan.group)
  if (description !== undefined && !isInactive(description.state)) {
    return `group ${plan.group} became active on ${plan.cluster} (${activeMembers(description.members, description.state)}, state ${description.state}) after it was planned: nothing written; stop its consumers and plan again`
  }
  // The partitions to write asked by name: an open transaction on one the group never committed to is seen too.
  const read = (await admin.stableCommittedOffsetsOf([plan.group], 'DESCRIBE', { partitions: new Map([[plan.group, plan.moves]]), busyOffsets: false })).get(plan.group)
  if (read?.inTransaction === true) return `${inTransactionRefusal(plan.group, plan.cluster)}; nothing written`
  const now = new Map((read?.offsets ?? []).map(c => [partitionId(c.topic, c.partition), c.offset]))
  const moved = plan.moves.find(m => (now.get(partitionId(m.topic, m.partition)) ?? null) !== m.current)
  if (moved !== undefined) {
    return `the committed offset of ${moved.topic}-${moved.partition} changed after it was planned (${moved.current ?? 'none'} -> ${now.get(partitionId(moved.topic, moved.partition)) ?? 'none'}): nothing written; plan again`
  }
  return undefined
}

/**
 * The broker refused the commit because the group has members (an OffsetCommit from outside a group is refused while
 * it has any): the group is refused, nothing written. It became active after the check just before the write, or
 * its coordinator could not describe it (ARCHITECTURE invariant 38).
 */
export function refusedForMembers (err: unknown, plan: GroupPlan): string | undefined {
  const names = err instanceof KmirrorError ? err.details['kafkaErrors'] : undefined
  const refusal = Array.isArray(names) ? names.find(n => n === 'UNKNOWN_MEMBER_ID' || n === 'ILLEGAL_GENERATION' || n === 'REBALANCE_IN_PROGRESS') : undefined
  if (refusal === undefined) return undefined
  return `${plan.cluster} refused to write the offsets of group ${plan.group} (${String(refusal)}): the group has active members, ` +
    'nothing written; stop its consumers, then plan and apply again'
}
