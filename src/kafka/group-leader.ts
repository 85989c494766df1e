/**
 * The leader's part of a round: list the flow's work, read every member's metadata, run the sticky assignor over
 * the work, fence the transactional ids of lost members that left work behind, and encode each member's assignment
 * (with the generation's member list, for every member's status). A member whose metadata cannot be read (another
 * version, garbled) gets nothing and an error it logs. A step that fails fails the round only (retriable).
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { assignWork, isJobKey, type PreviousMember } from '../cluster/sticky-assignor.ts'
import type { WorkItem } from '../cluster/work.ts'
import { AssignmentErrors, decodeMemberMetadata, encodeWorkAssignment } from '../formats/work-assignment.ts'
import type { GroupCoordinator } from './group-coordinator.ts'
import type { GroupMemberOptions } from './group-member-options.ts'
import { DescribeGroupsApi, type DescribedGroup } from './protocol/describe-groups.ts'
import type { JoinGroupResponse } from './protocol/join-group.ts'
import type { SyncGroupAssignment } from './protocol/sync-group.ts'

export interface LeaderPlan {
  readonly assignments: SyncGroupAssignment[]
  /** Transactional ids of lost members, to fence before the SyncGroup that hands their work out. */
  readonly fence: readonly string[]
}

/**
 * The members a described group lists (name and transactional id, from each one's metadata), for a leader with no
 * assignment of its own yet, just started: an instance killed moments before (kill -9, then restarted) stays listed
 * until its session ends, so the first generation without it fences its transactional id at once, instead of its
 * open transaction holding read_committed readers back until the transaction timeout (60 s by default). None for another
 * program's group, an empty one, or members whose metadata kmirror cannot read.
 */
export function describedMembers (group: DescribedGroup | undefined, protocolType: string): PreviousMember[] {
  if (group === undefined || group.errorCode !== 0 || group.protocolType !== protocolType) return []
  const members: PreviousMember[] = []
  for (const m of group.members) {
    try {
      const metadata = decodeMemberMetadata(m.metadata, `the metadata of member ${m.memberId} of group ${group.groupId}`)
      members.push({ name: metadata.memberName, transactionalId: metadata.transactionalId })
    } catch {
      // Another version's metadata, or none: nothing to fence for it.
    }
  }
  return members
}

/**
 * The members the group lists before this member first joins (`describedMembers`), and those gone whose
 * transactions are still open (`openOfGone`, when given). One attempt each: without them, the open transaction of
 * an instance killed just before ends at the transaction timeout, as it would alone.
 */
export async function membersBeforeJoin (coordinator: Pick<GroupCoordinator, 'send'>, groupId: string, protocolType: string, log: Logger,
  openOfGone?: () => Promise<readonly PreviousMember[]>): Promise<PreviousMember[]> {
  const [listed, open] = await Promise.all([listedMembers(coordinator, groupId, protocolType, log), goneWithOpenTransactions(groupId, log, openOfGone)])
  const known = new Set(listed.map(m => m.transactionalId))
  return [...listed, ...open.filter(m => !known.has(m.transactionalId))]
}

async function listedMembers (coordinator: Pick<GroupCoordinator, 'send'>, groupId: string, protocolType: string, log: Logger): Promise<PreviousMember[]> {
  try {
    const answer = await coordinator.send(DescribeGroupsApi, { groups: [groupId] }, 'beat')
    return describedMembers(answer.groups[0], protocolType)
  } catch (err) {
    log.debug({ group: groupId, err }, 'could not describe the group before joining it; the transactional ids of members killed just before are not fenced by this member')
    return []
  }
}

/**
 * OPEN_OF_GONE's answer; none when it fails. It must bound its own time (the first join waits for it) and tell the
 * operator what a failure costs: runtime/orphan-transactions.ts does both.
 */
async function goneWithOpenTransactions (groupId: string, log: Logger, openOfGone?: () => Promise<readonly PreviousMember[]>): Promise<readonly PreviousMember[]> {
  if (openOfGone === undefined) return []
  try {
    return await openOfGone()
  } catch (err) {
    log.debug({ group: groupId, err }, 'could not list the open transactions of members gone before joining the group')
    return []
  }
}

export function planAssignments (join: JoinGroupResponse, work: readonly WorkItem[], previousMembers: readonly PreviousMember[], groupId: string, log: Logger): LeaderPlan {
  const members = join.members.map(m => {
    try {
      const metadata = decodeMemberMetadata(m.metadata, `the metadata of member ${m.memberId} of group ${groupId}`)
      return { memberId: m.memberId, name: metadata.memberName, owned: metadata.owned, transactionalId: metadata.transactionalId }
    } catch (err) {
      log.warn({ group: groupId, member: m.memberId, err }, 'a member of the group sent metadata kmirror cannot read; it gets no work')
      return null
    }
  })
  const valid = members.filter(m => m !== null)
  const result = assignWork({ members: valid, work, previousMembers })
  const summary = valid.map(m => {
    const assigned = result.get(m.memberId)!.assigned
    return { memberName: m.name, transactionalId: m.transactionalId, partitions: assigned.filter(k => !isJobKey(k)).length, jobs: assigned.filter(isJobKey).map(k => k.slice(2)) }
  }).sort((a, b) => (a.memberName < b.memberName ? -1 : a.memberName > b.memberName ? 1 : 0))
  const leaderName = valid.find(m => m.memberId === join.memberId)?.name ?? ''
  const assignments = join.members.map(({ memberId }) => {
    const a = result.get(memberId)
    return {
      memberId,
      assignment: encodeWorkAssignment({
        error: a === undefined ? AssignmentErrors.MEMBER_METADATA_INVALID : AssignmentErrors.NONE,
        generation: join.generationId,
        leaderName,
        assigned: a?.assigned ?? [],
        revoked: a?.revoked ?? [],
        fence: a?.fence ?? [],
        members: summary
      })
    }
  })
  return { assignments, fence: [...new Set([...result.values()].flatMap(a => a.fence))].sort() }
}

/** The leader's round: every member's assignment for this generation, lost members fenced first. */
export async function leadRound (join: JoinGroupResponse, previous: readonly PreviousMember[],
  o: Pick<GroupMemberOptions, 'groupId' | 'log' | 'owner' | 'fenceTransactionalIds'>): Promise<SyncGroupAssignment[]> {
  const work = await leaderStep(o.groupId, 'listing the work of the flow', () => o.owner.listWork())
  const plan = planAssignments(join, work, previous, o.groupId, o.log)
  const fence = o.fenceTransactionalIds
  if (plan.fence.length > 0 && fence !== undefined) {
    o.log.info({ group: o.groupId, transactionalIds: plan.fence }, 'fencing the transactional ids of members that left work behind')
    await leaderStep(o.groupId, `fencing transactional ids ${plan.fence.join(', ')}`, () => fence(plan.fence))
  }
  return plan.assignments
}

/** A leader step that failed fails this round only: retried after a back-off, with a new rebalance. */
async function leaderStep<T> (groupId: string, what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err)
    throw new KmirrorError(err instanceof KmirrorError ? err.code : ErrorCodes.GROUP_MEMBERSHIP, `group ${groupId} leader: ${what} failed: ${reason}`, { cause: err, retriable: true })
  }
}
