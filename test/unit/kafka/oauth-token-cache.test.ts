import assert from 'node:assert/strict'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { fetchClientCredentialsToken } from '../../../src/kafka/oauth-client-credentials.ts'
import { DEFAULT_REFRESH, refreshTime, TokenCache, type Token } from '../../../src/kafka/oauth-token-cache.ts'
import { waitFor } from '../../helpers/wait.ts'

describe('refreshTime (Java\'s ExpiringCredentialRefreshingLogin)', () => {
  const HOUR = 3600_000
  it('refreshes a one-hour token after 80 % of its life plus up to 5 % jitter', () => {
    const token = { value: 't', issuedAt: 0, expiresAt: HOUR }
    assert.equal(refreshTime(token, 0, DEFAULT_REFRESH, 0), 0.8 * HOUR)
    assert.equal(refreshTime(token, 0, DEFAULT_REFRESH, 1), 0.85 * HOUR)
  })

  it('keeps the buffer before expiry and the minimum period after now', () => {
    const noJitter = { ...DEFAULT_REFRESH, windowJitter: 0, windowFactor: 0.99 }
    assert.equal(refreshTime({ value: 't', issuedAt: 0, expiresAt: HOUR }, 0, noJitter, 0), HOUR - 300_000)
    const early = { ...DEFAULT_REFRESH, windowJitter: 0, windowFactor: 0.5 }
    assert.equal(refreshTime({ value: 't', issuedAt: 0, expiresAt: 12 * 60_000 }, 5 * 60_000, early, 0), 6 * 60_000)
  })

  it('refreshes a token too short for both margins at the window factor of what is left', () => {
    assert.equal(refreshTime({ value: 't', expiresAt: 10_000 }, 0, DEFAULT_REFRESH, 0), 8000)
  })
})

/** Lets fetches started in the background settle (the fakes answer at once). */
async function settled (): Promise<void> {
  await new Promise(resolve => setImmediate(resolve))
}

describe('TokenCache', () => {
  it('fetches once for concurrent callers, reuses the token until its refresh time, then fetches again', async () => {
    let now = 0
    let fetches = 0
    const cache = new TokenCache(async () => ({ value: `t${++fetches}`, expiresAt: now + 10_000 }), { ...DEFAULT_REFRESH, windowJitter: 0 }, () => now)
    assert.deepEqual(await Promise.all([cache.token(), cache.token(), cache.token()]), ['t1', 't1', 't1'])
    now = 7999
    assert.equal(await cache.token(), 't1')
    assert.equal(fetches, 1)
    now = 8000
    // still valid: handed out while the next one is fetched in the background
    assert.equal(await cache.token(), 't1')
    await settled()
    assert.equal(await cache.token(), 't2')
    assert.equal(fetches, 2)
  })

  it('hands out the old token while it is valid when a refresh fails, retrying 10 s later; raises once it expired', async () => {
    let now = 0
    let fail = false
    let fetches = 0
    const cache = new TokenCache(async (): Promise<Token> => {
      fetches++
      if (fail) throw new Error('endpoint down')
      return { value: 'good', expiresAt: now + 100_000 }
    }, { ...DEFAULT_REFRESH, windowJitter: 0 }, () => now)
    assert.equal(await cache.token(), 'good')
    fail = true
    now = 80_000
    assert.equal(await cache.token(), 'good')
    now = 85_000
    assert.equal(await cache.token(), 'good')
    assert.equal(fetches, 2, 'no new attempt within 10 s of a failed one')
    now = 100_000
    await assert.rejects(cache.token(), /endpoint down/)
  })

  it('never hands out an expired token after a failed refresh: the last failure is raised until the next attempt', async () => {
    // Given a token living 100 s whose refreshes fail from 80 s on
    let now = 0
    let fail = false
    let fetches = 0
    const cache = new TokenCache(async (): Promise<Token> => {
      fetches++
      if (fail) throw new Error(`token endpoint down (attempt ${fetches})`)
      return { value: 'good', expiresAt: now + 100_000 }
    }, { ...DEFAULT_REFRESH, windowJitter: 0 }, () => now)
    assert.equal(await cache.token(), 'good')
    fail = true
    now = 80_000
    assert.equal(await cache.token(), 'good')
    await settled()
    // When the retry 10 s later (at 95 s) fails too, 5 s before expiry
    now = 95_000
    assert.equal(await cache.token(), 'good')
    await settled()
    assert.equal(fetches, 3)
    now = 99_999
    assert.equal(await cache.token(), 'good')
    // Then from the expiry on, callers get the last failure (not the expired token), without a new attempt
    now = 100_000
    await assert.rejects(cache.token(), /token endpoint down \(attempt 3\)/)
    now = 104_999
    await assert.rejects(cache.token(), /token endpoint down \(attempt 3\)/)
    assert.equal(fetches, 3)
    // And 10 s after the failed attempt a new one starts, and its token is handed out
    fail = false
    now = 105_000
    assert.equal(await cache.token(), 'good')
    assert.equal(fetches, 4)
  })

  it('raises the failure of the first fetch to callers within 10 s, then tries again', async () => {
    let now = 0
    let fetches = 0
    const cache = new TokenCache(async (): Promise<Token> => {
      fetches++
      if (fetches === 1) throw new Error('endpoint down')
      return { value: 'late', expiresAt: now + 100_000 }
    }, DEFAULT_REFRESH, () => now)
    await assert.rejects(cache.token(), /endpoint down/)
    now = 9_999
    await assert.rejects(cache.token(), /endpoint down/)
    now = 10_000
    assert.equal(await cache.token(), 'late')
    assert.equal(fetches, 2)
  })

  it('Given a token past its refresh time and a slow token endpoint, when connections ask for a token, then they get the valid one at once while one fetch runs in the background', { timeout: 5000 }, async () => {
    // Given a token endpoint whose answers arrive only when the test releases them
    let now = 0
    const answers: ((token: Token) => void)[] = []
    const cache = new TokenCache(async () => await new Promise<Token>(resolve => answers.push(resolve)), { ...DEFAULT_REFRESH, windowJitter: 0 }, () => now)
    const first = cache.token()
    answers.shift()?.({ value: 'old', expiresAt: 100_000 })
    assert.equal(await first, 'old')
    // When callers ask after the refresh time (80 s), while the endpoint has not answered yet
    now = 80_000
    assert.deepEqual(await Promise.all([cache.token(), cache.token()]), ['old', 'old'])
    now = 90_000
    assert.equal(await cache.token(), 'old')
    // Then one fetch is under way, and its token is handed out once it arrives
    assert.equal(answers.length, 1)
    answers.shift()?.({ value: 'new', expiresAt: 200_000 })
    await settled()
    assert.equal(await cache.token(), 'new')
    assert.equal(answers.length, 0)
  })

  it('Given a refresh still under way when the token expires, then callers wait for it', { timeout: 5000 }, async () => {
    let now = 0
    const answers: ((token: Token) => void)[] = []
    const cache = new TokenCache(async () => await new Promise<Token>(resolve => answers.push(resolve)), { ...DEFAULT_REFRESH, windowJitter: 0 }, () => now)
    const first = cache.token()
    answers.shift()?.({ value: 'old', expiresAt: 100_000 })
    assert.equal(await first, 'old')
    now = 80_000
    assert.equal(await cache.token(), 'old')
    now = 100_000
    let waited: string | undefined
    const waiting = cache.token().then(value => { waited = value })
    await settled()
    assert.equal(waited, undefined, 'the expired token is not handed out')
    answers.shift()?.({ value: 'new', expiresAt: 200_000 })
    await waiting
    assert.equal(waited, 'new')
    assert.equal(answers.length, 0, 'one fetch for both')
  })

  it('Given a token endpoint whose tokens have already expired when they arrive (clock skew), then the fetch fails saying so, and the next one waits 10 s', async () => {
    // Given this machine's clock 1 h ahead of the identity provider's
    let now = 3_600_000
    let fetches = 0
    const cache = new TokenCache(async (): Promise<Token> => ({ value: `t${++fetches}`, expiresAt: now - 3_600_000 + 600_000 }), DEFAULT_REFRESH, () => now)
    // When a token is asked for, then the error names the expiry and the clocks
    await assert.rejects(cache.token(), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.AUTHENTICATION)
      assert.equal(err.message, 'the OAUTHBEARER token just fetched had already expired (exp 1970-01-01T00:10:00.000Z, this machine\'s clock 1970-01-01T01:00:00.000Z): ' +
        'the identity provider\'s clock and this machine\'s differ; check both (NTP). kmirror asks again in 10 s')
      return true
    })
    // And callers within 10 s get the same error without a new request
    now += 9_999
    await assert.rejects(cache.token(), /had already expired/)
    assert.equal(fetches, 1)
    now += 1
    await assert.rejects(cache.token(), /had already expired/)
    assert.equal(fetches, 2)
  })
})

