/**
 * What `kmirror status` shows of a flow's group from its DescribeGroups answer: each member by name with the
 * partitions and jobs of its assignment, the generation and leader; nothing for an empty or another program's group.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { encodeMemberMetadata, encodeWorkAssignment } from '../../../src/formats/work-assignment.ts'
import type { DescribedMember } from '../../../src/kafka/protocol/describe-groups.ts'
import { membershipOf } from '../../../src/runtime/membership-reader.ts'

function member (name: string, assigned: string[]): DescribedMember {
  return {
    memberId: `${name}-id`,
    clientId: 'c',
    clientHost: '/h',
    metadata: encodeMemberMetadata({ memberName: name, transactionalId: null, owned: [] }),
    assignment: encodeWorkAssignment({ error: 0, generation: 4, leaderName: 'h:1:1', assigned, revoked: [], fence: [], members: [] })
  }
}

test('each member with the partitions and jobs it owns, the generation and the leader', () => {
  const status = membershipOf({
    errorCode: 0, groupId: 'kmirror-A-B', state: 'Stable', protocolType: 'kmirror', protocol: 'sticky-v1',
    members: [member('h:2:1', ['p:1:t', 'j:heartbeats']), member('h:1:1', ['p:0:t', 'p:2:t', 'j:emit-checkpoints', 'j:refresh-topics'])]
  })
  assert.deepEqual(status, {
    group: 'kmirror-A-B',
    generation: 4,
    leader: 'h:1:1',
    self: '',
    members: [{ name: 'h:1:1', partitions: 2, jobs: ['emit-checkpoints', 'refresh-topics'] }, { name: 'h:2:1', partitions: 1, jobs: ['heartbeats'] }]
  })
})

test('a member between rebalances (no assignment yet) owns nothing; an empty group or another program\'s shows none', () => {
  const joining = { ...member('h:3:1', []), assignment: Buffer.alloc(0) }
  const group = { errorCode: 0, groupId: 'g', state: 'PreparingRebalance', protocolType: 'kmirror', protocol: '', members: [joining] }
  assert.deepEqual(membershipOf(group)?.members, [{ name: 'h:3:1', partitions: 0, jobs: [] }])
  assert.equal(membershipOf({ ...group, members: [] }), null)
  assert.equal(membershipOf({ ...group, protocolType: 'consumer' }), null)
})
