/**
 * A group coordinator and a work owner for GroupMember unit tests (no broker): a group of one whose coordinator
 * answers as scripted, and an owner that counts its work.
 */
import type { WorkItem } from '../../src/cluster/work.ts'
import type { WorkOwner } from '../../src/cluster/work-owner.ts'
import { ErrorCodes, KmirrorError } from '../../src/errors.ts'
import type { GroupCoordinatorPort, GroupLane } from '../../src/kafka/group-coordinator.ts'
import type { ApiSpec } from '../../src/kafka/protocol/api.ts'
import type { HeartbeatRequest } from '../../src/kafka/protocol/heartbeat.ts'
import type { JoinGroupRequest } from '../../src/kafka/protocol/join-group.ts'
import type { LeaveGroupRequest, LeaveGroupResponse } from '../../src/kafka/protocol/leave-group.ts'
import type { SyncGroupRequest } from '../../src/kafka/protocol/sync-group.ts'

export const E = { UNKNOWN_MEMBER_ID: 25, ILLEGAL_GENERATION: 22, REBALANCE_IN_PROGRESS: 27 }
export const GROUP = 'kmirror-A-B'

export interface Sent { readonly api: string, readonly memberId: string }

/**
 * A coordinator of a group of one: each JoinGroup makes a new generation led by the joining member (a new member
 * id when it comes without one), SyncGroup hands back the leader's assignment, Heartbeat answers `heartbeatErrors`
 * one by one (then 0), LeaveGroup answers `leave(memberId)`.
 */
export class FakeCoordinator implements GroupCoordinatorPort {
  readonly cluster = { label: 'cluster B', alias: 'B' }
  readonly address = '127.0.0.1:9192'
  readonly sent: Sent[] = []
  heartbeatErrors: number[] = []
  /** JoinGroup answers these error codes one by one (then joins). */
  joinErrors: number[] = []
  /** While set, heartbeats get no answer (a coordinator gone quiet): they fail as a lost connection does. */
  heartbeatsUnanswered = false
  /** While set, JoinGroup answers only once it resolves (a join that does not come back). */
  joinGate: Promise<void> | null = null
  leave: (memberId: string) => Promise<LeaveGroupResponse> = async memberId => ({ throttleTimeMs: 0, errorCode: 0, members: [{ memberId, errorCode: 0 }] })
  #members = 0
  #generation = 0

  async send<Req, Res> (spec: ApiSpec<Req, Res>, request: Req, _lane: GroupLane, onSent?: (at: number) => void): Promise<Res> {
    onSent?.(Date.now())
    const answer = await this.#answer(spec.name, request)
    return answer as Res
  }

  async #answer (api: string, request: unknown): Promise<unknown> {
    const memberId = (request as { memberId: string }).memberId
    this.sent.push({ api, memberId })
    if (api === 'JoinGroup') {
      if (this.joinGate !== null) await this.joinGate
      const error = this.joinErrors.shift()
      if (error !== undefined) return { throttleTimeMs: 0, errorCode: error, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId: '', members: [] }
      const join = request as JoinGroupRequest
      const id = join.memberId === '' ? `m${++this.#members}` : join.memberId
      return { throttleTimeMs: 0, errorCode: 0, generationId: ++this.#generation, protocolType: join.protocolType, protocolName: join.protocols[0]!.name, leader: id, skipAssignment: false, memberId: id, members: [{ memberId: id, groupInstanceId: null, metadata: join.protocols[0]!.metadata }] }
    }
    if (api === 'SyncGroup') {
      const sync = request as SyncGroupRequest
      return { throttleTimeMs: 0, errorCode: 0, protocolType: sync.protocolType, protocolName: sync.protocolName, assignment: sync.assignments.find(a => a.memberId === sync.memberId)!.assignment }
    }
    if (api === 'Heartbeat' && this.heartbeatsUnanswered) throw new Error('connection closed: no answer')
    if (api === 'Heartbeat') return { throttleTimeMs: 0, errorCode: (request as HeartbeatRequest).generationId === this.#generation ? this.heartbeatErrors.shift() ?? 0 : E.ILLEGAL_GENERATION }
    if (api === 'LeaveGroup') return await this.leave((request as LeaveGroupRequest).memberId)
    throw new Error(`unexpected ${api}`)
  }

  reset (): void {}
  refusal (errorCode: number, action: string): KmirrorError {
    return new KmirrorError(ErrorCodes.GROUP_MEMBERSHIP, `${action} refused with Kafka error ${errorCode}`)
  }

  async close (): Promise<void> {}
}

export class FakeOwner implements WorkOwner {
  owned = 0
  lost = 0
  /** While set, assign returns only once it resolves (work slow to start, holding up the member's next join). */
  assignGate: Promise<void> | null = null
  assigning = false
  /** While set, listWork returns only once it resolves (a leader slow to compute the assignment). */
  listGate: Promise<void> | null = null
  async listWork (): Promise<WorkItem[]> {
    if (this.listGate !== null) await this.listGate
    return [{ kind: 'partition', topic: 'A.t', partition: 0 }]
  }
  async assign (items: readonly WorkItem[]): Promise<void> {
    this.owned += items.length
    this.assigning = true
    if (this.assignGate !== null) await this.assignGate
  }
  async revoke (items: readonly WorkItem[], _by?: number): Promise<void> { this.owned -= items.length }
  lose (): void { this.owned = 0; this.lost++ }
}
