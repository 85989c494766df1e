import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { OnBatchesAcked, PartitionWrite, WriteResult } from '../../../src/kafka/batch-writer.ts'
import { TransactionRounds, type RoundOutcome, type TransactionalWriter } from '../../../src/replication/transaction-rounds.ts'

/** A transactional writer that records what it was asked, in order. */
function fakeWriter (): TransactionalWriter & { calls: string[], budgets: (number | undefined)[], failWrite: unknown, failCommit: unknown } {
  let open = false
  let additions = 0
  const w = {
    calls: [] as string[],
    failWrite: null as unknown,
    transactionalId: 'kmirror-A-B-0',
    get inTransaction (): boolean { return open },
    get transactionAdditions (): number { return additions },
    async write (writes: readonly PartitionWrite[], onAcked: OnBatchesAcked): Promise<WriteResult> {
      // As the real writer: the partitions are added to the transaction before their data goes out
      if (!open) additions++
      if (w.failWrite !== null) throw w.failWrite
      open = true
      w.calls.push(`write ${writes.map(x => `${x.topic}-${x.partition}:${x.batches.reduce((n, b) => n + b.recordCount, 0)}`).join(',')}`)
      await onAcked(writes.flatMap((x, i) => x.batches.map((_, b) => ({ write: i, batch: b, baseOffset: 100 + b * 1000 }))))
      return { incomplete: [], failed: [] }
    },
    failCommit: null as unknown,
    budgets: [] as (number | undefined)[],
    async commitTransaction (retryForMs?: number): Promise<boolean> {
      w.calls.push('commit')
      w.budgets.push(retryForMs)
      if (w.failCommit !== null) throw w.failCommit
      const was = open
      open = false
      return was
    },
    async abortTransaction (): Promise<void> { w.calls.push('abort'); open = false },
    endMembership (): null { w.calls.push('end membership'); open = false; return null }
  }
  return w
}

const record = { key: null, value: Buffer.from('v'), headers: [], timestamp: 1n }

