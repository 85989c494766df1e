/**
 * Exact copy: every target partition equals its source partition record by record, in order, for records
 * of every shape (null/empty keys and values, repeated header keys, explicit timestamps) in batches of
 * every codec. Offset syncs translate every record's source offset to its target offset.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, endOffsets, produce, type Compression, type TestRecord, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, assertSyncsTranslateExactly, readCommitted, readOffsetSyncs } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PARTITIONS = 4
const TOPICS = 3
const TOTAL = 50_000
const CODECS: Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']

/** Record i of a topic: a deterministic mix of every shape the copy must keep. */
function makeRecord (topic: string, i: number): TestRecord {
  const shape = i % 7
  const key = shape === 0 ? null : shape === 1 ? Buffer.alloc(0) : Buffer.from(`key-${i % 500}`)
  const value = shape === 2 ? null : shape === 3 ? Buffer.alloc(0) : Buffer.from(JSON.stringify({ i, topic, note: 'x'.repeat(i % 40) }))
  const headers: [Buffer, Buffer | null][] = shape === 4
    ? [[Buffer.from('h'), Buffer.from('1')], [Buffer.from('other'), null], [Buffer.from('h'), Buffer.from('2')]]
    : shape === 5 ? [[Buffer.from('trace'), Buffer.from(`t-${i}`)]] : []
  return { topic, partition: i % PARTITIONS, key, value, headers, timestamp: TIMESTAMP_BASE + BigInt(i) * 7n }
}

test('every source partition is copied record by record, in order, across codecs and record shapes', { timeout: 300_000 }, async t => {
  // Given three topics of four partitions holding 50,000 records written in batches of every codec
  const prefix = uniqueName('exact')
  const topics = Array.from({ length: TOPICS }, (_, i) => `${prefix}-t${i}`)
  for (const topic of topics) await createTopic('source', topic, { partitions: PARTITIONS, t })
  const perTopic = Math.ceil(TOTAL / TOPICS)
  for (const topic of topics) {
    const records = Array.from({ length: perTopic }, (_, i) => makeRecord(topic, i))
    const slice = Math.ceil(records.length / CODECS.length)
    for (const [c, compression] of CODECS.entries()) {
      await produce('source', records.slice(c * slice, (c + 1) * slice), { compression })
    }
  }

  // When kmirror runs A->B for these topics
  const config = writeTempFile(mm2Properties({ source: 'source', target: 'target', extra: [`A->B.topics = ${prefix}-.*`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--progress-interval', '5', '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const port = (await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 30_000))[1]
  await waitFor(async () => {
    const counts = await Promise.all(topics.map(async topic => (await endOffsets('target', `A.${topic}`).catch(() => [0n])).reduce((a, b) => a + b, 0n)))
    return { done: counts.every(c => c === BigInt(perTopic)), state: { counts, stderr: kmirror.stderr.slice(-2000) } }
  }, { timeoutMs: 240_000, intervalMs: 500, message: 'all records on the target' })

  // Then batches were forwarded as they are (not only decoded and re-encoded): exactness below covers both paths
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const forwarded = metrics.split('\n').filter(l => l.startsWith('kmirror_batches_forwarded_total{') && l.includes(`topic="${prefix}-`))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0)
  assert.ok(forwarded > 0, `no batch was forwarded as it is:\n${metrics.slice(0, 2000)}`)

  // And a graceful stop exits 0 within 10 seconds
  kmirror.kill('SIGTERM')
  const exit = await kmirror.waitForExit(10_000)
  assert.equal(exit.code, 0, `kmirror exited with ${JSON.stringify(exit)}:\n${kmirror.stderr.slice(-3000)}`)

  // And every partition is an exact copy, and offset syncs translate every record exactly
  for (const topic of topics) {
    const syncs = await readOffsetSyncs('source', 'mm2-offset-syncs.B.internal', topic)
    for (let p = 0; p < PARTITIONS; p++) {
      const source = await readCommitted('source', topic, p)
      const target = await readCommitted('target', `A.${topic}`, p)
      assertSamePartition(source, target, `${topic}-${p}`)
      assertSyncsTranslateExactly(syncs, source, target, p, `${topic}-${p}`)
    }
  }
})
