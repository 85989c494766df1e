/**
 * Config providers and secrets, end to end: kmirror authenticates to the SASL/PLAIN `secure` cluster with
 * passwords that come from `${file:...}`, `${directory:...}` and `${env:...}` references, replicates exactly,
 * and never prints a secret: not in `validate`, not in the logs of a run that fails to authenticate, not when a
 * reference cannot be resolved (exit 2, nothing written).
 */
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { ensureClusters, getCluster, SECURE_ADMIN } from '../helpers/clusters.ts'
import { createTopic, endOffsets, listTopics, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'
import type { Cleanup } from '../helpers/kafka.ts'

const PROVIDERS = [
  'config.providers = file, directory, env',
  'config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider',
  'config.providers.directory.class = org.apache.kafka.common.config.provider.DirectoryConfigProvider',
  'config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider',
  'config.providers.env.param.allowlist.pattern = KMIRROR_TEST_.*'
]

const jaas = (username: string, password: string): string =>
  `org.apache.kafka.common.security.plain.PlainLoginModule required username="${username}" password="${password}";`

interface Secrets {
  /** `${file:...}`, `${directory:...}` and `${env:...}` references to the password, in that order. */
  readonly references: readonly [string, string, string]
  readonly env: Record<string, string>
}

/** Writes PASSWORD to a properties file and to a file in a directory, and puts it in an environment variable. */
function writeSecrets (password: string, t: Cleanup): Secrets {
  const file = writeTempFile(`# kmirror test secrets\npassword = ${password}\n`, '.properties', t)
  const directory = join(dirname(file), 'secrets')
  mkdirSync(directory)
  writeFileSync(join(directory, 'sasl-password'), password)
  const variable = `KMIRROR_TEST_PW_${randomBytes(3).toString('hex').toUpperCase()}`
  return {
    references: [`\${file:${file}:password}`, `\${directory:${directory}:sasl-password}`, `\${env:${variable}}`],
    env: { [variable]: password }
  }
}

/**
 * The `secure` cluster as A, with each client role's password from another provider: the consumer's from the
 * file, the admin's from the directory, the producer's (offset syncs on A) from the environment.
 */
function providerConfig (topic: string, secrets: Secrets, extra: readonly string[] = []): string {
  const { username } = SECURE_ADMIN
  const [file, directory, env] = secrets.references
  const written = mm2Properties({ source: 'secure', target: 'target', extra: [...PROVIDERS, `A->B.topics = ${topic}`, ...extra] })
  const lines = written.split('\n').filter(line => !line.startsWith('A.sasl.jaas.config'))
  lines.push(
    `A.sasl.jaas.config = ${jaas(username, file)}`,
    `A.admin.sasl.jaas.config = ${jaas(username, directory)}`,
    `A.producer.sasl.jaas.config = ${jaas(username, env)}`
  )
  assert.ok(!lines.join('\n').includes(SECURE_ADMIN.password), 'the configuration file holds no password')
  return `${lines.join('\n')}\n`
}

function assertNoSecret (kmirror: KmirrorProcess, secrets: readonly string[]): void {
  for (const secret of secrets) {
    assert.ok(!kmirror.stdout.includes(secret) && !kmirror.stderr.includes(secret), `kmirror printed ${JSON.stringify(secret)}:\n${kmirror.stdout}\n${kmirror.stderr}`)
  }
}

test('replicates from the SASL cluster with passwords from file, directory and environment references', { timeout: 120_000 }, async t => {
  // Given a topic on the SASL cluster, and a configuration whose passwords come only from config providers
  await ensureClusters(['secure'])
  const topic = uniqueName('providers')
  await createTopic('secure', topic, { partitions: 2, t })
  const records: TestRecord[] = Array.from({ length: 300 }, (_, i) => ({
    topic, partition: i % 2, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
  await produce('secure', records)
  const secrets = writeSecrets(SECURE_ADMIN.password, t)
  const config = writeTempFile(providerConfig(topic, secrets), '.properties', t)

  // When kmirror runs it
  const kmirror = spawnKmirror(['run', config], { t, env: secrets.env })
  await waitFor(async () => (await endOffsets('target', `A.${topic}`).catch(() => [])).reduce((a, b) => a + b, 0n) === 300n,
    { timeoutMs: 60_000, message: 'records copied from the SASL cluster' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-2000))

  // Then both partitions are exact copies, and the password was never printed
  for (let p = 0; p < 2; p++) assertSamePartition(await readCommitted('secure', topic, p), await readCommitted('target', `A.${topic}`, p), `${topic}-${p}`)
  assertNoSecret(kmirror, [SECURE_ADMIN.password])
})

test('validate and a run that fails to authenticate never print a secret, whatever the key is called', { timeout: 120_000 }, async t => {
  // Given a wrong password behind every reference, and misspelt secret keys holding other secrets
  await ensureClusters(['secure'])
  const wrong = `wrong-${randomBytes(6).toString('hex')}`
  const secrets = writeSecrets(wrong, t)
  const misspelt = [`misspelt-${randomBytes(6).toString('hex')}`, `misspelt-${randomBytes(6).toString('hex')}`, `misspelt-${randomBytes(6).toString('hex')}`]
  const config = writeTempFile(providerConfig(uniqueName('providers-bad'), secrets, [
    `A.sasl.jaas.confg = ${jaas('admin', misspelt[0] ?? '')}`,
    `A.consumer.ssl.keystore.pasword = ${misspelt[1] ?? ''}`,
    `ssl.truststore.passwrd = ${misspelt[2] ?? ''}`
  ]), '.properties', t)
  const printable = [wrong, SECURE_ADMIN.password, ...misspelt]

  // When validate checks it
  const validate = spawnKmirror(['validate', config], { t, env: secrets.env })
  assert.equal((await validate.waitForExit(30_000)).code, 0, validate.stderr)
  // Then the misspelt keys are named with a suggestion, and no secret is shown
  assert.match(validate.stdout, /A\.sasl\.jaas\.confg: is not a Kafka client setting, so no client of cluster A reads it \(did you mean A\.sasl\.jaas\.config\?\)/)
  assert.match(validate.stdout, /A\.consumer\.ssl\.keystore\.pasword: .*\(did you mean A\.consumer\.ssl\.keystore\.password\?\)/)
  assert.match(validate.stdout, /password="\[redacted\]"/)
  assertNoSecret(validate, printable)

  // When it runs, the broker refuses the password: exit 3, naming the cluster, and still no secret in any log line
  const run = spawnKmirror(['run', config], { t, env: secrets.env })
  const exit = await run.waitForExit(90_000)
  assert.equal(exit.code, 3, run.stderr.slice(-2000))
  assert.match(run.stderr, /cluster A/)
  assert.match(run.stderr, /A\.sasl\.jaas\.confg/)
  assertNoSecret(run, printable)
})

test('a reference that cannot be resolved exits 2, naming the key and the reference, and writes nothing', { timeout: 60_000 }, async t => {
  // Given unique aliases (anything written would create topics named after them) and a reference to a missing file
  const source = `src${randomBytes(3).toString('hex')}`
  const target = `dst${randomBytes(3).toString('hex')}`
  const before = { source: (await listTopics('source')).sort(), target: (await listTopics('target')).sort() }
  const missing = `/nonexistent/${uniqueName('secrets')}.properties`
  const file = writeTempFile([
    `clusters = ${source}, ${target}`, `${source}.bootstrap.servers = ${getCluster('source').bootstrap}`, `${target}.bootstrap.servers = ${getCluster('target').bootstrap}`,
    `${source}->${target}.enabled = true`, ...PROVIDERS,
    `${target}.ssl.truststore.password = \${file:${missing}:truststore.password}`
  ].join('\n'), '.properties', t)

  // When kmirror runs on it
  const kmirror = spawnKmirror(['run', file], { t })
  const exit = await kmirror.waitForExit(30_000)

  // Then it exits 2 with the key, line and reference named, and no topic appeared anywhere
  assert.equal(exit.code, 2, kmirror.stderr)
  assert.ok(kmirror.stderr.includes(`${target}.ssl.truststore.password: line 10: \${file:${missing}:truststore.password}: ${missing} cannot be read (no such file or directory)`), kmirror.stderr)
  assert.deepEqual({ source: (await listTopics('source')).sort(), target: (await listTopics('target')).sort() }, before)
})
