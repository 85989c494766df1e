/**
 * What a group offset change would do, and whether it is safe: the pure part of `kmirror failover`,
 * `kmirror failback` and `kmirror offsets set`. The commands gather the facts (commits, translations, group
 * states) and this module decides; apply writes exactly the moves planned here.
 *
 * Definitions (per partition, offsets on the destination cluster):
 * - `current`: the group's committed offset there, or null when it has none.
 * - `next`: the offset the plan writes.
 * - `processed`: the position up to which the group is known to have processed the partition's records, on
 *   any cluster, expressed on the destination. For failover and failback it is `next` itself (the exact
 *   translation of the commit the group made on the other cluster); for `offsets set` it is `current`.
 * - re-read = current - next when next < current: records the group already committed past and reads again.
 * - skip = next - max(current, processed) when positive: records nobody in the group has processed that the
 *   consumer would never read. Counted in offsets, so on a topic with gaps (transaction markers, compaction)
 *   it is an upper bound of the records skipped.
 *
 * Worked example (failover). The group committed 120 on A, which translates to 100 on B; on B it last
 * committed 80 (an earlier failover drill): next 100, re-read 0, skip 0 (offsets 80..99 were processed on A).
 * If on B it had committed 130 instead: re-read 30, refused without --force.
 * Example (offsets set --to-offset 150 with current 100): skip 50, refused without --force.
 *
 * Safety rules, one group at a time:
 * - A group with active members on the destination is refused (even with --force: the broker rejects an
 *   offset commit from outside an active group anyway, and its consumers would overwrite it).
 * - A re-read (move backwards) is refused without --force, except for `offsets set`, where the operator asked
 *   for that position and re-reading loses nothing.
 * - A skip is refused without --force; so is a move by a translation that may skip (before the first offset the
 *   history maps, e.g. records another tool copied before a hand-over): how much it skips is not known.
 * - Partitions whose offset would not change are not moves: a second apply of the same plan changes nothing.
 */
import { partitionKey } from '../topic-partition.ts'
import { ExitCodes } from '../errors.ts'
import { isInactive, type GroupState } from '../kafka/group-admin.ts'

export const PlanKinds = { FAILOVER: 'failover', FAILBACK: 'failback', OFFSETS_SET: 'offsets-set' } as const
export type PlanKind = (typeof PlanKinds)[keyof typeof PlanKinds]

/** The offset a partition should get, and what is known about it. */
export interface WantedOffset {
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly exact: boolean
  readonly reason?: string
  /** See the module comment; null when unknown. */
  readonly processed: number | null
  /** The translation may skip records the history does not cover (Translation.maySkip): refused without --force. */
  readonly maySkip?: true
}

export interface PartitionMove {
  readonly topic: string
  readonly partition: number
  readonly current: number | null
  readonly next: number
  readonly reRead: number
  readonly skip: number
  readonly exact: boolean
  readonly reason?: string
  /** See WantedOffset.maySkip. */
  readonly maySkip?: true
}

export interface GroupPlan {
  readonly group: string
  /** The cluster whose committed offsets change. */
  readonly cluster: string
  readonly state: GroupState
  readonly members: number
  /** Partitions whose offset changes, sorted by topic and partition. */
  readonly moves: readonly PartitionMove[]
  /** Partitions already at the planned offset. */
  readonly unchanged: number
  /** Why the group will not be written; empty when it is safe (or forced). */
  readonly refusals: readonly string[]
  /** What could not be checked, and other facts the operator should read. */
  readonly notes: readonly string[]
  /** The group could not be planned at all (its data was unreadable); nothing is written for it. */
  readonly problem?: string
}

export interface GroupFacts {
  readonly kind: PlanKind
  readonly group: string
  readonly cluster: string
  readonly state: GroupState
  readonly members: number
  readonly current: ReadonlyMap<string, number>
  readonly wanted: readonly WantedOffset[]
  readonly notes?: readonly string[]
  readonly force: boolean
  /** A transaction holds commits of the group open on `cluster` (group-admin.ts StableCommits): it is in use. */
  readonly inTransaction?: boolean
}

/** The key of a partition in `GroupFacts.current` (topic-partition.ts). */
export const partitionId = partitionKey

/** The re-read and skip counts of moving one partition from `current` to `next`. */
export function measureMove (current: number | null, next: number, processed: number | null): { reRead: number, skip: number } {
  const reRead = current !== null && next < current ? current - next : 0
  const known = Math.max(current ?? Number.NEGATIVE_INFINITY, processed ?? Number.NEGATIVE_INFINITY)
  const skip = Number.isFinite(known) && next > known ? next - known : 0
  return { reRead, skip }
}

function isActive (state: GroupState): boolean {
  return !isInactive(state)
}

