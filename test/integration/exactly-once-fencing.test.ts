/**
 * Fencing at the API level on a real broker: two writers with one transactional id (the second's InitProducerId
 * fences the first, whose open transaction is aborted and whose next round fails FENCED with nothing visible to
 * read_committed), `fenceTransactionalIds` on the target's clients, and the BatchWriter `fence` hook (no produce
 * request at all once it names a reason).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { getCluster } from '../helpers/clusters.ts'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE, waitForStable, type TestRecord } from '../helpers/kafka.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { readCommitted } from '../helpers/replication.ts'
import { uniqueName } from '../helpers/wait.ts'
import { BatchWriter, type PartitionWrite } from '../../src/kafka/batch-writer.ts'
import { ClusterClients } from '../../src/kafka/cluster-clients.ts'
import { encodeRecords } from '../../src/kafka/record-batch.ts'
import { ErrorCodes, KmirrorError } from '../../src/errors.ts'

function writes (topic: string, values: readonly string[]): PartitionWrite[] {
  const records = values.map(v => ({ key: null, value: Buffer.from(v), headers: [], timestamp: BigInt(Date.now()) }))
  return [{ topic, partition: 0, batches: [{ recordCount: records.length, build: (producer, sequence) => encodeRecords(records, 'none', producer, sequence) }] }]
}

function writer (transactionalId: string | undefined, fence?: () => string | null): BatchWriter {
  const props = { 'bootstrap.servers': getCluster('target').bootstrap }
  return new BatchWriter(props, uniqueName('eos-writer'), {
    maxInFlight: 5, maxRequestBytes: 1 << 20, timeoutMs: 10_000,
    ...(transactionalId === undefined ? {} : { transactionalId }), ...(fence === undefined ? {} : { fence })
  })
}

function isFenced (err: unknown): boolean {
  return err instanceof KmirrorError && err.code === ErrorCodes.FENCED
}

const values = (records: readonly TestRecord[] | readonly { value: Buffer | null }[]): string[] => records.map(r => r.value?.toString() ?? '')

test('a second writer with the same transactional id fences the first: its open and next rounds stay invisible', { timeout: 60_000 }, async t => {
  const topic = uniqueName('eos-zombie')
  await createTopic('target', topic, { partitions: 1, t })
  const id = uniqueName('kmirror-eos-zombie')
  const first = writer(id)
  const second = writer(id)
  t.after(async () => { await first.close(); await second.close() })

  // Given a first writer that committed one round and has a second one open
  await first.abortTransaction()
  await first.write(writes(topic, ['committed-1']), () => undefined)
  await first.commitTransaction()
  await first.write(writes(topic, ['open-2']), () => undefined)

  // When a second writer initialises the same transactional id
  await second.abortTransaction()

  // Then the first writer's open round cannot commit, its next round fails fenced before anything is visible
  await assert.rejects(first.commitTransaction(), isFenced)
  // And, fenced for good, it refuses every later round without initialising the id again (that would fence the owner)
  await assert.rejects(first.write(writes(topic, ['zombie-3']), () => undefined), isFenced)
  await assert.rejects(first.abortTransaction(), isFenced)
  // And the second writer's round commits
  await second.write(writes(topic, ['second-4']), () => undefined)
  await second.commitTransaction()
  // (EndTxn is answered before the markers are written: read once the partition is stable)
  await waitForStable('target', topic)
  assert.deepEqual(values(await readCommitted('target', topic, 0)), ['committed-1', 'second-4'])
})

test('fenceTransactionalIds bumps the epoch of each id; the fence hook stops a write before any request', { timeout: 60_000 }, async t => {
  const topic = uniqueName('eos-fence')
  await createTopic('target', topic, { partitions: 1, t })
  const id = uniqueName('kmirror-eos-lost')
  const lost = writer(id)
  t.after(() => lost.close())
  await lost.abortTransaction()
  await lost.write(writes(topic, ['before-fence']), () => undefined)

  // When the group leader fences the lost member's transactional id
  const clients = new ClusterClients({ alias: 'B', bootstrapServers: [getCluster('target').bootstrap], consumer: {}, producer: { 'bootstrap.servers': getCluster('target').bootstrap }, admin: {} }, 'eos-test', 'target')
  t.after(() => clients.close())
  await clients.fenceTransactionalIds([id])

  // Then its open transaction is aborted and its commit refused
  await assert.rejects(lost.commitTransaction(), isFenced)
  assert.deepEqual(values(await readCommitted('target', topic, 0)), [])

  // And a writer whose lease ran out sends no produce request at all
  const before = await endOffsets('target', topic)
  const expired = writer(undefined, () => 'the group lease expired 120 ms ago')
  t.after(() => expired.close())
  await assert.rejects(expired.write(writes(topic, ['after-lease']), () => undefined), (err: unknown) => isFenced(err) && /lease expired/.test((err as Error).message))
  assert.deepEqual(await endOffsets('target', topic), before)
})

test('a round committed between an aborted round and one aborted before its produce stays visible to read_committed', { timeout: 60_000 }, async t => {
  const topic = uniqueName('eos-dataless-abort')
  await createTopic('target', topic, { partitions: 1, t })
  let lease: string | null = null
  const rounds = writer(uniqueName('kmirror-eos-dataless'), () => lease)
  t.after(() => rounds.close())
  await rounds.abortTransaction()

  // Given an aborted round, then a committed one
  await rounds.write(writes(topic, ['aborted-1']), () => undefined)
  await rounds.abortTransaction()
  await rounds.write(writes(topic, ['committed-2']), () => undefined)
  await rounds.commitTransaction()
  // When a round adds the partition to its transaction but its produce never happens (as when the target broker
  // dies mid-round), and is aborted: the partition gets an abort marker with no data of that transaction before it
  lease = 'the test stops this produce'
  await assert.rejects(rounds.write(writes(topic, ['never-3']), () => undefined), isFenced)
  lease = null
  await rounds.abortTransaction()
  await rounds.write(writes(topic, ['committed-4']), () => undefined)
  await rounds.commitTransaction()

  // Then a read_committed reader finds both committed rounds (the helper once dropped round 2, with the client
  // library's own read_committed filter: see test/helpers/kafka-read.ts)
  await waitForStable('target', topic)
  assert.deepEqual(values(await readCommitted('target', topic, 0)), ['committed-2', 'committed-4'])
})

test('a transaction timeout above the target brokers\' transaction.max.timeout.ms stops kmirror run at start, naming the key, the broker setting and the fix, having written no record', { timeout: 90_000 }, async t => {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('eos-timeout')
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', [{ topic, partition: 0, key: null, value: Buffer.from('one'), headers: [], timestamp: TIMESTAMP_BASE }])
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b])
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `${b}.exactly.once.source.support = enabled`, `${b}.producer.transaction.timeout.ms = 900001`]
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t })
  const exit = await kmirror.waitForExit(60_000)
  // Exit 3, as for every refusal of a cluster at start (docs/errors.md)
  assert.equal(exit.code, 3, kmirror.stderr.slice(-3000))
  assert.match(kmirror.stderr, new RegExp(`INVALID_TRANSACTION_TIMEOUT.*set ${b}\\.producer\\.transaction\\.timeout\\.ms at most the target brokers' transaction\\.max\\.timeout\\.ms`))
  assert.deepEqual(await endOffsets('target', `${a}.${topic}`).catch(() => [0n]), [0n], 'no record written')
  // and the configuration's warning, before the start, said it would be
  assert.match(kmirror.stderr, /is 900001 for flow \S+, above the brokers' default transaction\.max\.timeout\.ms \(900000\)/)
})
