import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { WorkItem } from '../../../src/cluster/work.ts'
import { AssignmentErrors, decodeWorkAssignment, encodeMemberMetadata } from '../../../src/formats/work-assignment.ts'
import { planAssignments } from '../../../src/kafka/group-leader.ts'
import type { JoinGroupResponse } from '../../../src/kafka/protocol/join-group.ts'
import { silentLogger } from '../../../src/logger.ts'

const WORK: WorkItem[] = [{ kind: 'partition', topic: 't', partition: 0 }, { kind: 'partition', topic: 't', partition: 1 }, { kind: 'job', job: 'emit-heartbeats' }]

function joinOf (members: { memberId: string, metadata: Buffer }[]): JoinGroupResponse {
  return { throttleTimeMs: 0, errorCode: 0, generationId: 5, protocolType: 'kmirror', protocolName: 'sticky-v1', leader: 'id-a', skipAssignment: false, memberId: 'id-a', members: members.map(m => ({ ...m, groupInstanceId: null })) }
}

test('the leader assigns every member, names the generation\'s members in each assignment, and fences members that are gone', () => {
  const join = joinOf([
    { memberId: 'id-a', metadata: encodeMemberMetadata({ memberName: 'a', transactionalId: 'tx-a', owned: ['p:0:t'] }) },
    { memberId: 'id-b', metadata: encodeMemberMetadata({ memberName: 'b', transactionalId: 'tx-b', owned: [] }) }
  ])
  const plan = planAssignments(join, WORK, [{ name: 'a', transactionalId: 'tx-a' }, { name: 'gone', transactionalId: 'tx-gone' }], 'g', silentLogger())
  assert.deepEqual(plan.fence, ['tx-gone'])
  const [a, b] = plan.assignments.map(x => decodeWorkAssignment(x.assignment))
  assert.deepEqual(plan.assignments.map(x => x.memberId), ['id-a', 'id-b'])
  assert.deepEqual({ assigned: a!.assigned, leader: a!.leaderName, generation: a!.generation }, { assigned: ['j:emit-heartbeats', 'p:0:t'], leader: 'a', generation: 5 })
  assert.deepEqual(b!.assigned, ['p:1:t'])
  assert.deepEqual(b!.fence, ['tx-gone'])
  assert.deepEqual(b!.members, [
    { memberName: 'a', transactionalId: 'tx-a', partitions: 1, jobs: ['emit-heartbeats'] },
    { memberName: 'b', transactionalId: 'tx-b', partitions: 1, jobs: [] }
  ])
})

test('a member whose metadata cannot be read gets nothing and an error, the others share the work', () => {
  const join = joinOf([
    { memberId: 'id-a', metadata: encodeMemberMetadata({ memberName: 'a', transactionalId: null, owned: [] }) },
    { memberId: 'id-x', metadata: Buffer.from('garbage') }
  ])
  const [a, x] = planAssignments(join, WORK, [], 'g', silentLogger()).assignments.map(p => decodeWorkAssignment(p.assignment))
  assert.equal(x!.error, AssignmentErrors.MEMBER_METADATA_INVALID)
  assert.deepEqual(x!.assigned, [])
  assert.deepEqual(a!.assigned, ['j:emit-heartbeats', 'p:0:t', 'p:1:t'])
})
