import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { PartitionPosition } from '../../../src/kafka/record-fetcher.ts'
import { SETTLE_MS, SETTLE_RESERVE_MS } from '../../../src/replication/progress-flusher.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { asCopied, assertExactCopy, createHarness, offsetsWithGaps, type Harness } from '../../fakes/replicator-harness.ts'
import { waitFor } from '../../helpers/wait.ts'

const T0 = { topic: 't', partition: 0, remoteTopic: 'A.t' }
const T1 = { topic: 't', partition: 1, remoteTopic: 'A.t' }

/** Two partitions of 40 records each; fetches of 5 offsets, so a copy takes many rounds. */
function twoPartitions (): Harness {
  const h = createHarness()
  h.source.addPartition('t', 0, offsetsWithGaps(0, 39))
  h.source.addPartition('t', 1, offsetsWithGaps(0, 39))
  return h
}

/** Stops the replicator at the first fetch that asks `topic-partition` at its high watermark. */
function stopWhenCopied (h: Harness, topic: string, partition: number): void {
  h.source.onFetch(positions => {
    if (positions.some(p => p.topic === topic && p.partition === partition && p.offset === h.source.highWatermark(topic, partition))) h.replicator.stop()
  })
}

/** The last stored position of a partition, or undefined if it never was. */
function lastStored (h: Harness, key: string): number | undefined {
  return h.progress.commits.filter(c => c.has(key)).at(-1)?.get(key)?.lastOffset
}

function fetchesOf (calls: readonly PartitionPosition[][], topic: string, partition: number): number {
  return calls.filter(c => c.some(p => p.topic === topic && p.partition === partition)).length
}

