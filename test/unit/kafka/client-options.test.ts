import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { jaasOption, toConnectOptions } from '../../../src/kafka/client-options.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'

const BOOTSTRAP = { 'bootstrap.servers': 'a:9092' }
const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cret";'
const CA = '-----BEGIN CERTIFICATE-----\nMIIca\n-----END CERTIFICATE-----\n'
const CHAIN = '-----BEGIN CERTIFICATE-----\nMIIchain\n-----END CERTIFICATE-----\n'
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIkey\n-----END PRIVATE KEY-----\n'

const dir = mkdtempSync(join(tmpdir(), 'kmirror-client-options-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function pemFile (name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

/** Asserts that `fn` throws a CONFIG_INVALID KmirrorError whose message matches `pattern`; returns it. */
function configError (fn: () => unknown, pattern: RegExp): KmirrorError {
  let caught: unknown
  assert.throws(fn, (err: unknown) => { caught = err; return true })
  assert.ok(caught instanceof KmirrorError)
  assert.equal(caught.code, ErrorCodes.CONFIG_INVALID)
  assert.match(caught.message, pattern)
  return caught
}

describe('toConnectOptions: bootstrap and timeouts', () => {
  it('splits bootstrap.servers on commas, trimming blanks and dropping empty entries', () => {
    const options = toConnectOptions({ 'bootstrap.servers': ' a:9092 , b:9093,,c:9094 , ' }, 'kmirror-A-B')
    assert.deepEqual(options.bootstrapBrokers, ['a:9092', 'b:9093', 'c:9094'])
    assert.equal(options.clientId, 'kmirror-A-B')
  })

  it('refuses a client without bootstrap.servers, naming the key and the client', () => {
    configError(() => toConnectOptions({}, 'kmirror-A'), /kmirror-A has no bootstrap\.servers/)
    configError(() => toConnectOptions({ 'bootstrap.servers': ' , ' }, 'kmirror-A'), /bootstrap\.servers/)
  })

  it('takes timeouts and retry back-off from the Java keys, with Java\'s defaults otherwise', () => {
    const defaults = toConnectOptions(BOOTSTRAP, 'c')
    assert.deepEqual([defaults.connectTimeout, defaults.requestTimeout, defaults.timeout, defaults.retryDelay], [10_000, 30_000, 30_000, 100])
    const set = toConnectOptions({ ...BOOTSTRAP, 'socket.connection.setup.timeout.ms': '5000', 'request.timeout.ms': '12000', 'retry.backoff.ms': '250' }, 'c')
    assert.deepEqual([set.connectTimeout, set.requestTimeout, set.timeout, set.retryDelay], [5000, 12_000, 12_000, 250])
  })

  it('falls back to the default for a timeout that is blank, negative or not an integer', () => {
    for (const raw of ['', ' ', '-1', '1.5', 'abc']) {
      assert.equal(toConnectOptions({ ...BOOTSTRAP, 'request.timeout.ms': raw }, 'c').requestTimeout, 30_000, JSON.stringify(raw))
    }
  })

  it('sets neither SASL nor TLS for PLAINTEXT, the default protocol', () => {
    const options = toConnectOptions({ ...BOOTSTRAP, 'sasl.jaas.config': PLAIN_JAAS, 'ssl.truststore.certificates': CA }, 'c')
    assert.equal(options.sasl, undefined)
    assert.equal(options.tls, undefined)
  })
})

describe('toConnectOptions: SASL', () => {
  it('reads PLAIN credentials from sasl.jaas.config with SASL_PLAINTEXT, without TLS', () => {
    const options = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': PLAIN_JAAS }, 'c')
    assert.deepEqual(options.sasl, { mechanism: 'PLAIN', username: 'alice', password: 's3cret' })
    assert.equal(options.tls, undefined)
  })

  it('accepts SCRAM-SHA-256 and SCRAM-SHA-512, and protocol and mechanism in any case', () => {
    const jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="pw";'
    for (const mechanism of ['SCRAM-SHA-256', 'scram-sha-512']) {
      const options = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'sasl_plaintext', 'sasl.mechanism': mechanism, 'sasl.jaas.config': jaas }, 'c')
      assert.deepEqual(options.sasl, { mechanism: mechanism.toUpperCase(), username: 'bob', password: 'pw' })
    }
  })

  it('uses both SASL and TLS with SASL_SSL', () => {
    const options = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': PLAIN_JAAS, 'ssl.truststore.certificates': CA }, 'c')
    assert.equal(options.sasl?.username, 'alice')
    assert.equal(options.tls?.ca, CA)
  })

  it('refuses an unsupported mechanism, GSSAPI by default, naming sasl.mechanism and the supported ones', () => {
    configError(() => toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_SSL', 'sasl.jaas.config': PLAIN_JAAS }, 'c'),
      /sasl\.mechanism=GSSAPI is not supported: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512/)
    configError(() => toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'OAUTHBEARER' }, 'c'),
      /sasl\.mechanism=OAUTHBEARER/)
  })

  it('refuses a sasl.jaas.config without username or password, naming the key and the mechanism', () => {
    const props = { ...BOOTSTRAP, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-256' }
    configError(() => toConnectOptions({ ...props, 'sasl.jaas.config': 'ScramLoginModule required password="pw";' }, 'c'),
      /sasl\.jaas\.config must name username="\.\.\." and password="\.\.\." for SASL\/SCRAM-SHA-256/)
    configError(() => toConnectOptions({ ...props, 'sasl.jaas.config': 'ScramLoginModule required username="u";' }, 'c'), /sasl\.jaas\.config/)
    configError(() => toConnectOptions(props, 'c'), /sasl\.jaas\.config/)
  })
})

