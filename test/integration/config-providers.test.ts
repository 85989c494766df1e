/**
 * Config providers and secrets, end to end: kmirror authenticates to the SASL/PLAIN `secure` cluster with
 * passwords that come from `${file:...}`, `${directory:...}` and `${env:...}` references (one of them with a
 * quote, a backslash, a percent sign, a slash and a space), replicates exactly, and never prints a secret, in any
 * escaped form: not in `validate`, not in the logs of a run that fails to authenticate, not when a reference
 * cannot be resolved or a short value from a provider is invalid (exit 2, nothing written).
 */
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { ensureClusters, getCluster, REPO_ROOT, SECURE_ADMIN } from '../helpers/clusters.ts'
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

/** The `secure` cluster's super user `quoted` (scripts/kafka-local.sh), whose password needs escaping everywhere. */
const QUOTED_USER = Object.freeze({ username: 'quoted', password: 'q"uo\\te d%2F/pw' })

const jaas = (username: string, password: string): string =>
  `org.apache.kafka.common.security.plain.PlainLoginModule required username="${username}" password="${password}";`

/** A password as it stands between the quotes of a JAAS option: `"` and `\` escaped. */
const jaasEscaped = (password: string): string => password.replace(/[\\"]/g, '\\$&')

/** Every form in which a password could leak: raw, JAAS-escaped, JSON-escaped (once and twice), URL-encoded. */
function printableForms (password: string): string[] {
  const json = (text: string): string => JSON.stringify(text).slice(1, -1)
  return [...new Set([password, jaasEscaped(password)].flatMap(form => [form, json(form), json(json(form)), encodeURIComponent(form)]))]
}

interface Secrets {
  /** `${file:...}` and `${directory:...}` references to the JAAS-escaped password, and `${env:...}` to a whole JAAS line. */
  readonly references: readonly [string, string, string]
  readonly env: Record<string, string>
}

/**
 * Writes USERNAME's PASSWORD (JAAS-escaped, as it goes between the quotes of `password="..."`) to a properties
 * file (escaped once more for java.util.Properties) and to a file in a directory, and a whole JAAS line to an
 * environment variable.
 */
function writeSecrets (username: string, password: string, t: Cleanup): Secrets {
  const escaped = jaasEscaped(password)
  const file = writeTempFile(`# kmirror test secrets\npassword = ${escaped.replace(/\\/g, '\\\\')}\n`, '.properties', t)
  const directory = join(dirname(file), 'secrets')
  mkdirSync(directory)
  writeFileSync(join(directory, 'sasl-password'), escaped)
  const variable = `KMIRROR_TEST_JAAS_${randomBytes(3).toString('hex').toUpperCase()}`
  return {
    references: [`\${file:${file}:password}`, `\${directory:${directory}:sasl-password}`, `\${env:${variable}}`],
    env: { [variable]: jaas(username, escaped) }
  }
}

/**
 * The `secure` cluster as A, with each client role's credentials from another provider: the consumer's password
 * from the file, the admin's from the directory, the producer's (offset syncs on A) whole JAAS line from the
 * environment.
 */
function providerConfig (topic: string, username: string, secrets: Secrets, extra: readonly string[] = []): string {
  const [file, directory, env] = secrets.references
  const written = mm2Properties({ source: 'secure', target: 'target', extra: [...PROVIDERS, `A->B.topics = ${topic}`, ...extra] })
  const lines = written.split('\n').filter(line => !line.startsWith('A.sasl.jaas.config'))
  lines.push(
    `A.sasl.jaas.config = ${jaas(username, file)}`,
    `A.admin.sasl.jaas.config = ${jaas(username, directory)}`,
    `A.producer.sasl.jaas.config = ${env}`
  )
  assert.ok(!lines.join('\n').includes(SECURE_ADMIN.password), 'the configuration file holds no password')
  return `${lines.join('\n')}\n`
}

function assertNoSecret (kmirror: KmirrorProcess, secrets: readonly string[]): void {
  for (const secret of secrets) {
    assert.ok(!kmirror.stdout.includes(secret) && !kmirror.stderr.includes(secret), `kmirror printed ${JSON.stringify(secret)}:\n${kmirror.stdout}\n${kmirror.stderr}`)
  }
}

/** The `secure` cluster must have been formatted since kafka-local.sh got the user `quoted`. */
function assertSecureHasQuotedUser (): void {
  if (getCluster('secure').external) return
  const properties = readFileSync(join(process.env.KMIRROR_STATE ?? join(REPO_ROOT, '.state'), 'kafka', 'secure', 'server.properties'), 'utf8')
  assert.ok(properties.includes('user_quoted='), 'the secure test cluster predates its user "quoted": run `bash scripts/kafka-local.sh wipe secure` once')
}

test('replicates from the SASL cluster with a password holding " \\ % / and a space, from file, directory and environment references', { timeout: 120_000 }, async t => {
  // Given a topic on the SASL cluster, and a configuration whose credentials come only from config providers
  await ensureClusters(['secure', 'target'])
  assertSecureHasQuotedUser()
  const topic = uniqueName('providers')
  await createTopic('secure', topic, { partitions: 2, t })
  const records: TestRecord[] = Array.from({ length: 300 }, (_, i) => ({
    topic, partition: i % 2, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
  await produce('secure', records)
  const secrets = writeSecrets(QUOTED_USER.username, QUOTED_USER.password, t)
  const config = writeTempFile(providerConfig(topic, QUOTED_USER.username, secrets), '.properties', t)

  // When validate shows it, then the settings show their references, and no form of the password
  const validate = spawnKmirror(['validate', config], { t, env: secrets.env })
  assert.equal((await validate.waitForExit(30_000)).code, 0, validate.stderr)
  assert.ok(validate.stdout.includes(`sasl.jaas.config = ${jaas('quoted', secrets.references[0])}`), validate.stdout)
  assert.ok(validate.stdout.includes(`sasl.jaas.config = ${secrets.references[2]}`), validate.stdout)
  assertNoSecret(validate, printableForms(QUOTED_USER.password))

  // When kmirror runs it
  const kmirror = spawnKmirror(['run', config], { t, env: secrets.env })
  await waitFor(async () => (await endOffsets('target', `A.${topic}`).catch(() => [])).reduce((a, b) => a + b, 0n) === 300n,
    { timeoutMs: 60_000, message: 'records copied from the SASL cluster' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-2000))

  // Then both partitions are exact copies, and the password was never printed
  for (let p = 0; p < 2; p++) assertSamePartition(await readCommitted('secure', topic, p), await readCommitted('target', `A.${topic}`, p), `${topic}-${p}`)
  assertNoSecret(kmirror, printableForms(QUOTED_USER.password))
})

test('validate and a run that fails to authenticate never print a secret, whatever the key is called and however it is escaped', { timeout: 120_000 }, async t => {
  // Given a wrong password with a quote, a backslash and more behind every reference, and misspelt secret keys holding other secrets
  await ensureClusters(['secure', 'target'])
  const wrong = `wr"o\\ng %2F/${randomBytes(6).toString('hex')}`
  const secrets = writeSecrets(SECURE_ADMIN.username, wrong, t)
  const misspelt = [`misspelt-${randomBytes(6).toString('hex')}`, `misspelt-${randomBytes(6).toString('hex')}`, `misspelt-${randomBytes(6).toString('hex')}`]
  const config = writeTempFile(providerConfig(uniqueName('providers-bad'), SECURE_ADMIN.username, secrets, [
    `A.sasl.jaas.confg = ${jaas('admin', misspelt[0] ?? '')}`,
    `A.consumer.ssl.keystore.pasword = ${misspelt[1] ?? ''}`,
    `ssl.truststore.passwrd = ${misspelt[2] ?? ''}`
  ]), '.properties', t)
  const printable = [...printableForms(wrong), SECURE_ADMIN.password, ...misspelt]

  // When validate checks it
  const validate = spawnKmirror(['validate', config], { t, env: secrets.env })
  assert.equal((await validate.waitForExit(30_000)).code, 0, validate.stderr)
  // Then the misspelt keys are named with a suggestion, the settings show their references, and no secret is shown
  assert.match(validate.stdout, /A\.sasl\.jaas\.confg: is not a Kafka client setting, so no client of cluster A reads it \(did you mean A\.sasl\.jaas\.config\?\)/)
  assert.match(validate.stdout, /A\.consumer\.ssl\.keystore\.pasword: .*\(did you mean A\.consumer\.ssl\.keystore\.password\?\)/)
  assert.ok(validate.stdout.includes(`password="${secrets.references[1]}"`), validate.stdout)
  assertNoSecret(validate, printable)

  // When it runs, the broker refuses the password: exit 3, naming the cluster, and still no secret in any log line
  const run = spawnKmirror(['run', config], { t, env: secrets.env })
  const exit = await run.waitForExit(90_000)
  assert.equal(exit.code, 3, run.stderr.slice(-2000))
  assert.match(run.stderr, /cluster A/)
  assert.match(run.stderr, /A\.sasl\.jaas\.confg/)
  assertNoSecret(run, printable)
})

test('an unresolvable reference and a short invalid value from a provider exit 2, naming key and reference, never the value, and write nothing', { timeout: 60_000 }, async t => {
  // Given unique aliases (anything written would create topics named after them), a reference to a missing
  // file, and a two-character value from the environment where a number is needed
  await ensureClusters(['source', 'target'])
  const source = `src${randomBytes(3).toString('hex')}`
  const target = `dst${randomBytes(3).toString('hex')}`
  const before = { source: (await listTopics('source')).sort(), target: (await listTopics('target')).sort() }
  const missing = `/nonexistent/${uniqueName('secrets')}.properties`
  const variable = `KMIRROR_TEST_BYTES_${randomBytes(3).toString('hex').toUpperCase()}`
  const file = writeTempFile([
    `clusters = ${source}, ${target}`, `${source}.bootstrap.servers = ${getCluster('source').bootstrap}`, `${target}.bootstrap.servers = ${getCluster('target').bootstrap}`,
    `${source}->${target}.enabled = true`, ...PROVIDERS,
    `${target}.ssl.truststore.password = \${file:${missing}:truststore.password}`,
    `${source}.consumer.fetch.max.bytes = \${env:${variable}}`
  ].join('\n'), '.properties', t)

  // When kmirror runs on it
  const kmirror = spawnKmirror(['run', file], { t, env: { [variable]: 'q7' } })
  const exit = await kmirror.waitForExit(30_000)

  // Then it exits 2 with the keys, lines and references named, the short value nowhere, and no topic appeared anywhere
  assert.equal(exit.code, 2, kmirror.stderr)
  assert.ok(kmirror.stderr.includes(`${target}.ssl.truststore.password: line 10: \${file:${missing}:truststore.password}: ${missing} cannot be read (no such file or directory)`), kmirror.stderr)
  assert.ok(kmirror.stderr.includes(`${source}.consumer.fetch.max.bytes: must be a whole number (a Java int), not the value of \${env:${variable}}`), kmirror.stderr)
  assert.ok(!/\bq7\b/.test(kmirror.stderr + kmirror.stdout), kmirror.stderr)
  // (no new topic: one an earlier file deleted may still leave the listing meanwhile, which is not kmirror's doing)
  assert.deepEqual({ source: (await listTopics('source')).filter(n => !before.source.includes(n)), target: (await listTopics('target')).filter(n => !before.target.includes(n)) }, { source: [], target: [] })
})
