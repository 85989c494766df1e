/**
 * The per-partition lag gauges (`kmirror_partition_lag_seconds`, `kmirror_partition_lag_records`): set from each
 * scrape's snapshot, gone when a partition leaves this instance, off per flow, and cheap at 5,000 partitions. The
 * topic-level lag gauges: gone when their topic leaves this instance.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { updateLagGauges, updatePartitionLagGauges, updateUpGauges } from '../../../src/http/gauges.ts'
import { PrometheusMetrics } from '../../../src/metrics/registry.ts'
import type { PartitionStatus } from '../../../src/replication/flow-replicator.ts'
import type { FlowStatus } from '../../../src/runtime/flow.ts'

const partition = (topic: string, p: number, overrides: Partial<PartitionStatus> = {}): PartitionStatus => ({
  topic, partition: p, remoteTopic: `A.${topic}`, position: 10, highWatermark: 15, copiedRecords: 10, copiedBytes: 100, lostToRetention: 0, failure: null, lagSeconds: 2.5, ...overrides
})
const flow = (name: string, partitions: PartitionStatus[]): FlowStatus => ({ name, partitions, stepFailure: null, jobs: [], membership: null })
const ALL = (): boolean => true

/** The series of one metric in the rendered text, as `labels value` lines. */
async function series (metrics: PrometheusMetrics, name: string): Promise<string[]> {
  return (await metrics.render()).split('\n').filter(l => l.startsWith(`${name}{`)).map(l => l.slice(name.length)).sort()
}

describe('updateLagGauges', () => {
  it('Given a topic deleted and a topic whose partitions all moved to another instance, then the next scrape has no topic-level series of either', async () => {
    const metrics = new PrometheusMetrics()
    updateLagGauges(metrics, [
      flow('A->B', [partition('t', 0), partition('t', 1, { highWatermark: -1, lagSeconds: null }), partition('gone', 0), partition('moved', 0)]),
      flow('A->C', [partition('moved', 0)])
    ])
    assert.deepEqual(await series(metrics, 'kmirror_replication_lag_records'), [
      '{flow="A->B",topic="gone"} 5', '{flow="A->B",topic="moved"} 5', '{flow="A->B",topic="t"} Nan', '{flow="A->C",topic="moved"} 5'
    ])
    updateLagGauges(metrics, [flow('A->B', [partition('t', 0), partition('t', 1, { lagSeconds: 4 })]), flow('A->C', [])])
    assert.deepEqual(await series(metrics, 'kmirror_replication_lag_records'), ['{flow="A->B",topic="t"} 10'])
    assert.deepEqual(await series(metrics, 'kmirror_replication_lag_seconds'), ['{flow="A->B",topic="t"} 4'])
    assert.deepEqual(await series(metrics, 'kmirror_replication_lag_unknown_partitions'), ['{flow="A->B",topic="t"} 0'])
  })
})

describe('updateUpGauges', () => {
  it('Given remote topic problems, then kmirror_remote_topic_problems counts their topics as /status shows them: 0 on an instance that does not run the topic refresh, whatever it once found', async () => {
    const metrics = new PrometheusMetrics()
    const health = { ready: true, healthy: true, stalled: [] }
    const problem = (topic: string, message: string) => ({ topic, remoteTopic: `A.${topic}`, message })
    updateUpGauges(metrics, [{ ...flow('A->B', []), remoteTopicProblems: [problem('t1', 'refused'), problem('t1', 'growth refused'), problem('t2', 'refused')] }, flow('A->C', [])], health, false)
    assert.deepEqual(await series(metrics, 'kmirror_remote_topic_problems'), ['{flow="A->B"} 2', '{flow="A->C"} 0'])
    // (the refresh job moved to another instance: /status has no such field here any more)
    updateUpGauges(metrics, [flow('A->B', []), flow('A->C', [])], health, false)
    assert.deepEqual(await series(metrics, 'kmirror_remote_topic_problems'), ['{flow="A->B"} 0', '{flow="A->C"} 0'])
  })
})

