/**
 * A group member's lease on its work: how long it may still write what it was assigned without hearing from the
 * coordinator.
 *
 * Invariants:
 * - `valid(now)` holds only while now < (send time of the last request the coordinator answered as from a member of
 *   the current generation) + session.timeout.ms - heartbeat.interval.ms. The coordinator evicts a member no earlier
 *   than session.timeout.ms after it received that request, which was after it was sent: so a member's lease always
 *   ends before anyone else can be given its work. The send time, not the answer's arrival, bounds it, so a slow
 *   answer never stretches a lease.
 * - During a rebalance the session is not the only bound. Heartbeats answered REBALANCE_IN_PROGRESS keep the session
 *   alive, but the coordinator completes the join without a member that has not rejoined once rebalance.timeout.ms
 *   has passed since the rebalance began, and hands its work out. The rebalance began after the coordinator answered
 *   the last request of a steady generation (answered without REBALANCE_IN_PROGRESS), so while rebalancing the lease
 *   also ends at that request's send time + rebalance.timeout.ms - heartbeat.interval.ms. A join answered (the member
 *   is in the new generation) or any steady answer ends the rebalance bound.
 * - A member that sent its JoinGroup while its lease held is waited for: the coordinator holds it before it can
 *   complete the join without the member (the heartbeat-interval margin covers its way there), and answers it when
 *   the join completes, however long other members take to rejoin. So while that JoinGroup is pending the rebalance
 *   bound does not apply (the session bound, kept by heartbeats, still does): a slow member never costs the prompt
 *   ones their work. A JoinGroup that fails or is answered with an error ends that.
 * - Between a join's answer and this member's SyncGroup the generation is not steady either. The coordinator drops
 *   a member that has not sent SyncGroup within rebalance.timeout.ms of the join's completion and hands its work
 *   out, while it answers heartbeats NONE until then (a leader slow to compute the assignment keeps them coming).
 *   The completion came after the first JoinGroup sent since the last one answered (a rejoin whose first answer was
 *   lost is answered from the completion that first one took part in) and after every heartbeat answered
 *   REBALANCE_IN_PROGRESS was sent. So the lease also ends at the latest of those send times + rebalance.timeout.ms
 *   - heartbeat.interval.ms, unless a SyncGroup sent before then (the margin covers its way there) is in flight. A
 *   SyncGroup answered ends that bound; one that failed or was refused brings it back; a join answered again in the
 *   same generation keeps the earlier bound, because the coordinator's deadline runs from the first completion.
 * - Send times are taken when the request is written to the coordinator's connection (GroupCoordinator.send's
 *   `onSent`), not before the coordinator was found: a slow lookup never makes a late request look early.
 * - `invalidSince` tells since when the lease has not held, for health: from its end when it ran out, from the loss
 *   when the membership was lost while it held, from the first loss while no new membership was granted since, and
 *   from the creation before the first one.
 */
export class MemberLease {
  readonly #sessionTimeoutMs: number
  readonly #heartbeatIntervalMs: number
  readonly #rebalanceTimeoutMs: number
  #from = Number.NEGATIVE_INFINITY
  /** Send time of the last request answered in a steady generation. */
  #steadyFrom = Number.NEGATIVE_INFINITY
  #rebalancing = false
  /** A JoinGroup sent while the lease held is pending. */
  #joinHeld = false
  /** Send time of the last request answered REBALANCE_IN_PROGRESS: the join completed after it. */
  #rebalancingFrom = Number.NEGATIVE_INFINITY
  /** Send time of the first JoinGroup sent since one was last answered: the next completion came after it. */
  #firstJoinSent: number | null = null
  /** From a join's answer until its SyncGroup is answered: when the coordinator may drop this member, less the margin. */
  #syncDue: { generation: number, by: number } | null = null
  /** A SyncGroup sent before `#syncDue.by` is in flight: the coordinator will not drop this member for it. */
  #syncInFlight = false
  /** When the last membership's lease ended (its loss, or its end if it ran out before); the creation before any. */
  #endedAt: number

  constructor (sessionTimeoutMs: number, heartbeatIntervalMs: number, rebalanceTimeoutMs: number, createdAt = Date.now()) {
    this.#sessionTimeoutMs = sessionTimeoutMs
    this.#heartbeatIntervalMs = heartbeatIntervalMs
    this.#rebalanceTimeoutMs = rebalanceTimeoutMs
    this.#endedAt = createdAt
  }

