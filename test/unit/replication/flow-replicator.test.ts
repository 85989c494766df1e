import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { partitionKey } from '../../../src/topic-partition.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels } from '../../fakes/memory-logger.ts'
import { effectiveSyncs, translateByStep } from '../../fakes/offset-translation.ts'
import { assertExactCopy, createHarness, offsetsWithGaps, type Harness } from '../../fakes/replicator-harness.ts'
import { CODECS } from '../../fakes/source-batches.ts'
import { waitFor } from '../../helpers/wait.ts'

const T = { source: 't', remote: 'A.t', partitions: 1 } as const

/** Runs until every partition is copied to its high watermark; the fake source calls stop(). */
async function copyAll (h: Harness, topics: readonly { source: string, remote: string, partitions: number }[] = [T]): Promise<void> {
  h.source.whenCaughtUp(() => h.replicator.stop())
  await h.replicator.addTopics(topics)
  await h.replicator.run()
}

/** The target offset each source record of a partition was copied to (the target holds an exact copy). */
function targetOffsets (h: Harness, topic: string, partition: number, remote: string): Map<number, number> {
  const copies = h.target.stored(remote, partition).filter(r => !r.foreign)
  const records = h.source.records(topic, partition)
  assert.equal(copies.length, records.length)
  return new Map(records.map((r, i) => [r.offset, copies[i]!.offset]))
}

describe('FlowReplicator copying', () => {
  it('copies every record of every partition in order, keeping key, value, headers and timestamp', async () => {
    // Given three partitions of two topics, read five offsets per fetch
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 22))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
    h.source.addPartition('u', 0, offsetsWithGaps(0, 30))
    // When the replicator runs until everything is copied
    await copyAll(h, [{ source: 't', remote: 'A.t', partitions: 2 }, { source: 'u', remote: 'A.u', partitions: 1 }])
    // Then each remote partition is an exact copy of its source partition
    assertExactCopy(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 1, 'A.t')
    assertExactCopy(h, 'u', 0, 'A.u')
    assert.deepEqual(h.replicator.status().map(s => [s.topic, s.partition, s.position, s.copiedRecords, s.highWatermark]),
      [['t', 0, 23, 23, 23], ['t', 1, 10, 10, 10], ['u', 0, 31, 31, 31]])
  })

  it('commits progress as lastOffset = the last copied offset of each partition', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 22))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
    await copyAll(h, [{ source: 't', remote: 'A.t', partitions: 2 }])
    // The flush interval is an hour, so the only commit is the final one
    assert.equal(h.progress.commits.length, 1)
    assert.deepEqual(h.progress.latest(), { 't-0': 22, 't-1': 9 })
  })

  it('commits the offset before its next position, which is past a trailing transaction marker', async () => {
    // Given records 0..9 and a commit marker at 10 (high watermark 11)
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9), { highWatermark: 11 })
    await copyAll(h)
    // Then progress is 10: resuming at 11 skips only the marker (MM2 would store 9 and re-read the marker)
    assert.deepEqual(h.progress.latest(), { 't-0': 10 })
    assertExactCopy(h, 't', 0, 'A.t')
  })

  it('never commits a position ahead of what the target acknowledged, at every periodic flush', async () => {
    // Given a flush after every step (offset.flush.interval.ms = 0)
    const h = createHarness({ offsetFlushIntervalMs: 0 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 40, [7, 8, 20]))
    h.progress.onCommit(positions => {
      const { lastOffset } = positions.get(partitionKey('t', 0))!
      const due = h.source.records('t', 0).filter(r => r.offset <= lastOffset).length
      assert.ok(h.target.copied('A.t', 0).length >= due, `commit of ${lastOffset} before its records were written`)
    })
    // When it copies everything
    await copyAll(h)
    // Then it committed after each step, never backwards, and ended at the last offset
    const committed = h.progress.commits.map(c => c.get(partitionKey('t', 0))!.lastOffset)
    assert.ok(committed.length >= 9)
    assert.deepEqual(committed, [...committed].sort((a, b) => a - b))
    assert.equal(committed.at(-1), 40)
  })
})

