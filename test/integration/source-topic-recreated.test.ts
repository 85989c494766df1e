/**
 * A source topic deleted and created again under the same name while `kmirror run` copies it (between two topic
 * refreshes). The new topic's offsets start again at 0: a position kept from the old topic would skip the new
 * topic's first records (silently, as long as the new topic is longer) or stop the copy. kmirror sees the new topic
 * id in its fetch answers and copies every partition from the new topic's log start into the same remote topic,
 * with an error line and a count; after a restart it goes on from the new topic's progress, nothing copied twice.
 * A topic created again only after kmirror found it deleted (two refreshes) comes back as a new topic: its stored
 * positions (the deleted topic's) are forgotten before its partitions are handed out, so it too is copied whole.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, deleteTopics, endOffsets, listTopics, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { runKmirror } from '../helpers/drills.ts'
import { startInstance } from '../helpers/instances.ts'
import type { FlowReplicationStatus } from '../../src/runtime/status.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function records (topic: string, partition: number, from: number, count: number, tag: string): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition, key: Buffer.from(`k${from + i}`), value: Buffer.from(`${tag}:${partition}:${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i)
  }))
}

test('a source topic deleted and created again while kmirror run copies it: every partition is copied from the new topic\'s log start into the same remote topic (none skipped), an error line each, and after a restart nothing is copied twice', { timeout: 150_000 }, async t => {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('src-recreated')
  const remote = `${a}.${topic}`
  let instance: Awaited<ReturnType<typeof startInstance>> | undefined
  removeAliasTopicsAfter(t, ['target'], [a, b], async () => {
    instance?.process.kill('SIGKILL')
    await instance?.process.waitForExit(10_000)
  })
  // Given a topic of 2 partitions (20 and 10 records) copied by kmirror run, whose topic refresh runs once an hour
  await createTopic('source', topic, { partitions: 2, t })
  await produce('source', [...records(topic, 0, 0, 20, 'old'), ...records(topic, 1, 0, 10, 'old')])
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, 'refresh.topics.interval.seconds = 3600', 'offset.flush.interval.ms = 1000', 'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false']
  }), '.properties', t)
  instance = await startInstance(config, 'one', t)
  const ends = async (): Promise<bigint[]> => await endOffsets('target', remote).catch(() => [])
  await waitFor(async () => { const e = await ends(); return { done: e[0] === 20n && e[1] === 10n, state: e } }, { timeoutMs: 30_000, message: 'the old topic copied' })
  const old = await Promise.all([0, 1].map(p => readCommitted('target', remote, p)))

  // When the topic is deleted and created again with 5 and 25 new records (partition 1 longer than the old one)
  await deleteTopics('source', [topic])
  await waitFor(async () => !(await listTopics('source')).includes(topic), { timeoutMs: 30_000, message: 'the source topic deleted' })
  await createTopic('source', topic, { partitions: 2, t })
  await produce('source', [...records(topic, 0, 0, 5, 'new'), ...records(topic, 1, 0, 25, 'new')])

  // Then each remote partition holds the old topic's records, then every record of the new topic, in order
  await waitFor(async () => { const e = await ends(); return { done: e[0] === 25n && e[1] === 35n, state: e } }, { timeoutMs: 60_000, message: 'the new topic copied from its start' })
  for (const p of [0, 1]) {
    const [source, target] = await Promise.all([readCommitted('source', topic, p), readCommitted('target', remote, p)])
    assert.deepEqual(target.slice(0, old[p]!.length), old[p], `${remote}-${p}: the old topic's records kept`)
    assertSamePartition(source, target.slice(old[p]!.length), `${topic}-${p}: the new topic whole`)
  }
  // and an error line per partition
  for (const p of [0, 1]) {
    assert.match(instance.process.stderr, new RegExp(`"level":"error"[^\\n]*"msg":"source topic ${topic} was deleted and created again on cluster ${a} \\(a new topic id\\): copying ${topic}-${p} from offset 0, the new topic's log start, into ${remote} on cluster ${b}`))
  }

  // When kmirror is stopped once the new topic's progress is stored, restarted, and one more record arrives on each
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(15_000)).code, 0, instance.process.stderr.slice(-3000))
  instance = await startInstance(config, 'two', t)
  await produce('source', [...records(topic, 0, 5, 1, 'new'), ...records(topic, 1, 25, 1, 'new')])
  // Then only those are copied: nothing of the new topic twice, nothing skipped
  await waitFor(async () => { const e = await ends(); return { done: e[0] === 26n && e[1] === 36n, state: e } }, { timeoutMs: 30_000, message: 'the last records copied' })
  for (const p of [0, 1]) {
    const [source, target] = await Promise.all([readCommitted('source', topic, p), readCommitted('target', remote, p)])
    assertSamePartition(source, target.slice(old[p]!.length), `${topic}-${p} after the restart`)
  }
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(15_000)).code, 0, instance.process.stderr.slice(-3000))
})

test('a source topic created again after kmirror found it deleted: it comes back as a new topic, its old stored positions forgotten, and is copied whole', { timeout: 150_000 }, async t => {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('src-returned')
  const remote = `${a}.${topic}`
  let instance: Awaited<ReturnType<typeof startInstance>> | undefined
  removeAliasTopicsAfter(t, ['target'], [a, b], async () => {
    instance?.process.kill('SIGKILL')
    await instance?.process.waitForExit(10_000)
  })
  // Given a topic of 2 partitions (20 and 10 records) copied by kmirror run, its progress stored
  await createTopic('source', topic, { partitions: 2, t })
  await produce('source', [...records(topic, 0, 0, 20, 'old'), ...records(topic, 1, 0, 10, 'old')])
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, 'refresh.topics.interval.seconds = 1', 'offset.flush.interval.ms = 500', 'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false']
  }), '.properties', t)
  instance = await startInstance(config, 'one', t)
  const stored = async (): Promise<(number | null)[]> => {
    const flows = (JSON.parse((await runKmirror(['status', config, '--json'], t)).stdout) as { flows: FlowReplicationStatus[] }).flows
    return [0, 1].map(p => flows[0]?.partitions.find(q => q.topic === topic && q.partition === p)?.lastReplicatedOffset ?? null)
  }
  await waitFor(async () => { const s = await stored(); return { done: s[0] === 19 && s[1] === 9, state: s } }, { timeoutMs: 30_000, intervalMs: 500, message: 'the old topic copied and its progress stored' })
  const old = await Promise.all([0, 1].map(p => readCommitted('target', remote, p)))

  // When the topic is deleted, kmirror finds it deleted, and only then is it created again with 5 and 25 records
  await deleteTopics('source', [topic])
  await instance.process.waitForOutput(new RegExp(`"msg":"source topic ${topic} was deleted; its remote topic ${remote} is kept`), 30_000)
  await createTopic('source', topic, { partitions: 2, t })
  await produce('source', [...records(topic, 0, 0, 5, 'new'), ...records(topic, 1, 0, 25, 'new')])

  // Then it is back as a new topic, and each remote partition holds the old records, then the whole new topic
  await instance.process.waitForOutput(new RegExp(`"msg":"source topic ${topic} was deleted on cluster ${a} and is back: a new topic, copied from its log start into ${remote}`), 30_000)
  await waitFor(async () => { const e = await endOffsets('target', remote); return { done: e[0] === 25n && e[1] === 35n, state: e } }, { timeoutMs: 60_000, message: 'the new topic copied whole' })
  for (const p of [0, 1]) {
    const [source, target] = await Promise.all([readCommitted('source', topic, p), readCommitted('target', remote, p)])
    assert.deepEqual(target.slice(0, old[p]!.length), old[p], `${remote}-${p}: the old topic's records kept`)
    assertSamePartition(source, target.slice(old[p]!.length), `${topic}-${p}: the new topic whole`)
  }
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(15_000)).code, 0, instance.process.stderr.slice(-3000))
})
