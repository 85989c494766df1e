/**
 * A stopping member's hand-over (group-member.ts `stop`): its work revoked, progress stored, while its heartbeats
 * keep the lease (as the Java consumer heartbeats until it sends LeaveGroup), then the LeaveGroup, all within the
 * stop's deadline: a process stopped by SIGTERM is killed soon after, and a member that never leaves makes the
 * others wait a whole session for its work.
 *
 * Invariants:
 * - `run` resolves by its deadline at the latest. A hand-over that ends first for another reason (`cut`: the lease
 *   ran out, the membership was lost; the revoke failed; the deadline passed) is not waited for any more: what it
 *   still held is dropped as lost (`WorkOwner.lose`: nothing more is stored or written) with a warning naming the
 *   partitions and jobs, and the member leaves.
 * - Work is revoked only while the lease holds; past it, it is lost at once (nothing could be stored).
 * - The hand-over ends LEAVE_RESERVE_MS before the time the member must have left, so the LeaveGroup always gets a
 *   turn; the leave waits at most what is left then (never less than MIN_LEAVE_WAIT_MS: the request goes out
 *   whatever, only its answer is waited for).
 */

import type { WorkOwner } from '../cluster/work-owner.ts'
import type { WorkItem } from '../cluster/work.ts'
import type { Logger } from '../logger.ts'
import type { ClusterContext } from './connection-hints.ts'

/** What a stop keeps for its LeaveGroup after the hand-over: one request to the coordinator and its answer. */
export const LEAVE_RESERVE_MS = 1000

/** The least a stop's LeaveGroup is waited for, even past the deadline (the coordinator reads it meanwhile). */
export const MIN_LEAVE_WAIT_MS = 200

/** Why a hand-over past its deadline ended. */
export const HAND_OVER_TOO_LATE = 'the stop could not wait longer for it'

/** Why a hand-over ended unfinished, and whether its owner lost the work already (a membership lost). */
interface Cut {
  readonly reason: string
  readonly ownerLost: boolean
}

export interface HandOverOptions {
  readonly owner: WorkOwner
  readonly log: Logger
  readonly groupId: string
  readonly cluster: ClusterContext
}

export class HandOver {
  readonly #o: HandOverOptions
  /** Takes (and forgets) everything the member owns. */
  readonly #takeOwned: () => WorkItem[]
  /** What the revoke under way hands over: dropped if it cannot finish. */
  #handing: WorkItem[] = []
  #cut: (cut: Cut) => void = () => {}
  readonly #cuts: Promise<Cut>

  constructor (options: HandOverOptions, takeOwned: () => WorkItem[]) {
    this.#o = options
    this.#takeOwned = takeOwned
    this.#cuts = new Promise(resolve => { this.#cut = resolve })
  }

  /** Ends the hand-over under way (or the next one) now, for REASON; OWNER_LOST: the owner lost the work already. */
  cut (reason: string, ownerLost = false): void {
    this.#cut({ reason, ownerLost })
  }

  /**
   * Once APPLYING (the assignment under way) is applied, revokes everything owned while LEASE_VALID; by BY (epoch
   * ms) at the latest, else drops it as lost (see the invariants).
   */
  async run (applying: Promise<void>, leaseValid: (now: number) => boolean, by: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<Cut>(resolve => { timer = setTimeout(resolve, Math.max(0, by - Date.now()), { reason: HAND_OVER_TOO_LATE, ownerLost: false }) })
    const revoking = this.#revokeAll(applying, leaseValidNow(leaseValid), by)
      .then(() => null, (err: unknown): Cut => ({ reason: `it failed: ${err instanceof Error ? err.message : String(err)}`, ownerLost: false }))
    try {
      const unfinished = await Promise.race([revoking, this.#cuts, late])
      if (unfinished !== null) this.#abandon(unfinished)
    } finally {
      clearTimeout(timer)
    }
  }

  async #revokeAll (applying: Promise<void>, leaseValid: () => boolean, by: number): Promise<void> {
    await applying
    this.#handing = this.#takeOwned()
    if (this.#handing.length === 0) return
    if (leaseValid()) await this.#o.owner.revoke(this.#handing, by)
    else this.#o.owner.lose()
    this.#handing = []
  }

  #abandon ({ reason, ownerLost }: Cut): void {
    const items = [...this.#handing, ...this.#takeOwned()]
    this.#handing = []
    if (items.length === 0) return
    const partitions = items.flatMap(i => (i.kind === 'partition' ? [`${i.topic}-${i.partition}`] : []))
    const jobs = items.flatMap(i => (i.kind === 'job' ? [i.job] : []))
    const { groupId, cluster } = this.#o
    this.#o.log.warn({ group: groupId, cluster: cluster.label, reason, partitions, jobs },
      `the stop could not hand the work of group ${groupId} on ${cluster.label} over (${reason}): the progress of ${partitions.length} partition(s) copied since their last store is not stored (their next owner copies those records again) and nothing more is written; leaving the group now`)
    if (!ownerLost) this.#o.owner.lose()
  }
}

function leaseValidNow (leaseValid: (now: number) => boolean): () => boolean {
  return () => leaseValid(Date.now())
}

/**
 * How long a stop waits for its LeaveGroup's answer: what is left until LEAVE_BY, at most BOUND (the session while
 * the lease held at the stop; a heartbeat interval past it, when the coordinator may be silent), at least
 * MIN_LEAVE_WAIT_MS.
 */
export function leaveWaitMs (leaveBy: number, bound: number, now = Date.now()): number {
  return Math.max(MIN_LEAVE_WAIT_MS, Math.min(bound, leaveBy - now))
}
