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
 *   The completion came after the JoinGroup was sent and after every heartbeat answered REBALANCE_IN_PROGRESS was
 *   sent, so until SyncGroup is sent the lease also ends at the latest of those send times + rebalance.timeout.ms -
 *   heartbeat.interval.ms. A SyncGroup sent before then (the margin covers its way there) or answered at all ends
 *   that bound; a join answered again in the same generation (a rejoin before syncing) keeps the earlier bound,
 *   because the coordinator's deadline runs from the first completion.
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
  /** While a join is answered and its SyncGroup not yet sent: when the coordinator may drop this member, less the margin. */
  #syncDue: { generation: number, by: number } | null = null

  constructor (sessionTimeoutMs: number, heartbeatIntervalMs: number, rebalanceTimeoutMs: number) {
    this.#sessionTimeoutMs = sessionTimeoutMs
    this.#heartbeatIntervalMs = heartbeatIntervalMs
    this.#rebalanceTimeoutMs = rebalanceTimeoutMs
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
    const by = Math.max(sentAt, this.#rebalancingFrom) + this.#rebalanceTimeoutMs - this.#heartbeatIntervalMs
    const earlier = this.#syncDue?.generation === generation ? this.#syncDue.by : Number.POSITIVE_INFINITY
    this.#syncDue = { generation, by: Math.min(by, earlier) }
  }

  /** This member sent its SyncGroup at SENT_AT: in time, the coordinator's sync deadline no longer applies. */
  syncSent (sentAt: number): void {
    if (this.#syncDue !== null && sentAt < this.#syncDue.by) this.#syncDue = null
  }

  /** The SyncGroup sent at SENT_AT was answered without error: the generation is steady. */
  syncAnswered (sentAt: number): void {
    this.#syncDue = null
    this.ack(sentAt)
  }

  /** This member sent a JoinGroup at SENT_AT. */
  joinSent (sentAt: number): void {
    this.#joinHeld = this.valid(sentAt)
  }

  /** The pending JoinGroup failed or was answered with an error. */
  joinEnded (): void {
    this.#joinHeld = false
  }

  valid (now: number): boolean {
    if (now >= this.#from + this.#sessionTimeoutMs - this.#heartbeatIntervalMs) return false
    if (this.#syncDue !== null && now >= this.#syncDue.by) return false
    return !this.#rebalancing || this.#joinHeld || now < this.#steadyFrom + this.#rebalanceTimeoutMs - this.#heartbeatIntervalMs
  }

  /** Membership lost: no lease until the coordinator answers a request of the next membership. */
  end (): void {
    this.#from = Number.NEGATIVE_INFINITY
    this.#steadyFrom = Number.NEGATIVE_INFINITY
    this.#rebalancing = false
    this.#joinHeld = false
    this.#rebalancingFrom = Number.NEGATIVE_INFINITY
    this.#syncDue = null
  }
}
