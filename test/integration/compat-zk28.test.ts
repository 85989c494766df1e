/**
 * Compatibility with Kafka 2.8.2 (ZooKeeper-mode, cluster `zk28`), both ways with Kafka 4.1.1: exact copy, offset syncs,
 * checkpoints and a failover plan (test/helpers/compat.ts). Exactly-once mode on the 2.8.2 target, where a lone instance
 * started again after its killed predecessor left the group cannot list that one's open transaction (no
 * ListTransactions before 3.0): it says so, `kmirror status` shows them as unknown, and the copy is exact once the coordinator aborted it at its timeout.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compatScenario, useCompatClusters } from '../helpers/compat.ts'
import { eosRestart } from '../helpers/compat-eos.ts'
import { runKmirror } from '../helpers/drills.ts'

useCompatClusters(['zk28'])

test('from Kafka 2.8.2 to 4.1.1: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'zk28', target: 'target' })
})

test('from Kafka 4.1.1 to 2.8.2: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'source', target: 'zk28' })
})

test('exactly-once to Kafka 2.8.2: a lone instance killed with kill -9 and started again once its group is empty says the target cannot list open transactions (before 3.0), and read_committed readers find every record exactly once', { timeout: 180_000 }, async t => {
  // (a transaction timeout of 20 s, B.producer.transaction.timeout.ms, keeps the wait for it short)
  const { again, restartedAt, config, checkExactlyOnce } = await eosRestart(t, 'zk28', 'group-empty', target => [`${target}.producer.transaction.timeout.ms = 20000`])

  // Then the start says why a transaction the dead one left open is not fenced, and what that costs
  const line = again.process.stderr.split('\n').find(l => l.includes('cannot list open transactions (Kafka before 3.0)'))
  assert.ok(line !== undefined, again.process.stderr.slice(-3000))
  const entry = JSON.parse(line) as { level: string, msg: string, cluster: string }
  assert.equal(entry.level, 'info')
  assert.match(entry.msg, /^cluster \S+ cannot list open transactions \(Kafka before 3\.0\): .*ends at its transaction timeout \(\S+\.producer\.transaction\.timeout\.ms, 20 s in this configuration\)/)
  assert.doesNotMatch(again.process.stderr, /"msg":"fencing the transactional ids/)
  // and `kmirror status` shows the open transactions as unknown, never as none
  const status = await runKmirror(['status', config], t)
  assert.equal(status.code, 0, status.stderr)
  assert.match(status.stdout, /\n {2}exactly-once: transactional ids kmirror-\S+-<member>, timeout 20 s; open transactions unknown: cluster \S+ cannot list them \(Kafka before 3\.0\)/)

  // And a read_committed reader finds every record exactly once (at the latest once the coordinator aborted the
  // dead one's transaction: 20 s after it began, checked every 10 s)
  const visibleMs = await checkExactlyOnce(60_000) - restartedAt
  t.diagnostic(`every record visible ${visibleMs} ms after the restart (transaction timeout 20000 ms)`)
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})