describe('FlowReplicator ownership', () => {
  it('releases a partition while its writes are in flight: its acknowledged position is stored, it is never written again, the other keeps copying', async () => {
    // Given two partitions copied from the start
    const h = twoPartitions()
    await h.replicator.addPartitions([T0, T1], new Map())
    stopWhenCopied(h, 't', 1)
    let release: Promise<boolean> | null = null
    let fetchesAtRelease = 0
    // When t-0 is released during the third write (its batches are in flight)
    h.target.beforeWrite(() => {
      if (h.target.writeCalls === 3) {
        fetchesAtRelease = h.source.fetchCalls.length
        release = h.replicator.releasePartitions([{ topic: 't', partition: 0 }])
      }
    })
    const running = h.replicator.run()
    await waitFor(() => release !== null, { timeoutMs: 5000, intervalMs: 5, message: 'the moment chosen in the write' })
    await release
    // Then once released, the position stored for t-0 is exactly what the target holds of it (written by this write too)
    const copied = h.target.copied('A.t', 0)
    assert.ok(copied.length >= 10 && copied.length < 40, `copied ${copied.length}`)
    assert.equal(lastStored(h, partitionKey('t', 0)), copied.length - 1)
    await running
    // And t-0 was fetched no more after the release started, and nothing more was written to it
    assert.equal(fetchesOf(h.source.fetchCalls.slice(fetchesAtRelease), 't', 0), 0)
    assert.deepEqual(h.target.copied('A.t', 0), h.source.records('t', 0).slice(0, copied.length).map(asCopied))
    // And the final flush at stop stores only t-1, which was copied whole
    assert.equal(h.progress.commits.at(-1)!.has(partitionKey('t', 0)), false)
    assertExactCopy(h, 't', 1, 'A.t')
    assert.equal(lastStored(h, partitionKey('t', 1)), 39)
    assert.deepEqual(h.replicator.status().map(s => `${s.topic}-${s.partition}`), ['t-1'])
  })

  it('stores the offset syncs of a released partition before its position, and then waits for MM2\'s syncs queued beside the data path', async () => {
    // Given a partition copied with offset syncs
    const h = twoPartitions()
    await h.replicator.addPartitions([T0, T1], new Map())
    const order: string[] = []
    h.progress.onCommit(positions => { if (positions.has(partitionKey('t', 0))) order.push(`progress ${h.syncs.of('t', 0).length}`) })
    Object.assign(h.syncs, { settle: async (timeoutMs: number) => { order.push(`settle ${timeoutMs}`); return 0 } })
    stopWhenCopied(h, 't', 1)
    let release: Promise<boolean> | null = null
    h.target.beforeWrite(() => { if (h.target.writeCalls === 4) release = h.replicator.releasePartitions([{ topic: 't', partition: 0 }]) })
    const running = h.replicator.run()
    await waitFor(() => release !== null, { timeoutMs: 5000, intervalMs: 5, message: 'the moment chosen in the write' })
    await release
    await running
    // Then when its position was stored, its syncs (at least the first run start) were already sent; MM2's queued
    // syncs were waited for after that, before the release resolved
    assert.equal(order.length, 2)
    assert.notEqual(order[0], 'progress 0')
    assert.equal(order[1], `settle ${SETTLE_MS}`)
    assert.equal(h.syncs.of('t', 0).at(-1)!.downstreamOffset <= lastStored(h, partitionKey('t', 0))!, true)
  })

  it('a release given a stop\'s deadline waits for MM2\'s syncs only until shortly before it; one whose partitions were lost before the round ended is not told as stored', async () => {
    for (const lostFirst of [false, true]) {
      // Given two partitions being copied, MM2's syncs never all written
      const h = twoPartitions()
      await h.replicator.addPartitions([T0, T1], new Map())
      const waits: number[] = []
      Object.assign(h.syncs, { settle: async (timeoutMs: number) => { waits.push(timeoutMs); return 1 } })
      stopWhenCopied(h, 't', 1)
      // When t-0 is released with a deadline 800 ms away (and, the second time, the membership lost in the same round)
      let release: Promise<boolean> | null = null
      h.target.beforeWrite(() => {
        if (h.target.writeCalls !== 4) return
        release = h.replicator.releasePartitions([{ topic: 't', partition: 0 }], Date.now() + 800)
        if (lostFirst) h.replicator.loseAll()
      })
      const running = h.replicator.run()
      await waitFor(() => release !== null, { timeoutMs: 5000, intervalMs: 5, message: 'the moment chosen in the write' })
      const stored = await release
      // (nothing left to copy once lost: stopped here, before anything is asserted)
      if (lostFirst) h.replicator.stop()
      await running
      // Then the wait ended SETTLE_RESERVE_MS before the deadline at the latest; the lost release says it stored nothing
      assert.equal(stored, !lostFirst)
      if (lostFirst) assert.deepEqual(waits, [])
      else assert.ok(waits.length === 1 && waits[0]! <= 800 - SETTLE_RESERVE_MS && waits[0]! > 0, `waited ${waits.join()} ms`)
    }
  })

  it('resumes an added partition from the stored progress it is given (another instance copied it meanwhile)', async () => {
    // Given t-0 whose records up to 24 were copied by another instance
    const h = twoPartitions()
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 3]]))
    // When it is added with the progress read again now
    await h.replicator.addPartitions([T0], new Map([[partitionKey('t', 0), 24]]))
    stopWhenCopied(h, 't', 0)
    await h.replicator.run()
    // Then it copies from 25, not from the older position
    assertExactCopy(h, 't', 0, 'A.t', 25)
    assert.equal(lastStored(h, partitionKey('t', 0)), 39)
  })

  it('after the membership is lost, stores nothing more and writes nothing more; re-added, it resumes from the stored progress', async () => {
    // Given two partitions being copied, with progress stored at every write
    const h = createHarness({ offsetFlushIntervalMs: 0 })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 39))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 39))
    await h.replicator.addPartitions([T0, T1], new Map())
    let lostAt = -1
    let commitsAtLoss = 0
    h.target.beforeWrite(() => {
      if (h.target.writeCalls === 3) {
        // When the membership is lost while the third write is in flight
        h.replicator.loseAll()
        lostAt = h.source.fetchCalls.length
        commitsAtLoss = h.progress.commits.length
      }
    })
    const running = h.replicator.run()
    await waitFor(() => lostAt >= 0 && h.replicator.status().length === 0, { timeoutMs: 5000, intervalMs: 5, message: 'the lost partitions left' })
    // Then no partition is fetched again, and no position is stored after the loss
    const t1Copied = h.target.copied('A.t', 1).length
    assert.equal(h.source.fetchCalls.slice(lostAt).flat().length, 0)
    assert.equal(h.progress.commits.slice(commitsAtLoss).some(c => c.size > 0), false)
    // When t-0 is assigned again with the progress another instance stored (up to 29)
    await h.replicator.addPartitions([T0], new Map([[partitionKey('t', 0), 29]]))
    stopWhenCopied(h, 't', 0)
    await running
    // Then it resumes at 30, and t-1 (not assigned again) was never fetched or written again
    assert.equal(fetchesOf(h.source.fetchCalls.slice(lostAt), 't', 1), 0)
    assert.equal(h.target.copied('A.t', 1).length, t1Copied)
    assert.deepEqual(h.target.copied('A.t', 0).slice(-10), h.source.records('t', 0).slice(30).map(asCopied))
    assert.equal(lastStored(h, partitionKey('t', 0)), 39)
  })

  it('a round whose fetch was under way when the membership was lost writes nothing, even when the lease holds again (a new membership) by the time it would write', async () => {
    // Given two partitions being copied (the lease gate open throughout: the member joins again at once)
    const h = twoPartitions()
    await h.replicator.addPartitions([T0, T1], new Map())
    const writesBefore: number[] = []
    // When the membership is lost while the third fetch is answered, the member joining again before the write
    h.source.onFetch(() => {
      if (h.source.fetchCalls.length !== 3) return
      writesBefore.push(h.target.writeCalls)
      h.replicator.loseAll()
    })
    const running = h.replicator.run()
    try {
      await waitFor(() => writesBefore.length === 1 && h.replicator.status().length === 0, { timeoutMs: 5000, intervalMs: 5, message: 'the lost partitions left' })
      // Then what that fetch read is never written: another instance owns the partitions now
      assert.equal(h.target.writeCalls, writesBefore[0])
    } catch (err) {
      h.replicator.stop()
      await running
      throw err
    }
    const copied = h.target.copied('A.t', 0).length
    // And re-added with the progress the other instance stored (up to 29), t-0 resumes at 30: no record of the
    // lost round between what the other instance wrote and what follows
    await h.replicator.addPartitions([T0], new Map([[partitionKey('t', 0), 29]]))
    stopWhenCopied(h, 't', 0)
    await running
    assert.deepEqual(h.target.copied('A.t', 0).slice(copied), h.source.records('t', 0).slice(30).map(asCopied))
  })

  for (const ended of ['lost', 'released'] as const) {
    it(`never adds a partition from a start read under a grant that ended (${ended}) before the add was applied, even if owned again by then`, async () => {
      // Given t-0 copied, and a round held open (a slow broker)
      const h = twoPartitions()
      const owned = new Set([partitionKey('t', 0)])
      const owns = (key: string): boolean => owned.has(key)
      await h.replicator.addPartitions([T0], new Map(), owns)
      let open = (): void => undefined
      h.source.holdFetch = new Promise(resolve => { open = resolve })
      const running = h.replicator.run()
      await waitFor(() => h.source.fetchCalls.length === 1, { timeoutMs: 5000, message: 'the first round fetching' })
      const settle = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }
      // When t-1 is assigned, its stored position 3 read (its add waits for the round's end)
      owned.add(partitionKey('t', 1))
      void h.replicator.addPartitions([T1], new Map([[partitionKey('t', 1), 3]]), owns)
      await settle()
      // And that grant ends (membership lost, or t-1 revoked), and t-1 is assigned again, another owner having
      // stored 20 meanwhile
      if (ended === 'lost') {
        owned.clear()
        h.replicator.loseAll()
      } else {
        owned.delete(partitionKey('t', 1))
        await h.replicator.releasePartitions([T1])
      }
      owned.add(partitionKey('t', 1))
      void h.replicator.addPartitions([T1], new Map([[partitionKey('t', 1), 20]]), owns)
      await settle()
      // And the round ends
      h.source.holdFetch = null
      open()
      stopWhenCopied(h, 't', 1)
      await running
      // Then t-1 was copied from 21, the start of the new grant, never from 4
      const copied = h.target.copied('A.t', 1)
      assert.deepEqual(copied, h.source.records('t', 1).filter(r => r.offset > 20).map(asCopied))
    })
  }
})

