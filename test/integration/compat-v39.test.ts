/**
 * Compatibility with Kafka 3.9.1 (KRaft, cluster `v39`), both ways with Kafka 4.1.1: exact copy, offset syncs,
 * checkpoints and a failover plan (test/helpers/compat.ts).
 */
import { test } from 'node:test'
import { compatScenario, useCompatClusters } from '../helpers/compat.ts'

useCompatClusters(['v39'])

test('from Kafka 3.9.1 to 4.1.1: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'v39', target: 'target' })
})

test('from Kafka 4.1.1 to 3.9.1: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'source', target: 'v39' })
})
