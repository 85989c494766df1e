import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, beforeEach, describe, it } from 'node:test'
import { cappedTimeout, toConnectOptions } from '../../../src/kafka/client-options.ts'
import { prepareClientSecurity, resetClientSecurity } from '../../../src/kafka/client-security.ts'
import type { ClusterClientConfig } from '../../../src/config/types.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'

const BOOTSTRAP = { 'bootstrap.servers': 'a:9092' }
const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cret";'

const CA = readFileSync(resolve(import.meta.dirname, '..', '..', 'fixtures', 'tls', 'ca.pem'), 'utf8')

const dir = mkdtempSync(join(tmpdir(), 'kmirror-client-options-'))
after(() => rmSync(dir, { recursive: true, force: true }))
beforeEach(() => resetClientSecurity())

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

  it('never falls back silently: a value validation would have refused is an error naming the key', () => {
    for (const raw of ['', ' ', '1.5', 'abc']) {
      configError(() => toConnectOptions({ ...BOOTSTRAP, 'request.timeout.ms': raw }, 'c'), /^request\.timeout\.ms = .* is not valid/)
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
    assert.deepEqual([options.sasl?.mechanism, options.sasl?.username, options.sasl?.password], ['PLAIN', 'alice', 's3cret'])
    assert.equal(typeof options.sasl?.authenticate, 'function', 'refusals are reported with the mechanism and user')
    assert.equal(options.tls, undefined)
  })

  it('accepts SCRAM-SHA-256 and SCRAM-SHA-512, and the protocol in any case', () => {
    const jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="pw";'
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512']) {
      const options = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'sasl_plaintext', 'sasl.mechanism': mechanism, 'sasl.jaas.config': jaas }, 'c')
      assert.deepEqual([options.sasl?.mechanism, options.sasl?.username, options.sasl?.password], [mechanism, 'bob', 'pw'])
    }
  })

  it('uses both SASL and TLS with SASL_SSL', () => {
    const options = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': PLAIN_JAAS, 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': CA }, 'c')
    assert.equal(options.sasl?.username, 'alice')
    assert.deepEqual(options.tls?.ca, [CA])
  })

  it('refuses GSSAPI (the default), AWS_MSK_IAM and other mechanisms, naming sasl.mechanism and the supported ones', () => {
    configError(() => toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_SSL', 'sasl.jaas.config': PLAIN_JAAS }, 'c'),
      /^sasl\.mechanism is GSSAPI, which kmirror does not support \(GSSAPI is the Java default when sasl\.mechanism is not set\): use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER$/)
    configError(() => toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'AWS_MSK_IAM', 'sasl.jaas.config': PLAIN_JAAS }, 'c'),
      /^sasl\.mechanism is AWS_MSK_IAM, which kmirror does not support/)
  })

  it('refuses a sasl.jaas.config without username or password, naming the key and the mechanism', () => {
    const props = { ...BOOTSTRAP, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-256' }
    configError(() => toConnectOptions({ ...props, 'sasl.jaas.config': 'ScramLoginModule required password="pw";' }, 'c'),
      /sasl\.jaas\.config must name username="\.\.\." and password="\.\.\." for SASL\/SCRAM-SHA-256/)
    configError(() => toConnectOptions({ ...props, 'sasl.jaas.config': 'ScramLoginModule required username="u";' }, 'c'), /sasl\.jaas\.config/)
    configError(() => toConnectOptions(props, 'c'), /sasl\.jaas\.config is not set/)
  })

  it('refuses a sasl.jaas.config with two login modules, as Kafka\'s JaasContext does, naming the key and no value', () => {
    const props = { ...BOOTSTRAP, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN' }
    for (const jaas of [`${PLAIN_JAAS} org.example.OtherLoginModule optional;`, 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password=Xy7pq;Secr3tTail required;']) {
      const error = configError(() => toConnectOptions({ ...props, 'sasl.jaas.config': jaas }, 'c'),
        /^sasl\.jaas\.config has 2 login modules \(entries ending with ;\), and Kafka clients take exactly one: keep only the SASL\/PLAIN login module, e\.g\. org\.apache\.kafka\.common\.security\.plain\.PlainLoginModule required username="\.\.\." password="\.\.\.";/)
      assert.doesNotMatch(error.message, /s3cret|Xy7pq|Secr3tTail|OtherLoginModule/)
    }
    const oauth = { ...BOOTSTRAP, 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'OAUTHBEARER', 'sasl.oauthbearer.token.endpoint.url': 'https://idp/token' }
    configError(() => toConnectOptions({ ...oauth, 'sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="i" clientSecret="s"; other.Module optional;' }, 'c'),
      /^sasl\.jaas\.config has 2 login modules .* keep only the SASL\/OAUTHBEARER login module/)
  })

  it('Given an option Java names null (@=x), then PLAIN leaves it out as Java does, and OAUTHBEARER is refused as Java\'s login fails on it', () => {
    const plain = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password=s3cret@=x;' }, 'c')
    assert.deepEqual([plain.sasl?.username, plain.sasl?.password], ['alice', 's3cret'])
    const oauth = { ...BOOTSTRAP, 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'OAUTHBEARER', 'sasl.oauthbearer.token.endpoint.url': 'https://idp/token', 'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler' }
    const error = configError(() => toConnectOptions({ ...oauth, 'sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="i" clientSecret=Secr3t@=Tail;' }, 'c'),
      /^sasl\.jaas\.config has an option whose name Java reads as null .* on which Java's OAUTHBEARER login fails: remove it, or quote the value it belongs to$/)
    assert.doesNotMatch(error.message, /Secr3t|Tail/)
  })

  it('Given an unquoted password with a ;, then the refusal quotes no part of it', () => {
    const props = { ...BOOTSTRAP, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN' }
    const error = configError(() => toConnectOptions({ ...props, 'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password=Xy7pq;Secr3tTail;' }, 'c'),
      /^sasl\.jaas\.config is not a JAAS config Kafka reads \(the control flag of entry 2 is not one of required, requisite, sufficient, optional\)/)
    assert.doesNotMatch(error.message, /Xy7pq|Secr3tTail/)
  })
})

describe('toConnectOptions: OAUTHBEARER', () => {
  const HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler'
  const OAUTH_JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="jaas-id" clientSecret="jaas-secret" scope="jaas-scope" extension_traceId="abc";'
  const OAUTH = { ...BOOTSTRAP, 'bootstrap.servers': 'oauth:9092', 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'OAUTHBEARER', 'sasl.login.callback.handler.class': HANDLER }

  it('fetches tokens from the token endpoint with the JAAS credentials, and passes extension_* options as SASL extensions', () => {
    const options = toConnectOptions({ ...OAUTH, 'sasl.jaas.config': OAUTH_JAAS, 'sasl.oauthbearer.token.endpoint.url': 'https://idp.example/token' }, 'c')
    assert.equal(options.sasl?.mechanism, 'OAUTHBEARER')
    assert.equal(typeof options.sasl?.token, 'function')
    assert.deepEqual(options.sasl?.oauthBearerExtensions, { traceId: 'abc' })
  })

  it('accepts the pre-3.4 handler name, and refuses handler classes it cannot load', () => {
    const props = { ...OAUTH, 'sasl.jaas.config': OAUTH_JAAS, 'sasl.oauthbearer.token.endpoint.url': 'https://idp2.example/token' }
    assert.doesNotThrow(() => toConnectOptions({ ...props, 'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler' }, 'c'))
    configError(() => toConnectOptions({ ...props, 'sasl.login.callback.handler.class': 'com.example.MyHandler' }, 'c'), /^sasl\.login\.callback\.handler\.class is com\.example\.MyHandler, which kmirror cannot load/)
  })

  it('names what the client-credentials flow misses: the endpoint, a valid URL, the client id and secret', () => {
    configError(() => toConnectOptions({ ...OAUTH, 'bootstrap.servers': 'o1:9092', 'sasl.jaas.config': OAUTH_JAAS }, 'c'), /^sasl\.oauthbearer\.token\.endpoint\.url is not set/)
    const notUrl = configError(() => toConnectOptions({ ...OAUTH, 'bootstrap.servers': 'o2:9092', 'sasl.jaas.config': OAUTH_JAAS, 'sasl.oauthbearer.token.endpoint.url': 'idp/token?client_secret=secret-in-url' }, 'c'), /token\.endpoint\.url is not a URL: write an http:\/\/, https:\/\/ or file: URL$/)
    assert.equal(notUrl.message.includes('secret-in-url'), false)
    configError(() => toConnectOptions({ ...OAUTH, 'bootstrap.servers': 'o3:9092', 'sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientSecret="s";', 'sasl.oauthbearer.token.endpoint.url': 'https://idp/token' }, 'c'), /has no clientId="\.\.\."/)
    configError(() => toConnectOptions({ ...OAUTH, 'bootstrap.servers': 'o4:9092', 'sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="i";', 'sasl.oauthbearer.token.endpoint.url': 'https://idp/token' }, 'c'), /has no clientSecret="\.\.\."/)
  })

  it('refuses a token endpoint without the login callback handler or with the unsecured one, since Java would then make unsecured tokens', () => {
    const { 'sasl.login.callback.handler.class': _, ...withoutHandler } = OAUTH
    const props = { ...withoutHandler, 'sasl.jaas.config': OAUTH_JAAS, 'sasl.oauthbearer.token.endpoint.url': 'https://idp/token' }
    configError(() => toConnectOptions(props, 'c'),
      /^sasl\.login\.callback\.handler\.class is not set, so Java would use its unsecured handler, which ignores sasl\.oauthbearer\.token\.endpoint\.url and makes unsecured tokens: set it to org\.apache\.kafka\.common\.security\.oauthbearer\.OAuthBearerLoginCallbackHandler/)
    const unsecured = 'org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler'
    configError(() => toConnectOptions({ ...props, 'sasl.login.callback.handler.class': unsecured }, 'c'),
      /^sasl\.login\.callback\.handler\.class is Java's unsecured handler, which ignores sasl\.oauthbearer\.token\.endpoint\.url/)
  })

  it('names unusable unsecured-token options without printing their values', () => {
    const { 'sasl.login.callback.handler.class': _, ...withoutHandler } = OAUTH
    const module = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="kmirror"'
    const lifetime = configError(() => toConnectOptions({ ...withoutHandler, 'sasl.jaas.config': `${module} unsecuredLoginLifetimeSeconds="secret-lifetime";` }, 'c'),
      /has an unsecuredLoginLifetimeSeconds option that is not a whole number of seconds above 0/)
    const number = configError(() => toConnectOptions({ ...withoutHandler, 'sasl.jaas.config': `${module} unsecuredLoginNumberClaim_level="secret-number";` }, 'c'),
      /has a unsecuredLoginNumberClaim_level option whose value is not a number/)
    for (const err of [lifetime, number]) assert.equal(/secret-/.test(err.message), false, err.message)
  })

  it('reads the TLS settings of an https token endpoint from the ssl.* options of the JAAS line, naming an unusable one', () => {
    const FIXTURES = resolve(import.meta.dirname, '..', '..', 'fixtures', 'tls')
    const jaas = (options: string): string => `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="i" clientSecret="s" ${options};`
    const props = { ...OAUTH, 'sasl.oauthbearer.token.endpoint.url': 'https://idp/token' }
    assert.doesNotThrow(() => toConnectOptions({ ...props, 'sasl.jaas.config': jaas(`ssl.truststore.type="PEM" ssl.truststore.location="${join(FIXTURES, 'other-ca.pem')}"`) }, 'c'))
    configError(() => toConnectOptions({ ...props, 'sasl.jaas.config': jaas(`ssl.truststore.location="${join(FIXTURES, 'truststore.jks')}" ssl.truststore.password="wrong"`) }, 'c'),
      /^sasl\.jaas\.config has a TLS option for the token endpoint that kmirror cannot use: ssl\.truststore\.password does not open ssl\.truststore\.location = .*truststore\.jks/)
  })

  it('makes Java\'s unsecured tokens without a login callback handler', async () => {
    const { 'sasl.login.callback.handler.class': _, ...withoutHandler } = OAUTH
    const jaas = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="kmirror" unsecuredLoginListClaim_scope=",a,b" unsecuredLoginLifetimeSeconds="60";'
    const options = toConnectOptions({ ...withoutHandler, 'bootstrap.servers': 'o6:9092', 'sasl.jaas.config': jaas }, 'c')
    const token = await (options.sasl?.token as () => Promise<string>)()
    const [header, payload, signature] = token.split('.')
    assert.deepEqual(JSON.parse(Buffer.from(header ?? '', 'base64url').toString()), { alg: 'none' })
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as { sub: string, scope: string[], exp: number, iat: number }
    assert.equal(claims.sub, 'kmirror')
    assert.deepEqual(claims.scope, ['a', 'b'])
    assert.equal(Math.floor(claims.iat) + 60, claims.exp)
    assert.equal(signature, '')
    configError(() => toConnectOptions({ ...withoutHandler, 'bootstrap.servers': 'o7:9092', 'sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;' }, 'c'),
      /has no unsecuredLoginStringClaim_sub="<principal>"/)
  })
})

describe('toConnectOptions: TLS', () => {
  const FIXTURES = resolve(import.meta.dirname, '..', '..', 'fixtures', 'tls')
  const fixture = (name: string): string => join(FIXTURES, name)

  it('reads the truststore and the keystore into ca, cert and key, and uses no SASL with SSL', () => {
    const options = toConnectOptions({
      ...BOOTSTRAP,
      'security.protocol': 'SSL',
      'ssl.truststore.location': fixture('truststore.jks'),
      'ssl.truststore.password': 'trust-secret',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': fixture('client-keystore-encrypted.pem'),
      'ssl.key.password': 'client-key-secret'
    }, 'c')
    assert.equal(options.tls?.ca?.length, 1)
    assert.match(String(options.tls?.cert), /^-----BEGIN CERTIFICATE-----/)
    assert.match(String(options.tls?.key), /^-----BEGIN PRIVATE KEY-----/)
    assert.equal(options.sasl, undefined)
  })

  it('passes a PKCS12 keystore to Node as it is, with its password', () => {
    const options = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.keystore.location': fixture('client.p12'), 'ssl.keystore.password': 'client-store-secret' }, 'c')
    assert.ok(Buffer.isBuffer(options.tls?.pfx))
    assert.equal(options.tls?.passphrase, 'client-store-secret')
  })

  it('uses the system CAs and no client certificate when no store is set', () => {
    assert.deepEqual(toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL' }, 'c').tls, {})
  })

  it('refuses an unreadable store, naming the key and the path and keeping the cause', () => {
    const missing = join(dir, 'missing.pem')
    const err = configError(() => toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': missing }, 'c'),
      new RegExp(`^ssl\\.truststore\\.location = ${missing.replaceAll('.', '\\.')} cannot be read \\(no such file\\): check the path and its permissions$`))
    assert.equal((err.cause as NodeJS.ErrnoException).code, 'ENOENT')
  })

  it('skips host name verification only when ssl.endpoint.identification.algorithm is empty', () => {
    const off = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.endpoint.identification.algorithm': '' }, 'c')
    assert.equal(typeof off.tls?.checkServerIdentity, 'function')
    assert.equal(off.tls?.checkServerIdentity?.('broker', {} as never), undefined)
    const on = toConnectOptions({ ...BOOTSTRAP, 'security.protocol': 'SSL', 'ssl.endpoint.identification.algorithm': 'https' }, 'c')
    assert.equal(on.tls?.checkServerIdentity, undefined)
  })

  it('does not read the stores with PLAINTEXT or SASL_PLAINTEXT, as Java does not', () => {
    assert.equal(toConnectOptions({ ...BOOTSTRAP, 'ssl.truststore.location': join(dir, 'absent.jks') }, 'c').tls, undefined)
  })
})

describe('prepareClientSecurity', () => {
  it('reports every unusable setting of every cluster once, under <alias>.<key>', () => {
    const bad = { 'bootstrap.servers': 'p:9092', 'security.protocol': 'SSL', 'ssl.truststore.location': join(dir, 'absent.jks') }
    const good = { 'bootstrap.servers': 'q:9092' }
    const cluster = (alias: string, props: Record<string, string>): ClusterClientConfig => ({ alias, bootstrapServers: [props['bootstrap.servers'] ?? ''], admin: props, consumer: props, producer: props })
    const problems = prepareClientSecurity([cluster('A', bad), cluster('B', good), cluster('A', bad)])
    assert.deepEqual(problems.map(p => p.key), ['A.ssl.truststore.location'])
    assert.match(problems[0]?.message ?? '', /^\/.*absent\.jks cannot be read \(no such file\)/)
  })
})

describe('client timeouts under a command\'s --timeout', () => {
  it('Given no command deadline (run), then the configured timeout stands', () => {
    assert.equal(cappedTimeout(30_000, undefined), 30_000)
  })

  it('Given --timeout 60 s for the whole command, then a request gets a third of it, so one to a wedged broker leaves time for the retry', () => {
    assert.equal(cappedTimeout(30_000, 60_000), 20_000)
    assert.equal(cappedTimeout(10_000, 90_000), 10_000, 'never more than configured')
  })

  it('Given a shorter --timeout, then a request still gets 10 s, or the whole deadline when that is shorter', () => {
    assert.equal(cappedTimeout(30_000, 30_000), 10_000)
    assert.equal(cappedTimeout(30_000, 15_000), 10_000)
    assert.equal(cappedTimeout(30_000, 5000), 5000)
    assert.equal(cappedTimeout(2000, 15_000), 2000)
  })

  it('Given verify\'s --timeout, which bounds each request, then a request gets all of it', () => {
    assert.equal(cappedTimeout(30_000, 20_000, true), 20_000)
    assert.equal(cappedTimeout(30_000, 60_000, true), 30_000)
  })
})
