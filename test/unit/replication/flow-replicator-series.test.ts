/**
 * The data path's metric series per topic on /metrics (the Prometheus registry's text), as partitions leave it:
 * revoked, lost, their topic deleted or excluded, or the data path stopped. Another topic's series stay, and a topic
 * copied again has its series again.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { PrometheusMetrics } from '../../../src/metrics/registry.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { createHarness, offsetsWithGaps, type Harness } from '../../fakes/replicator-harness.ts'
import { waitFor } from '../../helpers/wait.ts'

const T0 = { topic: 't', partition: 0, remoteTopic: 'A.t' }
const T1 = { topic: 't', partition: 1, remoteTopic: 'A.t' }
const U0 = { topic: 'u', partition: 0, remoteTopic: 'A.u' }

/** The sample lines of TOPIC on /metrics. */
async function linesOf (metrics: PrometheusMetrics, topic: string): Promise<string[]> {
  return (await metrics.render()).split('\n').filter(l => !l.startsWith('#') && l.includes(`topic="${topic}"`))
}

const copiedOf = (topic: string, records: number): string => `kmirror_records_copied_total{flow="A->B",topic="${topic}"} ${records}`

/**
 * Topics t (two partitions) and u (one), 10 records each, copied whole by a running replicator. KEPT_MS: how long a
 * topic's counters and histograms stay after it left (0: gone at the next round).
 */
async function copiedWhole (t: { after: (fn: () => Promise<void>) => void }, keptMs?: number): Promise<{ h: Harness, metrics: PrometheusMetrics, running: Promise<void> }> {
  const metrics = new PrometheusMetrics()
  const h = createHarness({ metrics, ...(keptMs === undefined ? {} : { countedSeriesKeptMs: keptMs }) })
  for (const p of [T0, T1, U0]) h.source.addPartition(p.topic, p.partition, offsetsWithGaps(0, 9))
  // A fetch takes a millisecond, as a real one takes time: a caught-up data path must not hold the event loop.
  const fetchBatches = h.source.fetchBatches.bind(h.source)
  h.source.fetchBatches = async positions => { await delay(1); return await fetchBatches(positions) }
  await h.replicator.addPartitions([T0, T1, U0], new Map())
  const running = h.replicator.run()
  t.after(async () => { h.replicator.stop(); await running })
  await waitFor(async () => {
    const lines = [...await linesOf(metrics, 't'), ...await linesOf(metrics, 'u')]
    return { done: lines.includes(copiedOf('t', 20)) && lines.includes(copiedOf('u', 10)), state: lines }
  }, { timeoutMs: 5000, intervalMs: 5, message: 'both topics copied whole' })
  return { h, metrics, running }
}

async function waitUntilGone (metrics: PrometheusMetrics, topic: string): Promise<void> {
  await waitFor(async () => {
    const lines = await linesOf(metrics, topic)
    return { done: lines.length === 0, state: lines }
  }, { timeoutMs: 5000, intervalMs: 5, message: `no series of topic ${topic} left` })
}

describe('FlowReplicator metric series per topic', () => {
  it('Given a topic revoked partition by partition, then its series stay while one of its partitions is copied here and go once the last one is released; the other topic\'s stay', async t => {
    const { h, metrics } = await copiedWhole(t, 0)
    const u = await linesOf(metrics, 'u')

    // When one partition of t is revoked: t is still copied here, and so still counted
    await h.replicator.releasePartitions([{ topic: 't', partition: 0 }])
    assert.ok((await linesOf(metrics, 't')).includes(copiedOf('t', 20)))

    // When its last partition is revoked too: t has no series left
    await h.replicator.releasePartitions([{ topic: 't', partition: 1 }])
    await waitUntilGone(metrics, 't')
    assert.deepEqual(await linesOf(metrics, 'u'), u)
  })

  it('Given a topic deleted or excluded on the source, then its series go; copied again, it has them again, counting only what was copied since', async t => {
    const { h, metrics } = await copiedWhole(t, 0)
    const tLines = await linesOf(metrics, 't')

    // When u is taken out of replication (deleted, excluded, or a problem: the topic refresh's `removed`)
    await h.replicator.removeTopics(['u'])
    await waitUntilGone(metrics, 'u')
    assert.deepEqual(await linesOf(metrics, 't'), tLines)

    // When u is replicated again, from its stored progress, with 5 new records
    h.source.addPartition('u', 0, offsetsWithGaps(0, 14))
    await h.replicator.addPartitions([U0], new Map([[partitionKey('u', 0), 9]]))
    await waitFor(async () => {
      const lines = await linesOf(metrics, 'u')
      return { done: lines.includes(copiedOf('u', 5)), state: lines }
    }, { timeoutMs: 5000, intervalMs: 5, message: 'u counted again from 0' })
  })

  it('Given the group membership lost, then no topic has series left', async t => {
    const { h, metrics } = await copiedWhole(t, 0)
    h.replicator.loseAll()
    await waitUntilGone(metrics, 't')
    await waitUntilGone(metrics, 'u')
  })

  it('Given a topic revoked, then its counters and histograms stay, frozen, for their keep time (10 min by default), and its gauges do not', async t => {
    const { h, metrics } = await copiedWhole(t)
    metrics.set('replicationLag', { flow: 'A->B', topic: 't' }, 0)
    await h.replicator.releasePartitions([{ topic: 't', partition: 0 }, { topic: 't', partition: 1 }])
    const lines = await linesOf(metrics, 't')
    assert.ok(lines.includes(copiedOf('t', 20)))
    assert.ok(lines.some(l => l.startsWith('kmirror_replication_latency_ms_count{')))
    assert.ok(!lines.some(l => l.startsWith('kmirror_replication_lag_records{')))
  })

  it('Given the data path stopped, then no series of its topics stays, not even the counters of a topic that left just before', async t => {
    const { h, metrics, running } = await copiedWhole(t)
    await h.replicator.releasePartitions([{ topic: 'u', partition: 0 }])
    assert.ok((await linesOf(metrics, 'u')).includes(copiedOf('u', 10)))
    h.replicator.stop()
    await running
    assert.deepEqual(await linesOf(metrics, 't'), [])
    assert.deepEqual(await linesOf(metrics, 'u'), [])
  })
})
