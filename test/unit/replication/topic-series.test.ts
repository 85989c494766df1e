/**
 * When the series of a topic and of a partition go (topic-series.ts): gauges as they leave, counters and
 * histograms COUNTED_SERIES_KEPT_MS after the topic's last partition left, unless it is copied again meanwhile.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MetricDefinitions, type MetricKey } from '../../../src/metrics/definitions.ts'
import { PrometheusMetrics } from '../../../src/metrics/registry.ts'
import { COUNTED_SERIES_KEPT_MS, PARTITION_GAUGES, TOPIC_COUNTS, TOPIC_GAUGES, TopicSeries } from '../../../src/replication/topic-series.ts'

const KEPT = COUNTED_SERIES_KEPT_MS
const NOT_COPIED = { hasTopic: () => false }
const COPIED = { hasTopic: () => true }

/** The metric names of the series of TOPIC in the rendered text (PARTITION: of that partition only), sorted. */
async function namesOf (metrics: PrometheusMetrics, topic: string, partition?: number): Promise<string[]> {
  const lines = (await metrics.render()).split('\n').filter(l => !l.startsWith('#') && l.includes(`topic="${topic}"`) &&
    (partition === undefined || l.includes(`partition="${partition}"`)))
  return [...new Set(lines.map(l => l.slice(0, l.indexOf('{')).replace(/_(bucket|sum|count)$/, '')))].sort()
}

const COUNTED = ['kmirror_record_age_ms', 'kmirror_records_copied_total', 'kmirror_records_lost_to_retention_total', 'kmirror_replication_latency_ms']
const TOPIC_LAG = ['kmirror_replication_lag_records']
const PARTITION_LAG = ['kmirror_partition_lag_seconds']

/** Topics t (partitions 0 and 1) and u (partition 0) of flow A->B, with counters, histograms and gauges. */
function copying (): PrometheusMetrics {
  const metrics = new PrometheusMetrics()
  for (const [topic, partitions] of [['t', 2], ['u', 1]] as const) {
    const labels = { flow: 'A->B', topic }
    metrics.inc('recordsCopied', labels, 5)
    metrics.inc('recordsLostToRetention', labels, 1)
    metrics.observe('replicationLatency', labels, 20)
    metrics.observe('recordAge', labels, 10)
    metrics.set('replicationLag', labels, 4)
    for (let p = 0; p < partitions; p++) metrics.set('partitionLagSeconds', { ...labels, partition: String(p) }, 1)
  }
  return metrics
}

describe('TopicSeries', () => {
  it('covers every metric labelled with a topic: gauges of a topic or partition, and counters and histograms of a topic', () => {
    const withTopic = (Object.keys(MetricDefinitions) as MetricKey[]).filter(k => (MetricDefinitions[k].labels as readonly string[]).includes('topic'))
    assert.deepEqual([...TOPIC_GAUGES, ...TOPIC_COUNTS, ...PARTITION_GAUGES].sort(), withTopic.sort())
    assert.deepEqual([...PARTITION_GAUGES].sort(), ['partitionLagRecords', 'partitionLagSeconds'])
    for (const key of ['recordsCopied', 'bytesCopied', 'recordsLostToRetention', 'replicationLatency', 'recordAge'] as const) assert.ok(TOPIC_COUNTS.includes(key), key)
    for (const key of ['replicationLag', 'replicationLagSeconds', 'lagUnknownPartitions'] as const) assert.ok(TOPIC_GAUGES.includes(key), key)
  })

  it('Given a topic with two partitions, when one leaves, then only that partition\'s gauges go; when the last leaves, its topic gauges go at once and its counters and histograms once they were kept their time', async () => {
    const metrics = copying()
    const series = new TopicSeries(metrics, 'A->B')
    const u = await namesOf(metrics, 'u')

    series.partitionLeft('t', 0, false, 1000)
    assert.deepEqual(await namesOf(metrics, 't', 0), [])
    assert.deepEqual(await namesOf(metrics, 't'), [...COUNTED, ...PARTITION_LAG, ...TOPIC_LAG].sort())

    series.partitionLeft('t', 1, true, 1000)
    assert.deepEqual(await namesOf(metrics, 't'), COUNTED)
    series.sweep(1000 + KEPT - 1, NOT_COPIED)
    assert.deepEqual(await namesOf(metrics, 't'), COUNTED)
    series.sweep(1000 + KEPT, NOT_COPIED)
    assert.deepEqual(await namesOf(metrics, 't'), [])

    // And the other topic keeps every series throughout
    assert.deepEqual(await namesOf(metrics, 'u'), u)
  })

  it('Given a topic copied again before its time, then its counters count on; left again, they are kept their time from then; copied once more, they come back from 0', async () => {
    const metrics = copying()
    const series = new TopicSeries(metrics, 'A->B')
    series.partitionLeft('u', 0, true, 0)
    series.sweep(KEPT, COPIED)
    metrics.inc('recordsCopied', { flow: 'A->B', topic: 'u' }, 2)
    assert.match(await metrics.render(), /^kmirror_records_copied_total\{flow="A->B",topic="u"\} 7$/m)

    series.partitionLeft('u', 0, true, KEPT + 10)
    series.sweep(2 * KEPT + 9, NOT_COPIED)
    assert.deepEqual(await namesOf(metrics, 'u'), COUNTED)
    series.sweep(2 * KEPT + 10, NOT_COPIED)
    assert.deepEqual(await namesOf(metrics, 'u'), [])

    metrics.inc('recordsCopied', { flow: 'A->B', topic: 'u' }, 3)
    assert.match(await metrics.render(), /^kmirror_records_copied_total\{flow="A->B",topic="u"\} 3$/m)
  })

  it('Given a stopped data path, then every series of the partitions it held and of the topics that left go at once', async () => {
    const metrics = copying()
    const series = new TopicSeries(metrics, 'A->B')
    series.partitionLeft('u', 0, true, 0)
    series.removeAll([{ topic: 't', partition: 0 }, { topic: 't', partition: 1 }])
    assert.deepEqual(await namesOf(metrics, 't'), [])
    assert.deepEqual(await namesOf(metrics, 'u'), [])
  })
})
