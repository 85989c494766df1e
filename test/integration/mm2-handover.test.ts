/**
 * Hand-over between the real Apache MirrorMaker 2 and kmirror, both ways, on one flow: each resumes from the
 * positions the other stored in `mm2-offsets.A.internal`, and nothing is copied again.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeSourceOffsetKey, decodeSourceOffsetValue } from '../../src/formats/connect-offset.ts'
import { runKafkaLocal } from '../helpers/clusters.ts'
import { createTopic, endOffsets, partitionCount, produce, readPartition, type TestRecord, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertAllPresentInOrder, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PARTITIONS = 3
const OFFSETS_TOPIC = 'mm2-offsets.A.internal'

function records (topic: string, tag: string, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition: i % PARTITIONS, key: Buffer.from(`${tag}-${i}`), value: Buffer.from(`${tag}:${i}`), headers: [[Buffer.from('tag'), Buffer.from(tag)]], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
}

/** The newest stored Connect source offset per partition of TOPIC, as MM2's worker would read it back. */
async function storedOffsets (topic: string): Promise<Map<number, number>> {
  const out = new Map<number, number>()
  const partitions = await partitionCount('target', OFFSETS_TOPIC)
  for (let p = 0; p < partitions; p++) {
    for (const r of await readPartition('target', OFFSETS_TOPIC, p, { isolation: 'read_committed' })) {
      const key = r.key === null ? null : decodeSourceOffsetKey(r.key)
      if (key === null || key.cluster !== 'A' || key.topic !== topic || key.connectorName !== 'MirrorSourceConnector') continue
      const value = decodeSourceOffsetValue(r.value)
      if (value === null) out.delete(key.partition)
      else out.set(key.partition, value)
    }
  }
  return out
}

async function waitForStoredEnd (topic: string, what: string): Promise<void> {
  const ends = await endOffsets('source', topic)
  await waitFor(async () => {
    const stored = await storedOffsets(topic)
    return { done: ends.every((end, p) => stored.get(p) === Number(end) - 1), state: { stored: [...stored], ends } }
  }, { timeoutMs: 120_000, intervalMs: 500, message: `${what} stored the last offset of every partition` })
}

test('MirrorMaker 2 hands a flow over to kmirror and back without copying anything twice', { timeout: 480_000 }, async t => {
  // Given a topic whose first part the real MirrorMaker 2 copied and recorded
  const topic = uniqueName('handover')
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target',
    extra: [`A->B.topics = ${topic}`, 'emit.heartbeats.enabled = false', 'sync.topic.acls.enabled = false', 'B.offset.flush.interval.ms = 1000']
  }), '.properties', t)
  await produce('source', records(topic, 'part1', 3000))
  const mm2 = uniqueName('mm2')
  t.after(() => runKafkaLocal(['mm2-down', mm2]).catch(() => undefined))
  await runKafkaLocal(['mm2', mm2, config, '--clusters', 'B'])
  await waitForStoredEnd(topic, 'MirrorMaker 2')
  await runKafkaLocal(['mm2-down', mm2])

  // When more records arrive and kmirror takes over with the same mm2.properties
  await produce('source', records(topic, 'part2', 3000))
  const kmirror = spawnKmirror(['run', config], { t })
  await waitForStoredEnd(topic, 'kmirror')
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-2000))

  // And MirrorMaker 2 takes the flow back for a third part
  await produce('source', records(topic, 'part3', 3000))
  await runKafkaLocal(['mm2', mm2, config, '--clusters', 'B'])
  await waitForStoredEnd(topic, 'MirrorMaker 2 again')
  await runKafkaLocal(['mm2-down', mm2])

  // Then the target holds every record once, in order: each side resumed where the other stopped
  let duplicates = 0
  for (let p = 0; p < PARTITIONS; p++) {
    const source = await readCommitted('source', topic, p)
    const target = await readCommitted('target', `A.${topic}`, p)
    duplicates += assertAllPresentInOrder(source, target, `${topic}-${p}`)
  }
  console.log(`hand-over MM2 -> kmirror -> MM2: 9000 records, ${duplicates} copied twice`)
  assert.equal(duplicates, 0)
})
