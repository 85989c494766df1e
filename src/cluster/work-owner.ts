/**
 * What a flow's runtime offers its group membership (kafka/group-member.ts calls it; the runtime implements it).
 * With no group, a flow owns all its work and nothing calls this.
 */
import type { WorkItem } from './work.ts'

export interface WorkOwner {
  /** Leader only, before it assigns: every work item of the flow now (partitions of the replicated source
   *  topics, from the source cluster's metadata, plus every enabled job). */
  listWork (): Promise<WorkItem[]>
  /**
   * Start these (newly assigned). Partitions resume from the stored progress read again now. The first assignment
   * after a loss is given even when it brings nothing new (ITEMS empty): what the lost membership left (an
   * exactly-once producer's open transaction) is settled then.
   */
  assign (items: readonly WorkItem[]): Promise<void>
  /** Stop these cleanly: no new fetch, in-flight writes finish, progress and offset syncs of these partitions
   *  are stored; resolves only when another member may safely take them. BY (epoch ms): a stop's hand-over ends
   *  then (member-hand-over.ts); what may wait less (MM2's queued offset syncs) ends before it. */
  revoke (items: readonly WorkItem[], by?: number): Promise<void>
  /** Membership lost (fenced, evicted, session expired): stop writing everything at once, store nothing. Called on
   *  every loss, also with nothing owned (what belongs to the membership, like an exactly-once producer, ends too). */
  lose (): void
}
