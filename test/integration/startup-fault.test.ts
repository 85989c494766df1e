/**
 * A fault during start-up: the target broker (`third`) is down when kmirror starts and comes back seconds later.
 * kmirror logs each wait (cluster, broker, cause, attempt, next delay), starts once the broker answers, and copies
 * every record exactly.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { getCluster, killCluster, startCluster } from '../helpers/clusters.ts'
import { createTopic, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PARTITIONS = 2
const RECORDS = 200

test('with the target broker down at start and back seconds later, kmirror logs its waits, starts, and copies every record exactly', { timeout: 180_000 }, async t => {
  // Given records on the source and the target broker killed
  const topic = uniqueName('startup-fault')
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const records: TestRecord[] = Array.from({ length: RECORDS }, (_, i) => ({
    topic, partition: i % PARTITIONS, key: Buffer.from(`k${i}`), value: Buffer.from(`startup-fault-${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
  await produce('source', records)
  const target = getCluster('third')
  await killCluster('third')
  t.after(() => startCluster('third'))
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'third', extra: [`A->B.topics = ${topic}`, 'start.retry.timeout.ms = 120000', 'B.admin.socket.connection.setup.timeout.ms = 2000']
  }), '.properties', t)

  // When kmirror starts while it is down
  const kmirror = spawnKmirror(['run', config, '--progress-interval', '0'], { t })

  // Then it waits, logging each wait with the cluster, the broker and the cause
  await waitFor(() => ({ done: (kmirror.stderr.match(/start failed on a transient fault/g) ?? []).length >= 2, state: kmirror.stderr.slice(-1500) }),
    { timeoutMs: 60_000, intervalMs: 200, message: 'two waits logged' })
  const waits = kmirror.stderr.split('\n').filter(l => l.includes('start failed on a transient fault')).map(l => JSON.parse(l) as { attempt: number, nextDelayMs: number, err: { message: string } })
  assert.deepEqual(waits.slice(0, 2).map(w => w.attempt), [1, 2])
  assert.ok(waits[1]!.nextDelayMs > waits[0]!.nextDelayMs, `back-off grows: ${waits.map(w => w.nextDelayMs).join(', ')}`)
  assert.match(waits[0]!.err.message, new RegExp(`cluster B \\(${target.bootstrap}\\)`))
  assert.match(waits[0]!.err.message, /ECONNREFUSED|Connection closed|refused/)
  assert.equal(kmirror.exitStatus, null, 'still running')

  // When the broker comes back
  await startCluster('third')

  // Then kmirror starts and copies every record exactly
  await kmirror.waitForOutput(/"msg":"kmirror started"/, 90_000)
  assert.match(kmirror.stderr, /"msg":"started after waiting for a transient fault to clear"/)
  await waitFor(async () => {
    const counts = await Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => (await readCommitted('third', `A.${topic}`, p).catch(() => [])).length))
    return { done: counts.reduce((a, b) => a + b, 0) === RECORDS, state: counts }
  }, { timeoutMs: 60_000, intervalMs: 500, message: 'every record on the target' })
  kmirror.kill('SIGTERM')
  assert.deepEqual(await kmirror.waitForExit(15_000), { code: 0, signal: null })
  for (let p = 0; p < PARTITIONS; p++) {
    assertSamePartition(await readCommitted('source', topic, p), await readCommitted('third', `A.${topic}`, p), `${topic}-${p}`)
  }
})