describe('TransactionRounds', () => {
  it('commits a round once; internal records written inside it join it, with their target offsets', async () => {
    const writer = fakeWriter()
    const outcomes: RoundOutcome[] = []
    const rounds = new TransactionRounds(writer, o => outcomes.push(o))
    const segments = await rounds.run(async () => {
      await writer.write([{ topic: 'A.t', partition: 0, batches: [{ recordCount: 3, build: () => Buffer.alloc(0) }] }], () => undefined)
      return await rounds.records.write([{ topic: 'mm2-offsets.A.internal', partition: 4, records: Array.from({ length: 1500 }, () => record) }])
    })
    assert.deepEqual(writer.calls, ['write A.t-0:3', 'write mm2-offsets.A.internal-4:1500', 'commit'])
    assert.deepEqual(segments, [[{ start: 0, baseOffset: 100 }, { start: 1000, baseOffset: 1100 }]])
    assert.deepEqual(outcomes, ['committed'])
  })

  it('writes internal records outside a round as their own transaction, after the round in progress', async () => {
    const writer = fakeWriter()
    const rounds = new TransactionRounds(writer)
    let release = (): void => undefined
    const round = rounds.run(async () => { await new Promise<void>(resolve => { release = resolve }); writer.calls.push('round body') })
    const trim = rounds.records.write([{ topic: 'mm2-offset-history.A.internal', partition: 0, records: [record] }])
    await new Promise(resolve => setImmediate(resolve))
    release()
    await Promise.all([round, trim])
    assert.deepEqual(writer.calls, ['round body', 'commit', 'write mm2-offset-history.A.internal-0:1', 'commit'])
  })

  it('aborts a failed round, but never re-initialises a fenced producer', async () => {
    const writer = fakeWriter()
    const outcomes: RoundOutcome[] = []
    const rounds = new TransactionRounds(writer, o => outcomes.push(o))
    writer.failWrite = new KmirrorError(ErrorCodes.PRODUCE, 'connection reset', { retriable: true })
    await assert.rejects(rounds.run(() => rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])), /connection reset/)
    assert.deepEqual(writer.calls, ['abort'])
    writer.failWrite = new KmirrorError(ErrorCodes.FENCED, 'PRODUCER_FENCED')
    await assert.rejects(rounds.run(() => rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])), /PRODUCER_FENCED/)
    assert.deepEqual(writer.calls, ['abort'])
    assert.deepEqual(outcomes, ['aborted', 'aborted'])
  })

  it('gives its commit only what is left of 90 % of the transaction timeout to wait out a coordinator moving (at least a second): given up before the coordinator aborts it, the commit is in doubt, not fenced', async () => {
    const writer = fakeWriter()
    let now = 1_000_000
    const rounds = new TransactionRounds(writer, () => undefined, { timeoutMs: 60_000, now: () => now })
    await rounds.run(async () => {
      await rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])
      now += 50_000
    })
    await rounds.run(async () => {
      await rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])
      now += 53_900
    })
    assert.deepEqual(writer.budgets, [4000, 1000])
  })

  it('does not commit a round open for nearly the transaction timeout: it aborts it with a retriable error naming the key that sets it', async () => {
    const writer = fakeWriter()
    let now = 1_000_000
    const outcomes: RoundOutcome[] = []
    const rounds = new TransactionRounds(writer, o => outcomes.push(o), { timeoutMs: 60_000, timeoutKey: 'B.producer.transaction.timeout.ms', now: () => now })
    const round = rounds.run(async () => {
      await rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])
      now += 54_000
    })
    await assert.rejects(round, (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.PRODUCE)
      assert.equal(err.retriable, true)
      assert.match(err.message, /transaction kmirror-A-B-0 was open 54000 ms, too close to the transaction timeout \(B\.producer\.transaction\.timeout\.ms = 60000\).*aborted and written again.*or raise B\.producer\.transaction\.timeout\.ms/)
      return true
    })
    assert.deepEqual(writer.calls, ['write x-0:1', 'abort'])
    assert.deepEqual(outcomes, ['aborted'])
    now += 1000
    await rounds.run(() => rounds.records.write([{ topic: 'x', partition: 0, records: [record] }]))
    assert.deepEqual(outcomes, ['aborted', 'committed'], 'a round of normal length still commits')
  })

  it('reports a round that failed before its first write (the source out of reach) as empty, not as an aborted transaction', async () => {
    const writer = fakeWriter()
    const outcomes: RoundOutcome[] = []
    const causes: unknown[] = []
    const rounds = new TransactionRounds(writer, (o, cause) => { outcomes.push(o); causes.push(cause) })
    const unreachable = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'cluster A: connect ECONNREFUSED', { retriable: true })
    await assert.rejects(rounds.run(async () => { throw unreachable }), (err: unknown) => err === unreachable)
    assert.deepEqual(outcomes, ['empty'])
    assert.deepEqual(causes, [unreachable])
  })

  it('lets a long round that wrote nothing end without an abort: it opened no transaction to time out', async () => {
    const writer = fakeWriter()
    let now = 0
    const outcomes: RoundOutcome[] = []
    const rounds = new TransactionRounds(writer, o => outcomes.push(o), { timeoutMs: 1000, now: () => now })
    await rounds.run(async () => { now += 5000 })
    assert.deepEqual(outcomes, ['empty'])
    assert.deepEqual(writer.calls, ['commit'])
  })

  it('reports a FENCED answer to a round older than the transaction timeout as the coordinator\'s timeout abort, and a younger one as it is', async () => {
    const writer = fakeWriter()
    let now = 0
    const rounds = new TransactionRounds(writer, () => undefined, { timeoutMs: 60_000, now: () => now })
    const fenced = new KmirrorError(ErrorCodes.FENCED, 'write to cluster B: PRODUCER_FENCED: another producer ...', { details: { transactionalId: 'kmirror-A-B-0' } })
    writer.failWrite = fenced
    await assert.rejects(rounds.run(async () => {
      now += 65_000
      await rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])
    }), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.FENCED)
      assert.equal(err.cause, fenced)
      assert.match(err.message, /was open 65000 ms, past the transaction timeout \(transaction\.timeout\.ms = 60000\): the target's coordinator aborted it/)
      return true
    })
    await assert.rejects(rounds.run(() => rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])), (err: unknown) => err === fenced)
    assert.deepEqual(writer.calls, [], 'a fenced producer is never aborted (that would initialise its id again)')
  })

  it('counts a round whose commit got no answer only once settled: committed or aborted as the committed progress says, its cause kept', async () => {
    const writer = fakeWriter()
    const outcomes: string[] = []
    const rounds = new TransactionRounds(writer, (o, cause) => outcomes.push(cause === undefined ? o : `${o}: ${(cause as Error).message}`))
    const lost = new KmirrorError(ErrorCodes.TIMEOUT, 'EndTxn to broker 2 of cluster B timed out', { retriable: true })
    const write = (): Promise<unknown> => rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])
    writer.failCommit = lost
    await assert.rejects(rounds.run(write), (err: unknown) => err === lost)
    assert.equal(rounds.commitInDoubt, true)
    assert.deepEqual(outcomes, [], 'not counted while in doubt')
    rounds.settleDoubt(true)
    rounds.settleDoubt(false)
    assert.deepEqual(outcomes, ['committed'], 'counted once')
    assert.equal(rounds.commitInDoubt, false)
    // and one the committed progress says did not go through counts as aborted, with the commit's failure
    await assert.rejects(rounds.run(write))
    rounds.settleDoubt(false)
    assert.deepEqual(outcomes, ['committed', 'aborted: EndTxn to broker 2 of cluster B timed out'])
    // and a failure before the commit is no doubt: aborted at once
    writer.failCommit = null
    writer.failWrite = lost
    await assert.rejects(rounds.run(write))
    assert.equal(rounds.commitInDoubt, false)
    assert.equal(outcomes.length, 3)
    assert.match(outcomes[2]!, /^aborted: /)
  })

  it('counts a round whose transaction a lost membership dropped before its commit as aborted, not as empty', async () => {
    const writer = fakeWriter()
    const outcomes: string[] = []
    const rounds = new TransactionRounds(writer, (o, cause) => outcomes.push(cause === undefined ? o : `${o}: ${(cause as Error).message}`))
    await rounds.run(async () => {
      await rounds.records.write([{ topic: 'x', partition: 0, records: [record] }])
      rounds.endMembership()
    })
    assert.equal(outcomes.length, 1)
    assert.match(outcomes[0]!, /^aborted: the round's transaction kmirror-A-B-0 was dropped before its commit: the group membership it was written under is lost/)
  })
})