  /** The coordinator answered a request sent at SENT_AT as from a member of the current, steady generation. */
  ack (sentAt: number): void {
    this.#from = Math.max(this.#from, sentAt)
    this.#steadyFrom = Math.max(this.#steadyFrom, sentAt)
    this.#rebalancing = false
    this.#joinHeld = false
  }

  /** The coordinator answered a request sent at SENT_AT as from a member, with REBALANCE_IN_PROGRESS. */
  ackRebalancing (sentAt: number): void {
    this.#from = Math.max(this.#from, sentAt)
    this.#rebalancingFrom = Math.max(this.#rebalancingFrom, sentAt)
    this.#rebalancing = true
  }

  /** The JoinGroup sent at SENT_AT was answered without error: GENERATION formed, its SyncGroup is due. */
  joinAnswered (sentAt: number, generation: number): void {
    this.ack(sentAt)
    const by = Math.max(this.#firstJoinSent ?? sentAt, this.#rebalancingFrom) + this.#rebalanceTimeoutMs - this.#heartbeatIntervalMs
    const earlier = this.#syncDue?.generation === generation ? this.#syncDue.by : Number.POSITIVE_INFINITY
    this.#syncDue = { generation, by: Math.min(by, earlier) }
    this.#syncInFlight = false
    this.#firstJoinSent = null
  }

  /** This member wrote its SyncGroup at SENT_AT: before the deadline, the coordinator will not drop it for that. */
  syncSent (sentAt: number): void {
    this.#syncInFlight = this.#syncDue !== null && sentAt < this.#syncDue.by
  }

  /** The SyncGroup in flight failed or was answered with an error: the deadline applies again. */
  syncEnded (): void {
    this.#syncInFlight = false
  }

  /** The SyncGroup sent at SENT_AT was answered without error: the generation is steady. */
  syncAnswered (sentAt: number): void {
    this.#syncDue = null
    this.#syncInFlight = false
    this.ack(sentAt)
  }

  /** This member wrote a JoinGroup at SENT_AT. */
  joinSent (sentAt: number): void {
    this.#joinHeld = this.valid(sentAt)
    this.#firstJoinSent ??= sentAt
  }

  /** The pending JoinGroup failed (ANSWERED false: it may still take part in a completion) or was answered with an error. */
  joinEnded (answered: boolean): void {
    this.#joinHeld = false
    if (answered) this.#firstJoinSent = null
  }

  valid (now: number): boolean {
    return now < this.validUntil()
  }

  /** When the lease ends unless the coordinator answers again (now or earlier: it has ended). */
  validUntil (): number {
    let until = this.#from + this.#sessionTimeoutMs - this.#heartbeatIntervalMs
    if (this.#syncDue !== null && !this.#syncInFlight) until = Math.min(until, this.#syncDue.by)
    if (this.#rebalancing && !this.#joinHeld) until = Math.min(until, this.#steadyFrom + this.#rebalanceTimeoutMs - this.#heartbeatIntervalMs)
    return until
  }

  /**
   * Since when (epoch ms) the lease has not held, as of NOW; null while it holds.
   * Example: session 10 s, heartbeat 1 s, last heartbeat answered sent at 5 s: valid until 14 s, so at 20 s it is
   * invalid since 14 s; lost at 30 s and not granted again, at 60 s it is still invalid since 14 s.
   */
  invalidSince (now: number): number | null {
    if (this.valid(now)) return null
    const until = this.validUntil()
    // No lease granted since the last loss (or the creation): -Infinity.
    return until === Number.NEGATIVE_INFINITY ? this.#endedAt : until
  }

  /** Membership lost at NOW: no lease until the coordinator answers a request of the next membership. */
  end (now: number): void {
    const until = this.validUntil()
    // A lease still holding ends now; one that ran out ended then; none granted since the last loss keeps that one.
    if (until > now) this.#endedAt = now
    else if (until !== Number.NEGATIVE_INFINITY) this.#endedAt = until
    this.#from = Number.NEGATIVE_INFINITY
    this.#steadyFrom = Number.NEGATIVE_INFINITY
    this.#rebalancing = false
    this.#joinHeld = false
    this.#rebalancingFrom = Number.NEGATIVE_INFINITY
    this.#firstJoinSent = null
    this.#syncDue = null
    this.#syncInFlight = false
  }
}
