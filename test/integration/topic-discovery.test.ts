/**
 * Topic discovery on real clusters with a one-second refresh: new topics arrive with their configs and records,
 * grown topics grow on the target, deleted topics are reported (and their remote topics deleted only when asked),
 * and a remote topic with more partitions than its source is replicated into the source's partitions, as MM2 does.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  createTopic, deleteTopics, endOffsets, listTopics, partitionCount, produce, TIMESTAMP_BASE, topicConfig, withAdmin, type Cleanup, type TestRecord
} from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function records (topic: string, partitions: readonly number[], count: number, tag = ''): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition: partitions[i % partitions.length]!, key: Buffer.from(`k${i}`), value: Buffer.from(`${topic}${tag}:${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
}

async function total (cluster: 'source' | 'target', topic: string): Promise<bigint> {
  return (await endOffsets(cluster, topic).catch(() => [])).reduce((a, b) => a + b, 0n)
}

async function waitForCopy (remote: string, count: bigint, message: string): Promise<void> {
  await waitFor(async () => ({ done: await total('target', remote) === count, state: await total('target', remote) }), { timeoutMs: 60_000, message })
}

async function assertExactCopy (topic: string, remote: string): Promise<void> {
  const partitions = await partitionCount('source', topic)
  assert.equal(await partitionCount('target', remote), partitions)
  for (let p = 0; p < partitions; p++) assertSamePartition(await readCommitted('source', topic, p), await readCommitted('target', remote, p), `${topic}-${p}`)
}

/**
 * kmirror on source -> target for the topics under PREFIX, refreshing every second. Heartbeat topics left on the
 * shared clusters by other tests are not replicated, so only this test's topics are touched.
 */
function startKmirror (prefix: string, t: Cleanup, ...extra: string[]): KmirrorProcess {
  const config = writeTempFile(mm2Properties({
    source: 'source',
    target: 'target',
    extra: [`A->B.topics = ${prefix}-.*`, 'heartbeats.replication.enabled = false', 'refresh.topics.interval.seconds = 1', 'sync.topic.configs.interval.seconds = 1', ...extra]
  }), '.properties', t)
  return spawnKmirror(['run', config], { t })
}

async function stop (kmirror: KmirrorProcess): Promise<void> {
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))
}

/** Remote topics kmirror creates are removed at the end too. */
function removeRemotesAfter (t: Cleanup, ...remotes: string[]): void {
  t.after(() => deleteTopics('target', remotes))
}

test('a topic created on the source while kmirror runs is on the target with its configs, and its records are copied', { timeout: 120_000 }, async t => {
  // Given kmirror running with nothing to copy yet
  const prefix = uniqueName('tdisc-new')
  const topic = `${prefix}-orders`
  removeRemotesAfter(t, `A.${topic}`)
  const kmirror = startKmirror(prefix, t)
  await kmirror.waitForOutput(/flow started/, 30_000)

  // When a topic with configs and records appears on the source
  const configs = { 'retention.ms': '3600000', 'cleanup.policy': 'compact', 'max.message.bytes': '2000000', 'min.insync.replicas': '1' }
  await createTopic('source', topic, { partitions: 3, configs, t })
  await produce('source', records(topic, [0, 1, 2], 300))

  // Then its remote topic has the same partitions and configs (min.insync.replicas is excluded by default), and every record
  await waitForCopy(`A.${topic}`, 300n, 'the new topic copied')
  await assertExactCopy(topic, `A.${topic}`)
  const remote = await topicConfig('target', `A.${topic}`, { overridesOnly: true })
  assert.deepEqual(remote, { 'retention.ms': '3600000', 'cleanup.policy': 'compact', 'max.message.bytes': '2000000' })
  await stop(kmirror)
})

test('partitions added to a source topic are added to its remote topic and their records arrive', { timeout: 120_000 }, async t => {
  // Given a 2-partition topic being copied
  const prefix = uniqueName('tdisc-grow')
  const topic = `${prefix}-events`
  removeRemotesAfter(t, `A.${topic}`)
  await createTopic('source', topic, { partitions: 2, t })
  await produce('source', records(topic, [0, 1], 100))
  const kmirror = startKmirror(prefix, t)
  await waitForCopy(`A.${topic}`, 100n, 'the first partitions copied')

  // When the source topic grows to 5 partitions and the new ones get records
  await withAdmin('source', admin => admin.createPartitions({ topics: [{ name: topic, count: 5 }] }))
  await waitFor(async () => (await endOffsets('source', topic)).filter(o => o >= 0n).length === 5, { timeoutMs: 30_000, message: 'the new partitions served' })
  await produce('source', records(topic, [2, 3, 4], 90, '-new'))

  // Then the remote topic has 5 partitions, each an exact copy
  await waitForCopy(`A.${topic}`, 190n, 'the new partitions copied')
  await assertExactCopy(topic, `A.${topic}`)
  await stop(kmirror)
})

