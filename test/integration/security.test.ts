/**
 * TLS key and trust stores, SASL and OAUTHBEARER on a real broker (`auth`: one Kafka 4.1.1 JVM with a listener per
 * client authentication). One kmirror process runs seven flows, each reading over one kind of authentication and
 * writing over another, and the records are checked one by one. Then what the operator sees when credentials are
 * wrong: bad stores and unsupported mechanisms exit 2 before anything is written; a wrong SASL password, a wrong
 * OAuth client secret, a missing client certificate, an untrusted broker certificate and a host name the
 * certificate does not hold exit 3 with the cluster and the cause named.
 */
import assert from 'node:assert/strict'
import { createSign } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createServer as createTcpServer, connect as tcpConnect, type AddressInfo, type Server as TcpServer } from 'node:net'
import { resolve } from 'node:path'
import { join } from 'node:path'
import { after, before, test, type TestContext } from 'node:test'
import { AUTH_LISTENERS, AUTH_SECRETS, authCertsDir, ensureClusters, getCluster } from '../helpers/clusters.ts'
import { createTopic, endOffsets, listTopics, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const S = AUTH_SECRETS
const OAUTH_CLIENT = { id: 'kmirror-client', secret: 'kmirror-oauth-secret' }
const TOKEN_LIFETIME_S = 6
const certs = (name: string): string => join(authCertsDir(), name)

/** A local identity provider: client-credentials grant, RS256 JWTs signed with the key whose JWKS the broker reads. */
class TokenEndpoint {
  readonly #server: Server
  /** When each token was issued and when it expires (epoch ms). */
  readonly tokens: { issuedAt: number, expiresAt: number }[] = []
  refused = 0
  url = ''

  constructor () {
    this.#server = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => { body += chunk.toString() })
      req.on('end', () => {
        const expected = `Basic ${Buffer.from(`${OAUTH_CLIENT.id}:${OAUTH_CLIENT.secret}`).toString('base64')}`
        if (req.headers.authorization !== expected || !body.startsWith('grant_type=client_credentials')) {
          this.refused++
          res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client', error_description: 'client authentication failed' }))
          return
        }
        const now = Math.floor(Date.now() / 1000)
        this.tokens.push({ issuedAt: now * 1000, expiresAt: (now + TOKEN_LIFETIME_S) * 1000 })
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ access_token: this.#jwt(now), token_type: 'Bearer', expires_in: TOKEN_LIFETIME_S }))
      })
    })
  }

  #jwt (now: number): string {
    const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url')
    const unsigned = `${part({ alg: 'RS256', typ: 'JWT', kid: 'kmirror-test' })}.${part({ sub: OAUTH_CLIENT.id, iat: now, exp: now + TOKEN_LIFETIME_S, scope: 'kafka' })}`
    return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(readFileSync(certs('jwt-signing-key.pem'))).toString('base64url')}`
  }

  async start (): Promise<void> {
    await new Promise<void>(resolve => this.#server.listen(0, '127.0.0.1', resolve))
    const address = this.#server.address()
    this.url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/oauth2/token`
  }

  close (): void {
    this.#server.close()
  }
}

const idp = new TokenEndpoint()
before(async () => { await Promise.all([ensureClusters(['auth', 'target']), idp.start()]) })
after(() => idp.close())

/** `key = value` lines of one cluster alias. */
function cluster (alias: string, bootstrap: string, settings: Record<string, string>): string[] {
  return [`${alias}.bootstrap.servers = ${bootstrap}`, ...Object.entries(settings).map(([k, v]) => `${alias}.${k} = ${v}`)]
}

/** A PEM file as an mm2.properties value over several lines with `\` continuations, the way Kafka's docs show it. */
function continued (pemFile: string): string {
  return readFileSync(certs(pemFile), 'utf8').trim().split('\n').join(' \\\n    ')
}

const jaas = {
  plain: `org.apache.kafka.common.security.plain.PlainLoginModule required username="${S.user}" password="${S.plain}";`,
  scram: (password: string) => `org.apache.kafka.common.security.scram.ScramLoginModule required username="${S.user}" password="${password}";`,
  oauth: (id: string, secret: string) => `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="${id}" clientSecret="${secret}" scope="kafka";`
}
const OAUTH_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler'

