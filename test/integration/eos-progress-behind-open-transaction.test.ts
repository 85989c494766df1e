/**
 * Exactly-once hand-over with a transaction left open on the offsets topic. The members of a flow share
 * `mm2-offsets.<alias>.internal`: a transaction open there (another member's round, a dead member's) hides every
 * progress record committed after it from read_committed readers. An instance that takes the partitions over must
 * wait for it to end, not resume from the older progress it can see (which would copy the records between twice).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, endOffsets, openTransaction, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function records (topic: string, from: number, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, k) => ({ topic, partition: 0, key: Buffer.from(`k${from + k}`), value: Buffer.from(`v${from + k}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + k) }))
}

test('exactly-once: an instance taking over waits for a transaction open on the offsets topic, and copies nothing twice', { timeout: 240_000 }, async t => {
  // Given a flow in exactly-once mode whose offsets topic has one partition (every progress record lands there)
  const alias = uniqueAlias('h')
  const topic = uniqueName('eos-behind')
  const remote = `${alias}.${topic}`
  const offsets = `mm2-offsets.${alias}.internal`
  await createTopic('source', topic, { partitions: 1, t })
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: alias,
    extra: [`${alias}->B.topics = ${topic}`, 'B.exactly.once.source.support = enabled', 'B.offset.storage.partitions = 1',
      'emit.checkpoints.enabled = false', 'emit.heartbeats.enabled = false', 'sync.topic.acls.enabled = false']
  }), '.properties', t)
  removeAliasTopicsAfter(t, ['target'], [alias])
  await produce('source', records(topic, 0, 100))
  const first = spawnKmirror(['run', config], { t })
  const committed = async (): Promise<number> => (await readCommitted('target', remote, 0).catch(() => [])).length
  await waitFor(async () => ({ done: await committed() === 100, state: first.stderr.slice(-2000) }), { timeoutMs: 60_000, message: 'the first 100 records committed' })

  // When a transaction is left open on the offsets topic (its first record before the next progress records), the
  // source gets 100 more records and the first instance stops, storing its progress behind that transaction
  // (open far longer than the test's waits can take: it is ended below, once the second instance is seen waiting)
  const open = await openTransaction('target', [{ topic: offsets, partition: 0, key: Buffer.from('["not-kmirror",{}]'), value: null, headers: [], timestamp: BigInt(Date.now()) }], t, { timeoutMs: 600_000 })
  await produce('source', records(topic, 100, 100))
  await waitFor(async () => ({ done: await committed() === 200, state: first.stderr.slice(-2000) }), { timeoutMs: 60_000, message: 'the next 100 records committed' })
  first.kill('SIGTERM')
  assert.equal((await first.waitForExit(15_000)).code, 0)
  const [stable] = await endOffsets('target', offsets, { isolation: 'read_committed' })
  const [high] = await endOffsets('target', offsets)
  assert.ok(stable! < high!, `the transaction still hides the last progress (last stable offset ${stable}, high watermark ${high})`)

  // Then a second instance says its progress read waits for that transaction, and starts no work while it is open
  const second = spawnKmirror(['run', config], { t })
  await second.waitForOutput(/reading mm2-offsets\.\S+ on cluster B waits for a transaction still open there/, 60_000)
  assert.doesNotMatch(second.stderr, /work assigned/, 'no work started while the transaction was open')
  const [stableHeld] = await endOffsets('target', offsets, { isolation: 'read_committed' })
  const [highHeld] = await endOffsets('target', offsets)
  assert.ok(stableHeld! < highHeld!, `the transaction is still open (last stable offset ${stableHeld}, high watermark ${highHeld})`)
  // And once the transaction ends (aborted by its producer, as the coordinator would at its timeout), the work starts
  await open.abort()
  await second.waitForOutput(/work assigned/, 60_000)
  // And the remote topic holds every source record once, in order, for a read_committed reader
  await produce('source', records(topic, 200, 10))
  await waitFor(async () => ({ done: await committed() >= 210, state: second.stderr.slice(-2000) }), { timeoutMs: 60_000, message: 'the last records committed' })
  assertSamePartition(await readCommitted('source', topic, 0), await readCommitted('target', remote, 0), topic)
  second.kill('SIGTERM')
  assert.equal((await second.waitForExit(15_000)).code, 0)
})
