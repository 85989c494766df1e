/**
 * A group member's lease on its work: how long it may still write what it was assigned without hearing from the
 * coordinator.
 *
 * Invariant: `valid(now)` holds only while now < (send time of the last request the coordinator answered as from
 * a member of the current generation) + session.timeout.ms - heartbeat.interval.ms. The coordinator evicts a member
 * no earlier than session.timeout.ms after it received that request, which was after it was sent: so a member's
 * lease always ends before anyone else can be given its work. The send time, not the answer's arrival, bounds it,
 * so a slow answer never stretches a lease.
 */
export class MemberLease {
  readonly #sessionTimeoutMs: number
  readonly #heartbeatIntervalMs: number
  #from = Number.NEGATIVE_INFINITY

  constructor (sessionTimeoutMs: number, heartbeatIntervalMs: number) {
    this.#sessionTimeoutMs = sessionTimeoutMs
    this.#heartbeatIntervalMs = heartbeatIntervalMs
  }

  /** The coordinator answered a request sent at SENT_AT as from a member of the current generation. */
  ack (sentAt: number): void {
    this.#from = Math.max(this.#from, sentAt)
  }

  valid (now: number): boolean {
    return now < this.#from + this.#sessionTimeoutMs - this.#heartbeatIntervalMs
  }

  /** Membership lost: no lease until the coordinator answers a request of the next membership. */
  end (): void {
    this.#from = Number.NEGATIVE_INFINITY
  }
}
