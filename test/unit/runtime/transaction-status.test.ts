/**
 * `kmirror status` in exactly-once mode (src/runtime/transaction-status.ts): the transactions the flow's members
 * hold open on the target, not another flow's, and what could not be listed said as unknown, never as "none".
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { renderStatus } from '../../../src/cli/status-command.ts'
import type { OpenTransaction, OpenTransactions } from '../../../src/kafka/open-transactions.ts'
import { readFlowTransactions, renderTransactions, type TransactionReaders } from '../../../src/runtime/transaction-status.ts'
import { flowWith } from '../metadata/acl-fixtures.ts'

const EOS = ['B.exactly.once.source.support = enabled', 'B.producer.transaction.timeout.ms = 20000']
const NOW = Date.parse('2026-12-06T01:00:00Z')
const open = (transactionalId: string, startedAt: number, topics: string[], timeoutMs = 20_000): OpenTransaction => ({ transactionalId, producerId: 5n, producerEpoch: 0, startedAt, timeoutMs, topics })
/** Readers answering LISTED, with EXISTING groups (or a failure to describe them). */
const readers = (listed: OpenTransactions | null | Error, existing: readonly string[] | Error = []): TransactionReaders & { asked: string[][] } => {
  const asked: string[][] = []
  return {
    asked,
    list: async () => { if (listed instanceof Error) throw listed; return listed },
    existingGroups: async ids => { asked.push([...ids]); if (existing instanceof Error) throw existing; return new Set(existing) }
  }
}

test('at-least-once: nothing is listed and nothing is shown', async () => {
  let called = false
  assert.equal(await readFlowTransactions(flowWith(), { list: async () => { called = true; return null }, existingGroups: async () => new Set() }, NOW), undefined)
  assert.equal(called, false)
})

test('exactly-once: the open transactions of the flow\'s members, with their age against their timeout and the topics they hold; what could not be looked at is said', async () => {
  const flow = flowWith(...EOS)
  const r = readers({
    open: [
      open('kmirror-A-B-pod-1:7:1', NOW - 3_250, ['A.orders', 'mm2-offsets.A.internal']),
      open('kmirror-A-B-host:9:1', NOW - 31_000, ['A.orders']),
      // (not the flow's: an application's id under the prefix; a longer group's member, kmirror-A-B-dr exists)
      open('kmirror-A-B-loader', NOW, ['orders'], 60_000),
      open('kmirror-A-B-dr-h:1:2', NOW, ['A.payments'], 60_000)
    ],
    missed: [{ what: 'broker 127.0.0.1:9093', why: 'connection refused' }]
  }, ['kmirror-A-B-dr'])
  const status = await readFlowTransactions(flow, r, NOW)
  assert.deepEqual(r.asked, [['kmirror-A-B-pod', 'kmirror-A-B-dr']], 'the longer groups the dashed ids could belong to are described')
  assert.deepEqual(status, {
    cluster: 'B',
    transactionalIdPrefix: 'kmirror-A-B-',
    transactionTimeoutMs: 20_000,
    listable: true,
    open: [
      { transactionalId: 'kmirror-A-B-pod-1:7:1', openSince: '2026-12-06T00:59:56.750Z', openSeconds: 3.3, timeoutMs: 20_000, topics: ['A.orders', 'mm2-offsets.A.internal'] },
      { transactionalId: 'kmirror-A-B-host:9:1', openSince: '2026-12-06T00:59:29.000Z', openSeconds: 31, timeoutMs: 20_000, topics: ['A.orders'] }
    ],
    missed: [{ what: 'broker 127.0.0.1:9093', why: 'connection refused' }]
  })
  assert.deepEqual(renderTransactions(status!), [
    '  exactly-once: transactional ids kmirror-A-B-<member>, timeout 20 s; 2 open transactions on cluster B: read_committed readers of their topics see nothing past them until they end; not looked at: 1 (below)',
    '    kmirror-A-B-pod-1:7:1: open 3.3 s of its 20 s timeout; holds A.orders, mm2-offsets.A.internal',
    '    kmirror-A-B-host:9:1: open 31 s of its 20 s timeout, past its timeout: the coordinator aborts it at its next look (every 10 s by default); holds A.orders',
    '    not looked at: broker 127.0.0.1:9093: connection refused'
  ])
})

test('when the longer groups cannot be described, every id is kept and that is said', async () => {
  const status = await readFlowTransactions(flowWith(...EOS), readers({ open: [open('kmirror-A-B-dr-h:1:2', NOW, ['A.payments'])], missed: [] }, new Error('GROUP_AUTHORIZATION_FAILED')), NOW)
  assert.deepEqual(status?.open.map(t => t.transactionalId), ['kmirror-A-B-dr-h:1:2'])
  assert.deepEqual(status?.missed, [{ what: 'groups kmirror-A-B-dr', why: 'not described (GROUP_AUTHORIZATION_FAILED): an id listed that could be one of theirs may be another flow\'s' }])
})

test('a target that cannot list transactions (before Kafka 3.0) or whose listing failed is shown as unknown, never as none', async () => {
  const flow = flowWith(...EOS)
  const old = await readFlowTransactions(flow, readers(null), NOW)
  assert.equal(old?.listable, false)
  assert.match(renderTransactions(old!)[0]!, /open transactions unknown: cluster B cannot list them \(Kafka before 3\.0\); one left by a dead instance ends when the next instance fences it, or at its timeout$/)
  const failed = await readFlowTransactions(flow, readers(new Error('cluster B: broker 1 did not answer')), NOW)
  assert.deepEqual(renderTransactions(failed!), ['  exactly-once: transactional ids kmirror-A-B-<member>, timeout 20 s; open transactions unknown: cannot list the open transactions on B: cluster B: broker 1 did not answer'])
  const none = await readFlowTransactions(flow, readers({ open: [], missed: [] }), NOW)
  assert.deepEqual(renderTransactions(none!), ['  exactly-once: transactional ids kmirror-A-B-<member>, timeout 20 s; no open transactions on cluster B'])
})

test('the flow\'s status text carries the exactly-once lines under its head, also before anything was replicated', async () => {
  const exactlyOnce = await readFlowTransactions(flowWith(...EOS), readers({ open: [], missed: [] }), NOW)
  assert.equal(renderStatus({ flow: 'A->B', targetReachable: true, sourceReachable: true, partitions: [], exactlyOnce: exactlyOnce! }),
    'flow A->B\n  exactly-once: transactional ids kmirror-A-B-<member>, timeout 20 s; no open transactions on cluster B\n  nothing replicated yet\n')
})
