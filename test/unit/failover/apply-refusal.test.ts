import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { refusedForMembers } from '../../../src/failover/apply.ts'
import { activeMembers, type GroupPlan } from '../../../src/failover/plan.ts'

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
