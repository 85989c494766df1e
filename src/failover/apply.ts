/**
 * Writes a plan's moves, group by group, exactly as planned. Just before writing a group it checks again
 * that the group has no active member and that its committed offsets are still the plan's `current`; if
 * either changed, the group is refused (nothing written) and the operator plans again.
 */
import type { ClusterClientConfig } from '../config/types.ts'
import { isInactive, type GroupAdmin } from '../kafka/group-admin.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { KmirrorError } from '../errors.ts'
import { withDeadline } from './clients.ts'
import { activeMembers, isWritable, partitionId, type GroupPlan } from './plan.ts'
import type { OffsetsPlan } from './failover.ts'

export interface ApplyResult {
  readonly plan: OffsetsPlan
  /** Groups whose offsets were written. */
  readonly applied: readonly string[]
}

export async function applyPlan (plan: OffsetsPlan, destination: ClusterClientConfig, timeoutMs: number): Promise<ApplyResult> {
  const clients = new ClusterClients(destination, `${plan.kind}-apply`)
  const applied: string[] = []
  try {
    const groups: GroupPlan[] = []
    for (const group of plan.groups) {
      if (!isWritable(group)) {
        groups.push(group)
        continue
      }
      const changed = await withDeadline(changedSincePlan(clients.admin.groups, group), timeoutMs, destination)
      if (changed !== undefined) {
        groups.push({ ...group, refusals: [changed] })
        continue
      }
      try {
        await withDeadline(clients.admin.groups.alterCommittedOffsets(group.group, group.moves.map(m => ({ topic: m.topic, partition: m.partition, offset: m.next }))),
          timeoutMs, destination)
      } catch (err) {
        const members = refusedForMembers(err, group)
        if (members === undefined) throw err
        groups.push({ ...group, refusals: [members] })
        continue
      }
      applied.push(group.group)
      groups.push(group)
    }
    return { plan: { ...plan, groups }, applied }
  } finally {
    await clients.close()
  }
}

async function changedSincePlan (admin: GroupAdmin, plan: GroupPlan): Promise<string | undefined> {
  const description = (await admin.describeGroups([plan.group])).get(plan.group)
  if (description !== undefined && !isInactive(description.state)) {
    return `group ${plan.group} became active on ${plan.cluster} (${activeMembers(description.members, description.state)}, state ${description.state}) after it was planned: nothing written; stop its consumers and plan again`
  }
  const now = new Map((await admin.listCommittedOffsets(plan.group)).map(c => [partitionId(c.topic, c.partition), c.offset]))
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
