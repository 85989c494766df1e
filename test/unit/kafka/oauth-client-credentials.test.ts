import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { fetchClientCredentialsToken, MAX_ANSWER_BYTES, readJwt, type ClientCredentials } from '../../../src/kafka/oauth-client-credentials.ts'

const fixture = (name: string): string => resolve(import.meta.dirname, '..', '..', 'fixtures', 'tls', name)

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
      endpoint: new URL(`${base}/oauth2/token?tenant=x`.replace('http://', 'http://user:pw-in-url@')),
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
    const got = await fetchClientCredentialsToken(settings())
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
    await fetchClientCredentialsToken(settings({ urlencodeHeader: true, clientId: 'id:1', scope: undefined }))
    assert.equal(requests[0]?.headers.authorization, `Basic ${Buffer.from('id%3A1:very+secret').toString('base64')}`)
    assert.equal(requests[0]?.body, 'grant_type=client_credentials')
  })

  it('URL-encodes special characters of the secret as Java\'s URLEncoder does, and sends a scope with special characters form-encoded', async () => {
    requests.length = 0
    replies.push({ status: 200, body: JSON.stringify({ access_token: jwt({ sub: 'x', exp: 2_000_000_000 }) }) })
    await fetchClientCredentialsToken(settings({ urlencodeHeader: true, clientId: 'app@tenant', clientSecret: 'p@ss:w/rd+=&%é ~*._-', scope: 'api://kafka/.default openid' }))
    assert.equal(requests[0]?.headers.authorization, `Basic ${Buffer.from('app%40tenant:p%40ss%3Aw%2Frd%2B%3D%26%25%C3%A9+%7E*._-').toString('base64')}`)
    assert.equal(requests[0]?.body, 'grant_type=client_credentials&scope=api%3A%2F%2Fkafka%2F.default+openid')
  })

  it('sends the secret as it is without sasl.oauthbearer.header.urlencode', async () => {
    requests.length = 0
    replies.push({ status: 200, body: JSON.stringify({ access_token: jwt({ sub: 'x', exp: 2_000_000_000 }) }) })
    await fetchClientCredentialsToken(settings({ clientSecret: 'p@ss:w/rd é' }))
    assert.equal(requests[0]?.headers.authorization, `Basic ${Buffer.from('kmirror-client:p@ss:w/rd é', 'utf8').toString('base64')}`)
  })

  it('fails at once on 401, naming the URL without its user info and query, and the status, never the secret', async () => {
    requests.length = 0
    replies.push({ status: 401, body: JSON.stringify({ error: 'invalid_client', error_description: 'bad secret' }) })
    const err = await fetchClientCredentialsToken(settings()).then(() => undefined, (e: unknown) => e)
    assert.ok(err instanceof KmirrorError)
    assert.equal(err.code, ErrorCodes.AUTHENTICATION)
    assert.equal(err.message, `the OAUTHBEARER token endpoint ${base}/oauth2/token answered HTTP 401 (invalid_client: bad secret): check the client id and secret (sasl.oauthbearer.client.credentials.client.id/secret, or clientId/clientSecret in sasl.jaas.config) and sasl.oauthbearer.scope`)
    assert.equal(requests.length, 1)
  })

  it('retries a 503 with back-off and takes the token of the next answer', async () => {
    requests.length = 0
    replies.push({ status: 503, body: '' }, { status: 503, body: '' }, { status: 200, body: JSON.stringify({ access_token: jwt({ sub: 'x', exp: 2_000_000_000 }) }) })
    await fetchClientCredentialsToken(settings())
    assert.equal(requests.length, 3)
  })

  it('gives up after sasl.login.retry.backoff.max.ms', async () => {
    replies.length = 0
    const started = Date.now()
    await assert.rejects(fetchClientCredentialsToken(settings({ retryBackoffMaxMs: 300, retryBackoffMs: 50 })), /answered HTTP 500/)
    // 300 ms of back-off plus the attempts themselves; the bound only catches a retry loop that does not stop.
    assert.ok(Date.now() - started < 10_000)
  })

  it('refuses an answer whose token is not a JWT with exp and sub, as the Java client does', async () => {
    replies.push({ status: 200, body: JSON.stringify({ access_token: 'opaque' }) })
    await assert.rejects(fetchClientCredentialsToken(settings()), /returned an access token that is not a JWT with an "exp" and a "sub" claim/)
    replies.push({ status: 200, body: JSON.stringify({ token: 'x' }) })
    await assert.rejects(fetchClientCredentialsToken(settings()), /answered without an access_token/)
  })

  it('names an endpoint that cannot be reached', async () => {
    await assert.rejects(fetchClientCredentialsToken(settings({ endpoint: new URL('http://127.0.0.1:1/token'), retryBackoffMaxMs: 0 })), /^KmirrorError: the OAUTHBEARER token endpoint http:\/\/127\.0\.0\.1:1\/token could not be reached \(connect ECONNREFUSED 127\.0\.0\.1:1\): check the URL/)
  })

  it('reads the token from a file: URL each time', async () => {
    const file = join(dir, 'token.jwt')
    writeFileSync(file, `${jwt({ sub: 'f', exp: 2_000_000_000 })}\n`)
    assert.equal((await fetchClientCredentialsToken(settings({ endpoint: pathToFileURL(file) }))).value, jwt({ sub: 'f', exp: 2_000_000_000 }))
  })
})