/** Decides one group's moves and whether they are safe. */
export function planGroup (facts: GroupFacts): GroupPlan {
  const moves: PartitionMove[] = []
  let unchanged = 0
  for (const w of facts.wanted) {
    const current = facts.current.get(partitionId(w.topic, w.partition)) ?? null
    if (current === w.offset) {
      unchanged++
      continue
    }
    const { reRead, skip } = measureMove(current, w.offset, w.processed)
    moves.push({
      topic: w.topic, partition: w.partition, current, next: w.offset, reRead, skip, exact: w.exact, ...(w.reason === undefined ? {} : { reason: w.reason }), ...(w.maySkip === true ? { maySkip: true as const } : {})
    })
  }
  moves.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
  return {
    group: facts.group, cluster: facts.cluster, state: facts.state, members: facts.members, moves, unchanged,
    refusals: moves.length === 0 ? [] : refusalsOf(facts, moves), notes: facts.notes ?? []
  }
}

function refusalsOf (facts: GroupFacts, moves: readonly PartitionMove[]): string[] {
  const out: string[] = []
  if (isActive(facts.state)) {
    out.push(`group ${facts.group} has ${activeMembers(facts.members, facts.state)} on ${facts.cluster} (state ${facts.state}): stop its consumers first (--force does not override this)`)
  }
  if (facts.inTransaction === true) out.push(inTransactionRefusal(facts.group, facts.cluster))
  if (facts.force) return out
  const rewinds = moves.filter(m => m.reRead > 0)
  if (rewinds.length > 0 && facts.kind !== PlanKinds.OFFSETS_SET) {
    out.push(`${rewinds.length} partition(s) would move backwards (${sum(rewinds, m => m.reRead)} record(s) re-read, e.g. ${describeMove(rewinds[0]!)}): the group already processed further on ${facts.cluster}; use --force to rewind`)
  }
  const skips = moves.filter(m => m.skip > 0)
  if (skips.length > 0) {
    out.push(`${skips.length} partition(s) would skip up to ${sum(skips, m => m.skip)} record(s) nobody in the group processed (e.g. ${describeMove(skips[0]!)}); use --force to skip them`)
  }
  const unknown = moves.filter(m => m.maySkip === true && m.skip === 0)
  if (unknown.length > 0) {
    const m = unknown[0]!
    out.push(`${unknown.length} partition(s) would move to where kmirror's offset history starts, past records it has no mapping for (e.g. ${describeMove(m)}: ${m.reason ?? 'not exact'}); ` +
      'records there may be skipped: use --force to move there anyway, or kmirror offsets set to choose the offset')
  }
  return out
}

/** A group whose commits a transaction holds open: an application commits for it now, members or not. */
export function inTransactionRefusal (group: string, cluster: string): string {
  return `a transaction holds commits of group ${group} open on ${cluster} (UNSTABLE_OFFSET_COMMIT): an application commits offsets for it in transactions, so it is in use; ` +
    'stop that application, or let its transaction end, then plan again (--force does not override this)'
}

function describeMove (m: PartitionMove): string {
  return `${m.topic}-${m.partition} ${m.current ?? 'none'} -> ${m.next}`
}

function sum<T> (items: readonly T[], f: (item: T) => number): number {
  return items.reduce((acc, item) => acc + f(item), 0)
}

/** True when applying would write something for this group. */
export function isWritable (plan: GroupPlan): boolean {
  return plan.problem === undefined && plan.refusals.length === 0 && plan.moves.length > 0
}

/** A group that could not be planned. */
export function problemPlan (group: string, cluster: string, problem: string, notes: readonly string[] = []): GroupPlan {
  return { group, cluster, state: 'Unknown', members: 0, moves: [], unchanged: 0, refusals: [], notes, problem }
}

/**
 * The exit code of a plan or apply (documented in `kmirror failover --help` and docs/operations.md):
 * 3 when a group's data could not be read, 5 when a group was refused, 1 for a dry run with moves, else 0.
 */
export function exitCodeOf (plans: readonly GroupPlan[], applied: boolean): number {
  if (plans.some(p => p.problem !== undefined)) return ExitCodes.START_FAILED
  if (plans.some(p => p.refusals.length > 0)) return ExitCodes.REFUSED
  if (!applied && plans.some(p => p.moves.length > 0)) return ExitCodes.DRIFT
  return ExitCodes.OK
}

/**
 * "N active member(s)"; a group in state Unknown with none listed is one whose members kmirror could not see (e.g. a
 * KIP-848 group with a member holding a topic kmirror may not describe): active all the same.
 */
export function activeMembers (members: number, state: string): string {
  return state === 'Unknown' && members === 0 ? 'active members (not listed)' : `${members} active member(s)`
}
