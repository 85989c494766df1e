import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { FetchOutcomes } from '../../../src/kafka/record-fetcher.ts'
import { partitionLag } from '../../../src/replication/flow-replicator.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels } from '../../fakes/memory-logger.ts'
import { effectiveSyncs, translateByStep } from '../../fakes/offset-translation.ts'
import { assertExactCopy, createHarness, offsetsWithGaps, type Harness } from '../../fakes/replicator-harness.ts'

const T = { source: 't', remote: 'A.t', partitions: 1 } as const

function retriable (message: string): KmirrorError {
  return new KmirrorError(ErrorCodes.PRODUCE, message, { retriable: true })
}

async function copyAll (h: Harness, topics: readonly { source: string, remote: string, partitions: number }[] = [T]): Promise<void> {
  h.source.whenCaughtUp(() => h.replicator.stop())
  await h.replicator.addTopics(topics)
  await h.replicator.run()
}

function messages (h: Harness, level: number): string[] {
  return h.logs.at(level).map(l => l.msg)
}

describe('FlowReplicator retriable failures', () => {
  it('retries a write that failed before any record was acknowledged, without losing or repeating records', async () => {
    // Given a first write that fails with a retriable error
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    h.target.failNextWrite(retriable('request timed out'))
    // When the replicator runs
    await copyAll(h)
    // Then the same position was fetched again, the target is an exact copy, and the retry was logged with its back-off
    assert.deepEqual(h.source.fetchCalls.slice(0, 2).map(c => c[0]!.offset), [0, 0])
    assertExactCopy(h, 't', 0, 'A.t')
    const [warn] = h.logs.at(LogLevels.warn)
    assert.equal(warn?.msg, 'replication step failed; retrying')
    assert.equal(warn?.['attempt'], 1)
    assert.equal(warn?.['backoffMs'], 200)
    assert.deepEqual(h.progress.latest(), { 't-0': 11 })
  })

  it('keeps the acknowledged part of a write that failed midway and copies only the rest again', async () => {
    // Given writes in segments of 2 records, and a write that fails after its first segment (records 0 and 1)
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    h.source.batchRecords = 2
    h.target.failNextWrite(retriable('connection reset'), { afterSegments: 1 })
    // When the replicator runs
    await copyAll(h)
    // Then the position advanced past the acknowledged segment: the target holds every record exactly once
    assertExactCopy(h, 't', 0, 'A.t')
    // and the offset syncs translate every source offset to its copy
    const kept = effectiveSyncs(h.syncs.of('t', 0))
    for (const [i, r] of h.source.records('t', 0).entries()) assert.equal(translateByStep(kept, r.offset), i)
  })

  it('stores progress between produce rounds when a flush is due, so a crash mid-write re-copies little', async () => {
    // Given a flush due at every round and writes of 2 records per round
    const h = createHarness({ offsetFlushIntervalMs: 0 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    h.source.maxSpan = 12
    h.source.batchRecords = 2
    // When one fetch round of 12 records is copied
    await copyAll(h)
    // Then progress was committed after each acknowledged round, not only once the whole fetch round was written
    const committed = h.progress.commits.map(c => [...c.values()].find(p => p.topic === 't' && p.partition === 0)?.lastOffset)
    assert.ok(committed.includes(1) && committed.includes(3) && committed.includes(5), `commits: ${JSON.stringify(committed)}`)
  })

  it('retries a fetch that failed with a retriable error', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 6))
    h.source.failNextFetch(new KmirrorError(ErrorCodes.FETCH, 'broker unreachable', { retriable: true }))
    await copyAll(h)
    assertExactCopy(h, 't', 0, 'A.t')
    assert.deepEqual(messages(h, LogLevels.warn), ['replication step failed; retrying'])
  })

  it('fetches a partition again from the same position when the fetch answers RETRY (leadership moved)', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 6))
    h.source.scriptOutcomes('t', 0, FetchOutcomes.RETRY, FetchOutcomes.RETRY)
    await copyAll(h)
    assert.deepEqual(h.source.fetchCalls.slice(0, 3).map(c => c[0]!.offset), [0, 0, 0])
    assertExactCopy(h, 't', 0, 'A.t')
  })

  it('waits before fetching again when every partition answers RETRY', async () => {
    // Given five RETRY answers in a row
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 6))
    h.source.scriptOutcomes('t', 0, ...Array<typeof FetchOutcomes.RETRY>(5).fill(FetchOutcomes.RETRY))
    const started = performance.now()
    await copyAll(h)
    // Then the retries were spread out (any back-off of at least 10 ms each would do)
    assert.ok(performance.now() - started >= 50, `${h.source.fetchCalls.length} fetches in ${performance.now() - started} ms`)
  })

  it('keeps every offset sync when writing them fails once: they are sent again, in order', async () => {
    // Given the same source copied twice, once with a failing first sync write
    const run = async (failFirstSend: boolean): Promise<Harness> => {
      const h = createHarness({ offsetLagMax: 3 })
      h.source.addPartition('t', 0, offsetsWithGaps(0, 30, [6, 13, 14, 22]))
      if (failFirstSend) h.syncs.failNextSend(retriable('offset-syncs topic unavailable'))
      await copyAll(h)
      return h
    }
    const failing = await run(true)
    const clean = await run(false)
    // Then the syncs finally written are the same, in the same order, and the failure was logged
    assert.deepEqual(failing.syncs.sent, clean.syncs.sent)
    assert.ok(failing.syncs.attempts > 1)
    assert.deepEqual(messages(failing, LogLevels.warn), ['cannot write offset syncs; will retry'])
  })

  it('names the topic and cluster its sync sink writes: the offset history is not told as offset syncs', async () => {
    // Given the sink of `kmirror run` (the exact offset history on the target), failing twice alike
    const h = createHarness({ offsetLagMax: 3, syncsWriteTo: { noun: 'the offset history', topic: 'kmirror-offset-history.A', cluster: 'B' } })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 30, [6, 13, 14, 22]))
    for (let i = 0; i < 2; i++) h.syncs.failNextSend(retriable('NOT_LEADER_OR_FOLLOWER'))
    // When every record is copied
    await copyAll(h)
    // Then the warning and the recovery say what was not written, and where
    const warn = h.logs.lines.filter(l => l.level === LogLevels.warn)
    assert.deepEqual(warn.map(l => [l.msg, l.topic, l.cluster]), [['cannot write the offset history; will retry', 'kmirror-offset-history.A', 'B']])
    const recovered = h.logs.lines.filter(l => l.level === LogLevels.info && String(l.msg).includes('written again'))
    assert.deepEqual(recovered.map(l => [l.msg, l.topic, l.cluster]), [['the offset history written again after 2 failed attempt(s)', 'kmirror-offset-history.A', 'B']])
  })

  it('warns once while offset-sync writes keep failing with the same error, and says when they are written again', async () => {
    // Given three sync writes in a row that fail alike (the offset-syncs partition's leader down), then one that fails otherwise
    const h = createHarness({ offsetLagMax: 3 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 30, [6, 13, 14, 22]))
    for (let i = 0; i < 3; i++) h.syncs.failNextSend(retriable(`write ${i + 2} record(s) to cluster A: connect ECONNREFUSED 10.0.0.2:9092`))
    h.syncs.failNextSend(retriable('NOT_LEADER_OR_FOLLOWER'))
    // When every record is copied
    await copyAll(h)
    // Then one warning per distinct error, the repeat at debug, one line once written, and every sync kept
    assert.deepEqual(messages(h, LogLevels.warn), ['cannot write offset syncs; will retry', 'cannot write offset syncs; will retry'])
    assert.equal(messages(h, LogLevels.debug).filter(m => m === 'cannot write offset syncs; will retry (again)').length, 2)
    assert.deepEqual(messages(h, LogLevels.info).filter(m => m.startsWith('offset syncs written again')), ['offset syncs written again after 4 failed attempt(s)'])
    const clean = createHarness({ offsetLagMax: 3 })
    clean.source.addPartition('t', 0, offsetsWithGaps(0, 30, [6, 13, 14, 22]))
    await copyAll(clean)
    assert.deepEqual(h.syncs.sent, clean.syncs.sent)
  })

  it('stores no position while the offset syncs (the exact history) before it could not be written: a crash then never finds positions past a run the history lacks', async () => {
    // Given a flush at every round, runs that start anew at each gap, and the first three sync writes failing
    const h = createHarness({ offsetLagMax: 3, offsetFlushIntervalMs: 0 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 30, [6, 13, 14, 22]))
    for (let i = 0; i < 3; i++) h.syncs.failNextSend(retriable('the history topic\'s leader is moving'))
    // Every commit must come after a sync write that succeeded
    const send = h.syncs.send.bind(h.syncs)
    let lastFailed = false
    let storedWhileFailed = 0
    h.syncs.send = async entries => {
      try {
        await send(entries)
        lastFailed = false
      } catch (err) {
        lastFailed = true
        throw err
      }
    }
    h.progress.onCommit(() => { if (lastFailed) storedWhileFailed++ })
    // When every record is copied
    await copyAll(h)
    // Then the copy is exact, every sync kept, and progress stored in the end
    assertExactCopy(h, 't', 0, 'A.t')
    const clean = createHarness({ offsetLagMax: 3, offsetFlushIntervalMs: 0 })
    clean.source.addPartition('t', 0, offsetsWithGaps(0, 30, [6, 13, 14, 22]))
    await copyAll(clean)
    assert.deepEqual(h.syncs.sent, clean.syncs.sent)
    assert.equal(storedWhileFailed, 0)
    assert.ok(h.progress.commits.length > 0)
    assert.deepEqual(h.progress.latest(), clean.progress.latest())
  })

  it('does not copy records of other partitions again when out-of-range recovery fails with a retriable error', async () => {
    // Given t-0 whose stored position fell below the log start, t-1 with records, and a listOffsets that fails once
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(10, 19))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 2]]))
    await h.replicator.addTopics([{ ...T, partitions: 2 }])
    h.source.failNextListOffsets(new KmirrorError(ErrorCodes.FETCH, 'broker unreachable', { retriable: true }))
    // When it runs to the end
    h.source.whenCaughtUp(() => h.replicator.stop())
    await h.replicator.run()
    // Then t-1 is an exact copy, without the first step's records twice
    assertExactCopy(h, 't', 1, 'A.t')
  })
})

