/**
 * OAUTHBEARER access tokens cached and refreshed as Java's ExpiringCredentialRefreshingLogin does it, whatever
 * fetches them (the client-credentials retriever, or Java's unsecured tokens).
 *
 * Invariants of TokenCache:
 * - At most one fetch runs at a time; every caller waiting meanwhile gets its result.
 * - A token is handed out until its refresh time (Java's window factor + jitter, min period and buffer) and
 *   never once it has expired; after that the next caller fetches a new one.
 * - After a failed fetch, no new one starts for 10 s (Java's re-login retry delay). Meanwhile the old token is
 *   handed out while it is valid, and once it has expired (or when there is none) callers get the error of the
 *   failed fetch, so the operator sees why there is no token ("token endpoint unreachable"), not the broker
 *   refusing an expired one.
 */

export interface RefreshSettings {
  /** sasl.login.refresh.window.factor (0.8), .window.jitter (0.05), .min.period.seconds (60), .buffer.seconds (300). */
  readonly windowFactor: number
  readonly windowJitter: number
  readonly minPeriodSeconds: number
  readonly bufferSeconds: number
}

export const DEFAULT_REFRESH: RefreshSettings = { windowFactor: 0.8, windowJitter: 0.05, minPeriodSeconds: 60, bufferSeconds: 300 }

/** A token and its lifetime (epoch ms): `issuedAt` is the `iat` claim when there is one. */
export interface Token {
  readonly value: string
  readonly expiresAt: number
  readonly issuedAt?: number
}

const RETRY_AFTER_FAILED_REFRESH_MS = 10_000

/**
 * When to replace a token (ExpiringCredentialRefreshingLogin.refreshMs). Worked example with the defaults and a
 * one-hour token issued now: 0.8..0.85 of 3600 s = 48..51 min, inside [now + 60 s, expiry - 300 s], so 48..51 min.
 * A 10 s token cannot fit 60 s + 300 s of margins, so it is replaced after 8..8.5 s.
 */
export function refreshTime (token: Token, now: number, settings: RefreshSettings, random: number): number {
  const pct = settings.windowFactor + settings.windowJitter * random
  const { expiresAt } = token
  if (now + 1000 * (settings.minPeriodSeconds + settings.bufferSeconds) > expiresAt) return now + Math.floor((expiresAt - now) * pct)
  const start = token.issuedAt ?? now
  const proposed = start + Math.floor((expiresAt - start) * pct)
  const bufferStart = expiresAt - settings.bufferSeconds * 1000
  if (proposed > bufferStart) return bufferStart
  return Math.max(proposed, now + settings.minPeriodSeconds * 1000)
}

export class TokenCache {
  readonly #fetch: () => Promise<Token>
  readonly #settings: RefreshSettings
  readonly #now: () => number
  #current: Token | undefined
  #refreshAt = 0
  #pending: Promise<string> | undefined
  /** The error of the last fetch while it failed, and when the next fetch may start. */
  #failure: { readonly error: unknown, readonly retryAt: number } | undefined

  constructor (fetch: () => Promise<Token>, settings: RefreshSettings = DEFAULT_REFRESH, now: () => number = Date.now) {
    this.#fetch = fetch
    this.#settings = settings
    this.#now = now
  }

  /** A valid token: the cached one until its refresh time (or expiry), else a new one. */
  async token (): Promise<string> {
    const now = this.#now()
    const current = this.#current
    if (current !== undefined && now < Math.min(this.#refreshAt, current.expiresAt)) return current.value
    if (this.#failure !== undefined && now < this.#failure.retryAt) throw this.#failure.error
    this.#pending ??= this.#renew().finally(() => { this.#pending = undefined })
    return await this.#pending
  }

  async #renew (): Promise<string> {
    try {
      const token = await this.#fetch()
      this.#current = token
      this.#failure = undefined
      this.#refreshAt = refreshTime(token, this.#now(), this.#settings, Math.random())
      return token.value
    } catch (err) {
      const now = this.#now()
      this.#failure = { error: err, retryAt: now + RETRY_AFTER_FAILED_REFRESH_MS }
      const old = this.#current
      if (old === undefined || now >= old.expiresAt) throw err
      this.#refreshAt = Math.min(this.#failure.retryAt, old.expiresAt)
      return old.value
    }
  }
}
