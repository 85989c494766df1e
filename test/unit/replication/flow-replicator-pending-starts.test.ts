import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { PartitionStatus } from '../../../src/replication/flow-replicator.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels } from '../../fakes/memory-logger.ts'
import type { ExactlyOnceDeps } from '../../../src/replication/flow-replicator.ts'
import { assertExactCopy, createHarness, offsetsWithGaps, type Harness, type HarnessOptions } from '../../fakes/replicator-harness.ts'

const T = { source: 't', remote: 'A.t', partitions: 2 } as const
const failingGauge = 'failingPartitions{"flow":"A->B","error":"LEADER_NOT_AVAILABLE"}'

function twoPartitions (metrics?: CountingMetrics, options: HarnessOptions = {}): Harness {
  const h = createHarness({ ...options, ...(metrics === undefined ? {} : { metrics }) })
  h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
  h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
  // t-1 has no leader on the source: where it starts is not known
  h.source.offline.add(partitionKey('t', 1))
  return h
}

describe('FlowReplicator partitions whose start the source does not give', () => {
  it('copies the others, reports it failing on the source with its position unknown, and copies it from its start once it has a leader', async () => {
    // Given two partitions to copy from the earliest offset, t-1 without a source leader
    const metrics = new CountingMetrics()
    const h = twoPartitions(metrics)
    let during: PartitionStatus[] | null = null
    let gaugeDuring: number | undefined
    h.source.onFetch(positions => {
      const at = new Map(positions.map(p => [p.partition, p.offset]))
      // When t-0 is copied to its end, t-1 gets its leader back
      if (during === null && at.get(0) === 10) {
        during = h.replicator.status()
        gaugeDuring = metrics.gauges.get(failingGauge)
        h.source.offline.clear()
      }
      if (at.get(1) === 10) h.replicator.stop()
    })
    await h.replicator.addTopics([T])
    await h.replicator.run()
    // Then while it had no leader, t-1 was failing on the source, its position unknown, with the fix
    const waiting = during!.find(p => p.partition === 1)!
    assert.deepEqual([waiting.position, waiting.copiedRecords, waiting.failure?.side, waiting.failure?.cluster, waiting.failure?.error], [-1, 0, 'source', 'A', 'LEADER_NOT_AVAILABLE'])
    assert.equal(waiting.failure?.remedy, 'bring back the broker that leads t-1 on cluster A, or elect a leader among its live replicas (to list it: kafka-topics.sh --bootstrap-server a:9092 --describe --topic t --unavailable-partitions)')
    assert.equal(gaugeDuring, 1)
    // and the operator got one warning naming it, then one line once it was copied
    assert.deepEqual(h.logs.at(LogLevels.warn).map(l => l.msg), [
      'cannot read t-1 from cluster A: it has no leader, so where to start copying it is not known yet (Kafka error LEADER_NOT_AVAILABLE); ' +
      'bring back the broker that leads t-1 on cluster A, or elect a leader among its live replicas (to list it: kafka-topics.sh --bootstrap-server a:9092 --describe --topic t --unavailable-partitions). ' +
      'This partition is set aside and retried with back-off; the others keep flowing'
    ])
    assert.ok(h.logs.at(LogLevels.info).some(l => l.msg === 't-1 is replicated again (it failed with LEADER_NOT_AVAILABLE on cluster A)'))
    assert.equal(metrics.gauges.get(failingGauge), 0)
    // and both are exact copies, t-1 from its first record
    assertExactCopy(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 1, 'A.t')
    assert.deepEqual(h.progress.latest(), { 't-0': 9, 't-1': 9 })
  })

  it('never adds a partition released while it waited for its start, even once its start is known', async () => {
    // Given t-0 and t-1 assigned to this instance, t-1 without a source leader
    const h = twoPartitions()
    let fetchesAfter = -1
    h.source.onFetch(positions => {
      const at = new Map(positions.map(p => [p.partition, p.offset]))
      if (fetchesAfter < 0 && at.get(0) === 10) {
        // When t-1 is revoked while it waits, and then gets its leader back
        void h.replicator.releasePartitions([{ topic: 't', partition: 1 }])
        h.source.offline.clear()
        fetchesAfter = 0
      } else if (fetchesAfter >= 0 && ++fetchesAfter === 20) h.replicator.stop()
      assert.ok(!at.has(1), 't-1 was fetched')
    })
    await h.replicator.addPartitions([{ topic: 't', partition: 0, remoteTopic: 'A.t' }, { topic: 't', partition: 1, remoteTopic: 'A.t' }], new Map())
    await h.replicator.run()
    // Then it was never added: not fetched, not in /status, nothing stored for it
    assert.deepEqual(h.replicator.status().map(p => p.partition), [0])
    assert.deepEqual(h.progress.latest(), { 't-0': 9 })
    assert.equal(h.target.copied('A.t', 1).length, 0)
  })

  it('in exactly-once mode, lets the partition join between two transactions, never inside one', async () => {
    // Given rounds as transactions that note the partitions copied when each starts and ends
    let harness: Harness | undefined
    const inside: string[] = []
    const partitions = (): string => harness!.replicator.status().filter(p => p.position >= 0).map(p => p.partition).join(',')
    const eos: ExactlyOnceDeps = {
      rounds: {
      commitInDoubt: false,
      lastCommitted: true,
      settleDoubt: () => undefined,
        run: async fn => {
          const before = partitions()
          const value = await fn()
          inside.push(`${before}/${partitions()}`)
          return value
        },
        recover: async () => undefined,
        transactionalId: 'kmirror-A-B-0',
        endMembership: () => null
      },
      reloadProgress: async () => new Map(),
      syncsAfterCommit: null
    }
    const h = harness = twoPartitions(undefined, { exactlyOnce: eos })
    h.source.onFetch(positions => {
      const at = new Map(positions.map(p => [p.partition, p.offset]))
      // When t-1 gets its leader back in the middle of a round
      if (at.get(0) === 10) h.source.offline.clear()
      if (at.get(1) === 10) h.replicator.stop()
    })
    await h.replicator.addTopics([T])
    await h.replicator.run()
    // Then no transaction saw the set of partitions change, and t-1 joined one of them
    assert.ok(inside.every(r => r.split('/')[0] === r.split('/')[1]), inside.join(' '))
    assert.ok(inside.includes('0,1/0,1'), inside.join(' '))
    assertExactCopy(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 1, 'A.t')
  })
})
