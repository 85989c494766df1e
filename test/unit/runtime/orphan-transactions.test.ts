/**
 * Which open transactions a flow's first leader takes as left by members gone from its group
 * (src/runtime/orphan-transactions.ts): the group id, a dash and a member name, and only topics the flow writes.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { OpenTransaction } from '../../../src/kafka/open-transactions.ts'
import { longerGroupIds, membersOfFlow } from '../../../src/runtime/orphan-transactions.ts'
import { flowWith } from '../metadata/acl-fixtures.ts'

const open = (transactionalId: string, topics: string[]): OpenTransaction => ({ transactionalId, producerId: 1n, producerEpoch: 0, startedAt: 0, timeoutMs: 60_000, topics })

test('a transaction of the group\'s id prefix and a member name, on the flow\'s remote topics and its own internal topics, is a member\'s', () => {
  const flow = flowWith('A->B.exactly.once.source.support = enabled', 'B.exactly.once.source.support = enabled', 'offset-syncs.topic.location = target')
  assert.equal(flow.groupId, 'kmirror-A-B')
  const mine = open('kmirror-A-B-host-1.example:4242:1764950000000', ['A.orders', 'A.payments', 'mm2-offset-history.A.internal', 'mm2-offset-syncs.A.internal', flow.offsetStorageTopic])
  assert.deepEqual(membersOfFlow(flow, [mine]), [mine])
})

test('another group\'s transaction is never taken: an id without a member name, a longer group id (flow A-B->dr) writing its own topics, or topics the flow does not write', () => {
  const flow = flowWith()
  const others = [
    open('kmirror-A-B-manual', ['A.orders']),
    open('kmirror-A-B-dr-host:1:2', ['A-B.orders', 'mm2-offset-history.A-B.internal']),
    open('kmirror-A-B-host:1:2', ['C.orders']),
    open('kmirror-A-B-host:1:2', ['A.orders', 'orders']),
    open('kmirror-A-B-host:1:2', ['A.checkpoints.internal']),
    open('kmirror-A-B-host:1:2', []),
    open('kmirror-A-C-host:1:2', ['A.orders'])
  ]
  assert.deepEqual(membersOfFlow(flow, others), [])
})

test('under IdentityReplicationPolicy every plain topic passes the topic check: what keeps other groups out is the groups check', () => {
  const flow = flowWith('replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy')
  const another = open('kmirror-A-B-2-host:1:2', ['orders'])
  assert.deepEqual(membersOfFlow(flow, [another]), [another], 'taken as a candidate by its id and topics alone')
  assert.deepEqual(longerGroupIds('kmirror-A-B', another.transactionalId), ['kmirror-A-B-2'], 'so group kmirror-A-B-2 is asked about')
})

test('the longer group ids a transactional id could belong to: one per dash of the member name, none without a dash', () => {
  assert.deepEqual(longerGroupIds('kmirror-A-B', 'kmirror-A-B-dr-host-1.example:42:1764950000000'), ['kmirror-A-B-dr', 'kmirror-A-B-dr-host'])
  assert.deepEqual(longerGroupIds('mirror', 'mirror-2-host:1:2'), ['mirror-2'])
  assert.deepEqual(longerGroupIds('kmirror-A-B', 'kmirror-A-B-host:1:2'), [])
})
