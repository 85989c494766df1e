/**
 * The compatibility scenario between two clusters of different Kafka releases (compat-*.test.ts), in one
 * direction: an exact copy of lz4 batches with aborted transactions, repeated headers and nulls; offset syncs that
 * translate every record exactly; a checkpoint of a source group with the exact translated offsets; and a
 * `kmirror failover` plan (not applied) showing those offsets.
 */
import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import { readLastCheckpoints } from '../../src/failover/checkpoint-reader.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { RecordFetcher } from '../../src/kafka/record-fetcher.ts'
import { ensureClusters, isClusterRunning, resolveCluster, stopCluster, type ClusterName, type ClusterRef } from './clusters.ts'
import { committedOffsets, runPlan } from './drills.ts'
import { commitOffsets } from './groups.ts'
import { createTopic, endOffsets, produce, produceTransactions, readBatches, TIMESTAMP_BASE, withAdmin, type Cleanup, type Header, type TestRecord } from './kafka.ts'
import { removeAliasTopicsAfter, uniqueAlias } from './multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from './process.ts'
import { assertSamePartition, assertSyncsTranslateExactly, readCommitted, readOffsetSyncs, type ReadRecord } from './replication.ts'
import { uniqueName, waitFor } from './wait.ts'

const PARTITIONS = 2
/** commit or abort, in order: aborted transactions between committed ones, two aborts in a row. */
const TRANSACTIONS = [true, false, true, false, false, true]

/** Record I: a mix of null and empty keys and values, repeated and null header values, non-ASCII header keys. */
function compatRecord (topic: string, tag: string, i: number): TestRecord {
  const shape = i % 6
  const h = Buffer.from('h')
  const headers: Header[] = shape === 3
    ? [[h, Buffer.from('1')], [Buffer.from('other'), null], [h, Buffer.from('2')], [h, Buffer.alloc(0)]]
    : shape === 4 ? [[Buffer.from('trace-ключ'), Buffer.from(`${tag}-${i}`)]] : []
  return {
    topic,
    partition: i % PARTITIONS,
    key: shape === 0 ? null : shape === 2 ? Buffer.alloc(0) : Buffer.from(`key-${i % 4}`),
    value: shape === 1 ? null : shape === 2 ? Buffer.alloc(0) : Buffer.from(`${tag}:${i}:${'v'.repeat(i % 30)}`),
    headers,
    timestamp: TIMESTAMP_BASE + BigInt(i) * 3n
  }
}

/** Plain records, transactions (some aborted), plain records again: every batch lz4. */
async function loadSource (source: ClusterRef, topic: string): Promise<void> {
  await produce(source, Array.from({ length: 30 }, (_, i) => compatRecord(topic, 'before', i)), { compression: 'lz4' })
  await produceTransactions(source, topic, TRANSACTIONS.map((commit, n) => ({
    commit,
    records: Array.from({ length: 8 + n }, (_, i) => compatRecord(topic, `txn${n}`, 100 + i))
  })), { compression: 'lz4' })
  await produce(source, Array.from({ length: 20 }, (_, i) => compatRecord(topic, 'after', 200 + i)), { compression: 'lz4' })
}

/**
 * For a compat test file, at its top level: starts the older clusters NAMES (and source and target) before the
 * file's tests, and stops those this file started after them, so that the rest of the run does not share two
 * cores with idle brokers (and ZooKeepers) it no longer needs. KMIRROR_KEEP_CLUSTERS=1 keeps them up.
 * Starting includes fetching a release's jars (Maven) the first time.
 */
export function useCompatClusters (names: readonly ClusterName[]): void {
  let startedHere: ClusterName[] = []
  before(async () => {
    startedHere = names.filter(name => !isClusterRunning(name) && !resolveCluster(name).external)
    await ensureClusters([...names, 'source', 'target'])
    // A ZooKeeper-mode broker logs "started" before its controller's first UpdateMetadata reached it: until then it
    // lists no broker and refuses CreateTopics ("Replication factor: 1 larger than available brokers: 0", seen in CI)
    for (const name of names) {
      await waitFor(async () => {
        const listed = await withAdmin(name, async admin => (await admin.metadata({ topics: [], forceUpdate: true })).brokers.size).catch(() => 0)
        return { done: listed > 0, state: listed }
      }, { timeoutMs: 60_000, intervalMs: 200, message: `cluster ${name} lists its broker` })
    }
  }, { timeout: 300_000 })
  after(async () => {
    if (process.env.KMIRROR_KEEP_CLUSTERS !== '1') await Promise.all(startedHere.map(name => stopCluster(name)))
  }, { timeout: 60_000 })
}

export interface CompatScenario {
  /** The cluster records are copied from, and the one they are copied to (different Kafka releases). */
  readonly source: ClusterRef
  readonly target: ClusterRef
}

/**
 * Runs the whole scenario from SOURCE to TARGET under unique aliases and asserts every outcome; removes what it
 * created when the test ends.
 */