describe('toConnectOptions: TLS', () => {
  it('reads the CA and the client key and certificate chain from PEM files', () => {
    // A Java PEM keystore file holds the private key and the chain; Node's TLS takes each part from the same text.
    const options = toConnectOptions({
      ...BOOTSTRAP,
      'security.protocol': 'SSL',
      'ssl.truststore.location': pemFile('ca.pem', CA),
      'ssl.keystore.location': pemFile('keystore.pem', KEY + CHAIN)
    }, 'c')
    assert.deepEqual(options.tls, { ca: CA, cert: KEY + CHAIN, key: KEY + CHAIN })
    assert.equal(options.sasl, undefined)
  })

  it('prefers inline PEM text to file locations', () => {
    const options = toConnectOptions({
      ...BOOTSTRAP,
      'security.protocol': 'SSL',
      'ssl.truststore.certificates': CA,
      'ssl.truststore.location': join(dir, 'absent-ca.pem'),
      'ssl.keystore.certificate.chain': CHAIN,
      'ssl.keystore.location': join(dir, 'absent-chain.pem')
    }, 'c')
    assert.deepEqual(options.tls, { ca: CA, cert: CHAIN })
  })

  it('uses the system CAs and no client certificate when no store is set', () => {
    assert.deepEqual(toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL' }, 'c').tls, {})
  })

  it('refuses an unreadable PEM file, naming the key and the path and keeping the cause', () => {
    const missing = join(dir, 'missing.pem')
    const err = configError(() => toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.truststore.location': missing }, 'c'),
      new RegExp(`^ssl\\.truststore\\.location=${missing.replaceAll('.', '\\.')} cannot be read: point it at a readable PEM file$`))
    assert.equal((err.cause as NodeJS.ErrnoException).code, 'ENOENT')
    configError(() => toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': PLAIN_JAAS, 'ssl.keystore.location': dir }, 'c'),
      /^ssl\.keystore\.location=.* cannot be read/)
  })

  it('skips host name verification only when ssl.endpoint.identification.algorithm is empty', () => {
    const off = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.endpoint.identification.algorithm': '' }, 'c')
    assert.equal(typeof off.tls?.checkServerIdentity, 'function')
    assert.equal(off.tls?.checkServerIdentity?.('broker', {} as never), undefined)
    const on = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.endpoint.identification.algorithm': 'https' }, 'c')
    assert.equal(on.tls?.checkServerIdentity, undefined)
  })

  it('takes the private key from a PEM keystore file that holds key and chain, as Java does', () => {
    const options = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': pemFile('keystore.pem', KEY + CHAIN) }, 'c')
    assert.equal(options.tls?.key, KEY + CHAIN)
  })

  it('passes ssl.key.password as the passphrase of an encrypted private key', () => {
    const options = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.keystore.certificate.chain': CHAIN, 'ssl.keystore.key': KEY, 'ssl.key.password': 'kp' }, 'c')
    assert.equal(options.tls?.passphrase, 'kp')
  })
})

describe('jaasOption', () => {
  const line = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="p\\"w\\\\d" serviceName=kafka;'

  it('reads a quoted value', () => {
    assert.equal(jaasOption(line, 'username'), 'alice')
  })

  it('unescapes escaped quotes and backslashes inside a quoted value', () => {
    assert.equal(jaasOption(line, 'password'), 'p"w\\d')
  })

  it('reads an unquoted value up to the next blank or semicolon', () => {
    assert.equal(jaasOption(line, 'serviceName'), 'kafka')
    assert.equal(jaasOption('LoginModule required username=bob password=x;', 'password'), 'x')
  })

  it('allows blanks around = and an empty quoted value', () => {
    assert.equal(jaasOption('M required username = "carol" password="";', 'username'), 'carol')
    assert.equal(jaasOption('M required username = "carol" password="";', 'password'), '')
  })

  it('returns undefined for a missing option, and does not match an option whose name merely ends with it', () => {
    assert.equal(jaasOption(line, 'token'), undefined)
    assert.equal(jaasOption('M required myusername="mallory";', 'username'), undefined)
    assert.equal(jaasOption('', 'username'), undefined)
  })

  it('reads an option at the very start of the text', () => {
    assert.equal(jaasOption('username="dave"', 'username'), 'dave')
  })
})
