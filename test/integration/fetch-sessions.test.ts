/**
 * Incremental fetch sessions (KIP-227) on a real broker: once caught up, kmirror's fetches are incremental; the
 * source broker killed with kill -9 and restarted loses the session, kmirror falls back to a full fetch, opens a
 * new session, and copies every record exactly once, in order.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ensureClusters, killCluster, startCluster } from '../helpers/clusters.ts'
import { createTopic, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PARTITIONS = 3

function batch (topic: string, from: number, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k
    return { topic, partition: i % PARTITIONS, key: Buffer.from(`k${i}`), value: Buffer.from(`session-${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) }
  })
}

/** The value of the metric line NAME{...LABEL...}, 0 when absent. */
function metric (text: string, name: string, label: string): number {
  const line = text.split('\n').find(l => l.startsWith(`${name}{`) && l.includes(label))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

test('fetches are incremental once caught up, and a source broker restart falls back to a full fetch with no record lost or doubled', { timeout: 150_000 }, async t => {
  // Given a copy from `third` (the source) to `source`, with its first 60 records copied
  await ensureClusters(['third', 'source'])
  const topic = uniqueName('fetch-session')
  const remote = `A.${topic}`
  await createTopic('third', topic, { partitions: PARTITIONS, t })
  await produce('third', batch(topic, 0, 60))
  const timeouts = ['A', 'B'].flatMap(c => ['consumer', 'producer', 'admin'].map(role => `${c}.${role}.request.timeout.ms = 3000`))
  const config = writeTempFile(mm2Properties({ source: 'third', target: 'source', extra: [`A->B.topics = ${topic}`, 'A.consumer.fetch.max.wait.ms = 100', ...timeouts] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--progress-interval', '0', '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const base = `http://127.0.0.1:${(await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 30_000))[1]}`
  const scrape = async (): Promise<{ full: number, incremental: number, resets: number }> => {
    const text = await (await fetch(`${base}/metrics`)).text()
    return {
      full: metric(text, 'kmirror_fetch_full_requests_total', 'flow="A->B"'),
      incremental: metric(text, 'kmirror_fetch_incremental_requests_total', 'flow="A->B"'),
      resets: metric(text, 'kmirror_fetch_session_resets_total', 'flow="A->B"')
    }
  }
  const copied = async (): Promise<number> =>
    (await Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => (await readCommitted('source', remote, p).catch(() => [])).length))).reduce((a, b) => a + b, 0)
  await waitFor(async () => ({ done: await copied() === 60, state: await copied() }), { timeoutMs: 60_000, intervalMs: 250, message: 'the first 60 records copied' })

  // Then the fetch rounds since are incremental (a full request opened their session)
  await waitFor(async () => { const m = await scrape(); return { done: m.incremental >= 5, state: m } }, { timeoutMs: 20_000, message: 'incremental fetches' })
  // (resets are not asserted 0 here: a request that timed out on a loaded machine also ends a session)
  const before = await scrape()

  // When the source broker is killed with kill -9 and restarted, more records arriving once it is back
  t.after(() => startCluster('third'))
  await killCluster('third')
  await waitFor(async () => { const m = await scrape(); return { done: m.resets > before.resets, state: m } }, { timeoutMs: 30_000, intervalMs: 200, message: 'the session ended with the broker' })
  await startCluster('third')
  await produce('third', batch(topic, 60, 60))

  // Then kmirror, never restarted, opened a new session with a full fetch, went on incrementally, and copied
  // every record exactly once, in order
  await waitFor(async () => ({ done: await copied() >= 120, state: await copied() }), { timeoutMs: 90_000, intervalMs: 500, message: 'all 120 records copied after the restart' })
  const resumed = await scrape()
  await waitFor(async () => { const m = await scrape(); return { done: m.incremental >= resumed.incremental + 3, state: m } }, { timeoutMs: 20_000, message: 'incremental fetches in the new session' })
  const after = await scrape()
  assert.ok(after.full > before.full, `a full fetch opened a new session (${before.full} -> ${after.full})`)
  assert.equal(kmirror.exitStatus, null, 'kmirror kept running')
  kmirror.kill('SIGTERM')
  assert.deepEqual(await kmirror.waitForExit(15_000), { code: 0, signal: null })
  for (let p = 0; p < PARTITIONS; p++) {
    assertSamePartition(await readCommitted('third', topic, p), await readCommitted('source', remote, p), `${topic}-${p}`)
  }
})
