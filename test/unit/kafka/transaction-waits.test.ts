/**
 * A transactional request held off by its coordinator's "not yet" answers (CONCURRENT_TRANSACTIONS,
 * COORDINATOR_LOAD_IN_PROGRESS) is reported once it has lasted, and once when it ends: the retry loop of
 * transactions.ts waits them out, and the operator would otherwise see only a stall.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Connection } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { describeWait, TransactionWait, type TransactionCoordinatorWait } from '../../../src/kafka/transaction-waits.ts'
import { TransactionCoordinator, type TransactionCoordinatorDeps } from '../../../src/kafka/transactions.ts'

const WHAT = { transactionalId: 'kmirror-A-B-one', cluster: 'cluster B', action: 'commit the transaction of' }

describe('TransactionWait', () => {
  it('Given "not yet" answers for less than the threshold, then nothing is reported, not even their end', () => {
    const reports: TransactionCoordinatorWait[] = []
    const wait = new TransactionWait(WHAT, w => reports.push(w), 5000)
    wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', 1000)
    wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', 5999)
    wait.end(true, 6000)
    assert.deepEqual(reports, [])
  })

  it('Given "not yet" answers past the threshold, then one report while it lasts and one when it is answered, measured from the first answer', () => {
    const reports: TransactionCoordinatorWait[] = []
    const wait = new TransactionWait(WHAT, w => reports.push(w), 5000)
    for (const at of [1000, 3000, 6000, 8000, 20_000]) wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', at)
    wait.end(true, 23_400)
    wait.end(true, 24_000)
    assert.deepEqual(reports, [
      { ...WHAT, coordinator: '127.0.0.1:9092', error: 'CONCURRENT_TRANSACTIONS', waitedMs: 5000, over: false },
      { ...WHAT, coordinator: '127.0.0.1:9092', error: 'CONCURRENT_TRANSACTIONS', waitedMs: 22_400, over: true, answered: true }
    ])
  })

  it('Given the wait given up, then its end names the last coordinator and answer', () => {
    const reports: TransactionCoordinatorWait[] = []
    const wait = new TransactionWait(WHAT, w => reports.push(w), 0)
    wait.held('127.0.0.1:9092', 'COORDINATOR_LOAD_IN_PROGRESS', 0)
    wait.held('127.0.0.1:9093', 'CONCURRENT_TRANSACTIONS', 100)
    wait.end(false, 30_000)
    assert.deepEqual(reports.map(r => [r.coordinator, r.error, r.over, r.answered]), [['127.0.0.1:9092', 'COORDINATOR_LOAD_IN_PROGRESS', false, undefined], ['127.0.0.1:9093', 'CONCURRENT_TRANSACTIONS', true, false]])
  })
})

describe('describeWait', () => {
  const base = { ...WHAT, coordinator: '127.0.0.1:9092', error: 'CONCURRENT_TRANSACTIONS', waitedMs: 5012 }

  it('Given a wait going on, then it names the request, id, cluster, broker, answer, duration, cause and what kmirror does', () => {
    assert.equal(describeWait({ ...base, over: false }, 30_000),
      'a request to commit the transaction of transactional id kmirror-A-B-one on cluster B has been answered CONCURRENT_TRANSACTIONS for 5.0 s by its transaction coordinator, ' +
      'broker 127.0.0.1:9092: it is still completing the previous transaction of this id, writing its commit or abort markers to every partition the transaction wrote ' +
      '(a partition leader that stopped answering holds that up until the brokers\' own request to it times out: their request.timeout.ms, 30 s by default). ' +
      'Nothing is committed to the target meanwhile; kmirror asks again for up to 30 s, then the round fails, is aborted and copied again')
    assert.match(describeWait({ ...base, error: 'COORDINATOR_LOAD_IN_PROGRESS', over: false }, 30_000), /broker 127\.0\.0\.1:9092: it is loading its partition of __transaction_state \(/)
  })

  it('Given a wait over, then it says whether the request went through', () => {
    assert.equal(describeWait({ ...base, waitedMs: 23_400, over: true, answered: true }, 30_000),
      'a request to commit the transaction of transactional id kmirror-A-B-one on cluster B went through after 23.4 s of CONCURRENT_TRANSACTIONS from its transaction coordinator, broker 127.0.0.1:9092: the flow\'s transactions go on')
    assert.match(describeWait({ ...base, waitedMs: 30_100, over: true, answered: false }, 30_000), /on cluster B was still answered CONCURRENT_TRANSACTIONS by its transaction coordinator, broker 127\.0\.0\.1:9092, after 30\.1 s: kmirror gave it up; the round fails, is aborted and copied again$/)
  })
})

describe('TransactionCoordinator waits', () => {
  /** A coordinator at 127.0.0.1:9092 answering EndTxn with CODES in turn (51: CONCURRENT_TRANSACTIONS, 0: none). */
  function coordinator (codes: number[], reports: TransactionCoordinatorWait[], reportWaitAfterMs: number): { c: TransactionCoordinator, asked: () => number } {
    let asked = 0
    const deps: TransactionCoordinatorDeps = {
      pool: { get: async () => ({}) as Connection, getFirstAvailable: async () => { throw new Error('not asked') } },
      send: async <_Req, Res>() => ({ throttleTimeMs: 0, errorCode: codes[Math.min(asked++, codes.length - 1)]! }) as Res,
      brokers: () => [],
      cluster: { label: 'cluster B', alias: 'B' },
      principal: 'User:mirror',
      locate: async () => ({ host: '127.0.0.1', port: 9092, nodeId: 1 }),
      onWaiting: w => reports.push(w),
      reportWaitAfterMs
    }
    return { c: new TransactionCoordinator(deps), asked: () => asked }
  }

  it('Given CONCURRENT_TRANSACTIONS answered past the threshold, then the commit goes through once answered, reported held and then over', async () => {
    const reports: TransactionCoordinatorWait[] = []
    const { c, asked } = coordinator([51, 51, 51, 51, 0], reports, 50)
    await c.endTxn('kmirror-A-B-one', { id: 7n, epoch: 0, transactional: true }, true)
    assert.equal(asked(), 5)
    assert.deepEqual(reports.map(r => [r.transactionalId, r.cluster, r.coordinator, r.action, r.error, r.over, r.answered]), [
      ['kmirror-A-B-one', 'cluster B', '127.0.0.1:9092', 'commit the transaction of', 'CONCURRENT_TRANSACTIONS', false, undefined],
      ['kmirror-A-B-one', 'cluster B', '127.0.0.1:9092', 'commit the transaction of', 'CONCURRENT_TRANSACTIONS', true, true]
    ])
    assert.ok(reports[1]!.waitedMs >= reports[0]!.waitedMs && reports[0]!.waitedMs >= 50, JSON.stringify(reports))
  })

  it('Given a short wait, then nothing is reported; given a fencing answer after a reported wait, then it throws FENCED and the wait is reported given up', async () => {
    const quiet: TransactionCoordinatorWait[] = []
    await coordinator([51, 0], quiet, 5000).c.endTxn('kmirror-A-B-one', { id: 7n, epoch: 0, transactional: true }, false)
    assert.deepEqual(quiet, [])

    const reports: TransactionCoordinatorWait[] = []
    await assert.rejects(coordinator([51, 51, 51, 90], reports, 0).c.endTxn('kmirror-A-B-one', { id: 7n, epoch: 0, transactional: true }, false),
      (e: unknown) => e instanceof KmirrorError && e.code === ErrorCodes.FENCED)
    assert.deepEqual(reports.map(r => [r.action, r.over, r.answered]), [['abort the transaction of', false, undefined], ['abort the transaction of', true, false]])
  })
})
