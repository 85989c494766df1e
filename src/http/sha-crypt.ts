/**
 * SHA-256-crypt (`$5$`) and SHA-512-crypt (`$6$`), the password hashes of glibc's crypt(3), as specified by
 * Ulrich Drepper ("Unix crypt using SHA-256 and SHA-512"). Operators make them with standard tools:
 * `openssl passwd -5` or `-6`, `mkpasswd -m sha-512`. node:crypto has the SHA digests, not this scheme, hence this
 * file. Pure.
 */
import { createHash, type Hash } from 'node:crypto'

const ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const DEFAULT_ROUNDS = 5000
export const MIN_ROUNDS = 1000
export const MAX_ROUNDS = 999_999_999
const MAX_SALT = 16

interface Variant {
  readonly algorithm: 'sha256' | 'sha512'
  /** The digest's bytes in the order the spec encodes them, three at a time (the last group may be shorter). */
  readonly order: readonly (readonly number[])[]
}

/**
 * The spec's byte order. SHA-256: (0,10,20) (21,1,11) (12,22,2) (3,13,23) ... (9,19,29) then (31,30);
 * SHA-512: (0,21,42) (22,43,1) (44,2,23) ... (62,20,41) then (63).
 */
function byteOrder (groups: number, step: number, rotations: readonly (readonly number[])[], tail: readonly number[]): number[][] {
  const order: number[][] = []
  for (let j = 0; j < groups; j++) {
    const triple = [j, j + step, j + 2 * step]
    order.push(rotations[j % 3]!.map(k => triple[k]!))
  }
  order.push([...tail])
  return order
}

const VARIANTS: Readonly<Record<string, Variant>> = {
  5: { algorithm: 'sha256', order: byteOrder(10, 10, [[0, 1, 2], [2, 0, 1], [1, 2, 0]], [31, 30]) },
  6: { algorithm: 'sha512', order: byteOrder(21, 21, [[0, 1, 2], [1, 2, 0], [2, 0, 1]], [63]) }
}

export interface ShaCryptSetting {
  readonly id: '5' | '6'
  readonly rounds: number
  /** Whether `rounds=` was written: then it is written back, as crypt(3) does. */
  readonly explicitRounds: boolean
  readonly salt: string
}

/** Reads `$5$[rounds=N$]salt[$hash]`; null if it is not one (another scheme, rounds out of range). */
export function parseShaCryptSetting (text: string): ShaCryptSetting | null {
  const match = /^\$([56])\$(?:rounds=(\d{1,9})\$)?([^$]*)/.exec(text)
  if (match === null) return null
  const rounds = match[2] === undefined ? DEFAULT_ROUNDS : Number(match[2])
  if (rounds < MIN_ROUNDS || rounds > MAX_ROUNDS) return null
  return { id: match[1] as '5' | '6', rounds, explicitRounds: match[2] !== undefined, salt: (match[3] ?? '').slice(0, MAX_SALT) }
}

/** `$id$[rounds=N$]salt$hash` for PASSWORD under SETTING (the stored hash, or a setting made for a new one). */
export function shaCrypt (password: string, setting: ShaCryptSetting): string {
  const variant = VARIANTS[setting.id]!
  const hash = (): Hash => createHash(variant.algorithm)
  const p = Buffer.from(password, 'utf8')
  const s = Buffer.from(setting.salt, 'utf8')
  const b = hash().update(p).update(s).update(p).digest()
  const a = hash().update(p).update(s).update(repeatTo(b, p.length))
  for (let n = p.length; n > 0; n >>= 1) a.update((n & 1) !== 0 ? b : p)
  let c = a.digest()
  const dp = hash()
  for (let i = 0; i < p.length; i++) dp.update(p)
  const pBytes = repeatTo(dp.digest(), p.length)
  const ds = hash()
  for (let i = 0; i < 16 + c[0]!; i++) ds.update(s)
  const sBytes = repeatTo(ds.digest(), s.length)
  for (let round = 0; round < setting.rounds; round++) {
    const h = hash().update((round & 1) !== 0 ? pBytes : c)
    if (round % 3 !== 0) h.update(sBytes)
    if (round % 7 !== 0) h.update(pBytes)
    c = h.update((round & 1) !== 0 ? c : pBytes).digest()
  }
  const rounds = setting.explicitRounds ? `rounds=${setting.rounds}$` : ''
  return `$${setting.id}$${rounds}${setting.salt}$${encode(c, variant.order)}`
}

/** BYTES repeated, cut to LENGTH. */
function repeatTo (bytes: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length)
  for (let i = 0; i < length; i += bytes.length) bytes.copy(out, i, 0, Math.min(bytes.length, length - i))
  return out
}

/** crypt's base64: each group as a little-endian 24-bit number, 6 bits per character (2 or 3 for a short group). */
function encode (digest: Buffer, order: readonly (readonly number[])[]): string {
  let out = ''
  for (const group of order) {
    let w = 0
    for (const index of group) w = (w << 8) | digest[index]!
    for (let i = 0; i < group.length + 1; i++) {
      out += ALPHABET[w & 0x3f]
      w >>>= 6
    }
  }
  return out
}