describe('fetchClientCredentialsToken: endpoints that do not answer properly', () => {
  const servers: NetServer[] = []
  after(() => { for (const server of servers) server.close() })

  /** A TCP server whose connections `onConnection` handles; its port. */
  async function listen (onConnection: (socket: Socket) => void): Promise<number> {
    const server = createNetServer(socket => {
      socket.on('error', () => undefined)
      onConnection(socket)
    })
    servers.push(server)
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    return typeof address === 'object' && address !== null ? address.port : 0
  }

  function settings (url: string, overrides: Partial<ClientCredentials> = {}): ClientCredentials {
    return {
      endpoint: new URL(url), clientId: 'kmirror-client', clientSecret: 'very secret', scope: undefined, urlencodeHeader: false,
      retryBackoffMs: 10, retryBackoffMaxMs: 0, connectTimeoutMs: 300, readTimeoutMs: 300, subjectClaim: 'sub', ...overrides
    }
  }

  /** Runs `fetch` and returns its error and how long it took. */
  async function failure (fetch: Promise<unknown>): Promise<{ message: string, ms: number }> {
    const started = Date.now()
    const err = await fetch.then(() => undefined, (e: unknown) => e)
    assert.ok(err instanceof KmirrorError, String(err))
    assert.equal(err.code, ErrorCodes.AUTHENTICATION)
    return { message: err.message, ms: Date.now() - started }
  }

  it('gives up on an endpoint that trickles its answer byte by byte after sasl.login.read.timeout.ms in all', { timeout: 20_000 }, async () => {
    // Given an endpoint that sends its status line, then one byte every 50 ms, forever
    const port = await listen(socket => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n')
        const timer = setInterval(() => socket.write(' '), 50)
        socket.on('close', () => clearInterval(timer))
      })
    })
    // When a token is fetched with a read timeout of 300 ms
    const { message, ms } = await failure(fetchClientCredentialsToken(settings(`http://127.0.0.1:${port}/token`)))
    // Then it fails as a read timeout, although a byte arrived every 50 ms
    assert.equal(message, `the OAUTHBEARER token endpoint http://127.0.0.1:${port}/token did not answer within sasl.login.read.timeout.ms = 300 ms of connecting: the identity provider is slow or stuck; kmirror retries for up to sasl.login.retry.backoff.max.ms`)
    assert.ok(ms < 10_000, `took ${ms} ms`)
  })

  it('gives up on an endpoint that accepts the request and never answers, retrying within sasl.login.retry.backoff.max.ms', { timeout: 20_000 }, async () => {
    let connections = 0
    const port = await listen(() => { connections++ })
    const { message } = await failure(fetchClientCredentialsToken(settings(`http://127.0.0.1:${port}/token`, { retryBackoffMaxMs: 500, retryBackoffMs: 100 })))
    assert.match(message, /did not answer within sasl\.login\.read\.timeout\.ms = 300 ms of connecting/)
    assert.equal(connections, 2, 'one retry: 100 ms of back-off fit in 500 ms, the next 200 ms did not after two 300 ms attempts')
  })

  it('names a connection that is not established within sasl.login.connect.timeout.ms (here: a TLS handshake that never ends) as unreachable', { timeout: 20_000 }, async () => {
    // A TCP server that never speaks TLS: the https connection is never established.
    const port = await listen(() => undefined)
    const { message, ms } = await failure(fetchClientCredentialsToken(settings(`https://127.0.0.1:${port}/token`)))
    assert.equal(message, `the OAUTHBEARER token endpoint https://127.0.0.1:${port}/token could not be reached (no connection within sasl.login.connect.timeout.ms = 300 ms): check the URL and that the endpoint is reachable from here`)
    assert.ok(ms < 10_000, `took ${ms} ms`)
  })

  it('Given sasl.login.connect.timeout.ms = 0 and sasl.login.read.timeout.ms = 0, when the endpoint answers after a while, then the token is taken: 0 is no deadline, as in Java', { timeout: 20_000 }, async () => {
    // Given an endpoint that answers 300 ms after the request
    const token = jwt({ sub: 'patient', exp: 2_000_000_000 })
    const port = await listen(socket => {
      socket.once('data', () => {
        const body = JSON.stringify({ access_token: token })
        setTimeout(() => socket.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`), 300)
      })
    })
    // When a token is fetched with both timeouts 0 and no retries
    const got = await fetchClientCredentialsToken(settings(`http://127.0.0.1:${port}/token`, { connectTimeoutMs: 0, readTimeoutMs: 0 }))
    // Then it is the endpoint's token
    assert.equal(got.value, token)
  })

  it('Given timeouts of 0, then an answer larger than a token answer is still refused', { timeout: 20_000 }, async () => {
    const port = await listen(socket => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n')
        socket.end(Buffer.alloc(MAX_ANSWER_BYTES + 1, 0x20))
      })
    })
    const { message } = await failure(fetchClientCredentialsToken(settings(`http://127.0.0.1:${port}/token`, { connectTimeoutMs: 0, readTimeoutMs: 0 })))
    assert.match(message, /answered with more than \d+ bytes, which is no token answer/)
  })

  it('refuses an answer larger than a token answer can be, without retrying', { timeout: 20_000 }, async () => {
    let connections = 0
    const port = await listen(socket => {
      connections++
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n')
        socket.end(Buffer.alloc(MAX_ANSWER_BYTES + 1, 0x20))
      })
    })
    const { message } = await failure(fetchClientCredentialsToken(settings(`http://127.0.0.1:${port}/token`, { retryBackoffMaxMs: 5000 })))
    assert.equal(message, `the OAUTHBEARER token endpoint http://127.0.0.1:${port}/token answered with more than ${MAX_ANSWER_BYTES} bytes, which is no token answer: check sasl.oauthbearer.token.endpoint.url`)
    assert.equal(connections, 1)
  })
})

