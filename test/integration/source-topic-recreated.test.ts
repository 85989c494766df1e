/**
 * A source topic deleted and created again under the same name while `kmirror run` copies it (between two topic
 * refreshes). The new topic's offsets start again at 0: a position kept from the old topic would skip the new
 * topic's first records (silently, as long as the new topic is longer) or stop the copy. kmirror sees the new topic
 * id in its fetch answers and copies every partition from the new topic's log start into the same remote topic,
 * with an error line and a count; after a restart it goes on from the new topic's progress, nothing copied twice.
 * A topic created again only after kmirror found it deleted (two refreshes) comes back as a new topic: its stored
 * positions (the deleted topic's) are forgotten before its partitions are handed out, so it too is copied whole.
 * A topic deleted and created again while kmirror is stopped is told apart at the restart by the source topic id the
 * offset history names for the copy that stored its positions: copied whole too.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test, type TestContext } from 'node:test'
import { createTopic, deleteTopics, endOffsets, listTopics, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { runKmirror } from '../helpers/drills.ts'
import { startInstance, type Instance } from '../helpers/instances.ts'
import type { FlowReplicationStatus } from '../../src/runtime/status.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted, type ReadRecord } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function records (topic: string, partition: number, from: number, count: number, tag: string): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition, key: Buffer.from(`k${from + i}`), value: Buffer.from(`${tag}:${partition}:${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i)
  }))
}

interface CopiedTopic {
  readonly a: string
  readonly b: string
  readonly topic: string
  readonly remote: string
  readonly config: string
  /** The running instance; `restart` replaces it. */
  readonly instance: () => Instance
  readonly restart: () => Promise<Instance>
  /** The remote partitions once the old topic was copied. */
  readonly old: ReadRecord[][]
}

/**
 * A topic of 2 partitions (20 and 10 records) on `source` copied by `kmirror run` (topic refresh every REFRESH_S
 * seconds); resolves once both remote partitions hold them. The instance is killed before the topics go.
 */
async function copiedTopic (t: TestContext, prefix: string, refreshS: number): Promise<CopiedTopic> {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName(prefix)
  const remote = `${a}.${topic}`
  let instance: Instance | undefined
  removeAliasTopicsAfter(t, ['target'], [a, b], async () => {
    instance?.process.kill('SIGKILL')
    await instance?.process.waitForExit(10_000)
  })
  await createTopic('source', topic, { partitions: 2, t })
  await produce('source', [...records(topic, 0, 0, 20, 'old'), ...records(topic, 1, 0, 10, 'old')])
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `refresh.topics.interval.seconds = ${refreshS}`, 'offset.flush.interval.ms = 500', 'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false']
  }), '.properties', t)
  instance = await startInstance(config, 'one', t)
  await remoteEnds(remote, [20n, 10n], 30_000, 'the old topic copied')
  const old = await Promise.all([0, 1].map(p => readCommitted('target', remote, p)))
  return {
    a, b, topic, remote, config, old,
    instance: () => instance!,
    restart: async () => {
      instance!.process.kill('SIGTERM')
      assert.equal((await instance!.process.waitForExit(15_000)).code, 0, instance!.process.stderr.slice(-3000))
      instance = await startInstance(config, 'again', t)
      return instance
    }
  }
}

async function remoteEnds (remote: string, expected: readonly bigint[], timeoutMs: number, message: string): Promise<void> {
  await waitFor(async () => {
    const e = await endOffsets('target', remote).catch(() => [])
    return { done: e.length === expected.length && e.every((o, p) => o === expected[p]), state: e }
  }, { timeoutMs, message })
}

/** The topic deleted on the source, then created again with 5 and 25 records (partition 1 longer than the old one). */
async function createAgain (topic: string, t: TestContext, deleted: () => Promise<void>): Promise<void> {
  await deleteTopics('source', [topic])
  await deleted()
  await createTopic('source', topic, { partitions: 2, t })
  await produce('source', [...records(topic, 0, 0, 5, 'new'), ...records(topic, 1, 0, 25, 'new')])
}

