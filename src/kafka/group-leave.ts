/**
 * LeaveGroup for one member id, best effort and bounded: it never throws, it says what happened.
 *
 * Two callers (group-member.ts): a clean stop leaves, so the group rebalances at once instead of after the
 * session timeout; and a member that lost its membership leaves with its old member id before it joins as a new
 * member. A coordinator that still holds the old id (the member's lease ran out before the coordinator evicted it,
 * or an ILLEGAL_GENERATION) would otherwise wait for that id in the next rebalance until the old session times out
 * or rebalance.timeout.ms passes, with every member's new work on hold.
 */
import { withApiDeadline } from './api-deadline.ts'
import { kafkaErrorName } from './errors.ts'
import type { GroupCoordinatorPort } from './group-coordinator.ts'
import { LeaveGroupApi } from './protocol/leave-group.ts'
import type { Logger } from '../logger.ts'

export const LeaveOutcomes = {
  LEFT: 'left',
  /** The coordinator no longer knows the member id (evicted already): nothing to leave. */
  UNKNOWN: 'unknown',
  /** The coordinator answered another error (named in `error`). */
  REFUSED: 'refused',
  /** No answer within the deadline, or the request failed (`error` says why). */
  FAILED: 'failed'
} as const
export type LeaveOutcome = (typeof LeaveOutcomes)[keyof typeof LeaveOutcomes]

export interface LeaveResult {
  readonly outcome: LeaveOutcome
  readonly error?: string
}

/** Sends LeaveGroup for MEMBER_ID of GROUP_ID, waiting at most TIMEOUT_MS for the answer. */
export async function leaveGroup (coordinator: GroupCoordinatorPort, groupId: string, memberId: string, timeoutMs: number): Promise<LeaveResult> {
  let answer
  try {
    answer = await withApiDeadline(() => coordinator.send(LeaveGroupApi, { groupId, memberId }, 'beat'), timeoutMs,
      `LeaveGroup of member ${memberId} of group ${groupId}`, coordinator.cluster)
  } catch (err) {
    return { outcome: LeaveOutcomes.FAILED, error: err instanceof Error ? err.message : String(err) }
  }
  // v3+ answers per member: the request's own error is 0 and the member's carries UNKNOWN_MEMBER_ID.
  const errorCode = answer.errorCode !== 0 ? answer.errorCode : answer.members.find(m => m.errorCode !== 0)?.errorCode ?? 0
  if (errorCode === 0) return { outcome: LeaveOutcomes.LEFT }
  const error = kafkaErrorName(errorCode)
  return { outcome: error === 'UNKNOWN_MEMBER_ID' ? LeaveOutcomes.UNKNOWN : LeaveOutcomes.REFUSED, error }
}

/**
 * LeaveGroup with the member id LOST of a membership lost since the last join, so the next rebalance does not wait
 * for it; bounded by TIMEOUT_MS (a heartbeat interval), and the member joins as a new one whatever the answer.
 */
export async function leaveLostMembership (coordinator: GroupCoordinatorPort, groupId: string, lost: string, timeoutMs: number, log: Logger): Promise<void> {
  const cluster = coordinator.cluster.label
  const left = await leaveGroup(coordinator, groupId, lost, timeoutMs)
  if (left.outcome === LeaveOutcomes.LEFT) log.info({ group: groupId, cluster, memberId: lost }, `left group ${groupId} with the member id of the lost membership on ${cluster}, so the next rebalance does not wait for it; joining as a new member`)
  else if (left.outcome !== LeaveOutcomes.UNKNOWN) log.debug({ group: groupId, cluster, memberId: lost, error: left.error }, 'could not leave with the member id of the lost membership; joining as a new member anyway')
}

/**
 * LeaveGroup of a stopping member with MEMBER_ID, waiting TIMEOUT_MS at most (never more than the session: the
 * coordinator drops the member by then anyway); a refusal or no answer is a warning, the stop goes on.
 */
export async function leaveOnStop (coordinator: GroupCoordinatorPort, groupId: string, memberId: string, timeoutMs: number, log: Logger): Promise<void> {
  const cluster = coordinator.cluster.label
  const left = await leaveGroup(coordinator, groupId, memberId, timeoutMs)
  if (left.outcome === LeaveOutcomes.REFUSED || left.outcome === LeaveOutcomes.FAILED) {
    log.warn({ group: groupId, cluster, error: left.error }, `could not leave group ${groupId} on ${cluster} (${left.error ?? 'no answer'}); the coordinator drops this member after its session timeout`)
  }
}
