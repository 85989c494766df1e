/**
 * The leader's assignment of one round: cooperative and sticky, in two rounds like Kafka's cooperative-sticky
 * assignor and Connect's incremental protocol. Pure: members' metadata and the work in, one answer per member out.
 *
 * Rules (ARCHITECTURE.md, "Group membership"):
 * - An item a live member reports owning is never given to another member in the same round: to move it, the
 *   round revokes it from its owner; the owner stops it and rejoins at once; the next round, nobody owns it, and
 *   it goes to the member with room. So two members never run one item at the same time.
 * - Items no live member owns (new, or lost with a member that left or died) are assigned in this round.
 * - Partitions and jobs are balanced separately, each by count: every member ends with floor(n/m) or ceil(n/m)
 *   of each kind. The members that already hold the most get the ceil, so a round moves only what must move.
 * - An item several members claim (a stale member, a member that missed a revocation) stays with the first of
 *   them by name and is revoked from the others; an owned item that is no longer work is revoked.
 * - Determinism: members are taken in order of name (then member id), keys in sorted order.
 * - Fencing: the members of the previous round that are gone may have left work behind; every member receiving
 *   unowned items gets their transactional ids in `fence` (the leader fences them before the items start).
 *
 * Worked example: 12 partitions on A (all), B and C join: quotas 4/4/4 (A has the most), A keeps 4 and is
 * revoked 8; B and C get nothing yet (A still owns those 8). A rejoins with 4: the 8 are unowned, B and C get 4 each.
 */
import { workKey, type WorkItem } from './work.ts'

export interface AssignorMember {
  readonly memberId: string
  /** host:pid:startTime (the metadata's member name). */
  readonly name: string
  /** workKey strings the member reports running. */
  readonly owned: readonly string[]
  readonly transactionalId: string | null
}

export interface PreviousMember {
  readonly name: string
  readonly transactionalId: string | null
}

export interface AssignorInput {
  readonly members: readonly AssignorMember[]
  /** Every work item of the flow now (WorkOwner.listWork). */
  readonly work: readonly WorkItem[]
  /** The members of the previous generation (from the last assignment), to fence those that are gone. */
  readonly previousMembers?: readonly PreviousMember[]
}

export interface MemberAssignment {
  /** The member's whole set after this round (what it keeps plus what it gets), sorted. */
  readonly assigned: readonly string[]
  /** What it must stop now (then rejoin), sorted. */
  readonly revoked: readonly string[]
  /** Transactional ids of lost members to fence before it starts the new items, sorted. */
  readonly fence: readonly string[]
}

interface Working {
  readonly member: AssignorMember
  readonly kept: Set<string>
  readonly added: string[]
  readonly revoked: Set<string>
}

const byName = (a: AssignorMember, b: AssignorMember): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0

export function isJobKey (key: string): boolean {
  return key.startsWith('j:')
}

/** One answer per member id. */
export function assignWork (input: AssignorInput): Map<string, MemberAssignment> {
  const members = [...input.members].sort(byName)
  const work = new Set(input.work.map(workKey))
  const states = members.map(member => ({ member, kept: new Set<string>(), added: [], revoked: new Set<string>() }) satisfies Working)
  const claimed = new Set<string>()
  for (const state of states) {
    for (const key of [...state.member.owned].sort()) {
      if (!work.has(key) || claimed.has(key)) state.revoked.add(key)
      else { state.kept.add(key); claimed.add(key) }
    }
  }
  const unowned = [...work].filter(key => !claimed.has(key)).sort()
  balance(states, unowned.filter(k => !isJobKey(k)), [...work].filter(k => !isJobKey(k)).length, k => !isJobKey(k))
  balance(states, unowned.filter(isJobKey), [...work].filter(isJobKey).length, isJobKey)
  const names = new Set(members.map(m => m.name))
  const fence = [...new Set((input.previousMembers ?? []).filter(p => !names.has(p.name) && p.transactionalId !== null).map(p => p.transactionalId!))].sort()
  return new Map(states.map(s => [s.member.memberId, {
    assigned: [...s.kept, ...s.added].sort(),
    revoked: [...s.revoked].sort(),
    fence: s.added.length > 0 ? fence : []
  }]))
}

/**
 * Balances the items of one kind (`ofKind`): quotas of floor or ceil of total / members, the ceil to those that
 * hold the most; revokes what a member holds above its quota; hands the unowned items round-robin (by name) to
 * members below theirs. Room always suffices: the unowned are at most the quotas minus what is kept.
 */
function balance (states: readonly Working[], unowned: readonly string[], total: number, ofKind: (key: string) => boolean): void {
  const held = (s: Working): string[] => [...s.kept].filter(ofKind).sort()
  const base = Math.floor(total / states.length)
  const ceilCount = total % states.length
  const byHolding = [...states].sort((a, b) => held(b).length - held(a).length || byName(a.member, b.member))
  const quota = new Map(byHolding.map((s, i) => [s, base + (i < ceilCount ? 1 : 0)]))
  for (const s of states) {
    const mine = held(s)
    for (const key of mine.slice(quota.get(s)!)) {
      s.kept.delete(key)
      s.revoked.add(key)
    }
  }
  const room = new Map(states.map(s => [s, quota.get(s)! - held(s).length]))
  let next = 0
  while (next < unowned.length) {
    let gave = false
    for (const s of states) {
      if (next >= unowned.length) break
      if (room.get(s)! <= 0) continue
      s.added.push(unowned[next++]!)
      room.set(s, room.get(s)! - 1)
      gave = true
    }
    if (!gave) throw new Error(`sticky assignor: no room for ${unowned.length - next} unowned items (a bug)`)
  }
}
