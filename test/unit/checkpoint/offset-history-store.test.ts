import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { OffsetHistoryStore } from '../../../src/checkpoint/offset-history-store.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import { decodeOffsetHistoryKey, decodeOffsetHistoryValue } from '../../../src/formats/offset-history.ts'
import { OffsetSyncTracker } from '../../../src/replication/offset-sync-tracker.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { TopicLog } from '../../fakes/topic-log.ts'

const flow = { source: { alias: 'A' }, checkpointsTopicReplicationFactor: 1 } as unknown as FlowConfig
/** The topic already exists, so `load` reads it. */
const admin = { createTopic: async () => 'exists' as const, describeTopics: async () => new Map() }

/** Copies with markers every 10 records (a transaction of 9 records and its commit marker). */
function transactionalCopy (tracker: OffsetSyncTracker, records: number): void {
  let down = 0
  for (let up = 0; down < records; up++) {
    if (up % 10 === 9) continue
    tracker.record('t\u00000', 't', 0, up, down++)
  }
}

/** Stores A and B on one history topic, B's run of t-1 (30 records, +7) committed behind a transaction still open there. */
async function behindOpenTransaction () {
  const log = new TopicLog()
  const a = new OffsetHistoryStore(flow, admin, log, log)
  const b = new OffsetHistoryStore(flow, admin, log, log)
  await a.load()
  await b.load()
  const tracker = new OffsetSyncTracker(100)
  for (let up = 0; up < 30; up++) tracker.record('t\u00001', 't', 1, up, up + 7)
  tracker.promoteDelayed()
  log.openTransactionAt = log.records.length
  log.records.push({ offset: log.records.length, timestamp: 0n, key: null, value: null, headers: [] })
  await b.append(tracker.takePending())
  return { log, a }
}

