import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { fetchClientCredentialsToken, readJwt, type ClientCredentials } from '../../../src/kafka/oauth-client-credentials.ts'

const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url')
function jwt (claims: object): string {
  return `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.c2lnbmF0dXJl`
}

describe('readJwt', () => {
  it('reads exp and iat as epoch milliseconds, and requires exp and the subject claim', () => {
    assert.deepEqual(readJwt(jwt({ sub: 'kmirror', exp: 1000, iat: 10 }), 'sub'), { value: jwt({ sub: 'kmirror', exp: 1000, iat: 10 }), expiresAt: 1_000_000, issuedAt: 10_000 })
    assert.equal(readJwt(jwt({ sub: 'kmirror' }), 'sub'), undefined)
    assert.equal(readJwt(jwt({ exp: 1000 }), 'sub'), undefined)
    assert.notEqual(readJwt(jwt({ client: 'kmirror', exp: 1000 }), 'client'), undefined)
    assert.equal(readJwt('opaque-token', 'sub'), undefined)
  })
})

describe('fetchClientCredentialsToken (a local token endpoint)', () => {
  let server: Server
  let base = ''
  const requests: { headers: IncomingMessage['headers'], body: string, url: string }[] = []
  const replies: { status: number, body: string }[] = []
  const dir = mkdtempSync(join(tmpdir(), 'kmirror-oauth-'))

  before(async () => {
    server = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk: Buffer) => { body += chunk.toString() })
      req.on('end', () => {
        requests.push({ headers: req.headers, body, url: req.url ?? '' })
        const reply = replies.shift() ?? { status: 500, body: '{}' }
        res.writeHead(reply.status, { 'Content-Type': 'application/json' }).end(reply.body)
      })
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
  })
  after(() => { server.close(); rmSync(dir, { recursive: true, force: true }) })

  function settings (overrides: Partial<ClientCredentials> = {}): ClientCredentials {
    return {
      endpoint: new URL(`${base}/oauth2/token?tenant=x`),
      clientId: 'kmirror-client',
      clientSecret: 'very secret',
      scope: ' kafka.read kafka.write ',
      urlencodeHeader: false,
      retryBackoffMs: 10,
      retryBackoffMaxMs: 2000,
      connectTimeoutMs: 2000,
      readTimeoutMs: 2000,
      subjectClaim: 'sub',
      ...overrides
    }
  }

  it('posts the client-credentials grant as Java does: Basic authorization, form body with the trimmed scope', async () => {
    requests.length = 0
    const token = jwt({ sub: 'kmirror-client', exp: 2_000_000_000 })
    replies.push({ status: 200, body: JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }) })
    const got = await fetchClientCredentialsToken(settings(), 'cluster A')
    assert.equal(got.value, token)
    assert.equal(got.expiresAt, 2_000_000_000_000)
    const [request] = requests
    assert.equal(request?.url, '/oauth2/token?tenant=x')
    assert.equal(request?.headers.authorization, `Basic ${Buffer.from('kmirror-client:very secret').toString('base64')}`)
    assert.equal(request?.headers['content-type'], 'application/x-www-form-urlencoded')
    assert.equal(request?.headers.accept, 'application/json')
    assert.equal(request?.body, 'grant_type=client_credentials&scope=kafka.read+kafka.write')
  })

  it('URL-encodes the client id and secret in the header with sasl.oauthbearer.header.urlencode, and sends no scope when there is none', async () => {
    requests.length = 0
    replies.push({ status: 200, body: JSON.stringify({ access_token: jwt({ sub: 'x', exp: 2_000_000_000 }) }) })
    await fetchClientCredentialsToken(settings({ urlencodeHeader: true, clientId: 'id:1', scope: undefined }), 'cluster A')
    assert.equal(requests[0]?.headers.authorization, `Basic ${Buffer.from('id%3A1:very+secret').toString('base64')}`)
    assert.equal(requests[0]?.body, 'grant_type=client_credentials')
  })

  it('fails at once on 401, naming the cluster, the URL without its query and the status, never the secret', async () => {
    requests.length = 0
    replies.push({ status: 401, body: JSON.stringify({ error: 'invalid_client', error_description: 'bad secret' }) })
    const err = await fetchClientCredentialsToken(settings(), 'cluster A').then(() => undefined, (e: unknown) => e)
    assert.ok(err instanceof KmirrorError)
    assert.equal(err.code, ErrorCodes.AUTHENTICATION)
    assert.equal(err.message, `cluster A: the OAUTHBEARER token endpoint ${base}/oauth2/token answered HTTP 401 (invalid_client: bad secret): check the client id and secret (sasl.oauthbearer.client.credentials.client.id/secret, or clientId/clientSecret in sasl.jaas.config) and sasl.oauthbearer.scope`)
    assert.equal(requests.length, 1)
  })

  it('retries a 503 with back-off and takes the token of the next answer', async () => {
    requests.length = 0
    replies.push({ status: 503, body: '' }, { status: 503, body: '' }, { status: 200, body: JSON.stringify({ access_token: jwt({ sub: 'x', exp: 2_000_000_000 }) }) })
    await fetchClientCredentialsToken(settings(), 'cluster A')
    assert.equal(requests.length, 3)
  })

  it('gives up after sasl.login.retry.backoff.max.ms', async () => {
    replies.length = 0
    const started = Date.now()
    await assert.rejects(fetchClientCredentialsToken(settings({ retryBackoffMaxMs: 300, retryBackoffMs: 50 }), 'cluster A'), /answered HTTP 500/)
    assert.ok(Date.now() - started < 2000)
  })

  it('refuses an answer whose token is not a JWT with exp and sub, as the Java client does', async () => {
    replies.push({ status: 200, body: JSON.stringify({ access_token: 'opaque' }) })
    await assert.rejects(fetchClientCredentialsToken(settings(), 'cluster A'), /returned an access token that is not a JWT with an "exp" and a "sub" claim/)
    replies.push({ status: 200, body: JSON.stringify({ token: 'x' }) })
    await assert.rejects(fetchClientCredentialsToken(settings(), 'cluster A'), /answered without an access_token/)
  })

  it('names an endpoint that cannot be reached', async () => {
    await assert.rejects(fetchClientCredentialsToken(settings({ endpoint: new URL('http://127.0.0.1:1/token'), retryBackoffMaxMs: 0 }), 'cluster B'), /^KmirrorError: cluster B: the OAUTHBEARER token endpoint http:\/\/127\.0\.0\.1:1\/token could not be reached/)
  })

  it('reads the token from a file: URL each time', async () => {
    const file = join(dir, 'token.jwt')
    writeFileSync(file, `${jwt({ sub: 'f', exp: 2_000_000_000 })}\n`)
    assert.equal((await fetchClientCredentialsToken(settings({ endpoint: pathToFileURL(file) }), 'cluster A')).value, jwt({ sub: 'f', exp: 2_000_000_000 }))
  })
})
