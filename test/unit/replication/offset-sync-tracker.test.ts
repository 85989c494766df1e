import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { OffsetSyncTracker, type OffsetSyncEntry } from '../../../src/replication/offset-sync-tracker.ts'

const KEY = 't\u00000'

type SyncFields = Pick<OffsetSyncEntry, 'topic' | 'partition' | 'upstreamOffset' | 'downstreamOffset'>

function sync (upstreamOffset: number, downstreamOffset: number, topic = 't', partition = 0): SyncFields {
  return { topic, partition, upstreamOffset, downstreamOffset }
}

/** The pending syncs as MM2 would write them (the run-start fields are checked in their own test). */
function pendingOf (tracker: OffsetSyncTracker): SyncFields[] {
  return tracker.takePending().map(({ topic, partition, upstreamOffset, downstreamOffset }) => ({ topic, partition, upstreamOffset, downstreamOffset }))
}

/** Feeds one record of t-0 and says whether it made a sync due (MM2's `update` return value). */
function isDue (tracker: OffsetSyncTracker, upstream: number, downstream: number): boolean {
  tracker.record(KEY, 't', 0, upstream, downstream)
  const pending = tracker.takePending()
  assert.ok(pending.length <= 1)
  return pending.length === 1
}

/*
 * MM2's MirrorSourceTaskTest.testOffsetSync vectors (mm2-spec §5.3, offset.lag.max = 50) with what MM2 answers
 * and what kmirror answers. kmirror differs on purpose in two ways:
 * - "downstream - previousDownstream != 1" is a rule: a jump of the target offset is a change of the
 *   source-to-target difference, so it is a sync (rows 3 and 6). That sync moves lastSyncDownstream, so
 *   rule 2 (lag >= offset.lag.max) fires later than in MM2 (rows 4 and 7).
 * - There is no sticky `shouldSync` flag and no reset(): a due sync is queued at once. MM2's row 14 is true
 *   only because the test did not call reset() after rows 12-13; for kmirror (8,7) continues a run.
 */
const MM2_VECTORS: readonly [upstream: number, downstream: number, mm2: boolean, kmirror: boolean, why: string][] = [
  [0, 100, true, true, 'first record'],
  [2, 102, true, true, 'upstream gap'],
  [3, 152, false, true, 'kmirror: downstream jumped by 50'],
  [4, 153, true, false, 'MM2: 153-103 >= 50; kmirror synced at 152, lag 0'],
  [5, 154, false, false, 'run continues'],
  [6, 203, false, true, 'kmirror: downstream jumped by 49'],
  [7, 204, true, false, 'MM2: 204-154 >= 50; kmirror synced at 203, lag 0'],
  [2, 206, true, true, 'upstream rewind'],
  [3, 207, false, false, 'run continues'],
  [4, 3, true, true, 'downstream reset'],
  [5, 4, false, false, 'run continues'],
  [7, 6, true, true, 'upstream gap'],
  [7, 6, true, true, 'same upstream again'],
  [8, 7, true, false, 'MM2: flag still set (no reset); kmirror: run continues'],
  [10, 57, true, true, 'upstream gap'],
  [11, 58, false, false, 'run continues']
]