describe('TokenCache over a slow token endpoint (a local HTTP server)', () => {
  it('Given the endpoint holds its answer to the refresh, when connections ask for a token meanwhile, then each gets the valid token at once, and the new one once the answer arrives', { timeout: 20_000 }, async t => {
    // Given an endpoint that answers the first request at once and holds the next until the test releases it
    const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url')
    const jwt = (sub: string, exp: number): string => `${b64({ alg: 'RS256' })}.${b64({ sub, exp })}.c2ln`
    const held: ServerResponse[] = []
    let requests = 0
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        requests++
        if (requests === 1) res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ access_token: jwt('first', 2_000_000_000) }))
        else held.push(res)
      })
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    t.after(() => { for (const res of held) res.destroy(); server.close() })
    const endpoint = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/token`)
    const settings = { endpoint, clientId: 'id', clientSecret: 'secret', scope: undefined, urlencodeHeader: false, retryBackoffMs: 10, retryBackoffMaxMs: 0, connectTimeoutMs: 5000, readTimeoutMs: 15_000, subjectClaim: 'sub' }
    // (a clock of the test's own, issued at 1_000_000_000 s: the token lives 1e9 s, refreshed after 0.8 of it)
    let now = 1_000_000_000_000
    const cache = new TokenCache(async () => await fetchClientCredentialsToken(settings), { ...DEFAULT_REFRESH, windowJitter: 0 }, () => now)
    const first = await cache.token()
    // When connections ask past the refresh time, while the endpoint holds its answer
    now = 1_900_000_000_000
    const started = Date.now()
    assert.equal(await cache.token(), first)
    await waitFor(() => held.length === 1, { timeoutMs: 5000, intervalMs: 10, message: 'the refresh request reached the endpoint' })
    assert.deepEqual(await Promise.all([cache.token(), cache.token(), cache.token()]), [first, first, first])
    // Then none of them waited for the endpoint, and only one request is under way
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`)
    assert.equal(requests, 2)
    // And once the endpoint answers, the new token is handed out
    const next = jwt('second', 2_100_000_000)
    held.shift()?.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ access_token: next }))
    await waitFor(async () => (await cache.token()) === next, { timeoutMs: 5000, intervalMs: 10, message: 'the refreshed token handed out' })
    assert.equal(requests, 2)
  })
})