test('a deleted source topic is reported, its remote topic kept, and the other topics are still copied', { timeout: 120_000 }, async t => {
  // Given two topics being copied
  const prefix = uniqueName('tdisc-del')
  const gone = `${prefix}-gone`
  const kept = `${prefix}-kept`
  removeRemotesAfter(t, `A.${gone}`, `A.${kept}`)
  await createTopic('source', gone, { partitions: 2, t })
  await createTopic('source', kept, { partitions: 1, t })
  await produce('source', [...records(gone, [0, 1], 20), ...records(kept, [0], 10)])
  const kmirror = startKmirror(prefix, t)
  await waitForCopy(`A.${gone}`, 20n, 'the first topic copied')
  await waitForCopy(`A.${kept}`, 10n, 'the second topic copied')

  // When one is deleted on the source
  await deleteTopics('source', [gone])

  // Then kmirror logs it at warn naming the topic, keeps the remote topic and its records, and copies the other
  const warning = await kmirror.waitForOutput(new RegExp(`"level":"warn"[^\\n]*source topic ${gone} was deleted; its remote topic A\\.${gone} is kept`), 30_000)
  assert.ok(warning)
  await produce('source', records(kept, [0], 10, '-after'))
  await waitForCopy(`A.${kept}`, 20n, 'the other topic still copied')
  assert.equal(await total('target', `A.${gone}`), 20n)
  await stop(kmirror)
})

test('with sync.topic.deletions.enabled = true, the remote topic of a deleted source topic is deleted', { timeout: 120_000 }, async t => {
  const prefix = uniqueName('tdisc-syncdel')
  const gone = `${prefix}-gone`
  removeRemotesAfter(t, `A.${gone}`)
  await createTopic('source', gone, { partitions: 1, t })
  await produce('source', records(gone, [0], 10))
  const kmirror = startKmirror(prefix, t, 'sync.topic.deletions.enabled = true')
  await waitForCopy(`A.${gone}`, 10n, 'the topic copied')

  await deleteTopics('source', [gone])

  await waitFor(async () => !(await listTopics('target')).includes(`A.${gone}`), { timeoutMs: 30_000, message: 'the remote topic deleted' })
  await kmirror.waitForOutput(new RegExp(`deleted its remote topic A\\.${gone}`), 10_000)
  await stop(kmirror)
})

test('a remote topic with more partitions than its source is replicated into the source\'s partitions, with a warning', { timeout: 120_000 }, async t => {
  // Given a source topic with 2 partitions whose remote topic already exists with 4, and a second, normal topic
  const prefix = uniqueName('tdisc-clash')
  const clash = `${prefix}-clash`
  const fine = `${prefix}-fine`
  removeRemotesAfter(t, `A.${fine}`)
  await createTopic('source', clash, { partitions: 2, t })
  await createTopic('target', `A.${clash}`, { partitions: 4, t })
  await createTopic('source', fine, { partitions: 2, t })
  await produce('source', [...records(clash, [0, 1], 20), ...records(fine, [0, 1], 40)])

  // When kmirror runs
  const kmirror = startKmirror(prefix, t)

  // Then both topics are copied exactly, each record to the partition of its number, partitions 2-3 stay empty, and
  // the clash is logged at warn with both counts
  await waitForCopy(`A.${fine}`, 40n, 'the normal topic copied')
  await assertExactCopy(fine, `A.${fine}`)
  await waitForCopy(`A.${clash}`, 20n, 'the topic with more remote partitions copied')
  for (let p = 0; p < 2; p++) assertSamePartition(await readCommitted('source', clash, p), await readCommitted('target', `A.${clash}`, p), `${clash}-${p}`)
  assert.deepEqual((await endOffsets('target', `A.${clash}`)).slice(2), [0n, 0n])
  const warning = new RegExp(`"level":"warn"[^\\n]*remote topic A\\.${clash} on B has 4 partitions but source topic ${clash} on A has 2: partitions 0-1 are replicated`)
  await kmirror.waitForOutput(warning, 10_000)
  assert.equal(await partitionCount('target', `A.${clash}`), 4)
  await stop(kmirror)
})
