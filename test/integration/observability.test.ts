/**
 * What an operator's monitoring sees of a real copy: MM2's replication-latency-ms and record-age-ms as Prometheus
 * histograms, lag in seconds per topic and per partition, the ready and up gauges, the checkpoint age of a group, and text log lines.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { commitOffsets } from '../helpers/groups.ts'
import { createTopic, endOffsets, openTransaction, produce, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

/** The value of the one series of NAME whose labels include every one of LABELS; undefined when absent. */
function sample (text: string, name: string, ...labels: string[]): number | undefined {
  const line = text.split('\n').find(l => l.startsWith(`${name}{`) && labels.every(label => l.includes(label)))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

test('Given records written two minutes ago, when kmirror copies them, then latency, record age, lag in seconds (per topic and per partition), up and checkpoint age are exported and logs are text lines', { timeout: 120_000 }, async t => {
  // Given 40 records on 2 partitions, all timestamped 120 s ago, and a group that committed offset 5 on partition 0
  const topic = uniqueName('observe')
  const group = uniqueName('observe-group')
  await createTopic('source', topic, { partitions: 2, t })
  const written = Date.now() - 120_000
  const records: TestRecord[] = Array.from({ length: 40 }, (_, i) => ({
    topic, partition: i % 2, key: null, value: Buffer.from(`value-${i}`), headers: [], timestamp: BigInt(written)
  }))
  await produce('source', records)
  await commitOffsets('source', group, [{ topic, partition: 0, offset: 5 }])
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target',
    extra: [`A->B.topics = ${topic}`, `A->B.groups = ${group}`, 'A->B.emit.checkpoints.interval.seconds = 1']
  }), '.properties', t)
  // When kmirror runs with text logs and an HTTP endpoint
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1', '--log-format', 'text'], { t })
  const match = await kmirror.waitForOutput(/HTTP endpoint[^\n]* port=(\d+)/, 30_000)
  const base = `http://127.0.0.1:${match[1]}`
  await waitFor(async () => (await endOffsets('target', `A.${topic}`).catch(() => [])).reduce((a, b) => a + b, 0n) === 40n,
    { timeoutMs: 60_000, message: 'records copied' })

  // Then /metrics shows every batch's latency and age between 120 s and 120 s + the test's time, no lag, up and ready
  const labels = [`flow="A->B"`, `topic="${topic}"`]
  let text = ''
  await waitFor(async () => {
    text = await (await fetch(`${base}/metrics`)).text()
    // (the lag is unknown until a round after the copy has read the high watermark)
    return {
      done: sample(text, 'kmirror_records_copied_total', ...labels) === 40 && sample(text, 'kmirror_replication_lag_seconds', ...labels) === 0 &&
        sample(text, 'kmirror_checkpoint_age_seconds', `group="${group}"`) !== undefined,
      state: text.split('\n').filter(l => l.includes(topic) || l.includes(group)).join('\n')
    }
  }, { timeoutMs: 30_000, message: '40 records counted, no lag and the group checkpointed' })
  const elapsed = Date.now() - written
  for (const name of ['kmirror_replication_latency_ms', 'kmirror_record_age_ms']) {
    const count = sample(text, `${name}_count`, ...labels)!
    const sum = sample(text, `${name}_sum`, ...labels)!
    assert.ok(count >= 2 && count <= 40, `${name}: one observation per batch (${count})`)
    assert.equal(sample(text, `${name}_bucket`, ...labels, 'le="60000"'), 0, `${name}: none under 60 s`)
    assert.equal(sample(text, `${name}_bucket`, ...labels, 'le="300000"'), count, `${name}: all under 300 s`)
    assert.ok(sum / count >= 120_000 && sum / count <= elapsed, `${name}: mean ${sum / count} ms within [120000, ${elapsed}]`)
  }
  assert.equal(sample(text, 'kmirror_replication_lag_seconds', ...labels), 0)
  assert.equal(sample(text, 'kmirror_replication_lag_records', ...labels), 0)
  // (and per partition: both caught up)
  const partitionLag = (metric: string, partition: number): number | undefined => sample(text, metric, ...labels, `partition="${partition}"`)
  for (const partition of [0, 1]) {
    assert.equal(partitionLag('kmirror_partition_lag_seconds', partition), 0, `partition ${partition}: no lag in seconds`)
    assert.equal(partitionLag('kmirror_partition_lag_records', partition), 0, `partition ${partition}: no lag in records`)
  }
  assert.match(text, /^kmirror_ready 1$/m)
  assert.equal(sample(text, 'kmirror_flow_up', 'flow="A->B"'), 1)
  assert.equal(sample(text, 'kmirror_owned_partitions', 'flow="A->B"'), 2, 'this instance, alone, owns both partitions of the flow')
  const age = sample(text, 'kmirror_checkpoint_age_seconds', 'flow="A->B"', `group="${group}"`)!
  assert.ok(age >= 0 && age < 10, `checkpoint age ${age}`)

  // and /status shows lagSeconds 0 per partition and when the group was checkpointed
  const status = await (await fetch(`${base}/status`)).json() as { flows: { name: string, lagSeconds: number | null, partitions: { topic: string, lagSeconds: number | null }[], checkpoints?: { group: string, at: string }[] }[] }
  const flow = status.flows.find(f => f.name === 'A->B')!
  assert.deepEqual(flow.partitions.filter(p => p.topic === topic).map(p => p.lagSeconds), [0, 0])
  const checkpointed = flow.checkpoints?.find(c => c.group === group)
  assert.ok(checkpointed !== undefined && Math.abs(Date.parse(checkpointed.at) - Date.now()) < 10_000, JSON.stringify(flow.checkpoints))

  // When 5 records arrive on partition 0 in a transaction left open (read_committed: kmirror cannot copy past it)
  const transaction = await openTransaction('source', Array.from({ length: 5 }, (_, i) => ({
    topic, partition: 0, key: null, value: Buffer.from(`open-${i}`), headers: [], timestamp: BigInt(Date.now())
  })), t)
  // Then partition 0 shows a lag of 5 records and its age since the last record copied (120 s ago); partition 1 none
  await waitFor(async () => {
    text = await (await fetch(`${base}/metrics`)).text()
    return { done: partitionLag('kmirror_partition_lag_records', 0) === 5, state: text.split('\n').filter(l => l.startsWith('kmirror_partition_lag') && l.includes(topic)).join('\n') }
  }, { timeoutMs: 30_000, message: 'a lag of 5 records on partition 0' })
  assert.ok(partitionLag('kmirror_partition_lag_seconds', 0)! >= 120, `partition 0: lag ${partitionLag('kmirror_partition_lag_seconds', 0)} s`)
  assert.equal(partitionLag('kmirror_partition_lag_records', 1), 0)
  assert.equal(partitionLag('kmirror_partition_lag_seconds', 1), 0)
  // When the transaction commits, Then kmirror copies the 5 records and partition 0 is back to no lag
  await transaction.commit()
  await waitFor(async () => {
    text = await (await fetch(`${base}/metrics`)).text()
    return { done: partitionLag('kmirror_partition_lag_records', 0) === 0 && partitionLag('kmirror_partition_lag_seconds', 0) === 0, state: text.split('\n').filter(l => l.startsWith('kmirror_partition_lag') && l.includes(topic)).join('\n') }
  }, { timeoutMs: 30_000, message: 'no lag on partition 0 once the transaction committed' })
  assert.equal((await endOffsets('target', `A.${topic}`)).reduce((a, b) => a + b, 0n), 45n)

  // and the log is one readable line per entry: ISO time, level name, message
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)
  const lines = kmirror.stderr.split('\n').filter(l => l !== '')
  assert.ok(lines.every(l => !l.startsWith('{')), 'no JSON line')
  assert.ok(lines.some(l => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z INFO {2}\[A->B\] flow started/.test(l)), lines.slice(0, 10).join('\n'))
})
