import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ClusterClientConfig } from '../../../src/config/types.ts'
import { ErrorCodes, ExitCodes, KmirrorError } from '../../../src/errors.ts'
import { applyWith, refusedForMembers } from '../../../src/failover/apply.ts'
import type { OffsetsPlan } from '../../../src/failover/failover.ts'
import { activeMembers, exitCodeOf, PlanKinds, type GroupPlan } from '../../../src/failover/plan.ts'
import type { GroupDescription } from '../../../src/kafka/group-admin.ts'

const plan = { group: 'billing', cluster: 'B' } as GroupPlan

test('a commit the broker refuses because the group has members refuses the group; other failures are not refusals', () => {
  const members = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'write committed offsets of group billing on cluster B: ... [UNKNOWN_MEMBER_ID]', { details: { kafkaErrors: ['UNKNOWN_MEMBER_ID'] } })
  assert.equal(refusedForMembers(members, plan),
    'B refused to write the offsets of group billing (UNKNOWN_MEMBER_ID): the group has active members, nothing written; stop its consumers, then plan and apply again')
  const down = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'connection refused', { details: { kafkaErrors: [] } })
  assert.equal(refusedForMembers(down, plan), undefined)
  assert.equal(refusedForMembers(new Error('UNKNOWN_MEMBER_ID'), plan), undefined)
})

test('a group whose members kmirror could not see (state Unknown, none listed) is named active all the same', () => {
  assert.equal(activeMembers(2, 'Stable'), '2 active member(s)')
  assert.equal(activeMembers(0, 'Unknown'), 'active members (not listed)')
})

test('an apply that fails at a group says which groups were written, that the failing one may be partly written, and writes no group after it', async () => {
  // Given three writable groups, the second of which the destination refuses to write (a missing grant)
  const moves = [{ topic: 'A.orders', partition: 0, current: null, next: 10, reRead: 0, skip: 0, exact: true }]
  const group = (name: string): GroupPlan => ({ group: name, cluster: 'B', state: 'Empty', members: 0, moves, unchanged: 0, refusals: [], notes: [] })
  const plan: OffsetsPlan = { kind: PlanKinds.FAILOVER, flow: 'A->B', from: 'A', to: 'B', basis: 'source-commits', notes: [], groups: [group('g1'), group('g2'), group('g3')] }
  const written: string[] = []
  const admin = {
    describeGroups: async (groups: readonly string[]) => new Map(groups.map(g => [g, { group: g, state: 'Empty', members: 0 } as unknown as GroupDescription])),
    stableCommittedOffsetsOf: async (groups: readonly string[]) => new Map(groups.map(g => [g, { offsets: [], inTransaction: false }])),
    alterCommittedOffsets: async (g: string) => {
      if (g === 'g2') throw new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'cluster B refused READ on group g2 to User:kmirror; grant it')
      written.push(g)
    }
  }
  const destination = { alias: 'B', admin: { 'bootstrap.servers': 'b:9092' }, bootstrapServers: ['b:9092'] } as unknown as ClusterClientConfig
  // When it is applied
  const result = await applyWith(admin, plan, destination, 5000)
  // Then g1 is written and reported so; g2 has a problem saying it may be partly written; g3 was not touched
  assert.deepEqual(written, ['g1'])
  assert.deepEqual(result.applied, ['g1'])
  const [g1, g2, g3] = result.plan.groups
  assert.equal(g1!.problem, undefined)
  assert.equal(g2!.problem, 'writing the offsets of group g2 on B failed (cluster B refused READ on group g2 to User:kmirror; grant it): some of its partitions may be written; plan again to see where it stands')
  assert.equal(g3!.problem, 'not written: the apply stopped when group g2 failed; plan again')
  // and the exit code says a group could not be done (3), not "refused" or "applied"
  assert.equal(exitCodeOf(result.plan.groups, true), ExitCodes.START_FAILED)
})

test('an apply whose check before the write finds a transaction holding the group\'s commits open refuses that group, writes the others', async () => {
  // Given two groups planned writable, and an application beginning to commit for g1 in a transaction since
  const moves = [{ topic: 'A.orders', partition: 0, current: null, next: 10, reRead: 0, skip: 0, exact: true }]
  const group = (name: string): GroupPlan => ({ group: name, cluster: 'B', state: 'Empty', members: 0, moves, unchanged: 0, refusals: [], notes: [] })
  const plan: OffsetsPlan = { kind: PlanKinds.OFFSETS_SET, flow: '', from: 'B', to: 'B', basis: 'manual', notes: [], groups: [group('g1'), group('g2')] }
  const written: string[] = []
  const admin = {
    describeGroups: async (groups: readonly string[]) => new Map(groups.map(g => [g, { groupId: g, state: 'Empty', members: 0, protocolType: 'consumer' } satisfies GroupDescription])),
    stableCommittedOffsetsOf: async (groups: readonly string[]) => new Map(groups.map(g => [g, { offsets: [], inTransaction: g === 'g1' }])),
    alterCommittedOffsets: async (g: string) => { written.push(g) }
  }
  const destination = { alias: 'B', admin: { 'bootstrap.servers': 'b:9092' }, bootstrapServers: ['b:9092'] } as unknown as ClusterClientConfig
  // When it is applied
  const result = await applyWith(admin, plan, destination, 5000)
  // Then g1 is refused (exit 5), saying why, and g2 written
  assert.deepEqual(written, ['g2'])
  assert.deepEqual(result.plan.groups[0]!.refusals, ['a transaction holds commits of group g1 open on B (UNSTABLE_OFFSET_COMMIT): an application commits offsets for it in transactions, so it is in use; ' +
    'stop that application, or let its transaction end, then plan again (--force does not override this); nothing written'])
  assert.equal(exitCodeOf(result.plan.groups, true), ExitCodes.REFUSED)
})
