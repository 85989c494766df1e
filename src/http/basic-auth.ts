/**
 * HTTP basic authentication for kmirror's endpoint (`--http-auth-file`): a file of `user:hash` lines, the hash in
 * SHA-256-crypt or SHA-512-crypt (`openssl passwd -5`, sha-crypt.ts). Blank lines and lines starting with `#` are
 * skipped.
 *
 * Invariants: a password is only ever compared as its hash, with timingSafeEqual; an unknown user is hashed with
 * the first user's setting, so a wrong name takes as long as a wrong password; neither the header, the password,
 * nor a hash of the file is logged or echoed (a 401 says only that credentials are missing or wrong). A verified
 * Authorization header is remembered for VERIFIED_TTL_MS after its last use (by its SHA-256, never in clear), so a page refreshing
 * every second or a scrape does not pay thousands of hash rounds each time.
 * Hashing runs on the thread that copies the data and heartbeats the group: whoever reaches the port must not be
 * able to stall it. So a password longer than MAX_PASSWORD_BYTES is refused unhashed (SHA-crypt's cost grows
 * with the square of its length), the file's rounds are capped at MAX_FILE_ROUNDS, and at most HASH_BURST hashes
 * run per second: past that, requests with unverified headers get 429 without hashing until the second is over.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { MAX_ROUNDS, MIN_ROUNDS, parseShaCryptSetting, shaCrypt, type ShaCryptSetting } from './sha-crypt.ts'

export interface HttpCredentials {
  /** User name to its stored hash. */
  readonly users: ReadonlyMap<string, { readonly hash: string, readonly setting: ShaCryptSetting }>
}

/** How to make a line, for messages and docs. */
export const MAKE_LINE_HINT = 'make each line with: printf \'%s:%s\\n\' USER "$(openssl passwd -5)" >> FILE'

const HASH_SHAPE = /^\$[56]\$(?:rounds=\d+\$)?[^$:]{0,16}\$[./0-9A-Za-z]+$/

/** Reads the lines of an auth file; throws an Error naming FILE and the line (never its hash) on a bad one. */
export function parseAuthFile (text: string, file: string): HttpCredentials {
  const users = new Map<string, { hash: string, setting: ShaCryptSetting }>()
  const lines = text.split(/\r?\n/)
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const where = `${file} line ${index + 1}`
    const colon = line.indexOf(':')
    if (colon <= 0) throw new Error(`${where} is not "user:hash": ${MAKE_LINE_HINT}`)
    const user = line.slice(0, colon)
    const hash = line.slice(colon + 1)
    const setting = parseShaCryptSetting(hash)
    if (!HASH_SHAPE.test(hash) || setting === null) {
      throw new Error(`${where}: the hash of user "${user}" is not SHA-256-crypt or SHA-512-crypt ($5$ or $6$, rounds ${MIN_ROUNDS}-${MAX_ROUNDS}; ` +
        `bcrypt, apr1 and plain passwords are not accepted): ${MAKE_LINE_HINT}`)
    }
    if (setting.rounds > MAX_FILE_ROUNDS) {
      throw new Error(`${where}: the hash of user "${user}" has rounds=${setting.rounds}, above ${MAX_FILE_ROUNDS}: each wrong guess would hold kmirror's data path that long; make it with openssl passwd -5 (5000 rounds)`)
    }
    if (users.has(user)) throw new Error(`${where}: user "${user}" is listed twice: keep one line per user`)
    users.set(user, { hash, setting })
  }
  if (users.size === 0) throw new Error(`${file} lists no user: ${MAKE_LINE_HINT}`)
  return { users }
}

/** What an Authorization header gets. */
export const AuthOutcomes = { ALLOWED: 'allowed', REFUSED: 'refused', THROTTLED: 'throttled' } as const
export type AuthOutcome = (typeof AuthOutcomes)[keyof typeof AuthOutcomes]

