/**
 * A consumer group lagging more than 100,000 records behind on each partition translates exactly after two
 * kmirror restarts (issue 4): the group committed early on a topic mixing plain records with committed and
 * aborted transactions; kmirror is killed (SIGKILL) and stopped (SIGTERM) in the middle of the copy and restarted
 * each time; afterwards `kmirror offsets translate` names the target offset where the group's next record sits,
 * and the target record just before it is the source record just before the commit.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Admin } from '@platformatic/kafka'
import { loadConfig } from '../../src/config/load.ts'
import { findFlow, openTranslator } from '../../src/runtime/offsets.ts'
import { commitOffsets } from '../helpers/groups.ts'
import { clientOptions, createTopic, endOffsets, produce, produceTransactions, readPartition, TIMESTAMP_BASE, type Cleanup, type TestRecord, type TransactionStep } from '../helpers/kafka.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { assertAllPresentInOrder, readCommitted, recordSignature, type ReadRecord } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PARTITIONS = 2
const BULK = 210_000

let sequence = 0
function rec (topic: string, partition: number, label: string): TestRecord {
  const i = sequence++
  return { topic, partition, key: Buffer.from(`k${i}`), value: Buffer.from(`${label}-${i}-${'v'.repeat(40)}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) }
}

function transactions (topic: string, outcomes: readonly boolean[]): TransactionStep[] {
  return outcomes.map((commit, txn) => ({ commit, records: Array.from({ length: 8 }, (_, i) => rec(topic, i % PARTITIONS, `txn${txn}-${commit ? 'c' : 'a'}`)) }))
}

/** Plain records, a few transactions, 210,000 plain records, a few more transactions, plain records again. */
async function loadTopic (topic: string): Promise<void> {
  await produce('source', Array.from({ length: 2_000 }, (_, i) => rec(topic, i % PARTITIONS, 'head')))
  await produceTransactions('source', topic, transactions(topic, [true, false, true]))
  await produce('source', Array.from({ length: BULK }, (_, i) => rec(topic, i % PARTITIONS, 'bulk')))
  await produceTransactions('source', topic, transactions(topic, [false, true, false]))
  await produce('source', Array.from({ length: 2_000 }, (_, i) => rec(topic, i % PARTITIONS, 'tail')))
}

/**
 * Slows kmirror's replication consumer down with a broker quota on its client id (unique to this test's alias),
 * so that the restarts certainly happen in the middle of the copy.
 */
async function throttleFetches (clientId: string, bytesPerSecond: number, t: Cleanup): Promise<void> {
  const entities = [{ entityType: 'client-id' as const, entityName: clientId }]
  const alter = async (ops: Parameters<Admin['alterClientQuotas']>[0]['entries'][number]['ops']): Promise<void> => {
    const admin = new Admin(clientOptions('source', 'kmirror-test-quota'))
    try {
      const [result] = await admin.alterClientQuotas({ entries: [{ entities, ops }] })
      assert.equal(result?.errorCode, 0, result?.errorMessage ?? 'quota refused')
    } finally {
      await admin.close()
    }
  }
  await alter([{ key: 'consumer_byte_rate', value: bytesPerSecond, remove: false }])
  t.after(() => alter([{ key: 'consumer_byte_rate', remove: true }]))
}

async function targetCount (topic: string): Promise<number> {
  return (await endOffsets('target', topic).catch(() => [0n])).reduce((a, b) => a + Number(b), 0)
}

