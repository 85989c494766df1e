/**
 * What an exactly-once flow's round transactions came to (src/replication/transaction-tally.ts): counts, the last
 * commit, the last abort with its cause, and the metrics.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { Metrics } from '../../../src/metrics/metrics.ts'
import { TransactionTally } from '../../../src/replication/transaction-tally.ts'

test('commits and aborts are counted, with the last commit\'s time and the last abort\'s cause; empty rounds count nothing', () => {
  const counted: string[] = []
  const metrics: Metrics = { inc: (name, labels, value = 1) => { counted.push(`${name} ${labels['flow']} +${value}`) }, set: () => undefined, observe: () => undefined, remove: () => undefined }
  const tally = new TransactionTally('A->B', 'kmirror-A-B-pod:1:2', 20_000, metrics)
  assert.deepEqual(tally.status(), { transactionalId: 'kmirror-A-B-pod:1:2', transactionTimeoutMs: 20_000, committed: 0, aborted: 0, lastCommitAt: null, lastAbort: null })
  const before = Date.now()
  tally.ended('committed')
  tally.ended('empty')
  tally.ended('committed')
  tally.ended('aborted', new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'writing mm2-offsets.A.internal-3 in the round\'s transaction was refused: grant WRITE on topic mm2-offsets.A.internal'))
  tally.ended('aborted', new Error('socket hang up'))
  const status = tally.status()
  assert.equal(status.committed, 2)
  assert.equal(status.aborted, 2)
  assert.ok(Date.parse(status.lastCommitAt!) >= before)
  assert.deepEqual({ code: status.lastAbort!.code, message: status.lastAbort!.message }, { code: ErrorCodes.INTERNAL, message: 'socket hang up' })
  // Both series from the start (at 0), then one per round
  assert.deepEqual(counted, ['transactionsCommitted A->B +0', 'transactionsAborted A->B +0', 'transactionsCommitted A->B +1', 'transactionsCommitted A->B +1', 'transactionsAborted A->B +1', 'transactionsAborted A->B +1'])
})