describe('FlowReplicator start positions', () => {
  it('resumes from stored progress without copying again and without asking for start offsets', async () => {
    // Given progress stored at 9 for t-0 (records 0..9 were copied by an earlier run, by kmirror or MM2)
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 9]]))
    // When it runs
    await copyAll(h)
    // Then it starts at 10 and copies 10..19 only
    assert.equal(h.source.fetchCalls[0]![0]!.offset, 10)
    assert.deepEqual(h.source.listOffsetsCalls, [])
    assertExactCopy(h, 't', 0, 'A.t', 10)
    assert.deepEqual(h.progress.latest(), { 't-0': 19 })
  })

  it('asks the start offset (startAt) only for partitions without stored progress', async () => {
    // Given stored progress for t-0 only, and startAt = latest
    const h = createHarness({ startAt: 'latest' })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 4]]))
    // When it runs
    await copyAll(h, [{ source: 't', remote: 'A.t', partitions: 2 }])
    // Then t-1 starts at its end and copies nothing; t-0 copies 5..9
    assert.deepEqual(h.source.listOffsetsCalls, [{ partitions: [{ topic: 't', partition: 1 }], which: 'latest' }])
    assertExactCopy(h, 't', 0, 'A.t', 5)
    assert.deepEqual(h.target.copied('A.t', 1), [])
  })

  it('keeps the position of partitions already added when their topic is added again', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
    await h.replicator.addTopics([T])
    h.source.onFetch(() => h.replicator.stop())
    await h.replicator.run() // one step: t-0 is now at 5
    // When the topic grows to two partitions and is added again
    await h.replicator.addTopics([{ ...T, partitions: 2 }])
    // Then t-0 keeps its position and only t-1 is new
    assert.deepEqual(h.replicator.status().map(s => [s.partition, s.position]), [[0, 5], [1, 0]])
  })
})

describe('FlowReplicator stop and offset syncs', () => {
  it('resolves run() after a final flush that commits progress and sends the delayed syncs', async () => {
    // Given records 0..11 and a stop requested before the third write
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    h.target.beforeWrite(() => { if (h.target.writeCalls === 3) h.replicator.stop() })
    await h.replicator.addTopics([T])
    // When run() resolves
    await h.replicator.run()
    // Then the step in progress was finished, nothing more was fetched, and the final flush stored 0..11
    assert.equal(h.source.fetchCalls.length, 3)
    assert.deepEqual(h.progress.latest(), { 't-0': 11 })
    // and the last record's sync, delayed until now, was sent after the first one
    assert.deepEqual(h.syncs.of('t', 0).map(s => [s.upstreamOffset, s.downstreamOffset]), [[0, 0], [11, 11]])
  })

  it('sends every sync, in order, when sync writes are slower than the data path, and the delayed ones at stop', async () => {
    // Given the same source copied with fast and with slow sync writes (still in flight at the final flush)
    const run = async (slow: boolean): Promise<Harness> => {
      const h = createHarness({ offsetLagMax: 3 })
      h.source.addPartition('t', 0, offsetsWithGaps(0, 40, [5, 6, 17, 30]))
      h.syncs.slow = slow
      await copyAll(h)
      return h
    }
    const fast = await run(false)
    const slow = await run(true)
    // Then the slow run sent the same syncs in the same order, in fewer writes, ending with the last record
    assert.deepEqual(slow.syncs.sent, fast.syncs.sent)
    assert.ok(slow.syncs.attempts < fast.syncs.attempts)
    assert.deepEqual(slow.syncs.sent.at(-1), { topic: 't', partition: 0, upstreamOffset: 40, downstreamOffset: 36, runStart: false, previousUpstream: -1 })
  })

  it('sends offset syncs that translate every record exactly across source gaps, target gaps and segments', async () => {
    // Given a source with markers (4, 9), an aborted transaction (20..29) and compacted records (40..43),
    // a target that already held 1000 records, writes split in segments of 3 with 2 foreign records between
    const h = createHarness({ offsetLagMax: 4 })
    const missing = [4, 9, ...offsetsWithGaps(20, 29), ...offsetsWithGaps(40, 43), 57]
    h.source.addPartition('t', 0, offsetsWithGaps(0, 60, missing))
    h.source.maxSpan = 7
    h.target.startAt('A.t', 0, 1000)
    h.source.batchRecords = 3
    h.target.foreignRecordsBetweenSegments = 2
    // When everything is copied
    await copyAll(h)
    // Then each sync is a real (source, target) pair, and the syncs translate each source record to its copy
    const offsets = targetOffsets(h, 't', 0, 'A.t')
    const syncs = h.syncs.of('t', 0)
    for (const s of syncs) assert.equal(offsets.get(s.upstreamOffset), s.downstreamOffset)
    const kept = effectiveSyncs(syncs)
    for (const [up, down] of offsets) assert.equal(translateByStep(kept, up), down, `source offset ${up}`)
    assert.ok(syncs.length < offsets.size / 2, `${syncs.length} syncs for ${offsets.size} records`)
  })

  it('sends one sync for a plain topic copied into an empty target, plus the final one at stop', async () => {
    const h = createHarness({ offsetLagMax: 1000 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 99))
    await copyAll(h)
    assert.deepEqual(h.syncs.of('t', 0).map(s => [s.upstreamOffset, s.downstreamOffset]), [[0, 0], [99, 99]])
  })
})


