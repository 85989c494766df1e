/**
 * The work a group member owns (work keys) and the WorkOwner that runs it (group-member.ts): an assignment applied
 * revokes first what it no longer gives the member, then starts what is new.
 *
 * Invariants:
 * - The owner runs exactly the keys held here: `startAssigned` adds them as the owner starts them,
 *   `revokeUnassigned` takes them away once the owner stopped them (their progress stored), `lose` at once with the
 *   owner's `lose`. `take` hands them over to the caller, who stops them (member-hand-over.ts) or drops them.
 * - A key no kmirror of this version knows (a newer leader's kind of work) is owned, so the leader sees it kept, but
 *   never run (`toItems`).
 */
import type { WorkItem } from '../cluster/work.ts'
import type { WorkOwner } from '../cluster/work-owner.ts'
import type { WorkAssignment } from '../formats/work-assignment.ts'
import type { Logger } from '../logger.ts'
import { toItems } from './group-member-options.ts'

export class MemberWork {
  readonly #keys = new Set<string>()
  readonly #owner: WorkOwner
  readonly #log: Logger
  readonly #groupId: string
  /** A loss since the last assignment was started (`startAssigned`). */
  #lostSinceStarted = false

  constructor (owner: WorkOwner, log: Logger, groupId: string) {
    this.#owner = owner
    this.#log = log
    this.#groupId = groupId
  }

  get size (): number {
    return this.#keys.size
  }

  /** The keys owned, sorted: what the member's metadata and status name. */
  sorted (): string[] {
    return [...this.#keys].sort()
  }

  /** Stops (progress stored) what ASSIGNMENT no longer gives this member; true when anything was revoked. */
  async revokeUnassigned (assignment: WorkAssignment): Promise<boolean> {
    const assigned = new Set(assignment.assigned)
    const revoked = [...this.#keys].filter(k => !assigned.has(k))
    if (revoked.length === 0) return false
    this.#log.info({ group: this.#groupId, generation: assignment.generation, revoked: revoked.length }, 'revoking work for a rebalance')
    await this.#owner.revoke(toItems(revoked))
    for (const key of revoked) this.#keys.delete(key)
    return true
  }

  /**
   * Starts what ASSIGNMENT gives this member that it does not own yet. LOST_MEANWHILE, asked once it started: the
   * membership was lost meanwhile (`lose` ran for the earlier set), so the owner loses this too.
   */
  async startAssigned (assignment: WorkAssignment, lostMeanwhile: () => boolean): Promise<void> {
    const added = assignment.assigned.filter(k => !this.#keys.has(k))
    // The first assignment after a loss reaches the owner even with nothing new: it settles what the lost membership left.
    if (added.length === 0 && !this.#lostSinceStarted) return
    this.#lostSinceStarted = false
    for (const key of added) this.#keys.add(key)
    if (added.length > 0) this.#log.info({ group: this.#groupId, generation: assignment.generation, added: added.length, owned: this.#keys.size }, 'starting assigned work')
    await this.#owner.assign(toItems(added))
    if (lostMeanwhile()) this.#owner.lose()
  }

  /** Everything the owner runs for this membership ends at once, nothing stored (also with nothing owned). */
  lose (): void {
    this.#keys.clear()
    this.#lostSinceStarted = true
    this.#owner.lose()
  }

  /** Takes (and forgets) everything owned, as the work items this version runs. */
  take (): WorkItem[] {
    const items = toItems([...this.#keys])
    this.#keys.clear()
    return items
  }
}
