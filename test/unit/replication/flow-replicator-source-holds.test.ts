/**
 * FlowReplicator with a source partition held by a transaction left open (read_committed: nothing past the last
 * stable offset is given): reported failing past health.transaction.hang.threshold.ms, not the stall threshold; its
 * empty answers and RETRY rounds do not end or repeat the report; a hold that moves to a new offset ends the old
 * report and is reported on its own; every record is copied once the transaction ends.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FetchOutcomes } from '../../../src/kafka/record-fetcher.ts'
import { partitionLag } from '../../../src/replication/flow-replicator.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels } from '../../fakes/memory-logger.ts'
import { assertExactCopy, createHarness, offsetsWithGaps, type Harness } from '../../fakes/replicator-harness.ts'

const T = { source: 't', remote: 'A.t', partitions: 2 } as const
const GAUGE = 'failingPartitions{"flow":"A->B","error":"SOURCE_TRANSACTION_OPEN"}'

async function copyAll (h: Harness): Promise<void> {
  h.source.whenCaughtUp(() => h.replicator.stop())
  await h.replicator.addTopics([T])
  await h.replicator.run()
}

const messages = (h: Harness, level: number): string[] => h.logs.at(level).map(l => l.msg)
const failureOf = (h: Harness): ReturnType<Harness['replicator']['status']>[number]['failure'] | undefined => h.replicator.status().find(p => p.partition === 1)?.failure

/** t-0 readable, t-1 with records 0-14 (OFFSETS) held by a transaction open at offset 10; hang threshold 80 ms. */
function heldHarness (offsets = offsetsWithGaps(0, 14), healthStallThresholdMs = 10): { h: Harness, metrics: CountingMetrics } {
  const metrics = new CountingMetrics()
  const h = createHarness({ metrics, healthStallThresholdMs, transactionHangThresholdMs: 80 })
  h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
  h.source.addPartition('t', 1, offsets)
  h.source.openTransactions.set(partitionKey('t', 1), 10)
  return { h, metrics }
}

