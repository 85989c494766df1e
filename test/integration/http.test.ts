/**
 * The HTTP endpoint of `kmirror run --http-port`: Prometheus metrics with exact counts, health, and a
 * JSON status with per-partition positions and lag.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

test('serves exact copy counts on /metrics, 200 on /healthz and positions on /status', { timeout: 120_000 }, async t => {
  // Given 300 records on a topic of 3 partitions and kmirror running with an HTTP endpoint on a free port
  const topic = uniqueName('http')
  await createTopic('source', topic, { partitions: 3, t })
  const records: TestRecord[] = Array.from({ length: 300 }, (_, i) => ({
    topic, partition: i % 3, key: null, value: Buffer.from(`value-${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
  await produce('source', records)
  const config = writeTempFile(mm2Properties({ source: 'source', target: 'target', extra: [`A->B.topics = ${topic}`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const match = await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 30_000)
  const base = `http://127.0.0.1:${match[1]}`
  await waitFor(async () => (await endOffsets('target', `A.${topic}`).catch(() => [])).reduce((a, b) => a + b, 0n) === 300n,
    { timeoutMs: 60_000, message: 'records copied' })

  // When the endpoint is scraped, Then the counters are exact and the lag is 0
  const sumFor = (text: string, name: string): number => text.split('\n')
    .filter(l => l.startsWith(`${name}{`) && l.includes(`topic="${topic}"`))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0)
  await waitFor(async () => {
    const text = await (await fetch(`${base}/metrics`)).text()
    return { done: sumFor(text, 'kmirror_records_copied_total') === 300 && sumFor(text, 'kmirror_replication_lag_records') === 0, state: text.slice(0, 500) }
  }, { timeoutMs: 20_000, message: 'metrics show 300 records copied and no lag' })
  const health = await fetch(`${base}/healthz`)
  assert.equal(health.status, 200)
  const status = await (await fetch(`${base}/status`)).json() as { healthy: boolean, flows: { name: string, partitions: { topic: string, position: number, copiedRecords: number }[] }[] }
  assert.equal(status.healthy, true)
  const mine = status.flows.find(f => f.name === 'A->B')!.partitions.filter(p => p.topic === topic)
  assert.deepEqual(mine.map(p => p.position).sort(), [100, 100, 100])
  assert.equal(mine.reduce((n, p) => n + p.copiedRecords, 0), 300)
  // MM2's offset syncs (written beside the data path in at-least-once mode) all written, none failing or thinned
  await waitFor(async () => {
    const flow = (await (await fetch(`${base}/status`)).json() as { flows: { name: string, offsetSyncs?: unknown }[] }).flows.find(f => f.name === 'A->B')
    return { done: JSON.stringify(flow?.offsetSyncs) === JSON.stringify({ pending: 0, thinned: 0, failure: null }), state: JSON.stringify(flow?.offsetSyncs) }
  }, { timeoutMs: 10_000, message: 'offset syncs all written' })
  const text = await (await fetch(`${base}/metrics`)).text()
  assert.match(text, /^kmirror_offset_syncs_pending\{flow="A->B"\} 0$/m)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)
})
