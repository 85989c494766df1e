import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { PlannedBatch } from '../../../src/replication/batch-plan.ts'
import type { PartitionState } from '../../../src/replication/partition-set.ts'
import { headAfterAck, headAfterFetch, lagSeconds, statusOf } from '../../../src/replication/record-times.ts'
import { partitionLag } from '../../../src/replication/replicator-ports.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { createHarness, offsetsWithGaps } from '../../fakes/replicator-harness.ts'

const T = { source: 't', remote: 'A.t', partitions: 1 } as const
/** The fake source's record timestamps: 1_700_000_000_000 + offset. */
const timestampOf = (offset: number): number => 1_700_000_000_000 + offset

const batch = (first: number, max: number): PlannedBatch => ({
  recordCount: 1, firstOffset: 0, offsets: null, lastOffset: 0, bytes: 1, forwarded: true, firstTimestamp: first, maxTimestamp: max, build: () => Buffer.alloc(0)
})
const status = { highWatermark: 20, position: 10, failure: null }
const stateWith = (values: Partial<PartitionState>): PartitionState => ({
  key: partitionKey('t', 0), topic: 't', partition: 0, remoteTopic: 'A.t', position: 0, highWatermark: -1, copiedRecords: 0,
  copiedBytes: 0, lostToRetention: 0, head: null, retryAt: 0, releasing: false, lost: false, fetchAt: null, ...values
})

describe('record times: lag in seconds', () => {
  it('follows the worked example: the head moves from fetch to ack to the next batch, and is 0 once caught up', () => {
    const fetched = [batch(1000, 1040), batch(1050, 1090)]
    const head = headAfterFetch(null, fetched)
    assert.equal(head, 1000)
    assert.equal(lagSeconds(status, head, 1200), 0.2)
    assert.equal(headAfterAck(fetched[0]!, fetched[1]), 1050)
    assert.equal(lagSeconds(status, 1050, 1210), 0.16)
    // The last batch of the fetch acknowledged: its newest timestamp stands for the next record, not fetched yet
    assert.equal(headAfterAck(fetched[1]!, undefined), 1090)
    assert.equal(lagSeconds({ ...status, position: 20 }, 1090, 5000), 0)
  })

  it('is unknown, never 0, before the first read, while the source refuses the partition, or without a timestamp', () => {
    assert.equal(lagSeconds({ ...status, highWatermark: -1 }, 1000, 2000), null)
    assert.equal(lagSeconds({ ...status, failure: { side: 'source', error: 'TOPIC_AUTHORIZATION_FAILED' } as never }, 1000, 2000), null)
    assert.equal(lagSeconds(status, null, 2000), null)
    // A batch without timestamps (-1) tells nothing: the head becomes unknown; an empty fetch keeps it
    assert.equal(headAfterFetch(1000, [batch(-1, -1)]), null)
    assert.equal(headAfterFetch(1000, []), 1000)
  })

  it('is unknown, in records and seconds, while the source has given nothing of the partition for a while: its high watermark is stale', () => {
    const waiting = statusOf(stateWith({ position: 10, highWatermark: 20, head: 1000 }), null, 5000, 2000)
    assert.equal(waiting.sourceWaitSince, '1970-01-01T00:00:02.000Z')
    assert.equal(partitionLag(waiting), null)
    assert.equal(waiting.lagSeconds, null)
    const answered = statusOf(stateWith({ position: 10, highWatermark: 20, head: 1000 }), null, 5000)
    assert.equal('sourceWaitSince' in answered, false)
    assert.deepEqual([partitionLag(answered), answered.lagSeconds], [10, 4])
  })

  it('is known while the target refuses the partition or cannot take it: it is still fetched, so its high watermark is fresh', () => {
    assert.equal(lagSeconds({ ...status, failure: { side: 'target', error: 'LEADER_NOT_AVAILABLE' } as never }, 1000, 2000), 1)
  })
})

describe('FlowReplicator record times', () => {
  it('observes record age and replication latency once per batch, from the timestamp of its first record', async () => {
    // Given 20 records in batches of at most 3 (a fetch spans 5 offsets: batches 0-2, 3-4, 5-7, 8-9, ...)
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
    const before = Date.now()
    h.source.whenCaughtUp(() => h.replicator.stop())
    await h.replicator.addTopics([T])
    await h.replicator.run()
    const after = Date.now()
    // Then each of the 8 batches is one observation of each, between (before - first timestamp) and (after - it)
    const firsts = [0, 3, 5, 8, 10, 13, 15, 18]
    for (const name of ['recordAge', 'replicationLatency']) {
      const observed = metrics.observations.get(`${name}{"flow":"A->B","topic":"t"}`) ?? []
      assert.equal(observed.length, firsts.length, name)
      observed.forEach((value, i) => {
        assert.ok(value >= before - timestampOf(firsts[i]!) && value <= after - timestampOf(firsts[i]!), `${name} #${i}: ${value}`)
      })
    }
  })

  it('reports each partition\'s lag in seconds: unknown before the first read, the oldest uncopied record\'s age while behind, 0 caught up', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
    await h.replicator.addTopics([T])
    // Before the first fetch nothing is known
    assert.equal(h.replicator.status()[0]!.lagSeconds, null)
    // While behind: before each write, the head is the first record fetched (offsets 5, 10; during the first write
    // the high watermark is not known yet: unknown)
    const seen: { position: number, lagSeconds: number | null, at: number }[] = []
    h.target.beforeWrite(() => {
      const p = h.replicator.status()[0]!
      seen.push({ position: p.position, lagSeconds: p.lagSeconds, at: Date.now() })
    })
    h.source.whenCaughtUp(() => h.replicator.stop())
    await h.replicator.run()
    assert.deepEqual(seen.map(s => s.position), [0, 5, 10])
    assert.equal(seen[0]!.lagSeconds, null)
    for (const s of seen.slice(1)) {
      const expected = (s.at - timestampOf(s.position)) / 1000
      assert.ok(s.lagSeconds !== null && Math.abs(s.lagSeconds - expected) < 0.1, `at ${s.position}: ${s.lagSeconds} vs ${expected}`)
    }
    // Caught up: 0
    assert.equal(h.replicator.status()[0]!.lagSeconds, 0)
  })
})