/** Each remote partition holds the old topic's records, then exactly the new topic's, in order. */
async function assertOldThenNew ({ topic, remote, old }: CopiedTopic, what: string): Promise<void> {
  for (const p of [0, 1]) {
    const [source, target] = await Promise.all([readCommitted('source', topic, p), readCommitted('target', remote, p)])
    assert.deepEqual(target.slice(0, old[p]!.length), old[p], `${remote}-${p}: the old topic's records kept`)
    assertSamePartition(source, target.slice(old[p]!.length), `${topic}-${p}: ${what}`)
  }
}

test('a source topic deleted and created again while kmirror run copies it: every partition is copied from the new topic\'s log start into the same remote topic (none skipped), an error line each, and after a restart nothing is copied twice', { timeout: 150_000 }, async t => {
  // Given a topic copied by kmirror run, whose topic refresh runs once an hour
  const copied = await copiedTopic(t, 'src-recreated', 3600)
  const { a, b, topic, remote } = copied

  // When the topic is deleted and created again with 5 and 25 new records (partition 1 longer than the old one)
  await createAgain(topic, t, async () => {
    await waitFor(async () => !(await listTopics('source')).includes(topic), { timeoutMs: 30_000, message: 'the source topic deleted' })
  })

  // Then each remote partition holds the old topic's records, then every record of the new topic, in order
  await remoteEnds(remote, [25n, 35n], 60_000, 'the new topic copied from its start')
  await assertOldThenNew(copied, 'the new topic whole')
  // and an error line per partition
  for (const p of [0, 1]) {
    assert.match(copied.instance().process.stderr, new RegExp(`"level":"error"[^\\n]*"msg":"source topic ${topic} was deleted and created again on cluster ${a} \\(a new topic id\\): copying ${topic}-${p} from offset 0, the new topic's log start, into ${remote} on cluster ${b}`))
  }

  // When kmirror is stopped once the new topic's progress is stored, restarted, and one more record arrives on each
  const again = await copied.restart()
  await produce('source', [...records(topic, 0, 5, 1, 'new'), ...records(topic, 1, 25, 1, 'new')])
  // Then only those are copied: nothing of the new topic twice, nothing skipped
  await remoteEnds(remote, [26n, 36n], 30_000, 'the last records copied')
  await assertOldThenNew(copied, 'after the restart')
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})

test('a source topic created again after kmirror found it deleted: it comes back as a new topic, its old stored positions forgotten, and is copied whole', { timeout: 150_000 }, async t => {
  // Given a topic copied by kmirror run (topic refresh every second), its progress stored
  const copied = await copiedTopic(t, 'src-returned', 1)
  const { a, topic, remote, config } = copied
  const instance = copied.instance()
  const stored = async (): Promise<(number | null)[]> => {
    const flows = (JSON.parse((await runKmirror(['status', config, '--json'], t)).stdout) as { flows: FlowReplicationStatus[] }).flows
    return [0, 1].map(p => flows[0]?.partitions.find(q => q.topic === topic && q.partition === p)?.lastReplicatedOffset ?? null)
  }
  await waitFor(async () => { const s = await stored(); return { done: s[0] === 19 && s[1] === 9, state: s } }, { timeoutMs: 30_000, intervalMs: 500, message: 'the old topic\'s progress stored' })

  // When the topic is deleted, kmirror finds it deleted, and only then is it created again with 5 and 25 records
  await createAgain(topic, t, async () => {
    await instance.process.waitForOutput(new RegExp(`"msg":"source topic ${topic} was deleted; its remote topic ${remote} is kept`), 30_000)
  })

  // Then it is back as a new topic, and each remote partition holds the old records, then the whole new topic
  await instance.process.waitForOutput(new RegExp(`"msg":"source topic ${topic} was deleted on cluster ${a} and is back: a new topic, copied from its log start into ${remote}`), 30_000)
  await remoteEnds(remote, [25n, 35n], 60_000, 'the new topic copied whole')
  await assertOldThenNew(copied, 'the new topic whole')
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(15_000)).code, 0, instance.process.stderr.slice(-3000))
})