/** Every way in: each alias is one listener of the `auth` cluster with one kind of client authentication. */
function aliases (): Record<string, string[]> {
  const sasl = (mechanism: string, jaasLine: string): Record<string, string> => ({ 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': mechanism, 'sasl.jaas.config': jaasLine })
  const saslSsl = (mechanism: string, jaasLine: string): Record<string, string> => ({ ...sasl(mechanism, jaasLine), 'security.protocol': 'SASL_SSL', 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs('ca.pem') })
  return {
    // mTLS: keystore JKS (key password differs) + truststore PKCS12
    MJKS: cluster('MJKS', AUTH_LISTENERS.mtls, { 'security.protocol': 'SSL', 'ssl.keystore.location': certs('client.jks'), 'ssl.keystore.password': S.clientStore, 'ssl.key.password': S.clientKey, 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.location': certs('truststore.p12'), 'ssl.truststore.password': S.trustStore }),
    // mTLS: keystore PKCS12 under the default type JKS (Java reads it by content) + truststore JKS without its password
    MP12: cluster('MP12', AUTH_LISTENERS.mtls, { 'security.protocol': 'SSL', 'ssl.keystore.location': certs('client.p12'), 'ssl.keystore.password': S.clientStore, 'ssl.truststore.location': certs('truststore.jks') }),
    // mTLS: PEM keystore file with an encrypted key + PEM truststore file
    MPEM: cluster('MPEM', AUTH_LISTENERS.mtls, { 'security.protocol': 'SSL', 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs('client-keystore-encrypted.pem'), 'ssl.key.password': S.clientKey, 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs('ca.pem') }),
    // mTLS: inline PEM key, chain and CA written with backslash continuations
    MINL: cluster('MINL', AUTH_LISTENERS.mtls, { 'security.protocol': 'SSL', 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': continued('client-chain.pem'), 'ssl.keystore.key': continued('client-key.pem'), 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': continued('ca.pem') }),
    PLAIN: cluster('PLAIN', AUTH_LISTENERS.saslPlaintext, sasl('PLAIN', jaas.plain)),
    S256: cluster('S256', AUTH_LISTENERS.saslPlaintext, sasl('SCRAM-SHA-256', jaas.scram(S.scram256))),
    S512: cluster('S512', AUTH_LISTENERS.saslPlaintext, sasl('SCRAM-SHA-512', jaas.scram(S.scram512))),
    TPLAIN: cluster('TPLAIN', AUTH_LISTENERS.saslSsl, saslSsl('PLAIN', jaas.plain)),
    T256: cluster('T256', AUTH_LISTENERS.saslSsl, saslSsl('SCRAM-SHA-256', jaas.scram(S.scram256))),
    T512: cluster('T512', AUTH_LISTENERS.saslSsl, saslSsl('SCRAM-SHA-512', jaas.scram(S.scram512))),
    // OAUTHBEARER, client credentials in JAAS
    OAUTH: cluster('OAUTH', AUTH_LISTENERS.oauth, { ...sasl('OAUTHBEARER', jaas.oauth(OAUTH_CLIENT.id, OAUTH_CLIENT.secret)), 'sasl.login.callback.handler.class': OAUTH_HANDLER, 'sasl.oauthbearer.token.endpoint.url': idp.url }),
    // OAUTHBEARER, the Kafka 4.1 keys win over wrong JAAS values; the pre-3.4 handler name
    OAUTH41: cluster('OAUTH41', AUTH_LISTENERS.oauth, { ...sasl('OAUTHBEARER', jaas.oauth('wrong-id', 'wrong-secret')), 'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler', 'sasl.oauthbearer.token.endpoint.url': idp.url, 'sasl.oauthbearer.client.credentials.client.id': OAUTH_CLIENT.id, 'sasl.oauthbearer.client.credentials.client.secret': OAUTH_CLIENT.secret }),
    // OAUTHBEARER with Java's unsecured tokens (no login callback handler)
    UNSEC: cluster('UNSEC', AUTH_LISTENERS.oauthUnsecured, sasl('OAUTHBEARER', 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="kmirror";')),
    TGT: cluster('TGT', getCluster('target').bootstrap, {})
  }
}

/** Source alias -> target alias: every alias is read or written by one flow. */
const FLOWS: readonly (readonly [string, string])[] = [
  ['MJKS', 'PLAIN'], ['MP12', 'S256'], ['MPEM', 'S512'], ['MINL', 'TPLAIN'], ['OAUTH', 'T256'], ['UNSEC', 'T512'], ['OAUTH41', 'TGT']
]

function config (flows: readonly (readonly [string, string])[], topics: ReadonlyMap<string, string>, extra: readonly string[] = []): string {
  const all = aliases()
  const used = [...new Set(flows.flat())]
  return [
    `clusters = ${used.join(', ')}`,
    ...used.flatMap(alias => all[alias] ?? []),
    ...flows.flatMap(([s, t]) => [`${s}->${t}.enabled = true`, `${s}->${t}.topics = ${topics.get(s) ?? 'none'}`]),
    'replication.factor = 1', 'offset-syncs.topic.replication.factor = 1', 'checkpoints.topic.replication.factor = 1',
    'heartbeats.topic.replication.factor = 1', 'offset.storage.replication.factor = 1',
    // Offset syncs on the target: the source aliases all name one physical cluster.
    'offset-syncs.topic.location = target',
    'heartbeats.replication.enabled = false', 'emit.heartbeats.enabled = false', 'emit.checkpoints.enabled = false',
    'sync.topic.acls.enabled = false',
    ...extra
  ].join('\n') + '\n'
}

function records (topic: string, count: number, from = 0): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition: (from + i) % 2, key: Buffer.from(`k${from + i}`), value: Buffer.from(`v${from + i}`), headers: [[Buffer.from('h'), Buffer.from(`${from + i}`)]], timestamp: TIMESTAMP_BASE + BigInt(from + i)
  }))
}

async function total (clusterName: 'auth' | 'target', topic: string): Promise<bigint> {
  return (await endOffsets(clusterName, topic).catch(() => [])).reduce((a, b) => a + b, 0n)
}

test('one kmirror process replicates over mTLS (JKS, PKCS12, PEM file, inline PEM), SASL PLAIN/SCRAM-256/SCRAM-512 over SASL_PLAINTEXT and SASL_SSL, and OAUTHBEARER, refreshing short-lived tokens', { timeout: 180_000 }, async t => {
  // Given a two-partition topic per source alias on the auth cluster
  const topics = new Map(FLOWS.map(([source]) => [source, uniqueName(`sec-${source.toLowerCase()}`)]))
  await Promise.all([...topics.values()].map(topic => createTopic('auth', topic, { partitions: 2, t })))
  await Promise.all([...topics.values()].map(topic => produce('auth', records(topic, 20))))

  // When one kmirror runs every flow
  const kmirror = spawnKmirror(['run', writeTempFile(config(FLOWS, topics), '.properties', t)], { t })
  const where = (target: string): 'auth' | 'target' => (target === 'TGT' ? 'target' : 'auth')
  const copied = async (count: bigint): Promise<boolean> => {
    const totals = await Promise.all(FLOWS.map(async ([s, target]) => await total(where(target), `${s}.${topics.get(s) ?? ''}`)))
    return totals.every(n => n === count)
  }
  await waitFor(async () => await copied(20n), { timeoutMs: 90_000, message: `the first 20 records of every flow\n${kmirror.stderr.slice(-3000)}` })

  // and, while OAUTHBEARER tokens live 6 s, more records are written once every token issued so far has expired
  // and both token caches (OAUTH, OAUTH41) fetched new tokens after that: the broker ends a session when its token
  // expires, so the connections that copy these records re-authenticated with the new tokens
  const firstExpiry = Math.max(...idp.tokens.map(token => token.expiresAt))
  const issuedAfterExpiry = (): number => idp.tokens.filter(token => token.issuedAt >= firstExpiry).length
  await waitFor(() => issuedAfterExpiry() >= 2, { timeoutMs: 30_000, message: 'kmirror fetched new OAuth tokens after the first ones expired' })
  await Promise.all([...topics.values()].map(topic => produce('auth', records(topic, 10, 20))))
  await waitFor(async () => await copied(30n), { timeoutMs: 60_000, message: `the next 10 records of every flow\n${kmirror.stderr.slice(-3000)}` })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0, kmirror.stderr.slice(-3000))

  // Then every partition of every flow is an exact copy, and no secret was logged
  for (const [source, target] of FLOWS) {
    const topic = topics.get(source) ?? ''
    for (let p = 0; p < 2; p++) {
      assertSamePartition(await readCommitted('auth', topic, p), await readCommitted(where(target), `${source}.${topic}`, p), `${source}->${target} ${topic}-${p}`)
    }
  }
  assert.equal(idp.refused, 0, 'the 4.1 client id and secret won over the wrong JAAS values')
  assert.ok(issuedAfterExpiry() >= 2)
  assertNoSecret(kmirror, SECRETS)
})

/** Every secret of the test setup: none may appear in kmirror's output. */
const SECRETS = [S.plain, S.scram256, S.scram512, S.clientStore, S.clientKey, S.trustStore, OAUTH_CLIENT.secret]

function assertNoSecret (kmirror: { stdout: string, stderr: string }, secrets: readonly string[], what = ''): void {
  for (const secret of secrets) {
    assert.equal(kmirror.stderr.includes(secret) || kmirror.stdout.includes(secret), false, `${what}a secret was printed: ${secret}`)
  }
}

test('a keystore password that does not open the store and an unsupported mechanism exit 2 naming the keys, before anything is written', { timeout: 60_000 }, async t => {
  const badStore = uniqueName('BADSTORE').replaceAll('-', '')
  const gss = uniqueName('GSS').replaceAll('-', '')
  const text = [
    `clusters = ${badStore}, ${gss}`,
    ...cluster(badStore, AUTH_LISTENERS.mtls, { 'security.protocol': 'SSL', 'ssl.keystore.location': certs('client.jks'), 'ssl.keystore.password': 'not-the-password', 'ssl.key.password': S.clientKey }),
    ...cluster(gss, AUTH_LISTENERS.saslPlaintext, { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'GSSAPI' }),
    `${badStore}->${gss}.enabled = true`, 'replication.factor = 1', 'offset.storage.replication.factor = 1'
  ].join('\n')
  const topicsBefore = new Set([...await listTopics('auth'), ...await listTopics('target')])
  const kmirror = spawnKmirror(['run', writeTempFile(text, '.properties', t)], { t })
  const exit = await kmirror.waitForExit(30_000)
  assert.equal(exit.code, 2, kmirror.stderr)
  assert.match(kmirror.stderr, new RegExp(`${gss}\\.sasl\\.mechanism: GSSAPI \\(Kerberos\\) is not supported`))
  assertNoSecret(kmirror, ['not-the-password', ...SECRETS])
  // The store is opened only once the configuration itself is valid: fix the mechanism and see the store problem.
  const fixed = text.replace(`${gss}.sasl.mechanism = GSSAPI`, `${gss}.sasl.mechanism = PLAIN\n${gss}.sasl.jaas.config = ${jaas.plain}`)
  const second = spawnKmirror(['run', writeTempFile(fixed, '.properties', t)], { t })
  assert.equal((await second.waitForExit(30_000)).code, 2, second.stderr)
  assert.match(second.stderr, new RegExp(`${badStore}\\.ssl\\.keystore\\.password: does not open ssl\\.keystore\\.location = .*client\\.jks \\(the store's integrity check failed\\): check the password`))
  assertNoSecret(second, ['not-the-password', ...SECRETS])
  // Nothing was written: no topic at all appeared, kmirror's internal ones (mm2-offsets.*, heartbeats, ...) included
  const created = [...await listTopics('auth'), ...await listTopics('target')].filter(name => !topicsBefore.has(name))
  assert.deepEqual(created, [])
})

/** A TCP proxy on 127.0.0.2 to `target`: the same broker under an address its certificate does not name. */
async function proxyOn127002 (target: string, t: TestContext): Promise<string> {
  const [host = '', port = ''] = target.split(':')
  const server: TcpServer = createTcpServer(client => {
    const upstream = tcpConnect(Number(port), host)
    client.on('error', () => upstream.destroy())
    upstream.on('error', () => client.destroy())
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>(done => server.listen(0, '127.0.0.2', done))
  t.after(() => server.close())
  return `127.0.0.2:${(server.address() as AddressInfo).port}`
}

test('a wrong SCRAM password, a wrong OAuth client secret, a TLS client without a certificate, an untrusted broker certificate and a host name the certificate does not hold each exit 3 naming the cluster and the cause', { timeout: 120_000 }, async t => {
  const mtlsClient = { 'security.protocol': 'SSL', 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs('client-keystore-encrypted.pem'), 'ssl.key.password': S.clientKey }
  const cases = [
    {
      name: 'scram',
      lines: cluster('WRONGPW', AUTH_LISTENERS.saslPlaintext, { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-256', 'sasl.jaas.config': jaas.scram('not-the-password') }),
      alias: 'WRONGPW',
      expect: /check the brokers of cluster WRONGPW \(127\.0\.0\.1:\d+\): the broker at 127\.0\.0\.1:\d+ refused SASL\/SCRAM-SHA-256 authentication of user "alice": check the username and password in sasl\.jaas\.config/,
      secret: 'not-the-password'
    },
    {
      name: 'oauth',
      lines: cluster('BADOAUTH', AUTH_LISTENERS.oauth, { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'OAUTHBEARER', 'sasl.jaas.config': jaas.oauth(OAUTH_CLIENT.id, 'not-the-client-pw'), 'sasl.login.callback.handler.class': OAUTH_HANDLER, 'sasl.oauthbearer.token.endpoint.url': idp.url }),
      alias: 'BADOAUTH',
      expect: new RegExp(`check the brokers of cluster BADOAUTH \\(127\\.0\\.0\\.1:\\d+\\): the OAUTHBEARER token endpoint ${idp.url.replaceAll('.', '\\.')} answered HTTP 401 \\(invalid_client: client authentication failed\\)`),
      secret: 'not-the-client-pw'
    },
    {
      name: 'no client certificate',
      lines: cluster('NOCERT', AUTH_LISTENERS.mtls, { 'security.protocol': 'SSL', 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs('ca.pem') }),
      alias: 'NOCERT',
      expect: /cluster NOCERT\b.*ssl\.client\.auth=required closes TLS connections without a client certificate: set NOCERT\.ssl\.keystore\.location/s,
      secret: undefined
    },
    {
      name: 'untrusted broker certificate',
      lines: cluster('UNTRUSTED', AUTH_LISTENERS.mtls, { ...mtlsClient, 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': resolve(import.meta.dirname, '..', 'fixtures', 'tls', 'other-ca.pem') }),
      alias: 'UNTRUSTED',
      expect: /check the brokers of cluster UNTRUSTED \(127\.0\.0\.1:\d+\): .*the broker's TLS certificate is not trusted \(SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain\): set UNTRUSTED\.ssl\.truststore\.location/,
      secret: undefined
    },
    {
      name: 'host name not in the certificate',
      lines: cluster('WRONGHOST', await proxyOn127002(AUTH_LISTENERS.mtls, t), { ...mtlsClient, 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs('ca.pem') }),
      alias: 'WRONGHOST',
      expect: /check the brokers of cluster WRONGHOST \(127\.0\.0\.2:\d+\): .*the broker's TLS certificate does not name the host kmirror connected to \(ERR_TLS_CERT_ALTNAME_INVALID: [^)]*127\.0\.0\.2[^)]*\): write in WRONGHOST\.bootstrap\.servers .* WRONGHOST\.ssl\.endpoint\.identification\.algorithm = \(empty\)/,
      secret: undefined
    }
  ]
  await Promise.all(cases.map(async c => {
    const text = [`clusters = ${c.alias}, TGT`, ...c.lines, ...cluster('TGT', getCluster('target').bootstrap, {}), `${c.alias}->TGT.enabled = true`,
      'replication.factor = 1', 'offset.storage.replication.factor = 1', 'offset-syncs.topic.replication.factor = 1', 'checkpoints.topic.replication.factor = 1',
      'heartbeats.topic.replication.factor = 1', 'heartbeats.replication.enabled = false'].join('\n')
    const kmirror = spawnKmirror(['run', writeTempFile(text, '.properties', t)], { t })
    const exit = await kmirror.waitForExit(90_000)
    const said = kmirror.stderr.split('\n').filter(l => l.startsWith('kmirror:'))
    t.diagnostic(`${c.name}: exit ${exit.code}: ${said.join(' ')}`)
    assert.equal(exit.code, 3, `${c.name}: ${kmirror.stderr.slice(-2000)}`)
    assert.match(said.join('\n'), c.expect, c.name)
    assert.equal(said.join('\n').match(new RegExp(`cluster ${c.alias}\\b`, 'g'))?.length, 1, `${c.name}: the cluster is named once`)
    assertNoSecret(kmirror, [...(c.secret === undefined ? [] : [c.secret]), ...SECRETS], `${c.name}: `)
  }))
})
