import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FlowConfig } from '../../../src/config/types.ts'
import { notCopiedYet, onDestination } from '../../../src/failover/failover.ts'
import type { WantedOffset } from '../../../src/failover/plan.ts'
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

test('a plan leaves out the partitions the destination does not have, and names them', async () => {
  // Given B has A.orders with 2 partitions and no A.audit
  const clients = { label: 'cluster B', admin: { describeTopics: async (names: readonly string[]) => new Map(names.filter(n => n === 'A.orders').map(n => [n, { name: n, id: 'x', partitions: 2 }])) } }
  const wanted = (topic: string, partition: number): WantedOffset => ({ topic, partition, offset: 5, exact: true, processed: 5 })
  const present = await onDestination(clients, new Map([['g', [wanted('A.orders', 0), wanted('A.orders', 2), wanted('A.audit', 0)]], ['h', [wanted('A.orders', 1)]]]))
  assert.deepEqual(present('g'), {
    wanted: [wanted('A.orders', 0)],
    missing: ['2 partition(s) not moved: cluster B does not have them (topic deleted, or not created yet), or does not let kmirror describe them (DESCRIBE on the topic): A.orders-2, A.audit-0']
  })
  assert.deepEqual(present('h'), { wanted: [wanted('A.orders', 1)], missing: [] })
})
