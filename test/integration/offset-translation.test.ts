/**
 * Exact offset translation on real clusters: for every committed offset of a sweep over topics that mix plain
 * records, committed and aborted transactions, and compaction gaps, a consumer resuming at the translated
 * offset on the target reads exactly the records the source consumer had not yet read. Then MM2's own
 * RemoteClusterUtils.translateOffsets (the real Java client library) reads kmirror's checkpoints and agrees
 * with `kmirror offsets translate`.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { loadConfig } from '../../src/config/load.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { findFlow, openTranslator } from '../../src/runtime/offsets.ts'
import { getCluster, REPO_ROOT } from '../helpers/clusters.ts'
import { createTopic, endOffsets, produce, produceTransactions, readPartition, TIMESTAMP_BASE, type TestRecord, type TransactionStep } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertTranslationSweep, readCommitted, type ReadRecord } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const run = promisify(execFile)

function rec (topic: string, partition: number, key: string, value: string, i: number): TestRecord {
  return { topic, partition, key: Buffer.from(key), value: Buffer.from(value), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) }
}

/** A transactional topic of 2 partitions: plain records, then transactions (every third aborted), then plain again. */
async function loadTransactional (topic: string): Promise<void> {
  await produce('source', Array.from({ length: 20 }, (_, i) => rec(topic, i % 2, `p${i}`, `plain-a-${i}`, i)))
  const plan: TransactionStep[] = Array.from({ length: 9 }, (_, txn) => ({
    commit: txn % 3 !== 1,
    records: Array.from({ length: 6 + txn }, (_, i) => rec(topic, i % 2, `t${txn}-${i}`, `txn${txn}-${i}`, 100 + txn * 20 + i))
  }))
  await produceTransactions('source', topic, plan)
  await produce('source', Array.from({ length: 20 }, (_, i) => rec(topic, i % 2, `q${i}`, `plain-b-${i}`, 400 + i)))
}

/** A compacted topic whose log has gaps: shared keys rewritten across rolled segments until the cleaner removes old ones. */
async function loadCompacted (topic: string): Promise<void> {
  for (let round = 0; round < 6; round++) {
    // Kafka rolls a segment by record timestamps (first record of the segment vs. the new one): rounds one
    // second apart with segment.ms = 100 each start a segment, so older rounds become cleanable.
    // Odd records have keys of their own and survive; even ones share keys across rounds and are cleaned
    // out of older segments: the gaps compaction leaves in the middle of the log.
    const key = (i: number): string => i % 2 === 1 ? `own-${round}-${i}` : `shared-${i}`
    await produce('source', Array.from({ length: 20 }, (_, i) => rec(topic, 0, key(i), `round${round}-${i}`, round * 1000 + i)))
  }
  await waitFor(async () => {
    const offsets = (await readPartition('source', topic, 0, { isolation: 'read_committed' })).map(r => Number(r.offset))
    return { done: offsets.some((o, i) => i > 0 && o !== offsets[i - 1]! + 1), state: offsets.length }
  }, { timeoutMs: 90_000, intervalMs: 1000, message: 'the log cleaner left gaps in the compacted partition' })
}