describe('fetchClientCredentialsToken: an https endpoint with a private CA', () => {
  let server: HttpsServer
  let url = ''
  before(async () => {
    server = createHttpsServer({ cert: readFileSync(fixture('endpoint.pem')), key: readFileSync(fixture('endpoint-key.pem')) }, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ access_token: jwt({ sub: 'tls', exp: 2_000_000_000 }) }))
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    url = `https://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/token`
  })
  after(() => server.close())

  const base = { clientId: 'id', clientSecret: 'secret', scope: undefined, urlencodeHeader: false, retryBackoffMs: 10, retryBackoffMaxMs: 0, connectTimeoutMs: 2000, readTimeoutMs: 2000, subjectClaim: 'sub' }

  it('trusts the endpoint through the given CA certificates, and names the TLS failure without them', async () => {
    const ca = [readFileSync(fixture('other-ca.pem'), 'utf8')]
    assert.equal((await fetchClientCredentialsToken({ ...base, endpoint: new URL(url), tls: { ca, verifyHostname: true } })).value, jwt({ sub: 'tls', exp: 2_000_000_000 }))
    await assert.rejects(fetchClientCredentialsToken({ ...base, endpoint: new URL(url) }), /could not be reached \(self-signed certificate in certificate chain|unable to verify the first certificate|unable to get local issuer certificate/)
  })

  it('checks the host name unless ssl.endpoint.identification.algorithm is empty', async () => {
    const ca = [readFileSync(fixture('other-ca.pem'), 'utf8')]
    const byName = new URL(url.replace('127.0.0.1', 'localhost'))
    await assert.rejects(fetchClientCredentialsToken({ ...base, endpoint: byName, tls: { ca, verifyHostname: true } }), /could not be reached \(Hostname\/IP does not match certificate's altnames/)
    assert.equal((await fetchClientCredentialsToken({ ...base, endpoint: byName, tls: { ca, verifyHostname: false } })).value, jwt({ sub: 'tls', exp: 2_000_000_000 }))
  })
})

