import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DEFAULT_REFRESH, refreshTime, TokenCache, type Token } from '../../../src/kafka/oauth-token-cache.ts'

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

describe('TokenCache', () => {
  it('fetches once for concurrent callers, reuses the token until its refresh time, then fetches again', async () => {
    let now = 0
    let fetches = 0
    const cache = new TokenCache(async () => ({ value: `t${++fetches}`, expiresAt: now + 10_000 }), { ...DEFAULT_REFRESH, windowJitter: 0 }, () => now)
    assert.deepEqual(await Promise.all([cache.token(), cache.token(), cache.token()]), ['t1', 't1', 't1'])
    now = 7999
    assert.equal(await cache.token(), 't1')
    now = 8000
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
    // When the retry 10 s later (at 90 s) fails too, 5 s before expiry
    now = 95_000
    assert.equal(await cache.token(), 'good')
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
})
