/**
 * The offset history after a partition is copied again from an earlier offset, read by a fresh process (a restart,
 * `kmirror offsets translate`, `kmirror failover`). The first copy's runs at and after the re-copy's start are
 * deleted with it: a reloaded history kept them before, and mapped the new copy's offsets through the old copy's,
 * exact by its own account (a group resuming there would skip or re-read records on the target).
 *
 * The first copy gets a run that starts past offset 0 from records written straight into the remote topic (a gap on
 * the target). Then (1) the remote topic is deleted and kmirror copies the source again into the re-created one, or
 * (2) the source topic is deleted and created again and kmirror copies the new topic after the old one's records.
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { loadConfig } from '../../src/config/load.ts'
import { findFlow, openTranslator } from '../../src/runtime/offsets.ts'
import { decodeOffsetHistoryKey } from '../../src/formats/offset-history.ts'
import { createTopic, deleteTopics, endOffsets, listTopics, produce, readPartition, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { runKmirror } from '../helpers/drills.ts'
import { commitOffsets } from '../helpers/groups.ts'
import { startInstance, type Instance } from '../helpers/instances.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, assertTranslationSweep, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function records (topic: string, from: number, count: number, tag: string): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition: 0, key: Buffer.from(`k${from + i}`), value: Buffer.from(`${tag}:${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i)
  }))
}

interface FirstCopy {
  readonly a: string
  readonly b: string
  readonly topic: string
  readonly remote: string
  readonly group: string
  readonly config: string
  readonly instance: Instance
  /** A fresh load of the flow's offset history: source offset of `topic`-0 → target offset. */
  readonly translate: (offset: number) => Promise<{ offset: number, exact: boolean } | undefined>
}

/**
 * Source records 0-19 copied to target 0-19, 5 records written into the remote topic by hand (target 20-24), then
 * source records 20-29 copied to target 25-34: the stored history has the runs 0 -> 0 and 20 -> 25.
 */
async function firstCopy (t: TestContext, prefix: string, refreshS: number): Promise<FirstCopy> {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName(prefix)
  const remote = `${a}.${topic}`
  const group = `${topic}-group`
  let instance: Instance | undefined
  removeAliasTopicsAfter(t, ['target'], [a, b], async () => {
    instance?.process.kill('SIGKILL')
    await instance?.process.waitForExit(10_000)
  })
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', records(topic, 0, 20, 'first'))
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `${a}->${b}.groups = ${group}`, `refresh.topics.interval.seconds = ${refreshS}`,
      'offset.flush.interval.ms = 500', 'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false']
  }), '.properties', t)
  instance = await startInstance(config, 'one', t)
  await remoteEnd(remote, 20n, 'the first 20 records copied')
  await produce('target', records(remote, 0, 5, 'by-hand'))
  await produce('source', records(topic, 20, 10, 'first'))
  await remoteEnd(remote, 35n, 'records 20-29 copied after the 5 written by hand')
  const flow = findFlow(loadConfig(config), a, b)
  const translate = async (offset: number): Promise<{ offset: number, exact: boolean } | undefined> => {
    const translator = await openTranslator(flow)
    try { return translator.translate(topic, 0, offset) } finally { await translator.close() }
  }
  // The run 20 -> 25 is stored: a fresh load maps source record 25 to target 30.
  await waitFor(async () => {
    const at = await translate(25)
    return { done: at?.offset === 30 && at.exact, state: at }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'the first copy\'s runs stored' })
  return { a, b, topic, remote, group, config, instance, translate }
}

async function remoteEnd (remote: string, expected: bigint, message: string): Promise<void> {
  await waitFor(async () => {
    const e = await endOffsets('target', remote).catch(() => [])
    return { done: e.length === 1 && e[0] === expected, state: e }
  }, { timeoutMs: 60_000, message })
}

/** `kmirror offsets translate --json` for a group committed at `committed` on the source: the remote partition's target offset. */
async function translatedByCli (copy: FirstCopy, committed: number, t: TestContext): Promise<{ targetOffset: number, exact: boolean }> {
  await commitOffsets('source', copy.group, [{ topic: copy.topic, partition: 0, offset: committed }])
  const cli = await runKmirror(['offsets', 'translate', copy.config, '--from', copy.a, '--to', copy.b, '--group', copy.group, '--json'], t)
  assert.equal(cli.code, 0, cli.stderr)
  const out = JSON.parse(cli.stdout) as { partitions: { remoteTopic: string, partition: number, targetOffset: number, exact: boolean }[] }
  const row = out.partitions.find(p => p.remoteTopic === copy.remote && p.partition === 0)
  assert.ok(row !== undefined, cli.stdout)
  return { targetOffset: row.targetOffset, exact: row.exact }
}

