/**
 * `kmirror status`: the members of a flow's group on its target and what each owns, read from the group's
 * coordinator (DescribeGroups) without joining: each member's metadata names it, its assignment says what it
 * owns after the last rebalance, the generation and the leader. Writes nothing.
 */
import type { FlowConfig } from '../config/types.ts'
import { decodeMemberMetadata, decodeWorkAssignment } from '../formats/work-assignment.ts'
import { clusterContext } from '../kafka/connection-hints.ts'
import { GroupCoordinator } from '../kafka/group-coordinator.ts'
import { toItems } from '../kafka/group-member-options.ts'
import { PROTOCOL_TYPE } from '../kafka/group-member.ts'
import { DescribeGroupsApi, type DescribedGroup } from '../kafka/protocol/describe-groups.ts'
import type { MemberStatus, MembershipStatus } from './flow-status.ts'

/** The flow's group as its coordinator describes it now; null when no kmirror instance is in it. */
export async function readGroupMembership (flow: FlowConfig): Promise<MembershipStatus | null> {
  const props = flow.target.consumer
  const coordinator = new GroupCoordinator(props, `kmirror-${flow.name}-status`, clusterContext(flow.target.alias, props), flow.groupId, 0)
  try {
    const answer = await coordinator.send(DescribeGroupsApi, { groups: [flow.groupId] }, 'beat')
    const group = answer.groups[0]
    if (group === undefined) return null
    if (group.errorCode !== 0) throw coordinator.refusal(group.errorCode, 'DescribeGroups')
    return membershipOf(group)
  } finally {
    await coordinator.close()
  }
}

/** What a described group shows of its kmirror members; null for an empty group or another program's. */
export function membershipOf (group: DescribedGroup): MembershipStatus | null {
  if (group.protocolType !== PROTOCOL_TYPE || group.members.length === 0) return null
  let generation = -1
  let leader = ''
  const members: MemberStatus[] = []
  for (const member of group.members) {
    let name = member.memberId
    try { name = decodeMemberMetadata(member.metadata).memberName } catch { /* another version's metadata: shown by id */ }
    let owned: readonly string[] = []
    try {
      // Empty while the group rebalances: the member owns nothing assigned yet.
      if (member.assignment.length > 0) {
        const assignment = decodeWorkAssignment(member.assignment)
        owned = assignment.assigned
        generation = Math.max(generation, assignment.generation)
        leader = assignment.leaderName
      }
    } catch { /* unreadable: shown as owning nothing */ }
    const items = toItems(owned)
    members.push({
      name,
      partitions: items.filter(i => i.kind === 'partition').length,
      jobs: items.flatMap(i => i.kind === 'job' ? [i.job] : []).sort()
    })
  }
  members.sort((a, b) => a.name.localeCompare(b.name))
  return { group: group.groupId, generation, leader, self: '', members }
}
