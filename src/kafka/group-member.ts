/**
 * One kmirror instance's membership in a flow's group on the target cluster (protocol type `kmirror`, protocol
 * `sticky-v1`): join, let the leader assign (sticky-assignor.ts), run what is assigned through the WorkOwner,
 * heartbeat, and hand work over cleanly. See ARCHITECTURE.md, "Group membership".
 *
 * Invariants:
 * - The owner runs exactly `#owned` (member-work.ts): an assignment adds to it, a revoke and a loss take from it.
 * - Work is revoked before anything else of an assignment starts, and a member that revoked rejoins at once, so
 *   the leader can hand the items over in the next round (two-round cooperative protocol).
 * - Lease (member-lease.ts): `leaseValid(now)` ends before the coordinator can give this member's work to another.
 * - Membership lost (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID, or, in exactly-once mode, the
 *   lease running out while the member holds work): `owner.lose()` at once (also with no work: the owner's
 *   exactly-once producer belongs to the membership), then LeaveGroup with the old member id (best effort, bounded
 *   by heartbeat.interval.ms: a coordinator that still holds it would wait for it in the next rebalance), then a
 *   join as a new member. Answers to requests of an earlier membership (`#incarnation`) are dropped.
 * - A lease that runs out in at-least-once mode (`holdPastLease`) does not lose the work: the member holds it,
 *   writing nothing (the lease gate is closed), and keeps sending heartbeats. Only the coordinator decides: an
 *   answer as from a member of the generation (heartbeat NONE: nobody was given its work, the group never
 *   rebalanced without it; REBALANCE_IN_PROGRESS, within the rebalance's own deadline; a join and sync answered)
 *   makes the lease hold again from that request's send time, and the work goes on where it stopped, nothing
 *   copied twice; an answer that it is gone loses it as above. So a coordinator that moved, restarted or paused
 *   past the lease costs a pause, not a re-copy from the stored progress. A stop past the lease loses the work
 *   (nothing can be stored) and leaves within a heartbeat interval.
 * - A stop hands the work over (revoke: progress stored) while heartbeats go on, so the lease holds through it, and
 *   sends LeaveGroup by the stop's deadline (member-hand-over.ts): a hand-over that cannot finish in time, or whose
 *   lease runs out or membership is lost meanwhile, is dropped as lost (nothing more stored or written) and the
 *   member leaves anyway. Nothing is written from the moment the LeaveGroup goes out (`leaseValid` is false).
 * - Heartbeats keep going during a rebalance (their own connection): an answer REBALANCE_IN_PROGRESS still comes
 *   from a member of the generation, so work that stays keeps running while the group rebalances, until the
 *   rebalance's own deadline (rebalance.timeout.ms after the last steady answer: member-lease.ts), and after a
 *   join's answer until SyncGroup is sent, its sync deadline (a leader slow to assign).
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { PreviousMember } from '../cluster/sticky-assignor.ts'
import {
  AssignmentErrors, encodeMemberMetadata, type GenerationMember, type WorkAssignment
} from '../formats/work-assignment.ts'
import { isCoordinatorRetriable, kafkaErrorName, membershipError, MembershipErrors } from './errors.ts'
import { GroupCoordinator, type GroupCoordinatorPort } from './group-coordinator.ts'
import { joinGroup, type JoinAnswer } from './group-join.ts'
import { JoinBackOff } from './join-back-off.ts'
import { leaveLostMembership, leaveOnStop } from './group-leave.ts'
import { leadRound, membersBeforeJoin } from './group-leader.ts'
import { readAssignment, type GroupMemberOptions, type GroupStatus } from './group-member-options.ts'
import { HeartbeatApi } from './protocol/heartbeat.ts'
import { SyncGroupApi } from './protocol/sync-group.ts'
import { MemberLease } from './member-lease.ts'
import { MemberPauses } from './member-pauses.ts'
import { MemberWork } from './member-work.ts'
import { HandOver, LEAVE_RESERVE_MS, leaveWaitMs } from './member-hand-over.ts'
import { LEASE_RAN_OUT, LeaseHold } from './lease-hold.ts'

export { defaultMemberName, type GroupMemberOptions, type GroupStatus } from './group-member-options.ts'

export const PROTOCOL_TYPE = 'kmirror'
export const PROTOCOL_NAME = 'sticky-v1'

export class GroupMember {
  readonly #o: GroupMemberOptions
  readonly #coordinator: GroupCoordinatorPort
  readonly #lease: MemberLease
  readonly #owned: MemberWork
  #memberId = ''
  /** The member id of a membership lost since the last join: left before the next join. */
  #lostMemberId: string | null = null
  #generation = -1
  #leaderId = ''
  #incarnation = 0
  #rejoin = true
  #joining = false
  #stopped = false
  /** A stopping member sends its LeaveGroup (or failed): nothing is written or heartbeated from then on. */
  #left = false
  #failed = false
  #lastAssignment: WorkAssignment | null = null
  /** Exactly-once: the members the group listed before this one first joined (`describedMembers`). */
  #listedBeforeJoin: readonly PreviousMember[] = []
  #lastError: string | null = null
  /** At-least-once mode: the work held past a lease that ran out (see the invariants). */
  readonly #hold: LeaseHold
  #loops: Promise<void>[] = []
  #applying: Promise<void> = Promise.resolve()
  #stopping: Promise<void> | null = null
  /** The join loop's waits: they end at the stop. */
  readonly #pauses = new MemberPauses()
  /** The heartbeat loop's waits: they go on through a stop's hand-over and end as the member leaves. */
  readonly #beats = new MemberPauses()
  readonly #handOver: HandOver

  constructor (options: GroupMemberOptions) {
    this.#o = options
    this.#lease = new MemberLease(options.sessionTimeoutMs, options.heartbeatIntervalMs, options.rebalanceTimeoutMs)
    this.#hold = new LeaseHold(options.log, options.groupId, options.cluster.label)
    this.#owned = new MemberWork(options.owner, options.log, options.groupId)
    this.#handOver = new HandOver(options, () => this.#owned.take())
    this.#coordinator = options.coordinator ?? new GroupCoordinator(options.props, options.clientId, options.cluster, options.groupId, options.rebalanceTimeoutMs,
      (from, to, nodeId) => { options.log.warn({ group: options.groupId, cluster: options.cluster.label, from, to, nodeId }, `the coordinator of group ${options.groupId} on ${options.cluster.label} moved from broker ${from} to broker ${to} (node ${nodeId}): the member carries on with it`) })
  }

  /** Starts joining and heartbeating; returns at once. */
  start (): void {
    if (this.#loops.length > 0) return
    this.#loops = [this.#joinLoop(), this.#heartbeatLoop()]
  }

  /** Whether this member may write its work now (see the lease invariant). Synchronous: the data path asks it before each produce. */
  leaseValid (now = Date.now()): boolean {
    return !this.#left && this.#lease.valid(now)
  }

  /** Since when (epoch ms) this member's lease has not held; null while it holds (member-lease.ts `invalidSince`). */
  leaseInvalidSince (now = Date.now()): number | null {
    return this.#lease.invalidSince(now)
  }

  /** The work changed (partitions added or removed): rejoin so the leader assigns again. */
  requestRebalance (): void {
    this.#rejoin = true
    this.#pauses.wake()
  }

  status (): GroupStatus {
    return {
      groupId: this.#o.groupId,
      memberName: this.#o.memberName,
      memberId: this.#memberId,
      generation: this.#generation,
      leader: this.#memberId !== '' && this.#leaderId === this.#memberId,
      leaderName: this.#lastAssignment?.leaderName ?? null,
      state: this.#failed ? 'failed' : this.#stopped ? 'stopped' : this.#rejoin || this.#joining || this.#generation < 0 ? 'joining' : 'stable',
      leaseValid: this.leaseValid(),
      owned: this.#owned.sorted(),
      members: this.#lastAssignment?.members ?? [],
      lastError: this.#hold.statusError(this.#lastError)
    }
  }

  /** Every member of the current generation, as the last assignment named them. */
  members (): readonly GenerationMember[] {
    return this.#lastAssignment?.members ?? []
  }

  /**
   * Clean stop: revoke everything (progress stored) while heartbeats keep the lease, leave the group, close the
   * connections. The member has left by LEAVE_BY (epoch ms; a session from now by default), or as soon after as
   * its LeaveGroup could be sent (see the invariants).
   */
  stop (leaveBy = Date.now() + this.#o.sessionTimeoutMs): Promise<void> {
    this.#stopping ??= this.#stop(leaveBy)
    return this.#stopping
  }

  /** Tests: behave as a process frozen by SIGSTOP (no heartbeat, no join) until `thawForTest`. */
  freezeForTest (): void {
    this.#pauses.freeze()
    this.#beats.freeze()
  }

  thawForTest (): void {
    this.#pauses.thaw()
    this.#beats.thaw()
  }

  async #stop (leaveBy: number): Promise<void> {
    this.#stopped = true
    this.#incarnation++
    this.#pauses.stop()
    // Past the lease (work held, or the lease just ran out) nothing can be stored: the work is dropped as lost at
    // once, also what an assignment under way (a revoke storing its progress) holds, which would retry its store
    // until the flow stops.
    const held = this.#lease.valid(Date.now())
    if (!held && this.#generation >= 0) this.#owned.lose()
    await this.#handOver.run(this.#applying, now => this.#lease.valid(now), leaveBy - LEAVE_RESERVE_MS)
    this.#hold.clear()
    // Nothing is written from here on: the coordinator hands the work out as soon as it reads the LeaveGroup.
    this.#left = true
    this.#beats.stop()
    // A member that lost its membership and did not join again yet leaves with the lost id. Past its lease the
    // coordinator may be silent: a heartbeat interval at most, so the stop keeps its deadline.
    const leaving = this.#memberId !== '' ? this.#memberId : this.#lostMemberId
    const bound = held ? this.#o.sessionTimeoutMs : this.#o.heartbeatIntervalMs
    if (leaving !== null) await leaveOnStop(this.#coordinator, this.#o.groupId, leaving, leaveWaitMs(leaveBy, bound), this.#o.log)
    this.#memberId = ''
    this.#generation = -1
    await this.#coordinator.close()
    await Promise.allSettled(this.#loops)
  }

  async #joinLoop (): Promise<void> {
    // Exactly-once: who the group lists before this member first joins (a leader with no assignment yet fences those gone).
    // A stop meanwhile does not wait for it (the open transactions' listing may take its whole patience).
    if (this.#o.fenceTransactionalIds !== undefined) {
      this.#listedBeforeJoin = await this.#pauses.untilStopped(membersBeforeJoin(this.#coordinator, this.#o.groupId, PROTOCOL_TYPE, this.#o.log, this.#o.openTransactionsOfGone), [])
    }
    const backOff = new JoinBackOff(this.#o.sessionTimeoutMs)
    while (!this.#stopped) {
      await this.#pauses.unlessFrozen()
      if (this.#stopped) break
      try {
        if (this.#rejoin) await this.#joinRound()
        else await this.#pauses.nap(this.#o.heartbeatIntervalMs, this.#rejoin)
        backOff.reset()
      } catch (err) {
        this.#rejoin = true
        if (this.#stopped) break
        const error = err instanceof KmirrorError ? err : new KmirrorError(ErrorCodes.INTERNAL, `group ${this.#o.groupId}: ${String(err)}`, { cause: err })
        if (!error.retriable) { this.#fail(error); return }
        this.#lastError = error.message
        // A coordinator moving or loading is routine for a session timeout (join-back-off.ts).
        const { retryInMs, routine } = backOff.failed(error)
        this.#o.log[routine ? 'info' : 'warn']({ group: this.#o.groupId, err: error, retryInMs }, 'group membership: will try again')
        await this.#pauses.sleep(retryInMs)
      }
    }
  }

  /** One JoinGroup + SyncGroup, then the assignment applied. */
  async #joinRound (): Promise<void> {
    const incarnation = this.#incarnation
    this.#rejoin = false
    this.#joining = true
    try {
      await this.#leaveLostMembership()
      const { join, sentAt: joinSentAt } = await this.#join()
      if (incarnation !== this.#incarnation || this.#stopped) return
      if (join.errorCode !== 0) { this.#lease.joinEnded(true); this.#onGroupError(join.errorCode, 'JoinGroup'); return }
      this.#lease.joinAnswered(joinSentAt, join.generationId)
      this.#memberId = join.memberId
      this.#generation = join.generationId
      this.#leaderId = join.leader
      // A member that never had an assignment (just started) takes the members listed before its first join.
      const previous = (): readonly PreviousMember[] => this.#lastAssignment?.members.map(m => ({ name: m.memberName, transactionalId: m.transactionalId })) ?? this.#listedBeforeJoin
      const assignments = join.leader === join.memberId ? await leadRound(join, previous(), this.#o) : []
      if (incarnation !== this.#incarnation || this.#stopped) return
      let sentAt = Date.now()
      const sync = await this.#coordinator.send(SyncGroupApi, {
        groupId: this.#o.groupId, generationId: join.generationId, memberId: join.memberId, protocolType: PROTOCOL_TYPE, protocolName: PROTOCOL_NAME, assignments
      }, 'join', at => { sentAt = at; this.#lease.syncSent(at) }).catch((err: unknown) => { this.#lease.syncEnded(); throw err })
      if (incarnation !== this.#incarnation || this.#stopped) return
      if (sync.errorCode !== 0) { this.#lease.syncEnded(); this.#onGroupError(sync.errorCode, 'SyncGroup'); return }
      this.#lease.syncAnswered(sentAt)
      const assignment = readAssignment(sync.assignment, this.#o.groupId)
      this.#joining = false
      this.#applying = this.#apply(assignment, incarnation).catch((err: unknown) => {
        // A stop ends the reads an assignment's start waits on (a transaction holding the progress topic): expected.
        if (this.#stopped) {
          this.#o.log.info({ group: this.#o.groupId, err }, 'the assignment under way ended with the stop')
          return
        }
        // Work in an unknown state cannot be handed over cleanly: stop all of it at once and start afresh.
        this.#o.log.error({ group: this.#o.groupId, err }, 'starting or stopping assigned work failed')
        this.#lastError = err instanceof Error ? err.message : String(err)
        if (incarnation === this.#incarnation && !this.#stopped) this.#lose('the work owner failed')
      })
      await this.#applying
    } finally {
      this.#joining = false
    }
  }

  /** LeaveGroup with the member id of a membership lost since the last join, if any (see the invariants). */
  async #leaveLostMembership (): Promise<void> {
    const lost = this.#lostMemberId
    this.#lostMemberId = null
    if (lost !== null) await leaveLostMembership(this.#coordinator, this.#o.groupId, lost, this.#o.heartbeatIntervalMs, this.#o.log)
  }

  /** JoinGroup (group-join.ts) with this member's metadata: the work it owns. */
  async #join (): Promise<JoinAnswer> {
    const metadata = encodeMemberMetadata({ memberName: this.#o.memberName, transactionalId: this.#o.transactionalId, owned: this.#owned.sorted() })
    return await joinGroup(this.#coordinator, {
      groupId: this.#o.groupId,
      sessionTimeoutMs: this.#o.sessionTimeoutMs,
      rebalanceTimeoutMs: this.#o.rebalanceTimeoutMs,
      memberId: this.#memberId,
      protocolType: PROTOCOL_TYPE,
      protocols: [{ name: PROTOCOL_NAME, metadata }],
      reason: null
    }, this.#lease, id => { this.#memberId = id })
  }

  /** Revoke first (then rejoin), then start what is new. */
  async #apply (assignment: WorkAssignment, incarnation: number): Promise<void> {
    this.#lastAssignment = assignment
    this.#lastError = null
    if (assignment.error !== AssignmentErrors.NONE) this.#o.log.warn({ group: this.#o.groupId, error: assignment.error }, 'the leader could not read this member\'s metadata: no work this round')
    if (await this.#owned.revokeUnassigned(assignment)) this.#rejoin = true
    if (incarnation !== this.#incarnation) return
    // A membership lost while the work started (lose() ran for the earlier set) loses this too.
    await this.#owned.startAssigned(assignment, () => incarnation !== this.#incarnation && !this.#stopped)
    if (this.#rejoin) this.#pauses.wake()
  }

  /** A group error answered to JoinGroup or SyncGroup. */
  #onGroupError (errorCode: number, api: string): void {
    this.#rejoin = true
    const membership = membershipError(errorCode)
    if (membership === MembershipErrors.REBALANCING) return
    if (membership === MembershipErrors.GONE) { this.#lose(`${api} answered ${kafkaErrorName(errorCode)}`, errorCode); return }
    if (isCoordinatorRetriable(errorCode)) {
      this.#coordinator.reset()
      throw new KmirrorError(ErrorCodes.GROUP_MEMBERSHIP, `${api} of group ${this.#o.groupId}: the coordinator moved or is loading (${kafkaErrorName(errorCode)})`, { retriable: true, details: { kafkaErrors: [kafkaErrorName(errorCode)] } })
    }
    throw this.#coordinator.refusal(errorCode, api)
  }

  async #heartbeatLoop (): Promise<void> {
    while (!this.#left) {
      await this.#beats.sleep(this.#o.heartbeatIntervalMs)
      await this.#beats.unlessFrozen()
      if (this.#left) break
      this.#checkLease()
      if (this.#generation < 0 || this.#memberId === '') continue
      await this.#heartbeat()
      // A heartbeat left unanswered may have taken up to the session: the lease may have ended meanwhile.
      if (!this.#left) this.#checkLease()
      if (this.#hold.held && this.leaseValid()) {
        this.#hold.end(this.#generation)
        this.#lastError = null
      }
    }
  }

  /** A lease run out ends a stop's hand-over (nothing can be stored past it); otherwise see `#leaseRanOut`. */
  #checkLease (): void {
    if (this.#stopped) {
      if (!this.#lease.valid(Date.now())) this.#handOver.cut(LEASE_RAN_OUT)
    } else if (this.#owned.size > 0 && !this.leaseValid()) {
      this.#leaseRanOut()
    }
  }

  /** The lease ran out with work owned: lost at once in exactly-once mode, held in at-least-once mode (invariants). */
  #leaseRanOut (): void {
    if (this.#o.holdPastLease !== true) { this.#lose(LEASE_RAN_OUT); return }
    this.#hold.begin(this.#generation, this.#owned.size, this.#lease.validUntil(), this.#coordinator.address)
  }

  async #heartbeat (): Promise<void> {
    const incarnation = this.#incarnation
    const generation = this.#generation
    const sentAt = Date.now()
    let errorCode
    try {
      // Bounded by the session: a coordinator silent that long (wedged) is found again, through another broker.
      ({ errorCode } = await this.#coordinator.send(HeartbeatApi, { groupId: this.#o.groupId, generationId: generation, memberId: this.#memberId }, 'beat', undefined, this.#o.sessionTimeoutMs))
    } catch (err) {
      this.#lastError = err instanceof Error ? err.message : String(err)
      this.#o.log.debug({ group: this.#o.groupId, err }, 'heartbeat failed; the lease runs out unless one is answered in time')
      return
    }
    // A stopping member's heartbeats still count until it leaves: they keep the lease of its hand-over.
    if (incarnation !== this.#incarnation || this.#left) return
    const membership = membershipError(errorCode)
    if (errorCode === 0 || membership === MembershipErrors.REBALANCING) {
      // REBALANCE_IN_PROGRESS keeps the session, not past the rebalance's own deadline (member-lease.ts).
      if (generation === this.#generation) {
        if (errorCode === 0) this.#lease.ack(sentAt)
        else this.#lease.ackRebalancing(sentAt)
      }
      if (membership === MembershipErrors.REBALANCING && !this.#joining) this.requestRebalance()
    } else if (kafkaErrorName(errorCode) === 'ILLEGAL_GENERATION' && (this.#joining || generation !== this.#generation)) {
      // A new generation formed while this member's join is under way: its answer brings the new generation.
    } else if (membership === MembershipErrors.GONE) {
      this.#lose(`Heartbeat answered ${kafkaErrorName(errorCode)}`, errorCode)
    } else if (isCoordinatorRetriable(errorCode)) {
      this.#coordinator.reset()
    } else {
      this.#lastError = this.#coordinator.refusal(errorCode, 'Heartbeat').message
      this.#o.log.warn({ group: this.#o.groupId, errorCode }, this.#lastError)
    }
  }

  /**
   * Membership is gone: stop everything at once, join again as a new member. The old member id is left first
   * unless the coordinator answered that it does not know it (ERROR_CODE UNKNOWN_MEMBER_ID).
   */
  #lose (reason: string, errorCode?: number): void {
    this.#incarnation++
    this.#hold.clear()
    if (this.#owned.size > 0) this.#o.log.warn({ group: this.#o.groupId, reason, owned: this.#owned.size }, 'group membership lost: stopping all work at once, joining again as a new member')
    // Even with no work: what the owner holds for the membership (an exactly-once producer) ends with it.
    this.#owned.lose()
    if (this.#memberId !== '' && (errorCode === undefined || kafkaErrorName(errorCode) !== 'UNKNOWN_MEMBER_ID')) this.#lostMemberId = this.#memberId
    this.#memberId = ''
    this.#generation = -1
    this.#lease.end(Date.now())
    this.requestRebalance()
    // A stop's hand-over under way ends: nothing more is stored (lose() above) and the member leaves.
    if (this.#stopped) this.#handOver.cut(`the membership was lost: ${reason}`, true)
  }

  #fail (error: KmirrorError): void {
    this.#failed = true
    this.#stopped = true
    this.#left = true
    this.#hold.clear()
    this.#lastError = error.message
    this.#o.log.error({ group: this.#o.groupId, err: error }, 'group membership failed')
    if (this.#owned.take().length > 0) this.#o.owner.lose()
    this.#o.onFatal?.(error)
  }
}