describe('FlowReplicator offset syncs of a lost membership', () => {
  it('never writes the offset syncs (and history) of partitions lost with the membership, even those of a write that failed before the loss', async () => {
    // Given two partitions being copied while every offset-sync write fails (its partition's leader down)
    const h = twoPartitions()
    const send = h.syncs.send.bind(h.syncs)
    let failing = true
    h.syncs.send = async entries => {
      if (failing) throw new Error('offset-syncs partition has no leader')
      await send(entries)
    }
    await h.replicator.addPartitions([T0, T1], new Map())
    // When the membership is lost mid-copy, and the syncs' partition is back right after
    h.source.onFetch(() => {
      if (h.source.fetchCalls.length !== 4) return
      h.replicator.loseAll()
      failing = false
    })
    const running = h.replicator.run()
    try {
      await waitFor(() => h.source.fetchCalls.length >= 4 && h.replicator.status().length === 0, { timeoutMs: 5000, intervalMs: 5, message: 'the lost partitions left' })
    } catch (err) {
      h.replicator.stop()
      await running
      throw err
    }
    // And t-0 is assigned again with the progress its other owner stored (up to 29), and copied to its end
    await h.replicator.addPartitions([T0], new Map([[partitionKey('t', 0), 29]]))
    stopWhenCopied(h, 't', 0)
    await running
    // Then every sync written is of the new assignment: none of t-1, none of t-0 before 30
    assert.ok(h.syncs.sent.length > 0)
    assert.deepEqual(h.syncs.sent.filter(e => e.partition === 1 || e.upstreamOffset < 30), [])
  })
})