test('a group more than 100,000 records behind translates exactly after two kmirror restarts during the copy', { timeout: 600_000 }, async t => {
  // Given 214,000+ records (over 100,000 per partition) with committed and aborted transactions, and a group
  // committed early: on partition 0 inside the first aborted transaction, on partition 1 on plain records before it
  const alias = uniqueAlias('l')
  const topic = uniqueName('lagging')
  const remote = `${alias}.${topic}`
  const group = `${topic}-group`
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  await loadTopic(topic)
  const sources: ReadRecord[][] = []
  for (let p = 0; p < PARTITIONS; p++) sources.push(await readCommitted('source', topic, p))
  const total = sources.reduce((n, s) => n + s.length, 0)
  const aborted = sources[0]!.findIndex(r => r.value!.toString().startsWith('txn2-'))
  // The first offset of partition 0 that read_committed skips (the aborted transaction's records), found from the data.
  const gapStart = Number(sources[0]![aborted - 1]!.offset) + 1
  assert.ok(Number(sources[0]![aborted]!.offset) > gapStart + 1, 'partition 0 has skipped offsets before the second committed transaction')
  const committed = [gapStart + 1, 700]
  await commitOffsets('source', group, committed.map((offset, partition) => ({ topic, partition, offset })))
  const ends = (await endOffsets('source', topic)).map(Number)
  for (let p = 0; p < PARTITIONS; p++) assert.ok(ends[p]! - committed[p]! > 100_000, `partition ${p} lags more than 100,000 records`)

  // When kmirror copies it under a throttle and is killed with SIGKILL, then stopped with SIGTERM, mid-copy
  const file = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: alias,
    extra: [`${alias}->B.topics = ${topic}`, `${alias}->B.groups = ${group}`, 'B.offset.flush.interval.ms = 300', 'emit.heartbeats.enabled = false',
      `${alias}.consumer.max.partition.fetch.bytes = 131072`]
  }), '.properties', t)
  // Uncompressed data (about 16 MB), throttled to 0.8 MB/s. A broker measures a quota over an 11-second window,
  // so the first ~8 MB go fast and the rest is throttled: the kills still land mid-copy (asserted below).
  await throttleFetches(`kmirror|${alias}->B|replication-consumer`, 800_000, t)
  let kmirror: KmirrorProcess = spawnKmirror(['run', file], { t })
  removeAliasTopicsAfter(t, ['target', 'source'], [alias], async () => { kmirror.kill('SIGKILL'); await kmirror.waitForExit(10_000) })
  const restarts: string[] = []
  for (const [fraction, signal] of [[0.25, 'SIGKILL'], [0.6, 'SIGTERM']] as const) {
    await waitFor(async () => ({ done: await targetCount(remote) >= total * fraction, state: kmirror.stderr.slice(-1000) }),
      { timeoutMs: 120_000, intervalMs: 50, message: `${fraction * 100}% copied` })
    kmirror.kill(signal)
    const exit = await kmirror.waitForExit(15_000)
    if (signal === 'SIGTERM') assert.equal(exit.code, 0, kmirror.stderr.slice(-2000))
    const copied = await targetCount(remote)
    assert.ok(copied < total, `${signal} came before the end of the copy (${copied} of ${total})`)
    restarts.push(`${signal} at ${copied}/${total}`)
    kmirror = spawnKmirror(['run', file], { t })
  }
  // ... and the copy completes: the stored progress reaches the log end of every partition
  const flow = findFlow(loadConfig(file), alias, 'B')
  await waitFor(async () => {
    const translator = await openTranslator(flow)
    try {
      return { done: ends.every((end, p) => translator.translate(topic, p, end)?.exact === true), state: await targetCount(remote) }
    } finally { await translator.close() }
  }, { timeoutMs: 240_000, intervalMs: 1000, message: 'the log end translates exactly' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)

  // Then `kmirror offsets translate` is exact for every partition of the group
  const cli = spawnKmirror(['offsets', 'translate', file, '--from', alias, '--to', 'B', '--group', group, '--json'], { t })
  assert.equal((await cli.waitForExit(60_000)).code, 0, cli.stderr)
  const out = JSON.parse(cli.stdout) as { partitions: { partition: number, sourceOffset: number, targetOffset: number, exact: boolean }[] }
  assert.deepEqual(out.partitions.map(p => [p.partition, p.sourceOffset, p.exact]), committed.map((c, p) => [p, c, true]))
  let duplicates = 0
  for (const { partition, targetOffset } of out.partitions) {
    const source = sources[partition]!
    const target = await readCommitted('target', remote, partition)
    duplicates += assertAllPresentInOrder(source, target, `${topic}-${partition}`)
    // The group's next record on the source is the record at the translated offset on the target...
    const next = source.findIndex(r => Number(r.offset) >= committed[partition]!)
    const [atTarget] = await readPartition('target', remote, partition, { isolation: 'read_committed', fromOffset: BigInt(targetOffset), toOffset: BigInt(targetOffset + 1) })
    assert.equal(recordSignature(atTarget!), recordSignature(source[next]!), `partition ${partition}: target offset ${targetOffset}`)
    // ... and the record before it there is the last one the group had read: nothing skipped, nothing re-read.
    const [before] = await readPartition('target', remote, partition, { isolation: 'read_committed', fromOffset: BigInt(targetOffset - 1), toOffset: BigInt(targetOffset) })
    assert.equal(recordSignature(before!), recordSignature(source[next - 1]!), `partition ${partition}: target offset ${targetOffset - 1}`)
  }
  console.log(`lagging group: ${total} records, ${ends.map((e, p) => e - committed[p]!).join(' and ')} behind, ${restarts.join(', ')}, ${duplicates} copied twice, translated exactly`)
})
