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
    this.#rebalancing = true
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
    return !this.#rebalancing || this.#joinHeld || now < this.#steadyFrom + this.#rebalanceTimeoutMs - this.#heartbeatIntervalMs
  }

  /** Membership lost: no lease until the coordinator answers a request of the next membership. */
  end (): void {
    this.#from = Number.NEGATIVE_INFINITY
    this.#steadyFrom = Number.NEGATIVE_INFINITY
    this.#rebalancing = false
    this.#joinHeld = false
  }
}