describe('OffsetSyncTracker rules', () => {
  it('answers MM2\'s golden offset-sync vectors, differing only where kmirror also syncs on downstream jumps', () => {
    // Given offset.lag.max = 50, as in MM2's test
    const tracker = new OffsetSyncTracker(50)
    // When each vector is fed in order
    const answers = MM2_VECTORS.map(([up, down]) => isDue(tracker, up, down))
    // Then every answer is kmirror's column, and the rows that differ are exactly the documented ones
    assert.deepEqual(answers, MM2_VECTORS.map(v => v[3]))
    const differing = MM2_VECTORS.filter(v => v[2] !== v[3]).map(v => `${v[0]}->${v[1]}`)
    assert.deepEqual(differing, ['3->152', '4->153', '6->203', '7->204', '8->7'])
  })

  it('makes every record a sync with offset.lag.max = 0, as MM2 does', () => {
    const tracker = new OffsetSyncTracker(0)
    assert.deepEqual([0, 1, 2, 3].map(o => isDue(tracker, o, 100 + o)), [true, true, true, true])
  })

  it('syncs a contiguous run at its first record and then every offset.lag.max + 1 records', () => {
    // Given offset.lag.max = 3 and records 0..9 -> 100..109
    const tracker = new OffsetSyncTracker(3)
    for (let o = 0; o < 10; o++) tracker.record(KEY, 't', 0, o, 100 + o)
    // Then syncs are due where downstream - (lastSync + 1) reaches 3: 100, 104, 108
    assert.deepEqual(pendingOf(tracker), [sync(0, 100), sync(4, 104), sync(8, 108)])
  })

  it('syncs at a target gap even when the source is contiguous', () => {
    const tracker = new OffsetSyncTracker(100)
    tracker.record(KEY, 't', 0, 0, 0)
    tracker.record(KEY, 't', 0, 1, 1)
    tracker.record(KEY, 't', 0, 2, 5) // another producer wrote 2..4 on the target
    assert.deepEqual(pendingOf(tracker), [sync(0, 0), sync(2, 5)])
  })

  it('keeps every due sync of a partition in order instead of coalescing them like MM2', () => {
    // Given two discontinuities before anything is taken
    const tracker = new OffsetSyncTracker(100)
    tracker.record(KEY, 't', 0, 0, 0)
    tracker.record(KEY, 't', 0, 2, 1) // marker at 1
    tracker.record(KEY, 't', 0, 4, 2) // marker at 3
    // Then all three are pending; MM2's map would hold only (4, 2) and lose the difference at 2
    assert.equal(tracker.pendingCount, 3)
    assert.deepEqual(pendingOf(tracker), [sync(0, 0), sync(2, 1), sync(4, 2)])
    assert.equal(tracker.pendingCount, 0)
  })
})

describe('OffsetSyncTracker after a lost membership', () => {
  it('drops pending and delayed syncs, and does not take back syncs taken before the drop whose write failed', () => {
    const tracker = new OffsetSyncTracker(100)
    tracker.record(KEY, 't', 0, 0, 0)
    tracker.record(KEY, 't', 0, 1, 1)
    const takenAt = tracker.epoch
    const inFlight = tracker.takePending()
    tracker.record(KEY, 't', 0, 2, 5)
    tracker.dropAll()
    tracker.requeue(inFlight, takenAt)
    tracker.promoteDelayed()
    assert.equal(tracker.pendingCount, 0)
    // Syncs taken after the drop are put back as usual
    tracker.reset(KEY)
    tracker.record(KEY, 't', 0, 30, 40)
    const again = tracker.epoch
    const later = tracker.takePending()
    tracker.requeue(later, again)
    assert.deepEqual(pendingOf(tracker), [sync(30, 40)])
  })
})

describe('OffsetSyncTracker delayed syncs', () => {
  it('promotes the newest record that was not due, per partition, at a flush', () => {
    // Given t-0 synced at 0 then quiet records 1..3, and u-1 synced at 10 then record 11
    const tracker = new OffsetSyncTracker(100)
    for (let o = 0; o < 4; o++) tracker.record(KEY, 't', 0, o, o)
    tracker.record('u\u00001', 'u', 1, 10, 50)
    tracker.record('u\u00001', 'u', 1, 11, 51)
    tracker.takePending()
    // When the delayed records are promoted
    tracker.promoteDelayed()
    // Then each partition gets one sync for its latest record, and a second promotion adds nothing
    assert.deepEqual(pendingOf(tracker), [sync(3, 3), sync(11, 51, 'u', 1)])
    tracker.promoteDelayed()
    assert.deepEqual(pendingOf(tracker), [])
  })

  it('drops the delayed record of a partition when a newer record of it becomes due', () => {
    const tracker = new OffsetSyncTracker(100)
    tracker.record(KEY, 't', 0, 0, 0)
    tracker.record(KEY, 't', 0, 1, 1) // delayed
    tracker.record(KEY, 't', 0, 5, 2) // due: gap
    tracker.promoteDelayed()
    assert.deepEqual(pendingOf(tracker), [sync(0, 0), sync(5, 2)])
  })

  it('does not count a promoted sync as the last sync for the lag rule, as MM2 does', () => {
    // Given offset.lag.max = 3, a sync at 0 and a promoted sync at 2
    const tracker = new OffsetSyncTracker(3)
    for (let o = 0; o < 3; o++) tracker.record(KEY, 't', 0, o, o)
    tracker.promoteDelayed()
    // When the run goes on
    for (let o = 3; o < 6; o++) tracker.record(KEY, 't', 0, o, o)
    // Then rule 2 still counts from the sync at 0 and fires at 4
    assert.deepEqual(pendingOf(tracker), [sync(0, 0), sync(2, 2), sync(4, 4)])
  })
})

