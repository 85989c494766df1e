/**
 * At-least-once mode: a group member's work held past a lease that ran out (group-member.ts invariants), and what
 * the operator is told when the hold begins and ends. The member decides when; this keeps the time and the words.
 *
 * Invariants: one warning per hold (`begin` again while held says nothing), one info line when it ends with the
 * lease holding again (`end`), nothing when it ends with the membership lost or the member stopping (`clear`: the
 * loss is told by its own line); `since` is when the lease ended, not when the member noticed.
 */
import type { Logger } from '../logger.ts'

const WHY = 'no answer within session.timeout.ms, or no JoinGroup or SyncGroup sent within rebalance.timeout.ms (minus heartbeat.interval.ms)'

/** Why a lease ran out, in the words of the message of a membership lost for it. */
export const LEASE_RAN_OUT = `the lease ran out: ${WHY}`

export class LeaseHold {
  readonly #log: Logger
  readonly #group: string
  readonly #cluster: string
  #since: number | null = null

  constructor (log: Logger, group: string, cluster: string) {
    this.#log = log
    this.#group = group
    this.#cluster = cluster
  }

  get held (): boolean {
    return this.#since !== null
  }

  /**
   * The hold of a lease that ended at ENDED_AT begins (once per hold): logged as a warning naming COORDINATOR, the
   * broker found last as the group's coordinator (the one to look at first), when known.
   */
  begin (generation: number, owned: number, endedAt: number, coordinator: string | null): void {
    if (this.#since !== null) return
    this.#since = Math.min(endedAt, Date.now())
    const broker = coordinator === null ? '' : `; its coordinator was broker ${coordinator}`
    this.#log.warn({ group: this.#group, cluster: this.#cluster, coordinator, generation, owned },
      `the lease of this member in group ${this.#group} on ${this.#cluster} ran out (${WHY}${broker}): nothing is written and its work is held until the coordinator answers; the work goes on where it stopped if the coordinator still counts this member in generation ${generation}, and is dropped (the member joins again) if not`)
  }

  /** The member's error to show in status while held (with its last error, if any); LAST itself when not held. */
  statusError (last: string | null): string | null {
    if (this.#since === null) return last
    return `the lease ran out ${Math.round((Date.now() - this.#since) / 1000)} s ago (${WHY}): writing nothing until the coordinator of group ${this.#group} on ${this.#cluster} answers${last === null ? '' : `; last error: ${last}`}`
  }

  /** The coordinator answered as from a member again: the work goes on where it stopped. */
  end (generation: number): void {
    if (this.#since === null) return
    const heldMs = Date.now() - this.#since
    this.#since = null
    this.#log.info({ group: this.#group, cluster: this.#cluster, generation, heldMs },
      `the coordinator of group ${this.#group} on ${this.#cluster} still counts this member in generation ${generation}: nobody was given its work, so the lease holds again and the work goes on where it stopped (held ${heldMs} ms)`)
  }

  /** The membership was lost (or the member stops): no hold any more. */
  clear (): void {
    this.#since = null
  }
}
