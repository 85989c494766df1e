/**
 * What a GroupMember is given and what it shows (`status()`), and the helpers around it.
 */
import type { Logger } from '../logger.ts'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { parseWorkKey, type WorkItem } from '../cluster/work.ts'
import type { WorkOwner } from '../cluster/work-owner.ts'
import type { PreviousMember } from '../cluster/sticky-assignor.ts'
import { decodeWorkAssignment, type GenerationMember, type WorkAssignment } from '../formats/work-assignment.ts'
import type { ClusterContext } from './connection-hints.ts'
import type { GroupCoordinatorPort } from './group-coordinator.ts'

export interface GroupMemberOptions {
  /** Client properties of the target cluster (the flow's target consumer role). */
  readonly props: ClientProps
  readonly clientId: string
  /** Names the target cluster in messages (`cluster B`) and its alias in hints. */
  readonly cluster: ClusterContext
  readonly groupId: string
  /** host:pid:startTime (see `defaultMemberName`), shown in status. */
  readonly memberName: string
  readonly sessionTimeoutMs: number
  readonly heartbeatIntervalMs: number
  readonly rebalanceTimeoutMs: number
  /** This member's transactional id (exactly-once mode), null otherwise. */
  readonly transactionalId: string | null
  readonly log: Logger
  readonly owner: WorkOwner
  /**
   * At-least-once mode: a lease that runs out holds the work (nothing written) until the coordinator answers, rather
   * than losing it at once (group-member.ts invariants). Off in exactly-once mode: its producer ends with the lease.
   */
  readonly holdPastLease?: boolean
  /** Leader only: fences lost members' transactional ids before their work is handed out (exactly-once). */
  readonly fenceTransactionalIds?: (ids: readonly string[]) => Promise<void>
  /**
   * Exactly-once, once before the first join: members no longer in the group whose transactions are still open on
   * the target (the caller lists them: runtime/orphan-transactions.ts). Added to the members the group lists then,
   * so a first leader fences them even when the group was empty (a lone instance killed, its session over).
   */
  readonly openTransactionsOfGone?: () => Promise<readonly PreviousMember[]>
  /** A membership failure rejoining cannot fix (another program's group, an ACL, a refused timeout): the loop stops. */
  readonly onFatal?: (err: KmirrorError) => void
  /** Tests: the coordinator to talk to instead of the cluster's (found with FindCoordinator). */
  readonly coordinator?: GroupCoordinatorPort
}

export interface GroupStatus {
  readonly groupId: string
  readonly memberName: string
  readonly memberId: string
  /** -1 before the first completed join (and after membership was lost). */
  readonly generation: number
  readonly leader: boolean
  readonly leaderName: string | null
  readonly state: 'joining' | 'stable' | 'stopped' | 'failed'
  readonly leaseValid: boolean
  /** workKeys this member runs. */
  readonly owned: readonly string[]
  /** Every member of the generation (from the last assignment): name, partition count, jobs. */
  readonly members: readonly GenerationMember[]
  readonly lastError: string | null
}

/** Keys as work items; a key no kmirror of this version knows is skipped (a newer member's kind of work). */
export function toItems (keys: readonly string[]): WorkItem[] {
  const items: WorkItem[] = []
  for (const key of keys) {
    try { items.push(parseWorkKey(key)) } catch { /* another version's work: not this member's to run */ }
  }
  return items
}

/** host:pid:startTime, unique per process: the member name in status and in the transactional id. */
export function defaultMemberName (host: string, pid = process.pid, startedAt = Date.now()): string {
  return `${host}:${pid}:${startedAt}`
}

/**
 * A member's assignment from BYTES. None (a leader that did not assign it) or one it cannot read (a leader of
 * another version, garbled bytes) fails the round only: retried after a back-off with a new rebalance.
 */
export function readAssignment (bytes: Buffer, groupId: string): WorkAssignment {
  try {
    return decodeWorkAssignment(bytes, `the assignment of group ${groupId} from its leader`)
  } catch (err) {
    throw new KmirrorError(ErrorCodes.GROUP_MEMBERSHIP, `group ${groupId}: ${bytes.length === 0 ? 'the leader sent this member no assignment' : (err as Error).message}`, { cause: err, retriable: true })
  }
}
