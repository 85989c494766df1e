/**
 * The Prometheus registry's removal of series (`Metrics.remove`): exactly the series named, whatever the metric's
 * type, and a series removed starts afresh at its next update.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PrometheusMetrics } from '../../../src/metrics/registry.ts'

/** The sample lines of the rendered text that name TOPIC. */
async function linesOf (metrics: PrometheusMetrics, topic: string): Promise<string[]> {
  return (await metrics.render()).split('\n').filter(l => !l.startsWith('#') && l.includes(`topic="${topic}"`))
}

function filled (): PrometheusMetrics {
  const metrics = new PrometheusMetrics()
  for (const topic of ['t', 'u']) {
    metrics.inc('recordsCopied', { flow: 'A->B', topic }, 7)
    metrics.observe('replicationLatency', { flow: 'A->B', topic }, 12)
    metrics.set('replicationLag', { flow: 'A->B', topic }, 3)
    metrics.set('partitionLagRecords', { flow: 'A->B', topic, partition: '0' }, 3)
  }
  return metrics
}

describe('PrometheusMetrics.remove', () => {
  it('Given two topics with counters, histograms and gauges, when one topic\'s series are removed, then /metrics has none of them and all of the other topic\'s', async () => {
    const metrics = filled()
    const before = await linesOf(metrics, 'u')
    metrics.remove(['recordsCopied', 'replicationLatency', 'replicationLag'], { flow: 'A->B', topic: 't' })
    metrics.remove(['partitionLagRecords'], { flow: 'A->B', topic: 't', partition: '0' })
    assert.deepEqual(await linesOf(metrics, 't'), [])
    assert.deepEqual(await linesOf(metrics, 'u'), before)
    assert.ok(before.includes('kmirror_records_copied_total{flow="A->B",topic="u"} 7'))
    assert.ok(before.includes('kmirror_partition_lag_records{flow="A->B",topic="u",partition="0"} 3'))
  })

  it('Given labels that do not name every label of a metric, then nothing of that metric is removed', async () => {
    const metrics = filled()
    metrics.remove(['partitionLagRecords'], { flow: 'A->B', topic: 't' })
    metrics.remove(['recordsCopied'], { flow: 'A->B' })
    assert.deepEqual((await linesOf(metrics, 't')).filter(l => l.startsWith('kmirror_partition_lag_records') || l.startsWith('kmirror_records_copied_total')), [
      'kmirror_records_copied_total{flow="A->B",topic="t"} 7', 'kmirror_partition_lag_records{flow="A->B",topic="t",partition="0"} 3'
    ])
  })

  it('Given a counter removed, when it is incremented again, then it starts from 0', async () => {
    const metrics = filled()
    metrics.remove(['recordsCopied'], { flow: 'A->B', topic: 't' })
    metrics.inc('recordsCopied', { flow: 'A->B', topic: 't' }, 2)
    assert.deepEqual((await linesOf(metrics, 't')).filter(l => l.startsWith('kmirror_records_copied_total')), ['kmirror_records_copied_total{flow="A->B",topic="t"} 2'])
  })
})