describe('FlowReplicator partitions the target cannot take yet', () => {
  it('keeps a partition without a target leader at its position while the others are copied, reads it again from the source only once a probe finds its leader, and copies it then', async () => {
    // Given two partitions, the remote one of t-1 without a leader until the target has been probed three times
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 14))
    h.target.leaderless.add(partitionKey('A.t', 1))
    const waitingGauge = 'partitionsWaitingForTarget{"flow":"A->B"}'
    const waitingSeen: (number | undefined)[] = []
    h.target.beforeProbe(() => {
      waitingSeen.push(metrics.gauges.get(waitingGauge))
      if (h.target.probeCalls === 3) h.target.leaderless.clear()
    })
    // When it runs to the end
    await copyAll(h, [{ ...T, partitions: 2 }])
    // Then t-1 was read from the source twice at 0: the refused round, and once the probe found its leader; t-0
    // was copied to its end meanwhile
    const asked = (partition: number): (number | undefined)[] => h.source.fetchCalls.map(c => c.find(p => p.partition === partition)?.offset)
    assert.deepEqual(asked(1).filter(o => o === 0), [0, 0], `t-1 asked at ${JSON.stringify(asked(1))}`)
    assert.ok(h.target.probeCalls >= 3)
    // and the operator saw it waiting for the target (the gauge), back at 0 once it was copied
    assert.equal(waitingSeen[0], 1)
    assert.equal(metrics.gauges.get(waitingGauge), 0)
    assert.ok(asked(0).includes(15), 't-0 reached its end while t-1 waited')
    assertExactCopy(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 1, 'A.t')
    assert.deepEqual(h.progress.latest(), { 't-0': 14, 't-1': 14 })
  })

  it('reports a partition the target has not taken for longer than the stall threshold: one warning naming it, the broker state and the fix, failing in /status with its lag growing, and a recovery line once it is copied', async () => {
    // Given t-1 whose remote partition has no leader for longer than the threshold (50 ms here)
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics, healthStallThresholdMs: 50 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 14))
    h.target.leaderless.add(partitionKey('A.t', 1))
    const gauge = 'failingPartitions{"flow":"A->B","error":"LEADER_NOT_AVAILABLE"}'
    let seen: ReturnType<typeof h.replicator.status>[number] | undefined
    let gaugeSeen: number | undefined
    h.target.beforeProbe(() => {
      if (h.target.probeCalls < 5) return
      seen ??= h.replicator.status().find(p => p.partition === 1)
      gaugeSeen ??= metrics.gauges.get(gauge)
      h.target.leaderless.clear()
    })
    // When it runs to the end
    await copyAll(h, [{ ...T, partitions: 2 }])
    // Then while it waited, /status showed it failing on the target, with the reason and the fix, and its lag known
    assert.ok(seen !== undefined)
    assert.equal(seen.failure?.side, 'target')
    assert.equal(seen.failure?.cluster, 'B')
    assert.equal(seen.failure?.error, 'LEADER_NOT_AVAILABLE')
    assert.match(seen.failure?.message ?? '', /^A\.t-1 takes no records: no broker of cluster B leads it$/)
    assert.match(seen.failure?.remedy ?? '', /bring back the broker that leads A\.t-1 on cluster B.*to list it: kafka-topics\.sh --bootstrap-server b:9092 --describe --topic A\.t --unavailable-partitions/)
    assert.equal(partitionLag(seen), 15)
    assert.equal(gaugeSeen, 1)
    // and the log had one warning for it, and one line when it was copied again; the gauge is back at 0
    const warnings = messages(h, LogLevels.warn).filter(m => m.startsWith('cannot write A.t-1 to cluster B for'))
    assert.equal(warnings.length, 1, JSON.stringify(messages(h, LogLevels.warn)))
    assert.match(warnings[0]!, /\(health\.stall\.threshold\.ms = 50\): no broker of cluster B leads it; bring back the broker .* none is skipped/)
    assert.deepEqual(messages(h, LogLevels.info).filter(m => m.startsWith('t-1 is replicated again')), ['t-1 is replicated again (it failed with LEADER_NOT_AVAILABLE on cluster B)'])
    assert.equal(metrics.gauges.get(gauge), 0)
    assert.equal(h.replicator.status().find(p => p.partition === 1)?.failure, null)
    assertExactCopy(h, 't', 1, 'A.t')
  })

  it('reports a partition the source gives nothing of for longer than the stall threshold (its leader out of reach) while the others copy on: one warning naming the broker and the fix, failing in /status, a recovery line once it is read again', async () => {
    // Given t-1 whose source leader cannot be reached for longer than the threshold (50 ms here), and t-0 readable
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics, healthStallThresholdMs: 50 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 14))
    const detail = 'its leader, broker 2 (a2:9092), cannot be read from: connection refused'
    h.source.unreachable.set(partitionKey('t', 1), { error: 'NETWORK_EXCEPTION', detail })
    const gauge = 'failingPartitions{"flow":"A->B","error":"NETWORK_EXCEPTION"}'
    let seen: ReturnType<typeof h.replicator.status>[number] | undefined
    let t0Copied = false
    let gaugeSeen: number | undefined
    // Once t-1 is reported (whenever the threshold passes on this machine), t-1 becomes readable again
    h.source.onFetch(() => {
      const t1 = h.replicator.status().find(p => p.partition === 1)
      if (seen !== undefined || t1?.failure === null || t1 === undefined) return
      seen = t1
      t0Copied = h.replicator.status().find(p => p.partition === 0)?.position === 15
      gaugeSeen = metrics.gauges.get(gauge)
      h.source.unreachable.clear()
    })
    // When it runs to the end
    await copyAll(h, [{ ...T, partitions: 2 }])
    // Then t-0 was copied whole while t-1 waited, and /status showed t-1 failing on the source, with the reason and the fix
    assert.ok(t0Copied, 't-0 copied while t-1 could not be read')
    assert.ok(seen !== undefined)
    assert.deepEqual([seen.failure?.side, seen.failure?.cluster, seen.failure?.error, seen.failure?.message], ['source', 'A', 'NETWORK_EXCEPTION', `t-1 cannot be read: ${detail}`])
    assert.match(seen.failure?.remedy ?? '', /bring back the broker that leads t-1 on cluster A.*kafka-topics\.sh --bootstrap-server a:9092 --describe --topic t --unavailable-partitions/)
    assert.equal(seen.position, 0)
    assert.equal(gaugeSeen, 1)
    // and the log had one warning for it, and one line when it was copied again; the gauge is back at 0; nothing was lost
    const warnings = messages(h, LogLevels.warn)
    assert.deepEqual(warnings.filter(m => m.startsWith('cannot read t-1 from cluster A for')).length, 1, JSON.stringify(warnings))
    assert.match(warnings.find(m => m.startsWith('cannot read t-1'))!, /\(health\.stall\.threshold\.ms = 50\): its leader, broker 2 \(a2:9092\), cannot be read from: connection refused; bring back .* none is skipped/)
    assert.ok(!warnings.includes('replication step failed; retrying'), 'the step itself never failed')
    assert.deepEqual(messages(h, LogLevels.info).filter(m => m.startsWith('t-1 is replicated again')), ['t-1 is replicated again (it failed with NETWORK_EXCEPTION on cluster A)'])
    assert.equal(metrics.gauges.get(gauge), 0)
    assertExactCopy(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 1, 'A.t')
  })

  it('without a readiness probe, leaves a partition without a target leader out of the round right after each refusal', async () => {
    // Given a target writer with no probe, and t-1 without a leader for the first rounds
    const h = createHarness({ withoutReadyProbe: true })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 14))
    h.target.leaderless.add(partitionKey('A.t', 1))
    h.target.beforeWrite(() => { if (h.target.writeCalls === 4) h.target.leaderless.clear() })
    // When it runs to the end
    await copyAll(h, [{ ...T, partitions: 2 }])
    // Then t-1 was asked again only at 0 until the leader appeared, and sat out the round after each refusal
    const asked = (partition: number): (number | undefined)[] => h.source.fetchCalls.map(c => c.find(p => p.partition === partition)?.offset)
    const beforeLeader = asked(1).slice(0, asked(1).findIndex(o => o !== undefined && o > 0))
    assert.ok(beforeLeader.every(o => o === undefined || o === 0), `t-1 asked at ${JSON.stringify(beforeLeader)}`)
    assert.equal(beforeLeader[1], undefined, 't-1 sat out the round after the refusal')
    assertExactCopy(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 1, 'A.t')
  })
})