const FORWARDED = 'batchesForwarded{"flow":"A->B","topic":"t"}'

describe('FlowReplicator record batches', () => {
  for (const codec of CODECS) {
    it(`forwards each exact ${codec} source batch as one target batch, with its codec, records unchanged`, async () => {
      // Given batches of at most 3 records in codec `codec`, and batching that forwards every exact batch
      const metrics = new CountingMetrics()
      const h = createHarness({ metrics })
      h.source.addPartition('t', 0, offsetsWithGaps(0, 19, [8]))
      h.source.codec = codec
      // When everything is copied
      await copyAll(h)
      // Then the target received the source batches one for one (a fetch spans 5 offsets, a gap starts a batch)
      assertExactCopy(h, 't', 0, 'A.t')
      assert.deepEqual(h.target.received.map(b => b.recordCount), [3, 2, 3, 1, 3, 2, 3, 2])
      assert.ok(h.target.received.every(b => b.compression === CODECS.indexOf(codec)))
      assert.equal(metrics.counts.get(FORWARDED), 8)
    })
  }

  it('merges the small batches of a fetch into one re-encoded batch with the default batching', async () => {
    // Given tiny batches (far below 16 KiB) and the replicator's own batching defaults
    const metrics = new CountingMetrics()
    const h = createHarness({ batching: {}, metrics, offsetLagMax: 1000 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
    h.source.codec = 'lz4'
    // When everything is copied
    await copyAll(h)
    // Then each fetch of 5 records (two source batches) became one lz4 batch, nothing was forwarded as it is
    assertExactCopy(h, 't', 0, 'A.t')
    assert.deepEqual(h.target.received.map(b => [b.recordCount, b.compression]), [[5, 3], [5, 3], [5, 3], [5, 3]])
    assert.equal(metrics.counts.get(FORWARDED), undefined)
    assert.deepEqual(h.syncs.of('t', 0).map(s => [s.upstreamOffset, s.downstreamOffset]), [[0, 0], [19, 19]])
  })

  it('re-encodes in the compression.type the user set when it differs from the source batches', async () => {
    const h = createHarness({ batching: { minForwardBytes: 0, compression: 'zstd' } })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    h.source.codec = 'gzip'
    await copyAll(h)
    assertExactCopy(h, 't', 0, 'A.t')
    assert.ok(h.target.received.length > 0 && h.target.received.every(b => b.compression === CODECS.indexOf('zstd')))
  })

  it('drops the records before the fetch offset when the first batch starts before it, without copying them twice', async () => {
    // Given a source that returns the whole batch holding the fetch offset (two records before it)
    const h = createHarness({ offsetLagMax: 4 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 29, [12]))
    h.source.leadingRecords = 2
    // When everything is copied
    await copyAll(h)
    // Then every record was copied once, in order, and the syncs translate each one exactly
    const offsets = targetOffsets(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 0, 'A.t')
    const kept = effectiveSyncs(h.syncs.of('t', 0))
    for (const [up, down] of offsets) assert.equal(translateByStep(kept, up), down, `source offset ${up}`)
  })

  it('re-encodes compacted batches (offset gaps inside a batch) and still translates every record exactly', async () => {
    // Given a compacted source: batches of up to 4 records spanning gaps, and a target with foreign records between our batches
    const metrics = new CountingMetrics()
    const h = createHarness({ offsetLagMax: 4, metrics })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 60, [1, 2, 9, 10, 11, 25, 40, 41, 42, 43, 44, 57]))
    h.source.compacted = true
    h.source.batchRecords = 4
    h.source.maxSpan = 9
    h.target.foreignRecordsBetweenSegments = 1
    // When everything is copied
    await copyAll(h)
    // Then the copy is exact, some batches with gaps were re-encoded and the exact ones forwarded
    assertExactCopy(h, 't', 0, 'A.t')
    const forwarded = metrics.counts.get(FORWARDED) ?? 0
    assert.ok(forwarded > 0 && forwarded < h.target.received.length, `${forwarded} of ${h.target.received.length} forwarded`)
    const offsets = targetOffsets(h, 't', 0, 'A.t')
    const syncs = h.syncs.of('t', 0)
    for (const s of syncs) assert.equal(offsets.get(s.upstreamOffset), s.downstreamOffset)
    const kept = effectiveSyncs(syncs)
    for (const [up, down] of offsets) assert.equal(translateByStep(kept, up), down, `source offset ${up}`)
  })

  it('re-encodes a partition from then on once the target refused a forwarded batch, and sets it aside if it refuses that too', async t => {
    // Given a first write the target refuses as too large
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    h.target.refuseWrites('A.t', 0, 'MESSAGE_TOO_LARGE', 1)
    // When everything is copied
    await copyAll(h)
    // Then the partition was re-encoded (one batch per fetch) and nothing was forwarded
    assertExactCopy(h, 't', 0, 'A.t')
    assert.deepEqual(h.target.received.map(b => b.recordCount), [5, 5, 2])
    assert.equal(metrics.counts.get(FORWARDED), undefined)
    assert.match(h.logs.at(LogLevels.warn).map(l => l.msg).join('\n'), /re-encoding this partition/)

    // Given a target that refuses the re-encoded batch as well (behaviour changed by issue 10: the flow no
    // longer stops; only this partition waits, with its error in the status)
    const h2 = createHarness()
    h2.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    h2.target.refuseWrites('A.t', 0, 'MESSAGE_TOO_LARGE')
    await h2.replicator.addTopics([T])
    const running = h2.replicator.run()
    t.after(async () => { h2.replicator.stop(); await running })
    await waitFor(() => h2.replicator.status()[0]!.failure !== null, { timeoutMs: 5000, intervalMs: 10, message: 'partition set aside' })
    // Then the partition is set aside with the error, and nothing was skipped
    const [status] = h2.replicator.status()
    assert.equal(status!.failure!.error, 'MESSAGE_TOO_LARGE')
    assert.equal(status!.position, 0)
    assert.match(h2.logs.at(LogLevels.warn).map(l => l.msg).join('\n'), /cannot write A\.t-0 to cluster B: MESSAGE_TOO_LARGE, also after re-encoding the records; raise max\.message\.bytes of topic A\.t on cluster B/)
  })
})
