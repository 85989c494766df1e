/**
 * Exactly-once (`B.exactly.once.source.support = enabled`): records produced continuously while kmirror is killed
 * with kill -9 three times and restarted, then while the target broker is killed and restarted. A read_committed
 * reader of the target finds every source record exactly once, in source order; the committed progress is the
 * last source offset; offset syncs (target-located, in the transactions) and checkpoints translate exactly.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { ensureClusters, getCluster, killCluster, startCluster } from '../helpers/clusters.ts'
import { commitOffsets } from '../helpers/groups.ts'
import { createTopic, endOffsets, produce, readPartition, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { assertSamePartition, assertSyncsTranslateExactly, readCommitted, type DecodedSync } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'
import { decodeSourceOffsetKey, decodeSourceOffsetValue } from '../../src/formats/connect-offset.ts'
import { decodeOffsetSync } from '../../src/formats/offset-sync.ts'
import { readLastCheckpoints } from '../../src/failover/checkpoint-reader.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { RecordFetcher } from '../../src/kafka/record-fetcher.ts'
import { readTopicToEnd } from '../../src/kafka/topic-reader.ts'

const PARTITIONS = 2
const CHUNK = 150
const MAX_RECORDS = 9000

function chunk (topic: string, from: number): TestRecord[] {
  return Array.from({ length: CHUNK }, (_, k) => {
    const i = from + k
    return { topic, partition: i % PARTITIONS, key: Buffer.from(`k${i}`), value: Buffer.from(`eos-${i}-${'v'.repeat(40)}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) }
  })
}

/** Records on the target, read_uncommitted (aborted ones included): how far the copy got. */
async function written (remote: string): Promise<number> {
  return Number((await endOffsets('third', remote).catch(() => [0n])).reduce((a, b) => a + b, 0n))
}

/** The newest committed progress per source partition of TOPIC in `mm2-offsets.A.internal` on the target. */
async function committedProgress (topic: string): Promise<Map<number, number>> {
  const progress = new Map<number, number>()
  const partitions = (await endOffsets('third', 'mm2-offsets.A.internal')).length
  for (let p = 0; p < partitions; p++) {
    for (const r of await readPartition('third', 'mm2-offsets.A.internal', p, { isolation: 'read_committed' })) {
      const key = r.key === null ? null : decodeSourceOffsetKey(r.key)
      if (key === null || key.cluster !== 'A' || key.topic !== topic) continue
      progress.set(key.partition, decodeSourceOffsetValue(r.value) ?? -1)
    }
  }
  return progress
}

/**
 * The committed offset syncs of TOPIC. Read with a read_committed RecordFetcher: the test helper's read_committed
 * filter drops committed batches after an aborted transaction whose abort marker carries a bumped epoch (the
 * Java ConsoleConsumer with --isolation-level read_committed shows them, as kmirror's reader does).
 */
async function committedSyncs (topic: string, reader: RecordFetcher): Promise<DecodedSync[]> {
  const syncs: DecodedSync[] = []
  await readTopicToEnd(reader, 'mm2-offset-syncs.A.internal', 1, (_, r) => {
    if (r.key === null || r.value === null) return
    const sync = decodeOffsetSync(r.key, r.value)
    if (sync.topic === topic) syncs.push(sync)
  })
  return syncs
}

