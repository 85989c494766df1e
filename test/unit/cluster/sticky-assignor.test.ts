import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assignWork, isJobKey, type AssignorMember, type MemberAssignment } from '../../../src/cluster/sticky-assignor.ts'
import { workKey, type WorkItem } from '../../../src/cluster/work.ts'

const partitions = (topic: string, count: number): WorkItem[] => Array.from({ length: count }, (_, partition) => ({ kind: 'partition', topic, partition }))
const jobs = (...names: string[]): WorkItem[] => names.map(job => ({ kind: 'job', job }))
const WORK = [...partitions('t', 12), ...jobs('refresh-topics', 'emit-checkpoints', 'emit-heartbeats', 'sync-group-offsets')]
const member = (name: string, owned: readonly string[] = [], transactionalId: string | null = null): AssignorMember => ({ memberId: `id-${name}`, name, owned, transactionalId })

/** Applies a round: each member then owns what it was assigned (revoked items stopped). */
function apply (members: readonly AssignorMember[], result: Map<string, MemberAssignment>): AssignorMember[] {
  return members.map(m => ({ ...m, owned: result.get(m.memberId)!.assigned }))
}

function counts (result: Map<string, MemberAssignment>, jobsOnly: boolean): number[] {
  return [...result.values()].map(a => a.assigned.filter(k => isJobKey(k) === jobsOnly).length)
}

/** Rounds until nothing is revoked (at most 3): what a group converges to. */
function converge (members: AssignorMember[], work: readonly WorkItem[]): { members: AssignorMember[], result: Map<string, MemberAssignment>, rounds: number } {
  for (let rounds = 1; rounds <= 3; rounds++) {
    const result = assignWork({ members, work })
    members = apply(members, result)
    if ([...result.values()].every(a => a.revoked.length === 0)) return { members, result, rounds }
  }
  throw new Error('did not converge in 3 rounds')
}

describe('sticky assignor', () => {
  test('a lone member gets everything in one round', () => {
    const result = assignWork({ members: [member('a')], work: WORK })
    assert.deepEqual(result.get('id-a'), { assigned: WORK.map(workKey).sort(), revoked: [], fence: [] })
  })

  test('members joining an owner: round one revokes the surplus and gives nothing owned away, round two balances', () => {
    const owner = member('a', WORK.map(workKey))
    const first = assignWork({ members: [owner, member('b'), member('c')], work: WORK })
    assert.equal(first.get('id-a')!.assigned.length, 4 + 2)
    assert.equal(first.get('id-a')!.revoked.length, 8 + 2)
    assert.deepEqual(first.get('id-b')!.assigned, [])
    assert.deepEqual(first.get('id-c')!.assigned, [])
    const second = assignWork({ members: apply([owner, member('b'), member('c')], first), work: WORK })
    assert.deepEqual(counts(second, false), [4, 4, 4])
    assert.deepEqual(counts(second, true).sort(), [1, 1, 2])
    assert.deepEqual(second.get('id-a')!.assigned, first.get('id-a')!.assigned, 'what a kept is not moved')
    assert.ok([...second.values()].every(a => a.revoked.length === 0))
  })

  test('items of a vanished member go out in one round, with its transactional id to fence', () => {
    const { members } = converge([member('a', [], 'tx-a'), member('b', [], 'tx-b'), member('c', [], 'tx-c')], WORK)
    const survivors = members.filter(m => m.name !== 'b')
    const result = assignWork({ members: survivors, work: WORK, previousMembers: members.map(m => ({ name: m.name, transactionalId: m.transactionalId })) })
    assert.ok([...result.values()].every(a => a.revoked.length === 0))
    assert.deepEqual(counts(result, false), [6, 6])
    for (const m of survivors) {
      const a = result.get(m.memberId)!
      assert.deepEqual(a.assigned.filter(k => m.owned.includes(k)), [...m.owned].sort(), 'survivors keep theirs')
      assert.deepEqual(a.fence, ['tx-b'])
    }
  })

  test('an item two members claim stays with one and is revoked from the other; a key that is no longer work is revoked', () => {
    const result = assignWork({ members: [member('a', ['p:0:t', 'p:9:gone']), member('b', ['p:0:t'])], work: partitions('t', 2) })
    assert.deepEqual(result.get('id-a'), { assigned: ['p:0:t'], revoked: ['p:9:gone'], fence: [] })
    assert.deepEqual(result.get('id-b'), { assigned: ['p:1:t'], revoked: ['p:0:t'], fence: [] })
  })

  test('a balanced group is left as it is', () => {
    const { members } = converge([member('a'), member('b'), member('c')], WORK)
    const again = assignWork({ members, work: WORK })
    for (const m of members) assert.deepEqual(again.get(m.memberId), { assigned: [...m.owned].sort(), revoked: [], fence: [] })
  })

  test('the answer does not depend on the order members are listed in', () => {
    const members = [member('c', ['p:1:t']), member('a', ['p:2:t', 'p:3:t', 'p:4:t']), member('b')]
    assert.deepEqual(assignWork({ members, work: WORK }), assignWork({ members: [...members].reverse(), work: WORK }))
  })
})