describe('FlowReplicator fatal failures', () => {
  it('rejects run() with a non-retriable write error and keeps the position at the unwritten records', async () => {
    // Given a second write that fails for good (e.g. a record over the target's max.message.bytes)
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    const fatal = new KmirrorError(ErrorCodes.PRODUCE, 'record too large')
    h.target.beforeWrite(() => { if (h.target.writeCalls === 2) h.target.failNextWrite(fatal) })
    h.source.whenCaughtUp(() => h.replicator.stop()) // so a regression resolves run() instead of hanging
    await h.replicator.addTopics([T])
    // When it runs, Then run() rejects with that very error
    await assert.rejects(h.replicator.run(), fatal)
    // and the partition is still at the first record of the failed write
    assert.equal(h.replicator.status()[0]!.position, 5)
    assert.equal(h.source.fetchCalls.length, 2)
  })

  it('rejects run() with a programmer error from a port, without retrying', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 3))
    h.source.failNextFetch(new TypeError('cannot read properties of undefined'))
    h.source.whenCaughtUp(() => h.replicator.stop())
    await h.replicator.addTopics([T])
    await assert.rejects(h.replicator.run(), TypeError)
    assert.equal(h.source.fetchCalls.length, 1)
  })

  it('stores the progress of records acknowledged before a fatal error', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    h.target.beforeWrite(() => { if (h.target.writeCalls === 2) h.target.failNextWrite(new KmirrorError(ErrorCodes.PRODUCE, 'record too large')) })
    h.source.whenCaughtUp(() => h.replicator.stop())
    await h.replicator.addTopics([T])
    await assert.rejects(h.replicator.run())
    assert.deepEqual(h.progress.latest(), { 't-0': 4 })
  })
})

