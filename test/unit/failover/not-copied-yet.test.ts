import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FlowConfig } from '../../../src/config/types.ts'
import { notCopiedYet } from '../../../src/failover/failover.ts'
import type { FlowHistory } from '../../../src/failover/flow-history.ts'

test('a failover plan names the partitions of a copied topic that have nothing copied yet, and not those of other topics', () => {
  // Given a flow that copied orders-0 and orders-1 (not orders-3, added since) and not the topic audit
  const history = {
    partitions: [{ topic: 'orders', remoteTopic: 'A.orders', partition: 0 }, { topic: 'orders', remoteTopic: 'A.orders', partition: 1 }],
    toTarget: (topic: string, partition: number, c: number) => topic === 'orders' && partition < 2 ? { offset: c, exact: true } : undefined
  } as unknown as FlowHistory
  const flow = { source: { alias: 'A' }, target: { alias: 'B' } } as unknown as FlowConfig
  const commits = [
    { topic: 'orders', partition: 0, offset: 5, metadata: '' },
    { topic: 'orders', partition: 3, offset: 20, metadata: '' },
    { topic: 'audit', partition: 0, offset: 7, metadata: '' }
  ]
  assert.deepEqual(notCopiedYet(commits, history, flow), [
    '1 partition(s) the group committed on A have nothing copied to B yet and are not moved: orders-3 (committed 20); on B its consumers would start there by auto.offset.reset'
  ])
  assert.deepEqual(notCopiedYet(commits.slice(0, 1), history, flow), [])
})