describe('sticky assignor over random groups', () => {
  let seed = 42
  const random = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }

  test('200 random groups: one owner per item, nothing owned handed over, balanced within 1 after round two, only needed moves', () => {
    for (let run = 0; run < 200; run++) {
      const work = [...partitions('t', random(40)), ...jobs(...['j1', 'j2', 'j3', 'j4', 'j5', 'j6', 'j7'].slice(0, random(8)))]
      const keys = work.map(workKey)
      const size = 1 + random(6)
      const members = Array.from({ length: size }, (_, i) => member(`m${i}`, keys.filter(() => random(size + 1) === 0).concat(random(4) === 0 ? ['p:99:stale'] : [])))
      const first = assignWork({ members, work })
      // After revocations, every item has at most one owner, and nobody gets an item another member still runs.
      const owners = new Map<string, string[]>()
      for (const m of members) {
        const a = first.get(m.memberId)!
        for (const k of a.assigned) owners.set(k, [...(owners.get(k) ?? []), m.name])
        for (const k of a.assigned) if (!m.owned.includes(k)) assert.ok(!members.some(o => o !== m && o.owned.includes(k) && !first.get(o.memberId)!.revoked.includes(k)), `${k} handed over while owned`)
        assert.ok(a.revoked.every(k => m.owned.includes(k)), 'only owned items are revoked')
      }
      assert.ok([...owners.values()].every(o => o.length === 1))
      // A member at or below the floor loses only stale or duplicate items.
      const claimedBefore = new Set<string>()
      for (const m of [...members].sort((a, b) => a.name.localeCompare(b.name))) {
        const a = first.get(m.memberId)!
        const uniqueOwned = m.owned.filter(k => keys.includes(k) && !claimedBefore.has(k))
        for (const k of m.owned) claimedBefore.add(k)
        for (const jobsOnly of [false, true]) {
          const total = keys.filter(k => isJobKey(k) === jobsOnly).length
          const mine = uniqueOwned.filter(k => isJobKey(k) === jobsOnly)
          const lost = a.revoked.filter(k => mine.includes(k)).length
          assert.ok(lost <= Math.max(0, mine.length - Math.floor(total / size)), `${m.name} lost ${lost} of ${mine.length} (total ${total})`)
        }
      }
      // Round two: everything assigned, balanced within 1 per kind, nothing revoked.
      const second = assignWork({ members: apply(members, first), work })
      assert.ok([...second.values()].every(a => a.revoked.length === 0))
      assert.deepEqual([...second.values()].flatMap(a => a.assigned).sort(), [...keys].sort())
      for (const jobsOnly of [false, true]) {
        const c = counts(second, jobsOnly)
        assert.ok(Math.max(...c) - Math.min(...c) <= 1, `run ${run}: counts ${c.join(',')}`)
      }
    }
  })
})