describe('FlowReplicator out-of-range positions', () => {
  it('jumps to the log start when retention deleted records before they were copied, and counts and logs the loss', async () => {
    // Given progress stored at 4 and a source whose records before 12 were deleted by retention
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 29))
    h.source.deleteBefore('t', 0, 12)
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 4]]))
    // When it runs
    await copyAll(h)
    // Then it copied 12..29, counted 7 lost offsets (5..11) and said so at error level
    assertExactCopy(h, 't', 0, 'A.t', 12)
    assert.equal(h.replicator.status()[0]!.lostToRetention, 7)
    const errors = h.logs.at(LogLevels.error)
    assert.equal(errors.length, 1)
    assert.match(errors[0]!.msg, /deleted by retention/)
    assert.deepEqual([errors[0]!['code'], errors[0]!['topic'], errors[0]!['partition'], errors[0]!['from'], errors[0]!['to'], errors[0]!['lost']], ['KMIRROR_ERR_DATA_LOSS_RETENTION', 't', 0, 5, 12, 7])
    assert.deepEqual(h.progress.latest(), { 't-0': 29 })
  })

  it('starts a new sync run after the jump, so translation stays exact for the records after it', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 29))
    h.source.deleteBefore('t', 0, 12)
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 4]]))
    await copyAll(h)
    assert.deepEqual(h.syncs.of('t', 0).map(s => [s.upstreamOffset, s.downstreamOffset]), [[12, 0], [29, 17]])
  })

  it('restarts at the log start, with a warning and no loss counted, when the stored position is past the log end', async () => {
    // Given progress stored at 40 for a partition that now ends at 20 (the topic was re-created)
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 40]]))
    // When it runs
    await copyAll(h)
    // Then it copied the whole partition again from 0
    assertExactCopy(h, 't', 0, 'A.t')
    assert.equal(h.replicator.status()[0]!.lostToRetention, 0)
    assert.equal(h.logs.at(LogLevels.warn).length, 1)
    assert.match(h.logs.at(LogLevels.warn)[0]!.msg, /beyond the end/)
  })
})