describe('updatePartitionLagGauges', () => {
  it('Given partitions caught up, lagging and unknown, then each has its own series: 0, its lag, or NaN (prom-client writes Nan)', async () => {
    const metrics = new PrometheusMetrics()
    updatePartitionLagGauges(metrics, [flow('A->B', [
      partition('t', 0, { position: 15, lagSeconds: 0 }),
      partition('t', 1),
      partition('t', 2, { highWatermark: -1, lagSeconds: null }),
      // waiting on the source: its high watermark (15) is that of its last answer, stale
      partition('t', 3, { sourceWaitSince: '2026-01-01T00:00:00.000Z', lagSeconds: null })
    ])], ALL)
    assert.deepEqual(await series(metrics, 'kmirror_partition_lag_seconds'), [
      '{flow="A->B",topic="t",partition="0"} 0', '{flow="A->B",topic="t",partition="1"} 2.5', '{flow="A->B",topic="t",partition="2"} Nan',
      '{flow="A->B",topic="t",partition="3"} Nan'
    ])
    assert.deepEqual(await series(metrics, 'kmirror_partition_lag_records'), [
      '{flow="A->B",topic="t",partition="0"} 0', '{flow="A->B",topic="t",partition="1"} 5', '{flow="A->B",topic="t",partition="2"} Nan',
      '{flow="A->B",topic="t",partition="3"} Nan'
    ])
  })

  it('Given a partition handed to another instance and a topic deleted, then the next scrape has no series of either', async () => {
    const metrics = new PrometheusMetrics()
    updatePartitionLagGauges(metrics, [flow('A->B', [partition('t', 0), partition('t', 1), partition('gone', 0)])], ALL)
    updatePartitionLagGauges(metrics, [flow('A->B', [partition('t', 1, { lagSeconds: 4 })])], ALL)
    assert.deepEqual(await series(metrics, 'kmirror_partition_lag_seconds'), ['{flow="A->B",topic="t",partition="1"} 4'])
    assert.deepEqual(await series(metrics, 'kmirror_partition_lag_records'), ['{flow="A->B",topic="t",partition="1"} 5'])
  })

  it('Given metrics.partition.level.enabled = false for one flow, then only the other flow has per-partition series, and the topic series stay', async () => {
    const metrics = new PrometheusMetrics()
    const flows = [flow('A->B', [partition('t', 0)]), flow('A->C', [partition('t', 0)])]
    updateLagGauges(metrics, flows)
    updatePartitionLagGauges(metrics, flows, name => name === 'A->C')
    assert.deepEqual(await series(metrics, 'kmirror_partition_lag_seconds'), ['{flow="A->C",topic="t",partition="0"} 2.5'])
    assert.deepEqual(await series(metrics, 'kmirror_replication_lag_seconds'), ['{flow="A->B",topic="t"} 2.5', '{flow="A->C",topic="t"} 2.5'])
  })

  it('Given 5,000 partitions, then a scrape (gauges set and text rendered) stays well under a second (bench; its figures in the diagnostic)', async t => {
    const partitions = Array.from({ length: 5000 }, (_, i) => partition(`topic-${Math.floor(i / 50)}`, i % 50, { lagSeconds: i / 10 }))
    const flows = [flow('A->B', partitions)]
    const metrics = new PrometheusMetrics()
    const baseline = (await metrics.render()).length
    let text = ''
    const times: number[] = []
    for (let round = 0; round < 5; round++) {
      const started = performance.now()
      updatePartitionLagGauges(metrics, flows, ALL)
      text = await metrics.render()
      times.push(performance.now() - started)
    }
    const lines = text.split('\n')
    assert.equal(lines.filter(l => l.startsWith('kmirror_partition_lag_seconds{')).length, 5000)
    assert.equal(lines.filter(l => l.startsWith('kmirror_partition_lag_records{')).length, 5000)
    const best = Math.min(...times)
    t.diagnostic(`5,000 partitions: +${((text.length - baseline) / 1024).toFixed(0)} KiB of /metrics, scrape ${best.toFixed(1)} ms (best of 5; all: ${times.map(x => x.toFixed(1)).join(', ')})`)
    // A loose bound (the machine is shared and heavily loaded: 60-550 ms seen): a quadratic step would blow through it.
    assert.ok(best < 3000, `a scrape of 5,000 partitions took ${best.toFixed(1)} ms`)
  })
})
