/**
 * `kmirror status` in exactly-once mode (src/runtime/transaction-status.ts): the transactions the flow's instances
 * hold open on the target, and what could not be listed said as unknown, never as "none".
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { renderStatus } from '../../../src/cli/status-command.ts'
import type { OpenTransactions } from '../../../src/kafka/open-transactions.ts'
import { readFlowTransactions, renderTransactions } from '../../../src/runtime/transaction-status.ts'
import { flowWith } from '../metadata/acl-fixtures.ts'

const EOS = ['B.exactly.once.source.support = enabled', 'B.producer.transaction.timeout.ms = 20000']
const NOW = Date.parse('2026-12-06T01:00:00Z')

test('at-least-once: nothing is listed and nothing is shown', async () => {
  let asked = false
  assert.equal(await readFlowTransactions(flowWith(), async () => { asked = true; return null }, NOW), undefined)
  assert.equal(asked, false)
})

test('exactly-once: the open transactions of the flow\'s members, with their age against their timeout and the topics they hold; what could not be looked at is said', async () => {
  const flow = flowWith(...EOS)
  let prefix = ''
  const listed: OpenTransactions = {
    open: [
      { transactionalId: 'kmirror-A-B-pod-1:7:1', producerId: 5n, producerEpoch: 2, startedAt: NOW - 3_250, timeoutMs: 20_000, topics: ['A.orders', 'mm2-offsets.A.internal'] },
      { transactionalId: 'kmirror-A-B-pod-2:9:1', producerId: 6n, producerEpoch: 0, startedAt: NOW - 31_000, timeoutMs: 20_000, topics: ['A.orders'] },
      // (not the flow's: an application's id under the prefix, a longer group's member writing its own topics)
      { transactionalId: 'kmirror-A-B-loader', producerId: 7n, producerEpoch: 0, startedAt: NOW, timeoutMs: 60_000, topics: ['orders'] },
      { transactionalId: 'kmirror-A-B-dr-h:1:2', producerId: 8n, producerEpoch: 0, startedAt: NOW, timeoutMs: 60_000, topics: ['A-B.orders'] }
    ],
    missed: [{ what: 'broker 127.0.0.1:9093', why: 'connection refused' }]
  }
  const status = await readFlowTransactions(flow, async p => { prefix = p; return listed }, NOW)
  assert.equal(prefix, 'kmirror-A-B-')
  assert.deepEqual(status, {
    cluster: 'B',
    transactionalIdPrefix: 'kmirror-A-B-',
    transactionTimeoutMs: 20_000,
    listable: true,
    open: [
      { transactionalId: 'kmirror-A-B-pod-1:7:1', openSince: '2026-12-06T00:59:56.750Z', openSeconds: 3.3, timeoutMs: 20_000, topics: ['A.orders', 'mm2-offsets.A.internal'] },
      { transactionalId: 'kmirror-A-B-pod-2:9:1', openSince: '2026-12-06T00:59:29.000Z', openSeconds: 31, timeoutMs: 20_000, topics: ['A.orders'] }
    ],
    missed: [{ what: 'broker 127.0.0.1:9093', why: 'connection refused' }]
  })
  assert.deepEqual(renderTransactions(status!), [
    '  exactly-once: transactional ids kmirror-A-B-<member>, timeout 20 s; 2 open transactions on cluster B, 1 part of the cluster not looked at (below) (read_committed readers of their topics see nothing past them until they end)',
    '    kmirror-A-B-pod-1:7:1: open 3.3 s of its 20 s timeout; holds A.orders, mm2-offsets.A.internal',
    '    kmirror-A-B-pod-2:9:1: open 31 s of its 20 s timeout, past its timeout: the coordinator aborts it at its next look (every 10 s by default); holds A.orders',
    '    not looked at: broker 127.0.0.1:9093 (connection refused); its transactions are not listed here'
  ])
})

test('a target that cannot list transactions (before Kafka 3.0) or whose listing failed is shown as unknown, never as none', async () => {
  const flow = flowWith(...EOS)
  const old = await readFlowTransactions(flow, async () => null, NOW)
  assert.equal(old?.listable, false)
  assert.match(renderTransactions(old!)[0]!, /open transactions unknown: cluster B cannot list them \(Kafka before 3\.0\); one left by a dead instance ends when the next instance fences it, or at its timeout$/)
  const failed = await readFlowTransactions(flow, async () => { throw new Error('cluster B: broker 1 did not answer') }, NOW)
  assert.deepEqual(renderTransactions(failed!), ['  exactly-once: transactional ids kmirror-A-B-<member>, timeout 20 s; open transactions unknown: cannot list the open transactions on B: cluster B: broker 1 did not answer'])
  const none = await readFlowTransactions(flow, async () => ({ open: [], missed: [] }), NOW)
  assert.deepEqual(renderTransactions(none!), ['  exactly-once: transactional ids kmirror-A-B-<member>, timeout 20 s; no open transactions on cluster B'])
})

test('the flow\'s status text carries the exactly-once lines under its head, also before anything was replicated', async () => {
  const exactlyOnce = await readFlowTransactions(flowWith(...EOS), async () => ({ open: [], missed: [] }), NOW)
  assert.equal(renderStatus({ flow: 'A->B', targetReachable: true, sourceReachable: true, partitions: [], exactlyOnce: exactlyOnce! }),
    'flow A->B\n  exactly-once: transactional ids kmirror-A-B-<member>, timeout 20 s; no open transactions on cluster B\n  nothing replicated yet\n')
})
