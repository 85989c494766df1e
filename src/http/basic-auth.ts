/**
 * HTTP basic authentication for kmirror's endpoint (`--http-auth-file`): a file of `user:hash` lines, the hash in
 * SHA-256-crypt or SHA-512-crypt (`openssl passwd -5`, sha-crypt.ts). Blank lines and lines starting with `#` are
 * skipped.
 *
 * Invariants: a password is only ever compared as its hash, with timingSafeEqual; an unknown user costs the same
 * hashing as a known one; neither the header, the password, nor a hash of the file is logged or echoed (a 401
 * says only that credentials are missing or wrong). A verified Authorization header is remembered for
 * VERIFIED_TTL_MS (by its SHA-256, never in clear), so a page refreshing every second or a scrape does not pay
 * thousands of hash rounds each time.
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
    if (users.has(user)) throw new Error(`${where}: user "${user}" is listed twice: keep one line per user`)
    users.set(user, { hash, setting })
  }
  if (users.size === 0) throw new Error(`${file} lists no user: ${MAKE_LINE_HINT}`)
  return { users }
}

/** Hashed when the user is unknown, so that a wrong name takes as long as a wrong password. */
const UNKNOWN_USER = { hash: '', setting: { id: '5', rounds: 5000, explicitRounds: false, salt: 'kmirrorunknown' } as const }
const VERIFIED_TTL_MS = 60_000
const MAX_VERIFIED = 64

/** Whether an Authorization header carries a user and password of CREDENTIALS. */
export class BasicAuthenticator {
  readonly #credentials: HttpCredentials
  /** SHA-256 of a verified header → when it stops counting as verified. */
  readonly #verified = new Map<string, number>()

  constructor (credentials: HttpCredentials) {
    this.#credentials = credentials
  }

  isAuthorized (header: string | undefined, now: number = Date.now()): boolean {
    if (header === undefined || !/^basic /i.test(header)) return false
    const key = createHash('sha256').update(header).digest('base64')
    const until = this.#verified.get(key)
    if (until !== undefined && until > now) return true
    if (!this.#check(header.slice(6).trim())) return false
    if (this.#verified.size >= MAX_VERIFIED) this.#verified.clear()
    this.#verified.set(key, now + VERIFIED_TTL_MS)
    return true
  }

  #check (encoded: string): boolean {
    const decoded = Buffer.from(encoded, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    if (colon < 0) return false
    const stored = this.#credentials.users.get(decoded.slice(0, colon))
    const entry = stored ?? UNKNOWN_USER
    const computed = Buffer.from(shaCrypt(decoded.slice(colon + 1), entry.setting))
    const expected = Buffer.from(entry.hash)
    const equal = computed.length === expected.length && timingSafeEqual(computed, expected)
    return stored !== undefined && equal
  }
}

/** HANDLER behind basic authentication: a request without the right credentials gets 401 and nothing else. */
export function withBasicAuth (authenticator: BasicAuthenticator, handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (authenticator.isAuthorized(req.headers.authorization)) {
      handler(req, res)
      return
    }
    res.writeHead(401, { 'www-authenticate': 'Basic realm="kmirror", charset="UTF-8"', 'content-type': 'text/plain' })
      .end('unauthorized: this endpoint needs a user and password of kmirror\'s --http-auth-file\n')
  }
}