describe('OffsetHistoryStore', () => {
  it('stores one record per run plus one per closed run, and a restarted store translates exactly as before', async () => {
    // Given 900 records copied with a marker after every 9, fed to a store in flushes of the tracker
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    transactionalCopy(tracker, 900)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    // Then there are 100 runs: 100 open records and 99 closing ones, not one per record
    assert.equal(log.records.length, 199)
    // When a new store loads the topic, every committed offset translates as in the first
    const reloaded = new OffsetHistoryStore(flow, admin, log, null)
    await reloaded.load()
    const before = store.history('t', 0)!
    const after = reloaded.history('t', 0)!
    after.markReplicatedTo(before.replicatedEnd, before.targetEnd)
    for (let c = 0; c <= 999; c++) assert.deepEqual(after.toTarget(c), before.toTarget(c), `committed ${c}`)
    assert.deepEqual(after.toTarget(19), { offset: 18, exact: true })
  })

  it('names in each run the source topic id it was copied from, so a store that loads or follows the topic tells which topic a partition\'s last copy came from', async () => {
    // Given t-0 copied from topic id-1 (two runs: a marker between), then its source topic created again and copied
    // anew from id-2; t-1 copied from a source that gives no ids
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    for (const up of [0, 1, 2, 4, 5]) tracker.record('t\u00000', 't', 0, up, up < 3 ? up : up - 1, 'id-1')
    tracker.record('t\u00001', 't', 1, 0, 0)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    await store.checkpointExtents(new Map([[partitionKey('t', 0), 6]]))
    const follower = new OffsetHistoryStore(flow, admin, log, null)
    await follower.load()
    assert.equal(follower.copiedFrom(partitionKey('t', 0)), 'id-1')
    assert.equal(follower.copiedFrom(partitionKey('t', 1)), undefined)
    // (the closing and extent records of a run keep its id)
    const stored = log.records.filter(r => r.key !== null && r.value !== null).map(r => ({ ...decodeOffsetHistoryKey(r.key!), ...decodeOffsetHistoryValue(r.value!) }))
    assert.deepEqual(stored.map(r => [r.partition, r.upstreamOffset, r.length, r.open, r.sourceTopicId]), [
      [0, 0, 1, true, 'id-1'], [0, 0, 3, false, 'id-1'], [0, 4, 1, true, 'id-1'], [1, 0, 1, true, undefined], [0, 4, 2, true, 'id-1']
    ])
    // When the copy of the new topic starts at its log start
    store.forget('t', 0)
    tracker.reset('t\u00000')
    tracker.record('t\u00000', 't', 0, 0, 5, 'id-2')
    await store.append(tracker.takePending())
    // Then the store itself and a store following the topic name the new topic
    assert.equal(store.copiedFrom(partitionKey('t', 0)), 'id-2')
    await follower.follow(() => false)
    assert.equal(follower.copiedFrom(partitionKey('t', 0)), 'id-2')
    // When an older kmirror (history version 0) copies it anew: its last run names no id, so none is known
    store.forget('t', 0)
    assert.equal(store.copiedFrom(partitionKey('t', 0)), undefined, 'forgotten')
    tracker.reset('t\u00000')
    tracker.record('t\u00000', 't', 0, 0, 6)
    await store.append(tracker.takePending())
    await follower.follow(() => false)
    assert.equal(follower.copiedFrom(partitionKey('t', 0)), undefined)
  })

  it('does not read a history topic it has just created: a new topic is empty', async () => {
    const log = new TopicLog()
    log.fetch = async () => { throw new Error('a new topic must not be read') }
    log.listOffsets = async () => { throw new Error('a new topic must not be read') }
    const store = new OffsetHistoryStore(flow, { ...admin, createTopic: async () => 'created' as const }, log, log)
    await store.load()
    assert.deepEqual(store.partitions(), [])
  })

  it('trims runs below the source log start with tombstones and keeps the run covering it', async () => {
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    transactionalCopy(tracker, 90)
    await store.append(tracker.takePending())
    const removed = await store.trim(new Map([[partitionKey('t', 0), 45]]))
    assert.equal(removed, 4)
    assert.equal(store.history('t', 0)!.runs[0]!.upstream, 40)
    assert.equal(log.records.slice(-4).every(r => r.value === null), true)
    assert.deepEqual(store.history('t', 0)!.toTarget(45), { offset: 41, exact: true })
  })

  it('at an assignment, follows past a transaction open on the history topic (another member\'s round) once it ends, so a run committed behind it is not missed', async () => {
    // Given B's run of t-1 committed behind another member's transaction still open on the history topic
    const { log, a } = await behindOpenTransaction()
    // When A follows as a plain tail, it stops at the open transaction: nothing of t-1 yet
    await a.follow(() => false)
    assert.equal(a.history('t', 1), undefined)
    // When A follows at an assignment, waiting for transactions, and the open one ends after its first fetch
    const fetch = log.fetch.bind(log)
    log.fetch = async positions => {
      const fetched = await fetch(positions)
      log.openTransactionAt = null
      return fetched
    }
    await a.follow(() => false, { waitForTransactions: true })
    // Then it has B's run of t-1
    assert.deepEqual(a.history('t', 1)!.toTarget(0), { offset: 7, exact: true })
  })

  it('never reads the topic twice at once: a job\'s follow waits for the assignment\'s follow that waits for a transaction, and both end with the newest runs', async () => {
    const { log, a } = await behindOpenTransaction()
    // (fetches in flight at once, at most; the transaction ends at the third fetch)
    let inFlight = 0
    let most = 0
    let fetches = 0
    const fetch = log.fetch.bind(log)
    log.fetch = async positions => {
      most = Math.max(most, ++inFlight)
      await new Promise(resolve => setImmediate(resolve))
      if (++fetches === 3) log.openTransactionAt = null
      try { return await fetch(positions) } finally { inFlight-- }
    }
    await Promise.all([a.follow(() => false, { waitForTransactions: true }), a.follow(() => false)])
    assert.equal(most, 1)
    assert.deepEqual(a.history('t', 1)!.toTarget(0), { offset: 7, exact: true })
  })

  it('follows the runs another instance appends for partitions it does not copy, and keeps its own partitions as they are', async () => {
    // Given two stores on one history topic: A copies t-0, B copies t-1 (each translates what it copies)
    const log = new TopicLog()
    const a = new OffsetHistoryStore(flow, admin, log, log)
    const b = new OffsetHistoryStore(flow, admin, log, log)
    await a.load()
    await b.load()
    const trackerA = new OffsetSyncTracker(100)
    const trackerB = new OffsetSyncTracker(100)
    for (let up = 0, down = 0; up < 60; up++) {
      if (up % 10 === 9) continue
      trackerA.record('t\u00000', 't', 0, up, down++)
    }
    for (let up = 0; up < 30; up++) trackerB.record('t\u00001', 't', 1, up, up + 7)
    trackerA.promoteDelayed()
    trackerB.promoteDelayed()
    await a.append(trackerA.takePending())
    await a.checkpointExtents(new Map([[partitionKey('t', 0), 60]]))
    await b.append(trackerB.takePending())
    await b.checkpointExtents(new Map([[partitionKey('t', 1), 30]]))
    // Then before following, A knows nothing of t-1
    assert.equal(a.history('t', 1), undefined)
    // When A follows the topic (it owns t-0 only)
    const ownedByA = (tp: string): boolean => tp === partitionKey('t', 0)
    await a.follow(ownedByA)
    // Then A translates t-1 exactly as B does, and t-0 as before
    for (let c = 0; c <= 30; c++) assert.deepEqual(a.history('t', 1)!.toTarget(c), b.history('t', 1)!.toTarget(c), `t-1 committed ${c}`)
    assert.deepEqual(a.history('t', 1)!.toTarget(30), { offset: 37, exact: true })
    assert.deepEqual(a.history('t', 0)!.toTarget(19), { offset: 18, exact: true })
    // And a follow with nothing new reads nothing more and changes nothing
    const before = log.records.length
    await a.follow(ownedByA)
    assert.equal(log.records.length, before)
    assert.deepEqual(a.history('t', 1)!.toTarget(30), { offset: 37, exact: true })
  })

  it('deletes the runs a re-copy replaces, so a reloaded history maps the new copy, not the old one', async () => {
    // Given t-0 copied as 0..999 → 0..999 and 1000..1999 → 1100..2099 (two runs), then its remote topic
    // created again and t-0 copied again from 0: 0..1599 → 0..1599
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    for (let up = 0; up < 2000; up++) tracker.record('t\u00000', 't', 0, up, up < 1000 ? up : up + 100)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    await store.checkpointExtents(new Map([[partitionKey('t', 0), 2000]]))
    // (another instance, which does not copy t-0, read the history up to here)
    const other = new OffsetHistoryStore(flow, admin, log, null)
    await other.load()
    assert.deepEqual(other.history('t', 0)!.runs.map(r => r.upstream), [0, 1000])
    for (let up = 0; up < 1600; up++) tracker.record('t\u00000', 't', 0, up, up)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    await store.checkpointExtents(new Map([[partitionKey('t', 0), 1600]]))
    // Then the writer translates the new copy, and the old run from 1000 is deleted in the topic
    assert.deepEqual(store.history('t', 0)!.toTarget(1500), { offset: 1500, exact: true })
    assert.equal(log.records.filter(r => r.value === null).length, 1)
    // When a fresh process loads the history (a restart, `kmirror failover`), and the other instance follows it
    const reloaded = new OffsetHistoryStore(flow, admin, log, null)
    await reloaded.load()
    await other.follow(() => false)
    // Then both translate as the writer does: the old copy's run would map 1500 to 1600 and skip 100 records
    for (const history of [reloaded.history('t', 0)!, other.history('t', 0)!]) {
      assert.deepEqual(history.runs.map(r => r.upstream), [0])
      for (const c of [0, 999, 1000, 1500, 1600]) assert.deepEqual(history.toTarget(c), store.history('t', 0)!.toTarget(c), `committed ${c}`)
    }
  })

  it('leaves out the replaced runs an earlier version stored without tombstones', async () => {
    // Given the same copies, stored without the tombstones (as kmirror did before it deleted replaced runs)
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    for (let up = 0; up < 2000; up++) tracker.record('t\u00000', 't', 0, up, up < 1000 ? up : up + 100)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    for (let up = 0; up < 1600; up++) tracker.record('t\u00000', 't', 0, up, up)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    await store.checkpointExtents(new Map([[partitionKey('t', 0), 1600]]))
    const untombstoned = new TopicLog()
    for (const r of log.records) if (r.value !== null) untombstoned.records.push({ ...r, offset: untombstoned.records.length })
    // When a process loads it
    const reloaded = new OffsetHistoryStore(flow, admin, untombstoned, null)
    await reloaded.load()
    // Then the run from 1000 of the first copy is not part of the history
    assert.deepEqual(reloaded.history('t', 0)!.runs.map(r => r.upstream), [0])
    assert.deepEqual(reloaded.history('t', 0)!.toTarget(1500), { offset: 1500, exact: true })
  })

  it('keeps every run of one copy, whatever the order of their extents', async () => {
    // Given runs at 0, 10, 20 (markers between) and the extents of the last one stored after all starts
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    transactionalCopy(tracker, 27)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    await store.checkpointExtents(new Map([[partitionKey('t', 0), 30]]))
    // When reloaded, then all three runs are there and translate as the writer's
    const reloaded = new OffsetHistoryStore(flow, admin, log, null)
    await reloaded.load()
    assert.deepEqual(reloaded.history('t', 0)!.runs.map(r => r.upstream), [0, 10, 20])
    for (let c = 0; c < 30; c++) assert.deepEqual(reloaded.history('t', 0)!.toTarget(c), store.history('t', 0)!.toTarget(c), `committed ${c}`)
  })

  it('forgets a partition copied again into a re-created remote topic at once, and deletes its runs with its next write', async () => {
    // Given t-0 copied with runs 0 -> 0 and 300 -> 310, and t-1 copied too
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    for (let up = 0; up < 600; up++) tracker.record('t\u00000', 't', 0, up, up < 300 ? up : up + 10)
    tracker.record('t\u00001', 't', 1, 0, 0)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    // When t-0 is forgotten (its remote topic created again, nothing of it copied again yet)
    store.forget('t', 0)
    // Then nothing translates through its old runs, here or (after the next write, of another partition) after a reload
    assert.equal(store.history('t', 0), undefined)
    tracker.record('t\u00001', 't', 1, 5, 5)
    await store.append(tracker.takePending())
    const reloaded = new OffsetHistoryStore(flow, admin, log, null)
    await reloaded.load()
    assert.deepEqual(reloaded.history('t', 0)?.runs ?? [], [])
    assert.deepEqual(reloaded.history('t', 1)!.runs.map(r => r.upstream), [0, 5])
    // And the new copy (from the source log start 500 to target 0) translates alone after a reload
    tracker.reset('t\u00000')
    for (let up = 500; up < 600; up++) tracker.record('t\u00000', 't', 0, up, up - 500)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    await reloaded.follow(() => false)
    assert.deepEqual(reloaded.history('t', 0)!.runs, [{ upstream: 500, downstream: 0 }])
  })

  it('keeps the tombstones of a forgotten partition for the next write when a write fails', async () => {
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    tracker.record('t\u00000', 't', 0, 0, 0)
    await store.append(tracker.takePending())
    store.forget('t', 0)
    const write = log.write.bind(log)
    log.write = async () => { throw new Error('no leader') }
    tracker.record('t\u00001', 't', 1, 0, 0)
    await assert.rejects(store.append(tracker.takePending()))
    log.write = write
    await store.checkpointExtents(new Map())
    assert.equal(log.records.filter(r => r.value === null).length, 1)
  })

  it('rebuilds from the topic, at the next follow that finds it not owned, a partition forgotten by a membership lost before its tombstones went out: its last copy\'s source topic is known again', async () => {
    // Given t-0 copied from source topic id-1, its records read back by this store's own follow (as before each job run)
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    for (const up of [0, 1, 2]) tracker.record('t\u00000', 't', 0, up, up, 'id-1')
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    await store.follow(() => true)
    // When its source topic is created again (forgotten here), and the membership is lost before any write
    store.forget('t', 0)
    assert.equal(store.copiedFrom(partitionKey('t', 0)), undefined)
    store.membershipLost()
    // Then the follow of the next assignment (t-0 not yet owned) gives back what the topic holds: copied from id-1,
    // so the stored position is seen to belong to the old topic
    await store.follow(() => false)
    assert.equal(store.copiedFrom(partitionKey('t', 0)), 'id-1')
    assert.deepEqual(store.history('t', 0)!.runs, [{ upstream: 0, downstream: 0 }])
    assert.equal(log.records.filter(r => r.value === null).length, 0)
  })

  it('after a loss, forgets nothing for the lost membership\'s round still ending (no tombstone queued), and drops at the next follow what memory holds of a partition the topic has nothing of', async () => {
    // Given t-0 stored and read back, and t-1 appended in memory only (its write cut by the loss)
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    tracker.record('t\u00000', 't', 0, 0, 0, 'id-1')
    await store.append(tracker.takePending())
    await store.follow(() => true)
    const write = log.write.bind(log)
    log.write = async () => { throw new Error('FENCED: membership lost') }
    tracker.record('t\u00001', 't', 1, 0, 0, 'id-1')
    await assert.rejects(store.append(tracker.takePending()))
    log.write = write
    assert.equal(store.copiedFrom(partitionKey('t', 1)), 'id-1')
    // When the membership is lost, and the lost membership's round then sees t-0's source topic created again
    store.membershipLost()
    store.forget('t', 0)
    // Then nothing is forgotten nor queued; the next follow keeps t-0 as stored and drops t-1, which the topic lacks
    assert.equal(store.copiedFrom(partitionKey('t', 0)), 'id-1')
    await store.follow(() => false)
    assert.deepEqual([store.copiedFrom(partitionKey('t', 0)), store.history('t', 1)], ['id-1', undefined])
    tracker.record('t\u00002', 't', 2, 0, 0)
    await store.append(tracker.takePending())
    assert.equal(log.records.filter(r => r.value === null).length, 0)
  })

  it('writes an extent again at the next flush when its write failed (positions are never stored past the stored extent)', async () => {
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    for (let up = 0; up < 10; up++) tracker.record('t\u00000', 't', 0, up, up)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    const write = log.write.bind(log)
    log.write = async () => { throw new Error('NOT_LEADER_OR_FOLLOWER') }
    await assert.rejects(store.checkpointExtents(new Map([[partitionKey('t', 0), 10]])), /NOT_LEADER/)
    log.write = write
    const before = log.records.length
    await store.checkpointExtents(new Map([[partitionKey('t', 0), 10]]))
    const written = log.records.slice(before).map(r => decodeOffsetHistoryValue(r.value!))
    assert.deepEqual(written.map(v => [v.length, v.open]), [[10, true]])
  })

  it('drops the tombstones queued under a lost membership, and those of a write under way that then fails: none goes out under the next', async () => {
    // Given t-0 forgotten (copied again), its tombstone taken by a write that hangs, and another forgotten after it
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    tracker.record('t\u00000', 't', 0, 0, 0)
    tracker.record('t\u00002', 't', 2, 0, 0)
    await store.append(tracker.takePending())
    store.forget('t', 0)
    const write = log.write.bind(log)
    let fail: (err: Error) => void = () => undefined
    log.write = async () => await new Promise((_resolve, reject) => { fail = reject })
    tracker.record('t\u00001', 't', 1, 0, 0)
    const hanging = store.append(tracker.takePending())
    log.write = write
    store.forget('t', 2)
    // When the membership is lost, and the hanging write then fails (the loss cut it)
    store.membershipLost()
    fail(new Error('FENCED: the group membership this write began under was lost'))
    await assert.rejects(hanging)
    // Then the next membership's writes carry no tombstone of either
    tracker.record('t\u00003', 't', 3, 0, 0)
    await store.append(tracker.takePending())
    await store.checkpointExtents(new Map())
    assert.equal(log.records.filter(r => r.value === null).length, 0)
  })

  it('puts back after a failed write only the tombstones no later write carried a record for (overlapping writes)', async () => {
    // Given t-0 with runs at 0 and 3 (a gap), forgotten (its source topic created again)
    const log = new TopicLog()
    const store = new OffsetHistoryStore(flow, admin, log, log)
    await store.load()
    const tracker = new OffsetSyncTracker(100)
    for (const up of [0, 1, 2, 3, 4]) tracker.record('t\u00000', 't', 0, up, up < 3 ? up : up - 1)
    tracker.promoteDelayed()
    await store.append(tracker.takePending())
    store.forget('t', 0)
    // When a write takes the tombstones (one of another partition's syncs) and hangs, the new copy's first run
    // (key 0) is written meanwhile, and then the hanging write fails
    const write = log.write.bind(log)
    let fail: (err: Error) => void = () => undefined
    log.write = async () => await new Promise((_resolve, reject) => { fail = reject })
    const other = new OffsetSyncTracker(100)
    other.record('t\u00001', 't', 1, 0, 0)
    const trimming = store.append(other.takePending())
    log.write = write
    tracker.reset('t\u00000')
    tracker.record('t\u00000', 't', 0, 0, 10)
    await store.append(tracker.takePending())
    fail(new Error('request timed out'))
    await assert.rejects(trimming)
    // Then the next write carries the tombstone of key 3 only: one of key 0 would delete the new copy's run (and the
    // trim job's writes carry none: in exactly-once mode they wait for the round in flight)
    await store.trim(new Map())
    assert.equal(log.records.at(-1)!.value !== null, true)
    await store.checkpointExtents(new Map())
    const last = log.records.at(-1)!
    assert.equal(last.value, null)
    const reloaded = new OffsetHistoryStore(flow, admin, log, null)
    await reloaded.load()
    assert.deepEqual(reloaded.history('t', 0)!.runs, [{ upstream: 0, downstream: 10 }])
  })
})
