/**
 * A lost acknowledgement: the target broker appends a produce request of kmirror's data path, and the connection
 * is cut before its answer arrives (a proxy in front of the real `auth` broker, answer-cutting-proxy.ts). In
 * at-least-once mode kmirror sends the batches again with the same producer id and sequences, and the broker keeps
 * them once: the target holds every source record exactly once, at the same offsets, and the offset syncs are exact.
 */
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { startAnswerCuttingProxy } from '../helpers/answer-cutting-proxy.ts'
import { AUTH_LISTENERS, ensureClusters, type TestCluster } from '../helpers/clusters.ts'
import { createTopic, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, assertSyncsTranslateExactly, readCommitted, readOffsetSyncs } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const RECORDS = 3000

/** Records of 200-byte values, produced in batches of about 32 KiB: each is forwarded as it is (no merging). */
function records (topic: string): TestRecord[] {
  return Array.from({ length: RECORDS }, (_, i) => ({
    topic, partition: 0, key: Buffer.from(`k${i}`), value: Buffer.from(`lost-ack-${i}-`.padEnd(200, 'x')), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
}

before(async () => { await ensureClusters(['source', 'auth']) })

test('a produce the target appended whose answer was lost (connection cut): sent again under the same producer id, kept once; the copy and the offset syncs are exact', { timeout: 120_000 }, async t => {
  // Given the `auth` broker behind a proxy that cuts the connection instead of passing on the answer of the next
  // produce request of at least 20 KB (only the data path writes that much at once)
  const proxy = await startAnswerCuttingProxy(t, AUTH_LISTENERS.proxied.advertisedPort, AUTH_LISTENERS.proxied.port)
  const target: TestCluster = { name: 'auth', bootstrap: `127.0.0.1:${AUTH_LISTENERS.proxied.advertisedPort}`, external: true }
  proxy.armForProduce(20_000)
  const topic = uniqueName('lost-ack')
  const remote = `A.${topic}`
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', records(topic), { maxBatchBytes: 32 * 1024 })

  // When kmirror copies the topic to it
  const config = writeTempFile(mm2Properties({ source: 'source', target, extra: [`A->B.topics = ${topic}`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--progress-interval', '0'], { t })
  const count = async (): Promise<number> => (await readCommitted('auth', remote, 0).catch(() => [])).length
  await waitFor(async () => ({ done: await count() >= RECORDS, state: { copied: await count(), cuts: proxy.cuts() } }),
    { timeoutMs: 60_000, intervalMs: 250, message: `all ${RECORDS} records copied` })
  // Offset syncs of the last batches go out right after their acknowledgement; give the stop a chance to flush.
  kmirror.kill('SIGTERM')
  assert.deepEqual(await kmirror.waitForExit(15_000), { code: 0, signal: null })

  // Then the proxy cut one produce the broker had appended, kmirror said the write failed, naming the target
  assert.equal(proxy.cuts().length, 1, `cut produce requests: ${JSON.stringify(proxy.cuts())}`)
  assert.match(kmirror.stderr, /"level":"warn".*cluster B/)
  // And the target holds every source record once, in order, at its source offset: no batch was appended twice
  const sourceRecords = await readCommitted('source', topic, 0)
  const targetRecords = await readCommitted('auth', remote, 0)
  assertSamePartition(sourceRecords, targetRecords, remote)
  assert.deepEqual(targetRecords.map(r => r.offset), sourceRecords.map(r => r.offset))
  // And every offset sync translates exactly, including the batch acknowledged with its first offset on resend
  const syncs = await readOffsetSyncs('source', 'mm2-offset-syncs.B.internal', topic)
  assertSyncsTranslateExactly(syncs, sourceRecords, targetRecords, 0, remote)
})
