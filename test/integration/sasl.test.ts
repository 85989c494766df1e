/**
 * SASL/PLAIN: kmirror connects with the credentials of `<alias>.sasl.jaas.config` to a cluster that runs the
 * standard authorizer, and replicates from it exactly.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ensureClusters } from '../helpers/clusters.ts'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

test('replicates from a SASL/PLAIN cluster with an authorizer to a plain cluster', { timeout: 120_000 }, async t => {
  // Given a topic on the SASL cluster
  await ensureClusters(['secure'])
  const topic = uniqueName('sasl')
  await createTopic('secure', topic, { partitions: 2, t })
  const records: TestRecord[] = Array.from({ length: 500 }, (_, i) => ({
    topic, partition: i % 2, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
  await produce('secure', records)

  // When kmirror replicates it with the cluster's SASL settings
  const config = writeTempFile(mm2Properties({ source: 'secure', target: 'target', extra: [`A->B.topics = ${topic}`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t })
  await waitFor(async () => (await endOffsets('target', `A.${topic}`).catch(() => [])).reduce((a, b) => a + b, 0n) === 500n,
    { timeoutMs: 60_000, message: 'records copied from the SASL cluster' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)

  // Then both partitions are exact copies
  for (let p = 0; p < 2; p++) assertSamePartition(await readCommitted('secure', topic, p), await readCommitted('target', `A.${topic}`, p), `${topic}-${p}`)
})

test('a wrong SASL password fails the start with exit code 3 and a message naming the cluster', { timeout: 120_000 }, async t => {
  await ensureClusters(['secure'])
  const text = mm2Properties({ source: 'secure', target: 'target', extra: [] }).replace('password="admin-secret"', 'password="wrong"')
  const kmirror = spawnKmirror(['run', writeTempFile(text, '.properties', t)], { t })
  const exit = await kmirror.waitForExit(90_000)
  assert.equal(exit.code, 3, kmirror.stderr.slice(-2000))
  assert.match(kmirror.stderr, /cluster A/)
  // The JSON log line says it once, with the authentication code: no cause repeats the message
  const line = JSON.parse(kmirror.stderr.split('\n').find(l => l.includes('"msg":"start failed"'))!) as { err: { code: string, message: string, cause: { code: string, message?: string } } }
  assert.equal(line.err.code, 'KMIRROR_ERR_AUTHENTICATION')
  assert.match(line.err.message, /cluster A \(127\.0\.0\.1:\d+\): the broker at 127\.0\.0\.1:\d+ refused SASL\/PLAIN authentication of user "admin"/)
  assert.equal(line.err.cause.code, 'KMIRROR_ERR_AUTHENTICATION')
  assert.equal(line.err.cause.message, undefined)
  assert.equal(kmirror.stderr.split('refused SASL/PLAIN authentication').length - 1, 3, 'the JSON message, its stack\'s first line, and the line on stderr')
})