export async function compatScenario (t: Cleanup, { source, target }: CompatScenario): Promise<void> {
  const a = uniqueAlias('a')
  const b = uniqueAlias('b')
  const topic = uniqueName('compat')
  const remote = `${a}.${topic}`
  const group = uniqueName('compat-group')

  // Given a topic of 2 partitions with lz4 batches, committed and aborted transactions, and a group's commits
  await createTopic(source, topic, { partitions: PARTITIONS, t })
  await loadSource(source, topic)
  const expected = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => readCommitted(source, topic, p)))
  assert.equal(expected.flat().some(r => r.value?.toString().startsWith('txn1:')), false, 'an aborted record read as committed on the source')
  // The group's next record on each partition: one in the middle of the committed records.
  const middle = expected.map(records => records[Math.floor(records.length / 2)]!)
  // On a fresh broker the first commit waits for __consumer_offsets to be created and led (seconds in ZooKeeper mode).
  await waitFor(async () => {
    await commitOffsets(source, group, middle.map((r, partition) => ({ topic, partition, offset: Number(r.offset) })))
    return true
  }, { timeoutMs: 30_000, intervalMs: 500, message: `${group} committed on the source` })

  // When kmirror copies it with checkpoints every second
  const file = writeTempFile(mm2Properties({
    source, target, sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `${a}->${b}.groups = ${group}`, 'emit.checkpoints.interval.seconds = 1', `${b}.offset.flush.interval.ms = 300`, 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', file], { t })
  removeAliasTopicsAfter(t, [source, target], [a, b], async () => { kmirror.kill('SIGTERM'); await kmirror.waitForExit(15_000).catch(() => kmirror.kill('SIGKILL')) })
  await waitFor(async () => {
    if (kmirror.exitStatus !== null) throw new Error(`kmirror exited ${JSON.stringify(kmirror.exitStatus)}\n${kmirror.stderr.slice(-3000)}`)
    const ends = await endOffsets(target, remote).catch(() => [])
    return { done: ends.length === PARTITIONS && ends.every((e, p) => e === BigInt(expected[p]!.length)), state: { ends, stderr: kmirror.stderr.slice(-1500) } }
  }, { timeoutMs: 90_000, intervalMs: 300, message: `the committed records of ${topic} on ${resolveCluster(target).name}` })
  const copied = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => readCommitted(target, remote, p)))

  // Then a checkpoint of the group appears on the target with the exact translated offsets
  const wanted = middle.map((r, p) => ({ upstream: Number(r.offset), downstream: Number(copied[p]![expected[p]!.indexOf(r)]!.offset) }))
  await waitFor(async () => {
    const checkpoints = await groupCheckpoints(target, `${a}.checkpoints.internal`, group)
    const seen = Array.from({ length: PARTITIONS }, (_, p) => checkpoints.get(`${remote}\u0000${p}`))
    return {
      done: seen.every((c, p) => c?.upstreamOffset === wanted[p]!.upstream && c.downstreamOffset === wanted[p]!.downstream),
      state: { wanted, seen }
    }
  }, { timeoutMs: 60_000, intervalMs: 500, message: `a checkpoint of ${group} with the exact translated offsets` })

  // And the failover plan moves the group to exactly those offsets, writing nothing
  const plan = await runPlan(['failover', file, '--from', a, '--to', b, '--group', group], t)
  assert.equal(plan.code, 1, `${plan.stdout}\n${plan.stderr}`)
  assert.equal(plan.plan.basis, 'source-commits')
  assert.deepEqual(plan.plan.groups[0]!.moves.map(m => [m.topic, m.partition, m.current, m.next, m.reRead, m.skip, m.exact]),
    wanted.map((w, p) => [remote, p, null, w.downstream, 0, 0, true]))
  assert.equal((await committedOffsets(target, group)).size, 0, 'the dry run wrote offsets')

  // And a graceful stop exits 0; every partition is an exact copy in lz4 batches; offset syncs translate every record
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0, kmirror.stderr.slice(-3000))
  const syncs = await readOffsetSyncs(source, `mm2-offset-syncs.${b}.internal`, topic)
  for (let p = 0; p < PARTITIONS; p++) {
    assertSamePartition(expected[p]!, copied[p]!, `${topic}-${p}`)
    assertSyncsTranslateExactly(syncs, expected[p]!, copied[p]!, p, `${topic}-${p}`)
    const codecs = new Set((await readBatches(target, remote, p)).filter(batch => !batch.isControl).map(batch => batch.codec))
    assert.deepEqual([...codecs], ['lz4'], `${remote}-${p}: batches of ${[...codecs].join(', ')}`)
  }
  assertShapesCovered(expected.flat())
}

/** The newest checkpoint of GROUP per `remote topic \0 partition`, read as failover reads them. */
async function groupCheckpoints (target: ClusterRef, topic: string, group: string): Promise<Map<string, { upstreamOffset: number, downstreamOffset: number }>> {
  const props = { 'bootstrap.servers': resolveCluster(target).bootstrap }
  const admin = new AdminClient(props, 'compat-checkpoints-admin', { label: resolveCluster(target).name })
  const reader = new RecordFetcher(props, 'compat-checkpoints-reader', { isolation: 'read_committed', maxWaitMs: 100, maxBytes: 10_000_000, maxPartitionBytes: 1_000_000 })
  try {
    return (await readLastCheckpoints(topic, admin, reader)).get(group) ?? new Map()
  } finally { await Promise.all([admin.close(), reader.close()]) }
}

/** The scenario means something only if the source really held every shape. */
function assertShapesCovered (records: readonly ReadRecord[]): void {
  assert.ok(records.some(r => r.key === null) && records.some(r => r.value === null), 'null keys and values')
  assert.ok(records.some(r => r.key?.length === 0 && r.value?.length === 0), 'empty keys and values')
  assert.ok(records.some(r => r.headers.filter(([k]) => k.toString() === 'h').length === 3 && r.headers.some(([, v]) => v === null)), 'repeated header keys and null header values')
}
