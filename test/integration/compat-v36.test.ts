/**
 * Compatibility with Kafka 3.6.2 (KRaft, cluster `v36`), both ways with Kafka 4.1.1: exact copy, offset syncs,
 * checkpoints and a failover plan (test/helpers/compat.ts).
 */
import { test } from 'node:test'
import { compatScenario, useCompatClusters } from '../helpers/compat.ts'

useCompatClusters(['v36'])

test('from Kafka 3.6.2 to 4.1.1: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'v36', target: 'target' })
})

test('from Kafka 4.1.1 to 3.6.2: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'source', target: 'v36' })
})
