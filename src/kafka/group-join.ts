/**
 * One JoinGroup exchange of a group member, as the member's lease needs it told (member-lease.ts).
 *
 * Invariants:
 * - A first join on a broker that wants a member id first (JoinGroup v4+, KIP-394: MEMBER_ID_REQUIRED) is sent
 *   again at once with the id it was given; the send time returned is that of the request that was answered.
 * - The lease hears `joinSent` as each request leaves (GroupCoordinator.send's `onSent`) and `joinEnded` when none
 *   is answered (a network failure, a timeout): while a JoinGroup sent under a valid lease is pending, the
 *   coordinator waits for it.
 */
import { membershipError, MembershipErrors } from './errors.ts'
import type { GroupCoordinatorPort } from './group-coordinator.ts'
import type { MemberLease } from './member-lease.ts'
import { JoinGroupApi, type JoinGroupRequest, type JoinGroupResponse } from './protocol/join-group.ts'

export interface JoinAnswer {
  readonly join: JoinGroupResponse
  /** Send time of the request that was answered. */
  readonly sentAt: number
}

/** Sends REQUEST (twice when the broker first hands out a member id); ON_MEMBER_ID hears an id handed out. */
export async function joinGroup (coordinator: GroupCoordinatorPort, request: JoinGroupRequest, lease: MemberLease,
  onMemberId: (memberId: string) => void): Promise<JoinAnswer> {
  // (a port that does not report sending, a test's fake, leaves the time before the call)
  let sentAt = Date.now()
  const sent = (at: number): void => { sentAt = at; lease.joinSent(at) }
  try {
    let join = await coordinator.send(JoinGroupApi, request, 'join', sent)
    if (membershipError(join.errorCode) === MembershipErrors.ID_REQUIRED) {
      onMemberId(join.memberId)
      join = await coordinator.send(JoinGroupApi, { ...request, memberId: join.memberId }, 'join', sent)
    }
    return { join, sentAt }
  } catch (err) {
    lease.joinEnded(false)
    throw err
  }
}