test('exactly once across three kill -9 and a target broker restart, with continuous production', { timeout: 240_000 }, async t => {
  await ensureClusters(['third'])
  const topic = uniqueName('eos')
  const remote = `A.${topic}`
  const group = uniqueName('eos-group')
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  let produced = 0
  const add = async (): Promise<void> => { const from = produced; produced += CHUNK; await produce('source', chunk(topic, from), { maxBatchBytes: 2048 }) }
  for (let i = 0; i < 8; i++) await add()
  let producing = true
  // Paced (a chunk every 400 ms, at most MAX_RECORDS): production goes on through the kills and the broker restart.
  const producer = (async () => { while (producing && produced < MAX_RECORDS) { await add(); await delay(400) } })()
  t.after(async () => { producing = false; await producer.catch(() => undefined) })

  // Given kmirror in exactly-once mode, reading one batch per partition per round (many small transactions)
  const timeouts = ['A', 'B'].flatMap(c => ['consumer', 'producer', 'admin'].map(role => `${c}.${role}.request.timeout.ms = 3000`))
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'third', extra: [
      `A->B.topics = ${topic}`, `A->B.groups = ${group}`, 'B.exactly.once.source.support = enabled', 'offset-syncs.topic.location = target',
      'A.consumer.max.partition.fetch.bytes = 1', 'emit.checkpoints.interval.seconds = 1', 'sync.group.offsets.enabled = false', ...timeouts
    ]
  }), '.properties', t)
  let kmirror: KmirrorProcess = spawnKmirror(['run', config, '--progress-interval', '0'], { t })
  t.after(() => { kmirror.kill('SIGKILL') })

  // When it is killed with kill -9 three times mid-copy and restarted each time
  for (const at of [300, 900, 1500]) {
    await waitFor(async () => ({ done: await written(remote) >= at, state: kmirror.stderr.slice(-1500) }), { timeoutMs: 60_000, intervalMs: 50, message: `${at} records written` })
    kmirror.kill('SIGKILL')
    await kmirror.waitForExit(10_000)
    kmirror = spawnKmirror(['run', config, '--progress-interval', '0'], { t })
  }
  // And the target broker is killed and restarted while it copies
  const before = await written(remote)
  await waitFor(async () => ({ done: await written(remote) > before + 100, state: kmirror.stderr.slice(-1500) }), { timeoutMs: 60_000, intervalMs: 50, message: 'copying after the last restart' })
  t.after(() => startCluster('third'))
  await killCluster('third')
  const mark = kmirror.stderr.length
  await waitFor(() => ({ done: kmirror.stderr.slice(mark).includes('"level":"warn"'), state: kmirror.stderr.slice(-1500) }), { timeoutMs: 30_000, intervalMs: 200, message: 'a warning while the target broker is down' })
  await startCluster('third')
  await producer

  // Then a read_committed reader finds every record exactly once, in source order
  const expected = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => readCommitted('source', topic, p)))
  await waitFor(async () => {
    const counts = await Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => (await readCommitted('third', remote, p).catch(() => [])).length))
    return { done: counts.every((c, p) => c >= expected[p]!.length), state: { counts, want: expected.map(e => e.length), stderr: kmirror.stderr.slice(-1000) } }
  }, { timeoutMs: 90_000, intervalMs: 500, message: 'every record committed on the target' })
  const targets = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => readCommitted('third', remote, p)))
  for (let p = 0; p < PARTITIONS; p++) assertSamePartition(expected[p]!, targets[p]!, `${remote}-${p}`)

  // And checkpoints of a group committed on the source translate to exactly the same record on the target
  const committedAt = expected.map(records => Math.floor(records.length / 2))
  await commitOffsets('source', group, committedAt.map((i, p) => ({ topic, partition: p, offset: Number(expected[p]![i]!.offset) })))
  const props = { 'bootstrap.servers': getCluster('third').bootstrap }
  const admin = new AdminClient(props, 'eos-checkpoints-admin', { label: 'cluster B' })
  const reader = new RecordFetcher(props, 'eos-checkpoints-reader', { isolation: 'read_committed', maxWaitMs: 100, maxBytes: 10_000_000, maxPartitionBytes: 1_000_000 })
  t.after(async () => { await Promise.all([admin.close(), reader.close()]) })
  await waitFor(async () => {
    const all = (await readLastCheckpoints('A.checkpoints.internal', admin, reader)).get(group)
    const found = [...(all?.values() ?? [])]
    const exact = committedAt.every((i, p) => found.some(c => c.partition === p && c.upstreamOffset === Number(expected[p]![i]!.offset) && c.downstreamOffset === Number(targets[p]![i]!.offset)))
    return { done: exact, state: { found, want: committedAt.map((i, p) => [expected[p]![i]!.offset, targets[p]![i]!.offset]) } }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'exact checkpoints' })

  // And once stopped, the committed progress is each partition's last source offset, and the syncs are exact
  kmirror.kill('SIGTERM')
  assert.deepEqual(await kmirror.waitForExit(20_000), { code: 0, signal: null })
  const progress = await committedProgress(topic)
  for (let p = 0; p < PARTITIONS; p++) assert.equal(progress.get(p), Number(expected[p]!.at(-1)!.offset), `committed progress of ${topic}-${p}`)
  const syncs = await committedSyncs(topic, reader)
  for (let p = 0; p < PARTITIONS; p++) assertSyncsTranslateExactly(syncs, expected[p]!, targets[p]!, p, `${remote}-${p}`)
  t.diagnostic(`exactly-once: ${produced} records, 3 kill -9 and a target broker restart, 0 missing, 0 duplicates`)
})
