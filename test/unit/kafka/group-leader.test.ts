import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { WorkItem } from '../../../src/cluster/work.ts'
import { AssignmentErrors, decodeWorkAssignment, encodeMemberMetadata } from '../../../src/formats/work-assignment.ts'
import { describedMembers, membersBeforeJoin, planAssignments } from '../../../src/kafka/group-leader.ts'
import type { DescribedGroup } from '../../../src/kafka/protocol/describe-groups.ts'
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

function described (protocolType: string, members: { memberId: string, metadata: Buffer }[]): DescribedGroup {
  return { errorCode: 0, groupId: 'g', state: 'Stable', protocolType, protocol: 'sticky-v1', members: members.map(m => ({ ...m, clientId: 'c', clientHost: '/127.0.0.1', assignment: Buffer.alloc(0) })) }
}

test('a just-started leader fences the members the group listed before it joined that are gone from its first generation (an instance killed just before)', async () => {
  // Given the group as described before this member joined: the killed instance still listed, and one unreadable
  const group = described('kmirror', [
    { memberId: 'id-dead', metadata: encodeMemberMetadata({ memberName: 'dead', transactionalId: 'tx-dead', owned: ['p:0:t', 'p:1:t'] }) },
    { memberId: 'id-x', metadata: Buffer.from('garbage') }
  ])
  const listed = await membersBeforeJoin({ send: async <_Req, Res>(): Promise<Res> => ({ throttleTimeMs: 0, groups: [group] }) as unknown as Res }, 'g', 'kmirror', silentLogger())
  assert.deepEqual(listed, [{ name: 'dead', transactionalId: 'tx-dead' }])
  // When it leads its first generation without it, then it fences the dead one's id before handing its work out
  const join = joinOf([{ memberId: 'id-a', metadata: encodeMemberMetadata({ memberName: 'a', transactionalId: 'tx-a', owned: [] }) }])
  assert.deepEqual(planAssignments(join, WORK, listed, 'g', silentLogger()).fence, ['tx-dead'])
})

test('the group described before joining names nobody to fence when it is another program\'s, refused, or cannot be read', async () => {
  const member = { memberId: 'id-c', metadata: encodeMemberMetadata({ memberName: 'c', transactionalId: 'tx-c', owned: [] }) }
  assert.deepEqual(describedMembers(described('connect', [member]), 'kmirror'), [])
  assert.deepEqual(describedMembers({ ...described('kmirror', [member]), errorCode: 30 }, 'kmirror'), [])
  assert.deepEqual(describedMembers(undefined, 'kmirror'), [])
  assert.deepEqual(await membersBeforeJoin({ send: async () => { throw new Error('coordinator not available') } }, 'g', 'kmirror', silentLogger()), [])
})

test('before its first join, a member adds the members gone whose transactions are still open (the group was empty), once each, to those the group lists', async () => {
  const group = described('kmirror', [{ memberId: 'id-b', metadata: encodeMemberMetadata({ memberName: 'b', transactionalId: 'tx-b', owned: [] }) }])
  const coordinator = { send: async <_Req, Res>(): Promise<Res> => ({ throttleTimeMs: 0, groups: [group] }) as unknown as Res }
  const gone = async (): Promise<{ name: string, transactionalId: string }[]> => [{ name: 'b', transactionalId: 'tx-b' }, { name: 'dead', transactionalId: 'tx-dead' }]
  const listed = await membersBeforeJoin(coordinator, 'g', 'kmirror', silentLogger(), gone)
  assert.deepEqual(listed, [{ name: 'b', transactionalId: 'tx-b' }, { name: 'dead', transactionalId: 'tx-dead' }])
  // A lone first leader fences the dead one; a member that joins this generation is never fenced
  const join = joinOf([
    { memberId: 'id-a', metadata: encodeMemberMetadata({ memberName: 'a', transactionalId: 'tx-a', owned: [] }) },
    { memberId: 'id-b', metadata: encodeMemberMetadata({ memberName: 'b', transactionalId: 'tx-b', owned: [] }) }
  ])
  assert.deepEqual(planAssignments(join, WORK, listed, 'g', silentLogger()).fence, ['tx-dead'])
})

test('a listing of open transactions that fails adds nobody and does not fail the join', async () => {
  const empty = { send: async <_Req, Res>(): Promise<Res> => ({ throttleTimeMs: 0, groups: [] }) as unknown as Res }
  assert.deepEqual(await membersBeforeJoin(empty, 'g', 'kmirror', silentLogger(), async () => { throw new Error('broker 127.0.0.1:9092 unreachable') }), [])
})