describe('FlowReplicator: a source partition an open transaction holds', () => {
  it('is reported past health.transaction.hang.threshold.ms, not the stall threshold: one warning naming the transaction\'s first offset and the kafka-transactions.sh lines, failing until its records come, then a recovery line', { timeout: 10_000 }, async () => {
    const { h, metrics } = heldHarness()
    const heldSince = Date.now()
    let seen: ReturnType<typeof failureOf>
    let position: number | undefined
    let reportedAfterMs = 0
    let gaugeSeen: number | undefined
    let roundsFailing = 0
    let early: ReturnType<Harness['replicator']['status']>[number] | undefined
    let earlyGauges: (number | undefined)[] = []
    let lagWhileFailing: number | null = null
    // Once t-1 has been failing for a few rounds (its empty answers do not end that), the transaction ends
    h.source.onFetch(() => {
      const failure = failureOf(h)
      const t1 = h.replicator.status().find(p => p.partition === 1)
      if (early === undefined && t1?.heldAt !== undefined && failure === null) {
        early = t1
        earlyGauges = [metrics.gauges.get('sourcePartitionsHeld{"flow":"A->B"}'), metrics.gauges.get('sourceHoldSeconds{"flow":"A->B"}')]
      }
      if (failure === null || failure === undefined) return
      lagWhileFailing = partitionLag(t1!)
      if (seen === undefined) {
        seen = failure
        position = h.replicator.status().find(p => p.partition === 1)?.position
        reportedAfterMs = Date.now() - heldSince
        gaugeSeen = metrics.gauges.get(GAUGE)
      }
      if (++roundsFailing === 5) h.source.openTransactions.clear()
    })
    await copyAll(h)
    assert.ok(seen !== undefined && seen !== null)
    assert.ok(reportedAfterMs >= 80, `reported after ${reportedAfterMs} ms`)
    assert.ok(roundsFailing >= 5)
    assert.equal(position, 10)
    assert.deepEqual([seen.side, seen.cluster, seen.error], ['source', 'A', 'SOURCE_TRANSACTION_OPEN'])
    assert.equal(seen.message, 't-1 cannot be read: it is read read_committed, and a transaction still open on the source since offset 10 (its last stable ' +
      'offset; the log goes on to 15) holds it: its leader gives nothing past that offset until the transaction commits or aborts')
    assert.match(seen.remedy, /transaction\.max\.timeout\.ms.*CurrentTransactionStartOffset is 10 \(kafka-transactions\.sh --bootstrap-server a:9092 describe-producers --topic t --partition 1\); .*\(kafka-transactions\.sh --bootstrap-server a:9092 abort --topic t --partition 1 --start-offset 10\)$/)
    assert.equal(gaugeSeen, 1)
    // and before that, from the first rounds, /status showed the hold without a failure, and the hold gauges counted it
    assert.ok(early !== undefined)
    assert.equal(early.heldAt, 10)
    assert.ok(Math.abs(Date.parse(early.heldSince!) - heldSince) < 1_000, early.heldSince)
    assert.equal(earlyGauges[0], 1)
    assert.ok(earlyGauges[1]! >= 0 && earlyGauges[1]! < 1, String(earlyGauges[1]))
    // and its lag stayed known while it failed (its answers carry the high watermark)
    assert.equal(lagWhileFailing, 5)
    const warnings = messages(h, LogLevels.warn).filter(m => m.startsWith('cannot read t-1 from cluster A for'))
    assert.equal(warnings.length, 1, JSON.stringify(messages(h, LogLevels.warn)))
    assert.match(warnings[0]!, /\(health\.transaction\.hang\.threshold\.ms = 80\): it is read read_committed.* none is skipped/)
    assert.deepEqual(messages(h, LogLevels.info).filter(m => m.startsWith('t-1 is replicated again')), ['t-1 is replicated again (it failed with SOURCE_TRANSACTION_OPEN on cluster A)'])
    assert.equal(metrics.gauges.get(GAUGE), 0)
    assert.deepEqual([metrics.gauges.get('sourcePartitionsHeld{"flow":"A->B"}'), metrics.gauges.get('sourceHoldSeconds{"flow":"A->B"}')], [0, 0])
    assert.equal(h.replicator.status().find(p => p.partition === 1)?.heldAt, undefined)
    assertExactCopy(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 1, 'A.t')
  })

  it('RETRY rounds while it is reported (its leader throttling, late, moving) neither end the report nor repeat its warning', { timeout: 10_000 }, async () => {
    // (RETRY rounds shorter than the stall threshold: not a wait of their own to report)
    const { h } = heldHarness(offsetsWithGaps(0, 14), 60_000)
    let phase: 'held' | 'retry' | 'held-again' | 'ended' = 'held'
    let rounds = 0
    let failingThroughout = true
    h.source.onFetch(() => {
      const failure = failureOf(h)
      if (phase === 'retry' || phase === 'held-again') failingThroughout &&= failure?.error === 'SOURCE_TRANSACTION_OPEN'
      if (phase === 'held' && failure !== null && failure !== undefined) {
        phase = 'retry'
        h.source.scriptOutcomes('t', 1, FetchOutcomes.RETRY, FetchOutcomes.RETRY, FetchOutcomes.RETRY)
      } else if (phase === 'retry' && ++rounds === 6) {
        phase = 'held-again'
      } else if (phase === 'held-again' && ++rounds === 12) {
        phase = 'ended'
        h.source.openTransactions.clear()
      }
    })
    await copyAll(h)
    assert.equal(phase, 'ended')
    assert.ok(failingThroughout, 'failing for the hold through the RETRY rounds')
    assert.equal(messages(h, LogLevels.warn).filter(m => m.startsWith('cannot read t-1 from cluster A for')).length, 1, JSON.stringify(messages(h, LogLevels.warn)))
    assert.deepEqual(messages(h, LogLevels.info).filter(m => m.startsWith('t-1 is replicated again')), ['t-1 is replicated again (it failed with SOURCE_TRANSACTION_OPEN on cluster A)'])
    assertExactCopy(h, 't', 1, 'A.t')
  })

  it('a hold that moves to a new offset (the first transaction aborted, the next open) ends the old report, naming its offset, and is reported on its own', { timeout: 10_000 }, async () => {
    // Offsets 10 and 11 hold no record (the aborted transaction and its marker): the position moves past them empty-handed
    const { h } = heldHarness(offsetsWithGaps(0, 14, [10, 11]))
    const reported: string[] = []
    h.source.onFetch(() => {
      const failure = failureOf(h)
      if (failure === null || failure === undefined || reported.includes(failure.remedy)) return
      reported.push(failure.remedy)
      if (reported.length === 1) h.source.openTransactions.set(partitionKey('t', 1), 12)
      else h.source.openTransactions.clear()
    })
    await copyAll(h)
    assert.equal(reported.length, 2)
    assert.match(reported[0]!, /--start-offset 10\)$/)
    assert.match(reported[1]!, /--start-offset 12\)$/)
    const warnings = messages(h, LogLevels.warn).filter(m => m.startsWith('cannot read t-1 from cluster A for'))
    assert.deepEqual(warnings.map(w => /since offset (\d+)/.exec(w)?.[1]), ['10', '12'])
    assert.equal(messages(h, LogLevels.info).filter(m => m.startsWith('t-1 is replicated again')).length, 2)
    assertExactCopy(h, 't', 1, 'A.t')
  })

  it('a partition catching up whose last answer with records reaches the transaction\'s first offset, then left out of every answer (a fetch session: nothing changes), is reported', { timeout: 10_000 }, async () => {
    const { h } = heldHarness()
    h.source.sessionAnswers = true
    let reported: ReturnType<typeof failureOf>
    h.source.onFetch(() => {
      const failure = failureOf(h)
      if (reported !== undefined || failure === null || failure === undefined) return
      reported = failure
      h.source.openTransactions.clear()
    })
    await copyAll(h)
    assert.equal(reported?.error, 'SOURCE_TRANSACTION_OPEN')
    assert.match(reported!.message, /since offset 10 /)
    assertExactCopy(h, 't', 1, 'A.t')
  })

  it('a hold through a leader outage longer than the stall threshold: the wait is reported over it, and when the leader answers with the partition still held, the hold\'s report comes back without a false recovery or a second warning', { timeout: 10_000 }, async () => {
    const { h, metrics } = heldHarness(offsetsWithGaps(0, 14), 30)
    let phase: 'held' | 'down' | 'back' | 'ended' = 'held'
    let downReported = false
    let backRounds = 0
    let gaugeWhileBack: number | undefined = 1
    h.source.onFetch(() => {
      const failure = failureOf(h)
      if (phase === 'held' && failure?.error === 'SOURCE_TRANSACTION_OPEN') {
        phase = 'down'
        h.source.unreachable.set(partitionKey('t', 1), { error: 'NETWORK_EXCEPTION', detail: 'its leader, broker 2 (a2:9092), cannot be read from: connection refused' })
      } else if (phase === 'down' && failure?.error === 'NETWORK_EXCEPTION') {
        downReported = true
        phase = 'back'
        h.source.unreachable.clear()
      } else if (phase === 'back') {
        if (++backRounds > 1) gaugeWhileBack = Math.min(gaugeWhileBack ?? 1, metrics.gauges.get(GAUGE) ?? 0)
        if (backRounds > 1 && failure?.error !== 'SOURCE_TRANSACTION_OPEN') gaugeWhileBack = -1
        if (backRounds === 6) {
          phase = 'ended'
          h.source.openTransactions.clear()
        }
      }
    })
    await copyAll(h)
    assert.ok(downReported)
    assert.equal(gaugeWhileBack, 1, 'failing for the hold again from the round after the leader answered')
    const warnings = messages(h, LogLevels.warn).filter(m => m.startsWith('cannot read t-1 from cluster A for'))
    assert.deepEqual(warnings.map(w => w.includes('health.transaction.hang.threshold.ms') ? 'hold' : 'wait'), ['hold', 'wait'], JSON.stringify(warnings))
    assert.deepEqual(messages(h, LogLevels.info).filter(m => m.startsWith('t-1 ')), [
      't-1 answers again (it failed with NETWORK_EXCEPTION on cluster A); it is still held by the transaction open since offset 10',
      't-1 is replicated again (it failed with SOURCE_TRANSACTION_OPEN on cluster A)'
    ])
    assertExactCopy(h, 't', 1, 'A.t')
  })

  it('a refusal while its hold is reported (READ revoked for a moment) keeps the hold\'s report and clock: one warning, the same since', { timeout: 10_000 }, async () => {
    const { h } = heldHarness()
    let phase: 'held' | 'refused' | 'back' | 'ended' = 'held'
    let since: string | undefined
    let sinceAfter: string | undefined
    let backRounds = 0
    h.source.onFetch(() => {
      const failure = failureOf(h)
      if (phase === 'held' && failure?.error === 'SOURCE_TRANSACTION_OPEN') {
        since = failure.since
        phase = 'refused'
        h.source.refuseReads('t', 1, { error: 'TOPIC_AUTHORIZATION_FAILED', kind: 'authorization', message: 'cluster A refused a fetch of t-1', hint: undefined, operation: 'READ' })
      } else if (phase === 'refused' && failure?.error === 'TOPIC_AUTHORIZATION_FAILED') {
        phase = 'back'
        h.source.refuseReads('t', 1, null)
      } else if (phase === 'back' && failure?.error === 'SOURCE_TRANSACTION_OPEN' && ++backRounds === 20) {
        sinceAfter = failure.since
        phase = 'ended'
        h.source.openTransactions.clear()
      }
    })
    await copyAll(h)
    assert.equal(phase, 'ended')
    assert.equal(sinceAfter, since, 'the same report, its since unchanged')
    assert.equal(messages(h, LogLevels.warn).filter(m => m.startsWith('cannot read t-1 from cluster A for') && m.includes('hang.threshold')).length, 1, JSON.stringify(messages(h, LogLevels.warn)))
    assertExactCopy(h, 't', 1, 'A.t')
  })

  it('a hold that becomes due while its leader is out of reach: when the leader answers, the outage\'s report is replaced by the hold\'s, with no recovery line between', { timeout: 10_000 }, async () => {
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics, healthStallThresholdMs: 20, transactionHangThresholdMs: 150 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 14))
    h.source.openTransactions.set(partitionKey('t', 1), 10)
    let phase: 'start' | 'down' | 'back' | 'ended' = 'start'
    let downAt = 0
    h.source.onFetch(() => {
      const t1 = h.replicator.status().find(p => p.partition === 1)
      if (phase === 'start' && t1?.heldAt === 10) {
        phase = 'down'
        downAt = Date.now()
        h.source.unreachable.set(partitionKey('t', 1), { error: 'NETWORK_EXCEPTION', detail: 'its leader, broker 2 (a2:9092), cannot be read from: connection refused' })
      } else if (phase === 'down' && t1?.failure?.error === 'NETWORK_EXCEPTION' && Date.now() - downAt > 200) {
        phase = 'back'
        h.source.unreachable.clear()
      } else if (phase === 'back' && t1?.failure?.error === 'SOURCE_TRANSACTION_OPEN') {
        phase = 'ended'
        h.source.openTransactions.clear()
      }
    })
    await copyAll(h)
    assert.equal(phase, 'ended')
    assert.deepEqual(messages(h, LogLevels.info).filter(m => m.startsWith('t-1 ')), ['t-1 is replicated again (it failed with SOURCE_TRANSACTION_OPEN on cluster A)'],
      'no recovery from the outage while the hold went on')
    assertExactCopy(h, 't', 1, 'A.t')
  })
})
