import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { WorkItem } from '../../../src/cluster/work.ts'
import { workKey } from '../../../src/cluster/work.ts'
import type { WorkOwner } from '../../../src/cluster/work-owner.ts'
import type { WorkAssignment } from '../../../src/formats/work-assignment.ts'
import { MemberWork } from '../../../src/kafka/member-work.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'

/** An owner that records each call, with the work keys it was given. */
function recordingOwner (): WorkOwner & { calls: string[] } {
  const calls: string[] = []
  const keys = (items: readonly WorkItem[]): string => items.map(workKey).join(',')
  return {
    calls,
    listWork: async () => [],
    assign: async items => { calls.push(`assign ${keys(items)}`) },
    revoke: async items => { calls.push(`revoke ${keys(items)}`) },
    lose: () => { calls.push('lose') }
  }
}

function assignment (assigned: readonly string[]): WorkAssignment {
  return { version: 1, error: 0, generation: 3, leaderName: 'leader', assigned, revoked: [], fence: [], members: [] }
}

test('an assignment revokes what it no longer gives before it starts what is new, and the owner runs exactly what is owned', async () => {
  // Given a member owning two partitions
  const owner = recordingOwner()
  const work = new MemberWork(owner, memoryLogger().log, 'g')
  await work.startAssigned(assignment(['p:0:t', 'p:1:t']), () => false)
  // When the next assignment keeps one, drops the other and adds a job
  const next = assignment(['p:1:t', 'j:acl-sync'])
  assert.equal(await work.revokeUnassigned(next), true)
  await work.startAssigned(next, () => false)
  // Then the dropped one was revoked, then only the new one started
  assert.deepEqual(owner.calls, ['assign p:0:t,p:1:t', 'revoke p:0:t', 'assign j:acl-sync'])
  assert.deepEqual(work.sorted(), ['j:acl-sync', 'p:1:t'])
  // And an assignment that drops nothing revokes nothing
  assert.equal(await work.revokeUnassigned(next), false)
  assert.equal(owner.calls.length, 3)
})

test('a key this version does not know is owned but never run, and what is taken is forgotten', async () => {
  const owner = recordingOwner()
  const work = new MemberWork(owner, memoryLogger().log, 'g')
  await work.startAssigned(assignment(['p:0:t', 'x:newer-kind']), () => false)
  assert.deepEqual(owner.calls, ['assign p:0:t'])
  assert.deepEqual(work.sorted(), ['p:0:t', 'x:newer-kind'])
  assert.deepEqual(work.take().map(workKey), ['p:0:t'])
  assert.equal(work.size, 0)
})

test('work started while the membership was lost is lost too; a loss ends the owner\'s work even with nothing owned', async () => {
  const owner = recordingOwner()
  const work = new MemberWork(owner, memoryLogger().log, 'g')
  work.lose()
  assert.deepEqual(owner.calls, ['lose'])
  await work.startAssigned(assignment(['p:0:t']), () => true)
  assert.deepEqual(owner.calls, ['lose', 'assign p:0:t', 'lose'])
})

test('the first assignment after a loss reaches the owner even when it brings nothing new (it settles what the lost membership left); later ones with nothing new do not', async () => {
  const owner = recordingOwner()
  const work = new MemberWork(owner, memoryLogger().log, 'g')
  await work.startAssigned(assignment([]), () => false)
  assert.deepEqual(owner.calls, [], 'no loss: nothing to tell')
  work.lose()
  await work.startAssigned(assignment([]), () => false)
  await work.startAssigned(assignment([]), () => false)
  assert.deepEqual(owner.calls, ['lose', 'assign '])
})
