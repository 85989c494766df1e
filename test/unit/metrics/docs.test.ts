import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { MetricDefinitions } from '../../../src/metrics/definitions.ts'
import { renderMetricsDocs } from '../../../src/metrics/docs.ts'

test('docs/metrics.md is generated from the current metric definitions', () => {
  const file = join(import.meta.dirname, '..', '..', '..', 'docs', 'metrics.md')
  assert.equal(readFileSync(file, 'utf8'), renderMetricsDocs(), 'run node scripts/gen-metrics-docs.ts')
})

test('every metric is named kmirror_*, counters end in _total and labels are bounded', () => {
  for (const d of Object.values(MetricDefinitions)) {
    assert.match(d.name, /^kmirror_[a-z_]+$/)
    assert.equal(d.name.endsWith('_total'), d.type === 'counter', d.name)
    // error: a Kafka protocol error name, a closed list; group: the consumer groups the flow checkpoints (`groups`).
    // Never `job` or `instance`: Prometheus sets those on every scraped series (and renames ours to exported_job).
    // partition: only the per-partition lag (kmirror_partition_*), which metrics.partition.level.enabled turns off.
    // broker: `host:port` of a broker of the configured clusters, a list as long as the clusters' brokers.
    // request: a Kafka API name (Produce, Fetch, ...), a closed list.
    const partitionLevel = d.name.startsWith('kmirror_partition_')
    for (const label of d.labels) assert.ok(['flow', 'topic', 'job_name', 'error', 'group', 'broker', 'request'].includes(label) || (partitionLevel && label === 'partition'), `${d.name}: unbounded label ${label}`)
  }
})

test('histograms declare increasing buckets and their names say their unit', () => {
  for (const d of Object.values(MetricDefinitions)) {
    if (d.type !== 'histogram') continue
    const buckets: readonly number[] = 'buckets' in d ? d.buckets : []
    assert.ok(buckets.length > 0, d.name)
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]! > buckets[i - 1]!, `${d.name}: buckets increase`)
    assert.match(d.name, /_(ms|seconds|bytes)$/)
  }
})