const VERIFIED_TTL_MS = 60_000
const MAX_VERIFIED = 64
/** Longer passwords are refused without hashing; `openssl passwd` users type far fewer. */
const MAX_PASSWORD_BYTES = 256
/** About 90 ms per SHA-256-crypt check on a slow core; the default of openssl passwd is 5000. */
const MAX_FILE_ROUNDS = 100_000
/** Hashes per second, for all clients together (a scrape and a console each need one a minute). */
const HASH_BURST = 10

/** Whether an Authorization header carries a user and password of CREDENTIALS. */
export class BasicAuthenticator {
  readonly #credentials: HttpCredentials
  /** An unknown user is hashed like the first known one (same scheme, rounds and salt length). */
  readonly #unknownUser: { readonly hash: string, readonly setting: ShaCryptSetting }
  /** SHA-256 of a verified header → when it stops counting as verified. */
  readonly #verified = new Map<string, number>()
  #second = 0
  #hashesThisSecond = 0

  constructor (credentials: HttpCredentials) {
    this.#credentials = credentials
    const first = credentials.users.values().next().value
    this.#unknownUser = { hash: '', setting: first?.setting ?? { id: '5', rounds: 5000, explicitRounds: false, salt: 'kmirrorunknown' } }
  }

  isAuthorized (header: string | undefined, now: number = Date.now()): boolean {
    return this.check(header, now) === AuthOutcomes.ALLOWED
  }

  check (header: string | undefined, now: number = Date.now()): AuthOutcome {
    if (header === undefined || !/^basic /i.test(header)) return AuthOutcomes.REFUSED
    const key = createHash('sha256').update(header).digest('base64')
    const until = this.#verified.get(key)
    if (until !== undefined && until > now) {
      // Sliding: a scraper in use never falls back to hashing, where a flood of bad headers could throttle it.
      this.#verified.set(key, now + VERIFIED_TTL_MS)
      return AuthOutcomes.ALLOWED
    }
    const credentials = decode(header.slice(6).trim())
    if (credentials === undefined) return AuthOutcomes.REFUSED
    if (!this.#mayHash(now)) return AuthOutcomes.THROTTLED
    if (!this.#matches(credentials.user, credentials.password)) return AuthOutcomes.REFUSED
    if (this.#verified.size >= MAX_VERIFIED) this.#verified.clear()
    this.#verified.set(key, now + VERIFIED_TTL_MS)
    return AuthOutcomes.ALLOWED
  }

  #mayHash (now: number): boolean {
    const second = Math.floor(now / 1000)
    if (second !== this.#second) {
      this.#second = second
      this.#hashesThisSecond = 0
    }
    return ++this.#hashesThisSecond <= HASH_BURST
  }

  #matches (user: string, password: string): boolean {
    const stored = this.#credentials.users.get(user)
    const entry = stored ?? this.#unknownUser
    const computed = Buffer.from(shaCrypt(password, entry.setting))
    const expected = Buffer.from(entry.hash)
    const equal = computed.length === expected.length && timingSafeEqual(computed, expected)
    return stored !== undefined && equal
  }
}

/** The user and password of a basic header's payload; undefined when it has no `:` or the password is too long. */
function decode (encoded: string): { user: string, password: string } | undefined {
  if (encoded.length > 4 * Math.ceil((MAX_PASSWORD_BYTES + 512) / 3)) return undefined
  const decoded = Buffer.from(encoded, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  const password = decoded.slice(colon + 1)
  if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES) return undefined
  return { user: decoded.slice(0, colon), password }
}

/** HANDLER behind basic authentication: a request without the right credentials gets 401 and nothing else. */
export function withBasicAuth (authenticator: BasicAuthenticator, handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const outcome = authenticator.check(req.headers.authorization)
    if (outcome === AuthOutcomes.ALLOWED) {
      handler(req, res)
      return
    }
    if (outcome === AuthOutcomes.THROTTLED) {
      res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('too many unverified requests this second: retry in a second\n')
      return
    }
    res.writeHead(401, { 'www-authenticate': 'Basic realm="kmirror", charset="UTF-8"', 'content-type': 'text/plain' })
      .end('unauthorized: this endpoint needs a user and password of kmirror\'s --http-auth-file\n')
  }
}
