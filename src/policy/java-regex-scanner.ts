/**
 * Reading a java.util.regex pattern token by token: the cursor, Java's comments mode, and the escapes that
 * stand for one character (`\t`, `\0101`, `\x{1F600}`, `\uD83D\uDE00`, `\cA`, `\-`). The translation to
 * JavaScript lives in java-regex.ts.
 */

export class JavaRegexError extends Error {
  readonly pattern: string

  constructor (pattern: string, problem: string, options?: { cause?: unknown }) {
    super(`invalid Java regular expression ${JSON.stringify(pattern)}: ${problem}`, options)
    this.name = 'JavaRegexError'
    this.pattern = pattern
  }
}

/** Java's whitespace for COMMENTS mode: `[ \t\n\x0B\f\r]`. */
const WHITESPACE = /[ \t\n\x0B\f\r]/
const SIMPLE_ESCAPES: Readonly<Record<string, number>> = { t: 9, n: 10, r: 13, f: 12, a: 7, e: 27 }

/**
 * Invariant: `pos` is a UTF-16 index into `src` that only moves forward, except when a caller restores a
 * position it saved itself (one-token look-ahead); `next` never splits a surrogate pair.
 */
export class PatternScanner {
  readonly src: string
  pos = 0
  /** Java's COMMENTS flag `(?x)`: whitespace and `#` comments between tokens are skipped. Set by the translator. */
  comments = false

  constructor (src: string) {
    this.src = src
  }

  atEnd (): boolean {
    return this.pos >= this.src.length
  }

  peek (): string {
    return this.src.charAt(this.pos)
  }

  /** `peek` after skipping what comments mode ignores. */
  peekSkipping (): string {
    this.skipComments()
    return this.peek()
  }

  /** The next code point as a string, or "" at the end. */
  next (): string {
    if (this.atEnd()) return ''
    const ch = String.fromCodePoint(this.src.codePointAt(this.pos) ?? 0)
    this.pos += ch.length
    return ch
  }

  startsWith (text: string): boolean {
    return this.src.startsWith(text, this.pos)
  }

  /** Matches `re` (anchored with `^`) at the cursor and moves past the match, or returns null and stays. */
  consume (re: RegExp): RegExpExecArray | null {
    const match = re.exec(this.src.slice(this.pos))
    if (match !== null) this.pos += match[0].length
    return match
  }

  /** Skips comments-mode whitespace and `#` comments; returns whether anything is left. */
  skipComments (): boolean {
    while (this.comments && !this.atEnd()) {
      const c = this.peek()
      if (WHITESPACE.test(c)) this.pos++
      else if (c === '#') this.skipLine()
      else break
    }
    return !this.atEnd()
  }

  /** Text after `\Q` up to `\E` or the end of the pattern, as code points. */
  readQuoted (): number[] {
    const end = this.src.indexOf('\\E', this.pos)
    const text = this.src.slice(this.pos, end < 0 ? this.src.length : end)
    this.pos = end < 0 ? this.src.length : end + 2
    return [...text].map(ch => ch.codePointAt(0) ?? 0)
  }

  /** The name after `\p` / `\P`: one letter (`\pL`) or the text in braces (`\p{IsLatin}`). */
  readPropertyName (): string {
    if (this.peek() !== '{') {
      const letter = this.next()
      if (!/^[A-Za-z]$/.test(letter)) this.fail('\\p must be followed by a letter or {name}')
      return letter
    }
    const match = this.consume(/^\{([^}]*)\}/)
    if (match === null) this.fail('unclosed \\p{...}')
    return match[1] as string
  }

  /** The code point of an escape `\c` that stands for one character; Java rejects a backslash before any other letter or digit. */
  readCharEscape (c: string): number {
    const simple = SIMPLE_ESCAPES[c]
    if (simple !== undefined) return simple
    if (c === '0') return this.readOctal()
    if (c === 'x') return this.readHex()
    if (c === 'u') return this.readUnicode()
    if (c === 'c') {
      if (this.atEnd()) this.fail('illegal control escape sequence \\c at the end of the pattern')
      return (this.next().codePointAt(0) ?? 0) ^ 64
    }
    if (c === 'X') this.fail('\\X grapheme clusters have no JavaScript equivalent')
    if (c === 'N') this.fail('\\N{name} character names have no JavaScript equivalent')
    if (c === '') this.fail('the pattern ends with a lone backslash')
    if (/^[a-zA-Z0-9]$/.test(c)) this.fail(`illegal/unsupported escape sequence \\${c}`)
    return c.codePointAt(0) ?? 0
  }

  fail (problem: string): never {
    throw new JavaRegexError(this.src, `${problem} (at index ${this.pos})`)
  }

  private skipLine (): void {
    const end = this.src.indexOf('\n', this.pos)
    this.pos = end < 0 ? this.src.length : end + 1
  }

  /** `\0n`, `\0nn` or `\0mnn` with m <= 3. */
  private readOctal (): number {
    const match = this.consume(/^(?:[0-3][0-7]{2}|[0-7]{1,2})/)
    if (match === null) this.fail('illegal octal escape sequence: \\0 must be followed by octal digits')
    return parseInt(match[0], 8)
  }

  private readHex (): number {
    const match = this.consume(/^(?:[0-9a-fA-F]{2}|\{([0-9a-fA-F]+)\})/)
    if (match === null) this.fail('illegal hexadecimal escape sequence: use \\xhh or \\x{h...h}')
    const cp = parseInt(match[1] ?? match[0], 16)
    if (cp > 0x10ffff) this.fail(`hexadecimal code point ${match[0]} is too big`)
    return cp
  }

  /** `\uD83D\uDE00` is one code point in Java; a lone surrogate stays a lone surrogate. */
  private readUnicode (): number {
    const high = this.readUtf16Unit()
    if (high >= 0xd800 && high <= 0xdbff && this.consume(/^\\u(?=[dD][c-fC-F])/) !== null) {
      return 0x10000 + ((high - 0xd800) << 10) + (this.readUtf16Unit() - 0xdc00)
    }
    return high
  }

  private readUtf16Unit (): number {
    const match = this.consume(/^[0-9a-fA-F]{4}/)
    if (match === null) this.fail('illegal Unicode escape sequence: use \\uhhhh')
    return parseInt(match[0], 16)
  }
}

const SYNTAX_CHARS = new Set('^$\\.*+?()[]{}|/')
const CLASS_SYNTAX_CHARS = new Set('\\]^-[')

/** One code point as `u`-mode JavaScript source outside a class. */
export function literal (cp: number): string {
  const ch = String.fromCodePoint(cp)
  return SYNTAX_CHARS.has(ch) ? `\\${ch}` : plain(cp, ch)
}

/** One code point as `u`-mode JavaScript source inside `[...]`. */
export function classLiteral (cp: number): string {
  const ch = String.fromCodePoint(cp)
  return CLASS_SYNTAX_CHARS.has(ch) ? `\\${ch}` : plain(cp, ch)
}

/** Control characters and lone surrogates are written as escapes so the source stays readable and valid. */
function plain (cp: number, ch: string): string {
  if (cp >= 0x20 && (cp < 0xd800 || cp > 0xdfff)) return ch
  return cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\u{${cp.toString(16)}}`
}