test('every committed offset translates exactly across transactions, aborts and compaction, and MM2\'s client agrees', { timeout: 300_000 }, async t => {
  // Given a transactional topic and a compacted topic with gaps on the source
  const prefix = uniqueName('xlate')
  const txnTopic = `${prefix}-txn`
  const compactTopic = `${prefix}-compact`
  await createTopic('source', txnTopic, { partitions: 2, t })
  await createTopic('source', compactTopic, {
    partitions: 1, t, configs: { 'cleanup.policy': 'compact', 'segment.ms': '100', 'min.cleanable.dirty.ratio': '0.001', 'min.compaction.lag.ms': '0', 'delete.retention.ms': '100' }
  })
  await loadTransactional(txnTopic)
  await loadCompacted(compactTopic)
  const group = `${prefix}-group`

  // When kmirror copies them, with checkpoints every second
  const file = writeTempFile(mm2Properties({
    source: 'source', target: 'target',
    extra: [`A->B.topics = ${prefix}-.*`, `A->B.groups = ${prefix}-.*`, 'emit.checkpoints.interval.seconds = 1', 'B.offset.flush.interval.ms = 300', 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', file], { t })
  const partitions: [string, number][] = [[txnTopic, 0], [txnTopic, 1], [compactTopic, 0]]
  const sources = new Map<string, ReadRecord[]>()
  for (const [topic, p] of partitions) sources.set(`${topic}-${p}`, await readCommitted('source', topic, p))
  await waitFor(async () => {
    const counts = await Promise.all(partitions.map(async ([topic, p]) => (await endOffsets('target', `A.${topic}`).catch(() => []))[p] ?? -1n))
    return { done: partitions.every(([topic, p], i) => counts[i] === BigInt(sources.get(`${topic}-${p}`)!.length)), state: counts }
  }, { timeoutMs: 120_000, message: 'everything copied' })
  // Progress (and with it the history's extents) is flushed after the copy: wait for the stored end.
  const flow = findFlow(loadConfig(file), 'A', 'B')
  const ends = new Map<string, number>()
  for (const [topic] of partitions) (await endOffsets('source', topic)).forEach((e, p) => ends.set(`${topic}-${p}`, Number(e)))
  await waitFor(async () => {
    const translator = await openTranslator(flow)
    try {
      return partitions.every(([topic, p]) => translator.translate(topic, p, ends.get(`${topic}-${p}`)!)?.exact === true)
    } finally { await translator.close() }
  }, { timeoutMs: 60_000, intervalMs: 500, message: 'the log end translates exactly' })

  // Then every committed offset of the sweep translates exactly
  const translator = await openTranslator(flow)
  let checked = 0
  try {
    for (const [topic, p] of partitions) {
      const target = await readCommitted('target', `A.${topic}`, p)
      checked += assertTranslationSweep(`${topic}-${p}`, sources.get(`${topic}-${p}`)!, target, c => translator.translate(topic, p, c), ends.get(`${topic}-${p}`)!)
    }
  } finally { await translator.close() }
  console.log(`offset translation: ${checked} committed offsets translated exactly`)

  // And MM2's RemoteClusterUtils reads kmirror's checkpoints with the same answer as kmirror offsets translate
  const sourceAdmin = new AdminClient({ 'bootstrap.servers': getCluster('source').bootstrap }, 'test', { label: 'source' })
  t.after(() => sourceAdmin.close())
  await sourceAdmin.groups.alterCommittedOffsets(group, [
    { topic: txnTopic, partition: 0, offset: 17 }, { topic: txnTopic, partition: 1, offset: Math.floor(ends.get(`${txnTopic}-1`)! / 2) },
    { topic: compactTopic, partition: 0, offset: Number(sources.get(`${compactTopic}-0`)![3]!.offset) - 1 }
  ])
  const kmirrorAnswer = async (): Promise<Map<string, number>> => {
    const cli = spawnKmirror(['offsets', 'translate', file, '--from', 'A', '--to', 'B', '--group', group, '--json'], { t })
    assert.equal((await cli.waitForExit(60_000)).code, 0, cli.stderr)
    const out = JSON.parse(cli.stdout) as { partitions: { remoteTopic: string, partition: number, targetOffset: number, exact: boolean }[] }
    assert.ok(out.partitions.every(p => p.exact))
    return new Map(out.partitions.map(p => [`${p.remoteTopic}-${p.partition}`, p.targetOffset]))
  }
  const javaAnswer = async (): Promise<Map<string, number>> => {
    const { stdout } = await run('java', ['-cp', join(REPO_ROOT, 'kafka', 'lib', '*'), join(REPO_ROOT, 'test', 'java', 'TranslateOffsets.java'), getCluster('target').bootstrap, 'A', group], { timeout: 60_000 })
    return new Map(stdout.trim().split('\n').filter(l => l !== '').map(l => JSON.parse(l) as { topic: string, partition: number, offset: number }).map(o => [`${o.topic}-${o.partition}`, o.offset]))
  }
  const expected = await kmirrorAnswer()
  assert.equal(expected.size, 3)
  await waitFor(async () => {
    const java = await javaAnswer()
    return { done: [...expected].every(([k, v]) => java.get(k) === v) && java.size === expected.size, state: { java: [...java], kmirror: [...expected] } }
  }, { timeoutMs: 60_000, intervalMs: 1000, message: 'RemoteClusterUtils.translateOffsets returns kmirror\'s translated offsets' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)
})