describe('OffsetSyncTracker requeue and reset', () => {
  it('puts syncs whose write failed back ahead of syncs that became due since', () => {
    // Given a taken batch whose write fails while a newer sync becomes due
    const tracker = new OffsetSyncTracker(100)
    tracker.record(KEY, 't', 0, 0, 0)
    tracker.record(KEY, 't', 0, 2, 1)
    const failed = tracker.takePending()
    tracker.record(KEY, 't', 0, 4, 2)
    // When the failed batch is requeued
    tracker.requeue(failed)
    // Then the next take returns the old syncs first, in their order, then the new one
    assert.deepEqual(pendingOf(tracker), [sync(0, 0), sync(2, 1), sync(4, 2)])
  })

  it('starts a new run after reset: the next record is due even if it continues the old run', () => {
    const tracker = new OffsetSyncTracker(100)
    tracker.record(KEY, 't', 0, 0, 0)
    tracker.record('u\u00000', 'u', 0, 0, 0)
    tracker.takePending()
    // When t-0 is reset
    tracker.reset(KEY)
    tracker.record(KEY, 't', 0, 1, 1)
    tracker.record('u\u00000', 'u', 0, 1, 1)
    // Then only t-0 syncs; u-0 is untouched
    assert.deepEqual(pendingOf(tracker), [sync(1, 1)])
  })
})

describe('OffsetSyncTracker.recordRun', () => {
  it('syncs a run like record does, at the first record, the lag points and nothing else', () => {
    const tracker = new OffsetSyncTracker(3)
    tracker.recordRun(KEY, 't', 0, 0, 100, 10)
    assert.deepEqual(pendingOf(tracker), [sync(0, 100), sync(4, 104), sync(8, 108)])
    tracker.promoteDelayed()
    assert.deepEqual(pendingOf(tracker), [sync(9, 109)])
  })

  it('syncs the start of a run that follows an upstream gap and continues the lag count across runs', () => {
    // Given offset.lag.max = 3, a run 0..4 -> 0..4 and a run 6..12 -> 5..11 (a marker at 5)
    const tracker = new OffsetSyncTracker(3)
    tracker.recordRun(KEY, 't', 0, 0, 0, 5)
    tracker.recordRun(KEY, 't', 0, 6, 5, 7)
    // Then: 0 first, 4 lag, 6->5 gap, 10->9 lag
    assert.deepEqual(pendingOf(tracker), [sync(0, 0), sync(4, 4), sync(6, 5), sync(10, 9)])
  })

  it('treats a run of one record exactly as record', () => {
    const a = new OffsetSyncTracker(2)
    const b = new OffsetSyncTracker(2)
    for (const [up, down] of [[0, 0], [1, 1], [3, 2], [4, 3], [5, 4]] as const) {
      a.record(KEY, 't', 0, up, down)
      b.recordRun(KEY, 't', 0, up, down, 1)
    }
    a.promoteDelayed()
    b.promoteDelayed()
    assert.deepEqual(b.takePending(), a.takePending())
  })

  it('records nothing for a run of zero records', () => {
    const tracker = new OffsetSyncTracker(100)
    tracker.recordRun(KEY, 't', 0, 7, 70, 0)
    assert.equal(tracker.pendingCount, 0)
  })
})

describe('OffsetSyncTracker run starts', () => {
  it('marks syncs that start a run, with the last source offset of the run before, for the exact offset history', () => {
    // Given records 0..3 contiguous, a source gap at 4..5, then 6..8, and offset.lag.max = 2
    const tracker = new OffsetSyncTracker(2)
    for (const [up, down] of [[0, 0], [1, 1], [2, 2], [3, 3], [6, 4], [7, 5], [8, 6]] as const) tracker.record(KEY, 't', 0, up, down)
    // Then the first record and the record after the gap start runs; the lag syncs only continue one
    assert.deepEqual(tracker.takePending().map(s => [s.upstreamOffset, s.runStart, s.previousUpstream]), [
      [0, true, -1], [3, false, -1], [6, true, 3]
    ])
  })
})

