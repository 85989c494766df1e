import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { OffsetSyncTracker } from '../../../src/replication/offset-sync-tracker.ts'
import { ProgressFlusher } from '../../../src/replication/progress-flusher.ts'
import type { PartitionState } from '../../../src/replication/partition-set.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { RecordingProgress, RecordingSyncs } from '../../fakes/recording-sinks.ts'
import { assertExactCopy, createHarness, offsetsWithGaps } from '../../fakes/replicator-harness.ts'

const TOPIC = { source: 't', remote: 'A.t', partitions: 2 } as const

function unavailable (): KmirrorError {
  return new KmirrorError(ErrorCodes.PRODUCE, 'progress topic: NOT_LEADER_OR_FOLLOWER', { retriable: true })
}

/** Fails the first `count` commits, as a progress topic whose leader is down would. */
function failCommits (progress: RecordingProgress, count: number): void {
  let left = count
  progress.onCommit(() => {
    if (left-- > 0) throw unavailable()
  })
}

describe('FlowReplicator progress store failures', () => {
  it('keeps writing when storing progress fails between acknowledgements: no round fails, nothing is fetched again, and the store is retried', async () => {
    // Given a flush due after every acknowledgement, two partitions written 2 records at a time, and a progress
    // topic whose first store fails
    const h = createHarness({ offsetFlushIntervalMs: 0 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 7))
    h.source.maxSpan = 12
    h.source.batchRecords = 2
    failCommits(h.progress, 1)
    // When the replicator copies everything
    h.source.whenCaughtUp(() => h.replicator.stop())
    await h.replicator.addTopics([TOPIC])
    await h.replicator.run()
    // Then the failure was one warning naming the flow, not a failed replication step
    const warnings = h.logs.at(LogLevels.warn).map(l => l.msg)
    assert.deepEqual(warnings, ['cannot store the progress of flow A->B while writing (progress topic: NOT_LEADER_OR_FOLLOWER); trying again at the end of the round'])
    // and each partition was read forward only: no position went back to copy acknowledged records again
    for (const partition of [0, 1]) {
      const offsets = h.source.fetchCalls.flatMap(c => c.filter(p => p.partition === partition).map(p => p.offset))
      assert.deepEqual(offsets, [...new Set(offsets)].sort((a, b) => a - b), `partition ${partition} fetched at ${offsets.join(', ')}`)
      assertExactCopy(h, 't', partition, 'A.t')
    }
    // and the progress stored in the end is the last copied offset of each partition
    assert.deepEqual(h.progress.latest(), { 't-0': 11, 't-1': 7 })
  })
})

describe('ProgressFlusher after a failed flush', () => {
  function flusher (progress: RecordingProgress): ProgressFlusher {
    return new ProgressFlusher({
      flow: { name: 'A->B', offsetLagMax: 100, offsetFlushIntervalMs: 3_600_000 },
      progress,
      syncs: new RecordingSyncs(),
      log: memoryLogger().log,
      tracker: new OffsetSyncTracker(100),
      flushWhenCaughtUp: true
    })
  }
  const positions = new Map([['t-0', { topic: 't', partition: 0, lastOffset: 4 }]])
  const caughtUp = [{ lost: false, position: 5, highWatermark: 5 }] as unknown as PartitionState[]

  it('stays failed and dirty until a flush succeeds, although the interval is not due', async () => {
    // Given records acknowledged and a store that fails once
    const progress = new RecordingProgress()
    failCommits(progress, 1)
    const f = flusher(progress)
    f.markDirty()
    // When the flush fails
    await assert.rejects(f.flush(positions), /NOT_LEADER_OR_FOLLOWER/)
    // Then it asks to be tried again, and what it did not store is still dirty
    assert.equal(f.isDue(), false)
    assert.equal(f.hasFailed(), true)
    assert.equal(f.isCaughtUpAndDirty(caughtUp), true)
    // and once a flush succeeds, neither holds any more
    await f.flush(positions)
    assert.equal(f.hasFailed(), false)
    assert.deepEqual(progress.latest(), { 't-0': 4 })
  })
})
