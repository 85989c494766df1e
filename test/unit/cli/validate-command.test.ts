/**
 * `kmirror validate` as users run it (a child process; no Kafka needed): whatever the keys are called, no
 * secret of the file reaches stdout or stderr.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'

const MAIN = join(import.meta.dirname, '..', '..', '..', 'src', 'cli', 'main.ts')
const dir = mkdtempSync(join(tmpdir(), 'kmirror-validate-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const JAAS = (password: string): string => `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${password}";`
const SECRETS = ['misspelt-jaas-secret', 'keystore-misspelt-pw', 'truststore-misspelt-pw', 'consumer-misspelt-pw', 'secret-from-file', 'secret-from-env', 'literal-jaas-pw']

function validate (lines: readonly string[], env: Record<string, string> = {}): { code: number | null, output: string } {
  const file = join(dir, `mm2-${Math.random().toString(36).slice(2)}.properties`)
  writeFileSync(file, `${lines.join('\n')}\n`)
  const result = spawnSync(process.execPath, [MAIN, 'validate', file], { encoding: 'utf8', env: { ...process.env, ...env } })
  return { code: result.status, output: `${result.stdout}\n${result.stderr}` }
}

const secretsFile = join(dir, 'secrets.properties')
writeFileSync(secretsFile, 'password=secret-from-file\n')
const BASE = [
  'clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true',
  'config.providers = file, env', 'config.providers.file.class = FileConfigProvider', 'config.providers.env.class = EnvVarConfigProvider',
  'A.security.protocol = SASL_PLAINTEXT', 'A.sasl.mechanism = PLAIN', `A.sasl.jaas.config = ${JAAS(`\${file:${secretsFile}:password}`)}`,
  'B.security.protocol = SASL_PLAINTEXT', 'B.sasl.mechanism = PLAIN', `B.sasl.jaas.config = ${JAAS('literal-jaas-pw')}`,
  `B.admin.sasl.jaas.config = ${JAAS('${env:KM_TEST_PW}')}`,
  `sasl.jaas.confg = ${JAAS('misspelt-jaas-secret')}`, 'ssl.keystore.pasword = keystore-misspelt-pw', 'ssl.truststore.passwrd = truststore-misspelt-pw',
  `A.consumer.sasl.jaas.confg = ${JAAS('consumer-misspelt-pw')}`
]

describe('kmirror validate', () => {
  it('warns about misspelt secret keys with a suggestion and prints no secret at all', () => {
    const { code, output } = validate(BASE, { KM_TEST_PW: 'secret-from-env' })
    assert.equal(code, 0, output)
    assert.match(output, /sasl\.jaas\.confg: is not a key kmirror or MM2 knows, so it is ignored \(did you mean sasl\.jaas\.config\?\)/)
    assert.match(output, /ssl\.keystore\.pasword: .*\(did you mean ssl\.keystore\.password\?\)/)
    assert.match(output, /ssl\.truststore\.passwrd: .*\(did you mean ssl\.truststore\.password\?\)/)
    assert.match(output, /A\.consumer\.sasl\.jaas\.confg: .*\(did you mean A\.consumer\.sasl\.jaas\.config\?\)/)
    for (const secret of SECRETS) assert.ok(!output.includes(secret), `${secret} printed:\n${output}`)
  })

  it('exits 2 on an unresolvable reference, naming key, line and reference, and still prints no secret', () => {
    const { code, output } = validate([...BASE, 'A->B.topics = ${file:/no/such/file.properties:topics}'], {})
    assert.equal(code, 2, output)
    assert.match(output, /B\.admin\.sasl\.jaas\.config: line 14: \$\{env:KM_TEST_PW\}: environment variable KM_TEST_PW is not set/)
    assert.match(output, /A->B\.topics: line 19: \$\{file:\/no\/such\/file\.properties:topics\}: \/no\/such\/file\.properties cannot be read \(no such file or directory\)/)
    for (const secret of SECRETS) assert.ok(!output.includes(secret), `${secret} printed:\n${output}`)
  })
})

describe('kmirror validate with an unreadable enabled value', () => {
  it('names the key and the value it cannot read when no flow is enabled', () => {
    const { code, output } = validate(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = yes'])
    assert.equal(code, 2)
    assert.match(output, /no enabled source->target replication flows \(set e\.g\. A->B\.enabled = true\); A->B\.enabled: "yes" is read as false/)
  })

  it('names a top-level enabled = yes too', () => {
    const { code, output } = validate(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'enabled = yes'])
    assert.equal(code, 2)
    assert.match(output, /; enabled: "yes" is read as false/)
  })
})

describe('kmirror validate with MM2 interval keys', () => {
  const flow = ['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true']
  it('refuses an interval of 0 that MM2 cannot start with, and says what to write instead', () => {
    const { code, output } = validate([...flow, 'refresh.topics.interval.seconds = 0', 'A->B.refresh.groups.interval.seconds = 0'])
    assert.equal(code, 2)
    assert.match(output, /A->B\.refresh\.topics\.interval\.seconds: is 0, which MM2 cannot run \(its scheduler refuses a period of 0 and MirrorSourceConnector fails to start\): give a period in seconds above 0, or turn the job off with refresh\.topics\.enabled = false \(a negative interval also turns it off, as in MM2\)/)
    assert.match(output, /A->B\.refresh\.groups\.interval\.seconds: is 0, which MM2 cannot run \(its scheduler refuses a period of 0 and MirrorCheckpointConnector fails to start\)/)
  })

  it('accepts emit.checkpoints.interval.seconds = 0, as MM2, and warns how often kmirror checkpoints then', () => {
    const { code, output } = validate([...flow, 'A->B.emit.checkpoints.interval.seconds = 0'])
    assert.equal(code, 0, output)
    assert.match(output, /A->B\.emit\.checkpoints\.interval\.seconds: is 0: MM2 checkpoints without any pause; kmirror checkpoints every 1 s/)
  })

  it('accepts a negative interval: the job is off, as in MM2', () => {
    const { code, output } = validate([...flow, 'refresh.topics.interval.seconds = -1', 'sync.topic.acls.interval.seconds = -1'])
    assert.equal(code, 0, output)
    assert.match(output, /refresh\.topics +off/)
  })
})