async function stop (instance: Instance): Promise<void> {
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(15_000)).code, 0, instance.process.stderr.slice(-3000))
}

test('the remote topic deleted and copied again: a fresh process translates through the new copy, not the old copy\'s runs', { timeout: 120_000 }, async t => {
  // Given the first copy with the runs 0 -> 0 and 20 -> 25 stored
  const copy = await firstCopy(t, 'hist-remote', 1)

  // When the remote topic is deleted and kmirror copies the source again into the re-created topic (0-29 -> 0-29)
  await deleteTopics('target', [copy.remote])
  await waitFor(async () => {
    const target = await readCommitted('target', copy.remote, 0).catch(() => [])
    return { done: target.length === 30 && target.every(r => r.value?.toString().startsWith('first:') === true), state: target.length }
  }, { timeoutMs: 60_000, message: 'the source copied again into the re-created remote topic' })
  const [source, target] = await Promise.all([readCommitted('source', copy.topic, 0), readCommitted('target', copy.remote, 0)])
  assertSamePartition(source, target, `${copy.remote}-0 after the re-copy`)

  // Then a fresh load of the history maps every source offset to the same record of the new copy (the old run
  // 20 -> 25 mapped source record 25 to target 30: five records skipped, called exact)
  await waitFor(async () => {
    const at = await copy.translate(30)
    return { done: at?.offset === 30 && at.exact, state: at }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'the re-copy\'s extent stored' })
  const translator = await openTranslator(findFlow(loadConfig(copy.config), copy.a, copy.b))
  try {
    assertTranslationSweep(`${copy.topic}-0`, source, target, c => translator.translate(copy.topic, 0, c), 30)
  } finally { await translator.close() }
  // and `kmirror offsets translate` puts a group committed at 25 on target record 25
  assert.deepEqual(await translatedByCli(copy, 25, t), { targetOffset: 25, exact: true })
  // and the old run is deleted in the history topic (a tombstone of its key), not only left out at reading
  const tombstoned = (await readPartition('target', `mm2-offset-history.${copy.a}.internal`, 0, { isolation: 'read_uncommitted' })).filter(r => r.value === null).map(r => decodeOffsetHistoryKey(r.key!))
  assert.ok(tombstoned.some(k => k.topic === copy.topic && k.partition === 0 && k.upstreamOffset === 20), JSON.stringify(tombstoned))
  await stop(copy.instance)
})

test('the source topic created again: a fresh process translates the new topic\'s offsets through its own run, not the old topic\'s', { timeout: 120_000 }, async t => {
  // Given the first copy with the runs 0 -> 0 and 20 -> 25 stored (topic refresh hourly: the re-creation falls
  // between two refreshes)
  const copy = await firstCopy(t, 'hist-source', 3600)
  const old = await readCommitted('target', copy.remote, 0)

  // When the source topic is deleted and created again with 30 new records, copied to target 35-64
  await deleteTopics('source', [copy.topic])
  await waitFor(async () => !(await listTopics('source')).includes(copy.topic), { timeoutMs: 30_000, message: 'the source topic deleted' })
  await createTopic('source', copy.topic, { partitions: 1, t })
  await produce('source', records(copy.topic, 0, 30, 'second'))
  await remoteEnd(copy.remote, 65n, 'the new topic copied after the old one')
  const [source, target] = await Promise.all([readCommitted('source', copy.topic, 0), readCommitted('target', copy.remote, 0)])
  assert.deepEqual(target.slice(0, old.length), old, 'the old topic\'s records kept')
  assertSamePartition(source, target.slice(old.length), `${copy.remote}-0: the new topic whole`)

  // Then a fresh load maps every offset of the new topic to its record in the remote topic (the old run 20 -> 25
  // mapped new record 25 to target 30, a record of the old topic)
  await waitFor(async () => {
    const at = await copy.translate(30)
    return { done: at?.offset === 65 && at.exact, state: at }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'the new topic\'s extent stored' })
  const translator = await openTranslator(findFlow(loadConfig(copy.config), copy.a, copy.b))
  try {
    assertTranslationSweep(`${copy.topic}-0`, source, target, c => translator.translate(copy.topic, 0, c), 30)
  } finally { await translator.close() }
  assert.deepEqual(await translatedByCli(copy, 25, t), { targetOffset: 60, exact: true })
  await stop(copy.instance)
})
