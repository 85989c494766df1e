/**
 * kmirror's password rotated on the source while it runs (issue 10): the SCRAM credential of its user is changed on
 * the `auth` cluster and the broker restarted, so kmirror has to log in again and is refused. It keeps retrying,
 * says AUTHENTICATION with the cluster and the mechanism, and /healthz is 503; once the password is set back it
 * resumes by itself and the copy is exact record by record.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { AUTH_LISTENERS, AUTH_SECRETS, ensureClusters, getCluster, REPO_ROOT, restartCluster } from '../helpers/clusters.ts'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

/** Sets the SCRAM-SHA-256 password of the auth cluster's user with Kafka's own ConfigCommand (over its PLAINTEXT listener). */
async function setScramPassword (password: string): Promise<void> {
  await promisify(execFile)('java', ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-cp', join(REPO_ROOT, 'kafka', 'lib', '*'), 'kafka.admin.ConfigCommand',
    '--bootstrap-server', getCluster('auth').bootstrap, '--alter', '--entity-type', 'users', '--entity-name', AUTH_SECRETS.user,
    '--add-config', `SCRAM-SHA-256=[iterations=4096,password=${password}]`])
}

function records (topic: string, from: number, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({ topic, partition: 0, key: Buffer.from(`k${from + i}`), value: Buffer.from(`v${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i) }))
}

test('the source refuses kmirror\'s rotated password: it retries, says AUTHENTICATION with the cluster and mechanism, /healthz is 503, and it resumes exactly once the password is set back', { timeout: 240_000 }, async t => {
  await ensureClusters(['auth', 'target'])
  const topic = uniqueName('rotated')
  await createTopic('auth', topic, { partitions: 1, t })
  await produce('auth', records(topic, 0, 30))
  t.after(() => setScramPassword(AUTH_SECRETS.scram256))
  const config = writeTempFile([
    'clusters = A, B',
    `A.bootstrap.servers = ${AUTH_LISTENERS.saslPlaintext}`,
    'A.security.protocol = SASL_PLAINTEXT',
    'A.sasl.mechanism = SCRAM-SHA-256',
    `A.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="${AUTH_SECRETS.user}" password="${AUTH_SECRETS.scram256}";`,
    `B.bootstrap.servers = ${getCluster('target').bootstrap}`,
    'A->B.enabled = true',
    `A->B.topics = ${topic}`,
    'replication.factor = 1', 'offset-syncs.topic.replication.factor = 1', 'checkpoints.topic.replication.factor = 1', 'heartbeats.topic.replication.factor = 1',
    'offset.storage.replication.factor = 1', 'heartbeats.replication.enabled = false', 'emit.checkpoints.enabled = false', 'offset-syncs.topic.location = target'
  ].join('\n') + '\n', '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const base = `http://127.0.0.1:${(await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 60_000))[1]}`
  const copied = async (): Promise<bigint> => (await endOffsets('target', `A.${topic}`).catch(() => [0n]))[0] ?? 0n
  await waitFor(async () => await copied() === 30n, { timeoutMs: 60_000, message: 'first records copied' })

  // When the password is rotated on A and the broker restarts (kmirror has to log in again)
  await setScramPassword('rotated-password')
  await restartCluster('auth')
  await produce('auth', records(topic, 30, 20))

  // Then kmirror keeps running, /healthz is 503 naming AUTHENTICATION, and the log names the cluster and the mechanism
  await waitFor(async () => {
    const health = await fetch(`${base}/healthz`)
    const body = await health.text()
    return { done: health.status === 503 && body.includes('KMIRROR_ERR_AUTHENTICATION'), state: body }
  }, { timeoutMs: 60_000, message: '/healthz degraded with AUTHENTICATION' })
  assert.equal(kmirror.exitStatus, null)
  assert.match(kmirror.stderr, /KMIRROR_ERR_AUTHENTICATION/)
  assert.match(kmirror.stderr, /SCRAM-SHA-256/)
  assert.match(kmirror.stderr, /cluster A/)
  assert.equal(await copied(), 30n)

  // When the password is set back
  await setScramPassword(AUTH_SECRETS.scram256)
  // Then kmirror resumes by itself: an exact copy, and healthy again
  await waitFor(async () => await copied() === 50n, { timeoutMs: 60_000, message: 'records copied after the password is back' })
  assertSamePartition(await readCommitted('auth', topic, 0), await readCommitted('target', `A.${topic}`, 0), topic)
  await waitFor(async () => (await fetch(`${base}/healthz`)).status === 200, { timeoutMs: 15_000, message: '/healthz 200 after the recovery' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})
