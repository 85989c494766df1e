/**
 * Topics that appear on the source while kmirror runs are picked up by the periodic refresh: their remote
 * topic is created with the same partition count and their records are copied.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, endOffsets, partitionCount, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function records (topic: string, partitions: number, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition: i % partitions, key: Buffer.from(`k${i}`), value: Buffer.from(`${topic}:${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
}

test('a topic created while kmirror runs is created on the target and copied', { timeout: 120_000 }, async t => {
  // Given kmirror running with a one-second topic refresh and one topic to copy
  const prefix = uniqueName('newtopic')
  const first = `${prefix}-first`
  await createTopic('source', first, { partitions: 2, t })
  await produce('source', records(first, 2, 100))
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', extra: [`A->B.topics = ${prefix}-.*`, 'refresh.topics.interval.seconds = 1']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t })
  await waitFor(async () => (await endOffsets('target', `A.${first}`).catch(() => [])).reduce((a, b) => a + b, 0n) === 100n,
    { timeoutMs: 60_000, message: 'the first topic copied' })

  // When a new topic with records appears on the source
  const second = `${prefix}-second`
  await createTopic('source', second, { partitions: 3, t })
  await produce('source', records(second, 3, 300))

  // Then it is created on the target with 3 partitions and its records are copied exactly
  await waitFor(async () => (await endOffsets('target', `A.${second}`).catch(() => [])).reduce((a, b) => a + b, 0n) === 300n,
    { timeoutMs: 60_000, message: 'the new topic copied' })
  assert.equal(await partitionCount('target', `A.${second}`), 3)
  for (let p = 0; p < 3; p++) assertSamePartition(await readCommitted('source', second, p), await readCommitted('target', `A.${second}`, p), `${second}-${p}`)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)
})

test('sixty new topics at once are copied exactly as each remote topic becomes ready, with no failed round', { timeout: 180_000 }, async t => {
  // Given 60 source topics of one partition with 50 records each, none of them on the target yet
  const prefix = uniqueName('burst')
  const topics = Array.from({ length: 60 }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`)
  for (const topic of topics) await createTopic('source', topic, { partitions: 1, t })
  await produce('source', topics.flatMap(topic => records(topic, 1, 50)))

  // When kmirror starts: it creates the 60 remote topics, whose leaders refuse records until the broker has
  // loaded them (NOT_LEADER_OR_FOLLOWER for a moment)
  const config = writeTempFile(mm2Properties({ source: 'source', target: 'target', extra: [`A->B.topics = ${prefix}-.*`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t })
  await waitFor(async () => {
    const counts = await Promise.all(topics.map(async topic => (await endOffsets('target', `A.${topic}`).catch(() => [0n]))[0] ?? 0n))
    return { done: counts.every(c => c === 50n), state: { copied: counts.filter(c => c === 50n).length, stderr: kmirror.stderr.slice(-1500) } }
  }, { timeoutMs: 120_000, intervalMs: 250, message: 'all 60 topics copied' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)

  // Then every topic is an exact copy, and waiting for the new leaders never failed a replication round
  for (const topic of topics) assertSamePartition(await readCommitted('source', topic, 0), await readCommitted('target', `A.${topic}`, 0), topic)
  assert.doesNotMatch(kmirror.stderr, /replication step failed/, 'not-ready remote partitions are waited for, not failed')
})
