/**
 * Which open transactions a flow's first leader takes as left by members gone from its group
 * (src/runtime/orphan-transactions.ts): the group id, a dash and a member name, and only topics the flow writes.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { OpenTransaction } from '../../../src/kafka/open-transactions.ts'
import { membersOfFlow } from '../../../src/runtime/orphan-transactions.ts'
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
