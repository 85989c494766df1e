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

const WHAT = { transactionalId: 'kmirror-A-B-one', cluster: 'cluster B', action: 'commit the transaction of', deadlineMs: 30_000 }

describe('TransactionWait', () => {
  it('Given "not yet" answers for less than the threshold, then nothing is reported, not even their end', () => {
    const reports: TransactionCoordinatorWait[] = []
    const wait = new TransactionWait(WHAT, w => reports.push(w), 5000)
    wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', 1000)
    wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', 5999)
    wait.end('answered', undefined, 6000)
    assert.equal(reports.length, 0)
  })

  it('Given "not yet" answers past the threshold, then one report while it lasts and one when it is answered, measured from the first answer', () => {
    const reports: TransactionCoordinatorWait[] = []
    const wait = new TransactionWait(WHAT, w => reports.push(w), 5000)
    for (const at of [1000, 3000, 6000, 8000, 20_000]) wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', at)
    wait.end('answered', undefined, 23_400)
    wait.end('answered', undefined, 24_000)
    assert.deepEqual(reports, [
      { ...WHAT, coordinator: '127.0.0.1:9092', error: 'CONCURRENT_TRANSACTIONS', waitedMs: 5000, over: false },
      { ...WHAT, coordinator: '127.0.0.1:9092', error: 'CONCURRENT_TRANSACTIONS', waitedMs: 22_400, over: true, outcome: 'answered' }
    ])
  })

  it('Given the coordinator moved during the wait, then the threshold counts afresh at the new one; the end counts the whole wait', () => {
    const reports: TransactionCoordinatorWait[] = []
    const wait = new TransactionWait(WHAT, w => reports.push(w), 5000)
    wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', 0)
    wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', 4000)
    wait.held('127.0.0.1:9093', 'COORDINATOR_LOAD_IN_PROGRESS', 15_000)
    wait.held('127.0.0.1:9093', 'COORDINATOR_LOAD_IN_PROGRESS', 19_999)
    assert.equal(reports.length, 0)
    wait.held('127.0.0.1:9093', 'COORDINATOR_LOAD_IN_PROGRESS', 20_000)
    wait.end('gave-up', undefined, 30_000)
    assert.deepEqual(reports.map(r => [r.coordinator, r.error, r.waitedMs, r.over, r.outcome]), [
      ['127.0.0.1:9093', 'COORDINATOR_LOAD_IN_PROGRESS', 5000, false, undefined], ['127.0.0.1:9093', 'COORDINATOR_LOAD_IN_PROGRESS', 30_000, true, 'gave-up']
    ])
  })

  it('Given a reporter that throws, then the wait goes on as if reported', () => {
    const wait = new TransactionWait(WHAT, () => { throw new Error('a broken logger') }, 0)
    assert.doesNotThrow(() => { wait.held('127.0.0.1:9092', 'CONCURRENT_TRANSACTIONS', 0); wait.end('answered', undefined, 1) })
  })
})

describe('describeWait', () => {
  const base = { ...WHAT, coordinator: '127.0.0.1:9092', error: 'CONCURRENT_TRANSACTIONS', waitedMs: 5012 }

  it('Given a wait going on, then it names the request, id, cluster, broker, answer, duration, cause and what kmirror does', () => {
    assert.equal(describeWait({ ...base, over: false }),
      'a request to commit the transaction of transactional id kmirror-A-B-one on cluster B has been answered CONCURRENT_TRANSACTIONS for 5.0 s by its transaction coordinator, ' +
      'broker 127.0.0.1:9092: it is still completing the previous transaction of this id, writing its commit or abort markers to every partition the transaction wrote ' +
      '(a partition leader that stopped answering holds that up until the brokers\' own request to it times out: their request.timeout.ms, 30 s by default). ' +
      'Nothing is committed to the target meanwhile; kmirror asks again for up to 30 s, then the round fails, is aborted and copied again')
    assert.match(describeWait({ ...base, error: 'COORDINATOR_LOAD_IN_PROGRESS', over: false }), /broker 127\.0\.0\.1:9092: it is loading its partition of __transaction_state \(/)
    // What follows depends on the request: there is no round to abort at start, nor when the abort itself waits
    assert.match(describeWait({ ...base, action: 'get a producer id for', over: false }), /for up to 30 s, then the step fails and is tried again$/)
    assert.match(describeWait({ ...base, action: 'abort the transaction of', over: false }), /for up to 30 s, then the next producer id asked for \(InitProducerId\) aborts the transaction instead$/)
  })

  it('Given a wait over, then it says how it ended: went through, given up at the deadline, or ended by another error it names', () => {
    assert.equal(describeWait({ ...base, waitedMs: 23_400, over: true, outcome: 'answered' }),
      'a request to commit the transaction of transactional id kmirror-A-B-one on cluster B went through after 23.4 s held off (last answer: CONCURRENT_TRANSACTIONS from its transaction coordinator, broker 127.0.0.1:9092): the flow\'s transactions go on')
    assert.match(describeWait({ ...base, waitedMs: 30_100, over: true, outcome: 'gave-up' }), /on cluster B was still answered CONCURRENT_TRANSACTIONS by its transaction coordinator, broker 127\.0\.0\.1:9092 after 30\.1 s: kmirror gave it up; the round fails, is aborted and copied again$/)
    assert.match(describeWait({ ...base, waitedMs: 8000, over: true, outcome: 'failed', failure: 'commit the transaction of ...: PRODUCER_FENCED: another producer ...' }),
      /on cluster B, held off 8\.0 s \(last answer: CONCURRENT_TRANSACTIONS from its transaction coordinator, broker 127\.0\.0\.1:9092\), ended with another error: commit the transaction of \.\.\.: PRODUCER_FENCED/)
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
    assert.deepEqual(reports.map(r => [r.transactionalId, r.cluster, r.coordinator, r.action, r.error, r.over, r.outcome]), [
      ['kmirror-A-B-one', 'cluster B', '127.0.0.1:9092', 'commit the transaction of', 'CONCURRENT_TRANSACTIONS', false, undefined],
      ['kmirror-A-B-one', 'cluster B', '127.0.0.1:9092', 'commit the transaction of', 'CONCURRENT_TRANSACTIONS', true, 'answered']
    ])
    assert.ok(reports[1]!.waitedMs >= reports[0]!.waitedMs && reports[0]!.waitedMs >= 50, JSON.stringify(reports))
  })

  it('Given a short wait, then nothing is reported; given a fencing answer after a reported wait, then it throws FENCED and the wait is reported given up', async () => {
    const quiet: TransactionCoordinatorWait[] = []
    await coordinator([51, 0], quiet, 5000).c.endTxn('kmirror-A-B-one', { id: 7n, epoch: 0, transactional: true }, false)
    assert.equal(quiet.length, 0)

    const reports: TransactionCoordinatorWait[] = []
    await assert.rejects(coordinator([51, 51, 51, 90], reports, 0).c.endTxn('kmirror-A-B-one', { id: 7n, epoch: 0, transactional: true }, false),
      (e: unknown) => e instanceof KmirrorError && e.code === ErrorCodes.FENCED)
    assert.deepEqual(reports.map(r => [r.action, r.over, r.outcome]), [['abort the transaction of', false, undefined], ['abort the transaction of', true, 'failed']])
    assert.match(reports[1]!.failure ?? '', /PRODUCER_FENCED/)
  })
})