test('a source topic kmirror saw come back empty, filled while kmirror is stopped: restarted with auto.offset.reset = latest, the new topic is still copied whole (a forgotten position starts at the log start, not the log end)', { timeout: 150_000 }, async t => {
  // Given a topic copied by kmirror run (topic refresh every second), deleted, and created again empty: kmirror
  // sees it back and forgets its stored positions
  const copied = await copiedTopic(t, 'src-forgotten', 1)
  const { a, topic, remote, config } = copied
  const first = copied.instance()
  await deleteTopics('source', [topic])
  await first.process.waitForOutput(new RegExp(`"msg":"source topic ${topic} was deleted; its remote topic ${remote} is kept`), 30_000)
  await createTopic('source', topic, { partitions: 2, t })
  await first.process.waitForOutput(new RegExp(`"msg":"source topic ${topic} was deleted on cluster ${a} and is back: a new topic, copied from its log start into ${remote}`), 30_000)
  // When kmirror is stopped, the new topic gets its records, and kmirror starts again with
  // consumer.auto.offset.reset = latest (start partitions without stored progress at the log end)
  first.process.kill('SIGTERM')
  assert.equal((await first.process.waitForExit(15_000)).code, 0, first.process.stderr.slice(-3000))
  await produce('source', [...records(topic, 0, 0, 5, 'new'), ...records(topic, 1, 0, 25, 'new')])
  const latest = writeTempFile(`${readFileSync(config, 'utf8')}\n${a}.consumer.auto.offset.reset = latest\n`, '.properties', t)
  const again = await startInstance(latest, 'latest', t)

  // Then each remote partition holds the old topic's records, then every record of the new topic: the forgotten
  // positions are not "no progress" (which latest would start at the log end, skipping all 30)
  await remoteEnds(remote, [25n, 35n], 60_000, 'the new topic copied from its log start')
  await assertOldThenNew(copied, 'the new topic whole after a restart with auto.offset.reset = latest')
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})

test('a source topic deleted and created again while kmirror is stopped: at the restart, the offset history tells its stored positions belong to the old topic, and the new topic is copied whole', { timeout: 150_000 }, async t => {
  // Given a topic copied by kmirror run, which is then stopped (its progress and history stored)
  const copied = await copiedTopic(t, 'src-recreated-stopped', 3600)
  const { a, b, topic, remote, config } = copied
  const first = copied.instance()
  first.process.kill('SIGTERM')
  assert.equal((await first.process.waitForExit(15_000)).code, 0, first.process.stderr.slice(-3000))

  // When the topic is deleted and created again with 5 and 25 records (partition 1 longer than the old one: resumed
  // at the old topic's position 10, its first 10 records would be skipped), and kmirror starts again
  await createAgain(topic, t, async () => {
    await waitFor(async () => !(await listTopics('source')).includes(topic), { timeoutMs: 30_000, message: 'the source topic deleted' })
  })
  const again = await startInstance(config, 'after-recreation', t)

  // Then each remote partition holds the old topic's records, then every record of the new topic, in order
  await remoteEnds(remote, [25n, 35n], 60_000, 'the new topic copied from its start')
  await assertOldThenNew(copied, 'the new topic whole after a restart')
  // and partition 1 (resumed inside the new topic) is told with the re-creation's error line
  assert.match(again.process.stderr, new RegExp(`"level":"error"[^\\n]*"msg":"source topic ${topic} was deleted and created again on cluster ${a} \\(a new topic id\\): copying ${topic}-1 from offset 0, the new topic's log start, into ${remote} on cluster ${b} \\(it was at 10 of the old topic`))
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})
