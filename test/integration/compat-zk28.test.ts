/**
 * Compatibility with Kafka 2.8.2 (ZooKeeper-mode, cluster `zk28`), both ways with Kafka 4.1.1: exact copy, offset syncs,
 * checkpoints and a failover plan (test/helpers/compat.ts).
 */
import { test } from 'node:test'
import { compatScenario, useCompatClusters } from '../helpers/compat.ts'

useCompatClusters(['zk28'])

test('from Kafka 2.8.2 to 4.1.1: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'zk28', target: 'target' })
})

test('from Kafka 4.1.1 to 2.8.2: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'source', target: 'zk28' })
})
