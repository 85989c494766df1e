/**
 * OAUTHBEARER access tokens cached and refreshed as Java's ExpiringCredentialRefreshingLogin does it, whatever
 * fetches them (the client-credentials retriever, or Java's unsecured tokens).
 *
 * Invariants of TokenCache:
 * - At most one fetch runs at a time; every caller waiting meanwhile gets its result.
 * - A token is handed out until it expires, never after. From its refresh time on (Java's window factor +
 *   jitter, min period and buffer) a new one is fetched in the background, as Java's refreshing login does:
 *   callers keep getting the valid token meanwhile, so new connections do not wait on the token endpoint.
 *   Only a caller without a valid token waits for the fetch.
 * - After a failed fetch, no new one starts for 10 s (Java's re-login retry delay). Meanwhile the old token is
 *   handed out while it is valid, and once it has expired (or when there is none) callers get the error of the
 *   failed fetch, so the operator sees why there is no token ("token endpoint unreachable"), not the broker
 *   refusing an expired one.
 * - A token that has already expired when it arrives (this machine's clock ahead of the identity provider's) is
 *   a failed fetch, with a message saying so: it is never handed out, and the next fetch waits 10 s like after
 *   any failure (a refresh time in the past would fetch on every call).
 */

import { ErrorCodes, KmirrorError } from '../errors.ts'

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

  /**
   * A valid token: the cached one until it expires (refreshed in the background from its refresh time on), else
   * a new one.
   */
  async token (): Promise<string> {
    const now = this.#now()
    const current = this.#current !== undefined && now < this.#current.expiresAt ? this.#current : undefined
    if (current !== undefined && now < this.#refreshAt) return current.value
    if (this.#failure !== undefined && now < this.#failure.retryAt) {
      if (current !== undefined) return current.value
      throw this.#failure.error
    }
    this.#pending ??= this.#renew()
    if (current !== undefined) return current.value
    return await this.#pending
  }

  /** One fetch; its failure is remembered for every caller (and never left unhandled by a background refresh). */
  #renew (): Promise<string> {
    const pending = this.#fetchValid().then(token => {
      this.#current = token
      this.#failure = undefined
      this.#refreshAt = refreshTime(token, this.#now(), this.#settings, Math.random())
      return token.value
    }, (err: unknown) => {
      this.#failure = { error: err, retryAt: this.#now() + RETRY_AFTER_FAILED_REFRESH_MS }
      throw err
    }).finally(() => { this.#pending = undefined })
    pending.catch(() => undefined)
    return pending
  }

  async #fetchValid (): Promise<Token> {
    const token = await this.#fetch()
    const now = this.#now()
    if (token.expiresAt <= now) {
      throw new KmirrorError(ErrorCodes.AUTHENTICATION, `the OAUTHBEARER token just fetched had already expired (exp ${new Date(token.expiresAt).toISOString()}, ` +
        `this machine's clock ${new Date(now).toISOString()}): the identity provider's clock and this machine's differ; check both (NTP). kmirror asks again in ${RETRY_AFTER_FAILED_REFRESH_MS / 1000} s`, { retriable: true })
    }
    return token
  }
}
