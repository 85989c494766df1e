/**
 * At-least-once across crashes: kill -9 kmirror three times during a copy and restart it each time;
 * every source record ends up on the target, in order per partition. Repeats are counted and printed.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, endOffsets, produce, type TestRecord, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { assertAllPresentInOrder, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PARTITIONS = 4
const TOTAL = 200_000

async function targetCount (topic: string): Promise<bigint> {
  return (await endOffsets('target', topic).catch(() => [0n])).reduce((a, b) => a + b, 0n)
}

test('kill -9 three times during a 200,000-record copy loses nothing', { timeout: 600_000 }, async t => {
  // Given 200,000 records on the source
  const topic = uniqueName('crash')
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const records: TestRecord[] = Array.from({ length: TOTAL }, (_, i) => ({
    topic, partition: i % PARTITIONS, key: Buffer.from(`k${i % 1000}`), value: Buffer.from(`record-${i}-${'v'.repeat(80)}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
  // In batches of about 8 KiB, read one batch per partition per fetch: batches are forwarded as they are and a
  // copy takes thousands of rounds (seconds), so the kills land in the middle of it.
  await produce('source', records, { compression: 'lz4', maxBatchBytes: 8 * 1024 })
  // A short flush interval makes kmirror store progress several times between kills.
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', extra: [`A->B.topics = ${topic}`, 'B.offset.flush.interval.ms = 200', 'A.consumer.max.partition.fetch.bytes = 1']
  }), '.properties', t)

  // When kmirror is killed with SIGKILL at three points of the copy and restarted each time
  let kmirror: KmirrorProcess = spawnKmirror(['run', config], { t })
  const kills: string[] = []
  for (const fraction of [0.15, 0.4, 0.65]) {
    await waitFor(async () => ({ done: await targetCount(`A.${topic}`) >= BigInt(Math.floor(TOTAL * fraction)), state: kmirror.stderr.slice(-1500) }),
      { timeoutMs: 180_000, intervalMs: 50, message: `${fraction * 100}% copied` })
    kmirror.kill('SIGKILL')
    await kmirror.waitForExit(10_000)
    const copied = await targetCount(`A.${topic}`)
    assert.ok(copied < BigInt(TOTAL), `the kill came before the end of the copy (${copied} of ${TOTAL})`)
    kills.push(`${copied}`)
    kmirror = spawnKmirror(['run', config], { t })
  }
  await waitFor(async () => {
    const sources = await Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => {
      const target = await readCommitted('target', `A.${topic}`, p)
      return new Set(target.map(r => r.value?.toString())).size
    }))
    return { done: sources.reduce((a, b) => a + b, 0) === TOTAL, state: sources }
  }, { timeoutMs: 240_000, intervalMs: 1000, message: 'every distinct record on the target' })
  kmirror.kill('SIGTERM')
  await kmirror.waitForExit(10_000)

  // Then every record is there, in order, and the repeats are only re-sends
  let duplicates = 0
  for (let p = 0; p < PARTITIONS; p++) {
    const source = await readCommitted('source', topic, p)
    const target = await readCommitted('target', `A.${topic}`, p)
    duplicates += assertAllPresentInOrder(source, target, `${topic}-${p}`)
  }
  t.diagnostic(`crash safety: ${TOTAL} records, kills at ${kills.join(', ')} on the target, ${duplicates} copied twice, 0 missing`)
  console.log(`crash safety: ${TOTAL} records, kills at ${kills.join(', ')} on the target, ${duplicates} records copied twice, 0 missing`)
})
