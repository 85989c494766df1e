import { JAVA_LINEBREAK, predefinedClass, propertyClass, type CharSet } from './java-regex-escapes.ts'
import { classLiteral, JavaRegexError, literal, PatternScanner } from './java-regex-scanner.ts'

export { JavaRegexError } from './java-regex-scanner.ts'

/**
 * MM2's filters (`topics`, `topics.exclude`, `groups`, `config.properties.exclude`, ...) are lists of
 * java.util.regex patterns joined with `|` and matched with `Matcher.matches()` (whole string).
 * This file translates that Java syntax into an equivalent JavaScript `u`-mode RegExp, or refuses clearly.
 *
 * Translated: inline flags `(?idmsux-idmsux)` and `(?i:...)` (`i` at the very start becomes the `i` flag,
 * elsewhere a RegExp modifier group), `\Q...\E`, escapes of any non-alphanumeric character (Java allows `\-`,
 * `\_`, `\ ` anywhere; `u`-mode JavaScript does not), octal/hex/control escapes, Java's ASCII `\s`, `\h`, `\v`,
 * `\R`, `\A \z \Z \G`, POSIX and Unicode `\p{...}`, and Java's `.`, `^`, `$` (which also know `\x85`).
 * Refused: possessive quantifiers, atomic groups, class union/intersection, `(?U)`, `\X`, `\N{...}`, `\b{g}`,
 * and back references to groups that do not exist (Java accepts them; they never match).
 * Known differences: with `(?i)` JavaScript folds non-ASCII letters too (Java needs `(?iu)`), `(?m)` `^`
 * treats the `\r` of `\r\n` as a line end, and `\S` inside a class excludes Unicode spaces. None of them
 * matters for names without non-ASCII letters, spaces or line breaks.
 */

/** MM2's `String.join("|", list)` compiled for a whole-string match; an empty list gives null (matches nothing). */
export function compileJavaRegexList (patterns: readonly string[]): RegExp | null {
  if (patterns.length === 0) return null
  const joined = patterns.join('|')
  try {
    return compileWhole(joined)
  } catch (err) {
    // Name the list element at fault when one fails on its own (the usual case); otherwise the joined pattern.
    if (patterns.length > 1) for (const pattern of patterns) compileWhole(pattern)
    throw err
  }
}

/** One Java pattern translated to JavaScript source plus the flags it needs (`u`, and `i` for a leading `(?i)`). */
export function translateJavaRegex (pattern: string): { source: string, flags: string } {
  return new Translator(pattern).translate()
}

function compileWhole (pattern: string): RegExp {
  const { source, flags } = translateJavaRegex(pattern)
  try {
    return new RegExp(`^(?:${source})$`, flags)
  } catch (cause) {
    throw new JavaRegexError(pattern, `not a valid regular expression (${(cause as Error).message})`, { cause })
  }
}

interface Flags { readonly i: boolean, readonly s: boolean, readonly m: boolean, readonly x: boolean, readonly d: boolean }

/** One open group: the flags outside it (restored at its `)`) and the `(?i:`-style groups opened inside it by `(?i)`. */
interface Frame { readonly outerFlags: Flags, readonly modifiers: string[] }

const SUPPORTS_MODIFIERS = (() => {
  try {
    return new RegExp('(?i:a)', 'u').test('A')
  } catch {
    return false
  }
})()

/** Java's line terminators (without UNIX_LINES): \n \r \x85 \u2028 \u2029 (and \r\n as one). */
const LINE_END = '[\\n\\r\\x85\\u2028\\u2029]'

/**
 * Invariants: `out` is always a valid prefix of `u`-mode source; `frames` has one entry per open group plus
 * the top level; every opener in a frame's `modifiers` has been emitted and gets closed before that frame's
 * `|` (and reopened after it, since Java's flags outlive `|`) and before its `)`.
 */
class Translator {
  private readonly scan: PatternScanner
  private out = ''
  private ignoreCase = false
  private flags: Flags = { i: false, s: false, m: false, x: false, d: false }
  private readonly frames: Frame[] = [{ outerFlags: this.flags, modifiers: [] }]
  private captures = 0
  private maxBackreference = 0

  constructor (src: string) {
    this.scan = new PatternScanner(src)
  }

  translate (): { source: string, flags: string } {
    while (this.scan.skipComments()) this.step()
    if (this.frames.length > 1) this.scan.fail('unclosed group: a "(" has no matching ")"')
    if (this.maxBackreference > this.captures) this.scan.fail(`back reference \\${this.maxBackreference} names a group that does not exist`)
    this.closeModifiers()
    return { source: this.out, flags: this.ignoreCase ? 'iu' : 'u' }
  }

  private step (): void {
    const c = this.scan.next()
    switch (c) {
      case '\\': this.emitEscape(); break
      case '[': this.emitClass(); break
      case '(': this.openGroup(); break
      case ')': this.closeGroup(); break
      case '|': this.closeModifiers(); this.out += '|'; this.reopenModifiers(); break
      case '.': this.out += this.dot(); break
      case '^': this.out += this.flags.m ? `(?<=^|${this.lineEnd()})` : '^'; break
      case '$': this.out += this.flags.m ? `(?=${this.lineEnd()}|$)` : this.endOfInput(); break
      case '*': case '+': case '?': this.emitQuantifier(c); break
      case '{': this.emitQuantifier(this.readBraces()); break
      default: this.out += literal(c.codePointAt(0) ?? 0)
    }
  }

  private dot (): string {
    if (this.flags.s) return '[^]'
    return this.flags.d ? '[^\\n]' : '[^\\n\\r\\x85\\u2028\\u2029]'
  }

  private lineEnd (): string {
    return this.flags.d ? '\\n' : LINE_END
  }

  /** Java's `$` (without MULTILINE) and `\Z`: the end of input, or just before a final line terminator. */
  private endOfInput (): string {
    return this.flags.d ? '(?=\\n?$)' : `(?=(?:\\r\\n|${LINE_END})?$)`
  }

  private emitQuantifier (quantifier: string): void {
    this.out += quantifier
    const next = this.scan.peekSkipping()
    if (next === '?') this.out += this.scan.next()
    else if (next === '+') this.scan.fail(`possessive quantifier "${quantifier}+" has no JavaScript equivalent`)
  }

  /** `{n}`, `{n,}` or `{n,m}` right after `{`; Java rejects any other use of `{` ("Illegal repetition"). */
  private readBraces (): string {
    const match = this.scan.consume(/^(\d+)(,(\d*))?\}/)
    if (match === null) this.scan.fail('"{" does not start a {n}, {n,} or {n,m} quantifier (escape it as \\{)')
    if (match[3] !== undefined && match[3] !== '' && Number(match[3]) < Number(match[1])) this.scan.fail(`illegal repetition range {${match[0]}`)
    return `{${match[0]}`
  }

  private openGroup (): void {
    if (this.scan.consume(/^\?/) === null) {
      this.captures++
      this.pushFrame('(')
      return
    }
    const lookaround = this.scan.consume(/^(?::|=|!|<=|<!)/)
    const named = lookaround === null ? this.scan.consume(/^<([a-zA-Z][a-zA-Z0-9]*)>/) : null
    if (lookaround !== null) {
      this.pushFrame(`(?${lookaround[0]}`)
    } else if (named !== null) {
      this.captures++
      this.pushFrame(`(?${named[0]}`)
    } else if (this.scan.startsWith('<')) {
      this.scan.fail('a named group must look like (?<name>...) with an ASCII letter then letters or digits')
    } else if (this.scan.startsWith('>')) {
      this.scan.fail('atomic groups "(?>...)" have no JavaScript equivalent')
    } else {
      this.applyInlineFlags()
    }
  }

  /** `(?flags)` changes the flags until the end of the enclosing group; `(?flags:...)` only inside that group. */
  private applyInlineFlags (): void {
    const match = this.scan.consume(/^([a-zA-Z]*)(?:-([a-zA-Z]*))?([):])/)
    if (match === null) this.scan.fail('unknown group construct after "(?"')
    const next = withFlags(withFlags(this.flags, match[1] ?? '', true, this.scan), match[2] ?? '', false, this.scan)
    const caseChange = next.i === this.flags.i ? '' : (next.i ? 'i' : '-i')
    if (match[3] === ':') {
      this.pushFrame(caseChange === '' ? '(?:' : this.modifierGroup(caseChange))
      this.setFlags(next)
      return
    }
    this.setFlags(next)
    if (caseChange === '') return
    if (caseChange === 'i' && this.out === '' && this.frames.length === 1) {
      this.ignoreCase = true // a leading (?i) covers the whole pattern, every list element included: the `i` flag
      return
    }
    const opener = this.modifierGroup(caseChange)
    this.top().modifiers.push(opener)
    this.out += opener
  }

  private setFlags (flags: Flags): void {
    this.flags = flags
    this.scan.comments = flags.x
  }

  private modifierGroup (caseChange: string): string {
    if (!SUPPORTS_MODIFIERS) this.scan.fail('a (?i) or (?-i) that does not start the pattern needs RegExp modifiers (Node.js 23 or later)')
    return `(?${caseChange}:`
  }

  private pushFrame (opener: string): void {
    this.frames.push({ outerFlags: this.flags, modifiers: [] })
    this.out += opener
  }

  private closeGroup (): void {
    if (this.frames.length === 1) this.scan.fail('unmatched ")"')
    this.closeModifiers()
    const frame = this.frames.pop() as Frame
    this.setFlags(frame.outerFlags)
    this.out += ')'
  }

  private closeModifiers (): void {
    this.out += ')'.repeat(this.top().modifiers.length)
  }

  private reopenModifiers (): void {
    this.out += this.top().modifiers.join('')
  }

  private top (): Frame {
    return this.frames[this.frames.length - 1] as Frame
  }

  private emitEscape (): void {
    const c = this.scan.next()
    switch (c) {
      case 'Q': this.out += this.scan.readQuoted().map(literal).join(''); return
      case 'A': case 'G': this.out += '^'; return // with matches() there is one match, from the start
      case 'z': this.out += '$'; return
      case 'Z': this.out += this.endOfInput(); return
      case 'b': case 'B':
        if (this.scan.peek() === '{') this.scan.fail('\\b{g} grapheme boundaries have no JavaScript equivalent')
        this.out += `\\${c}`
        return
      case 'R': this.out += JAVA_LINEBREAK; return
      case 'k': this.out += this.readNamedBackreference(); return
    }
    if (/^[1-9]$/.test(c)) {
      this.out += `(?:\\${this.readBackreference(c)})`
      return
    }
    const set = this.readSetEscape(c)
    this.out += set === undefined ? literal(this.scan.readCharEscape(c)) : set.outside
  }

  /** Java reads `\12` as group 12 only if 12 groups were opened before it; otherwise `\1` then `2`. */
  private readBackreference (first: string): string {
    let ref = first
    while (/^[0-9]$/.test(this.scan.peek()) && Number(ref + this.scan.peek()) <= this.captures) ref += this.scan.next()
    this.maxBackreference = Math.max(this.maxBackreference, Number(ref))
    return ref
  }

  private readNamedBackreference (): string {
    const match = this.scan.consume(/^<[a-zA-Z][a-zA-Z0-9]*>/)
    if (match === null) this.scan.fail('\\k must be followed by <name>')
    return `\\k${match[0]}`
  }

  private readSetEscape (c: string): CharSet | undefined {
    if (c !== 'p' && c !== 'P') return predefinedClass(c)
    const set = propertyClass(this.scan.readPropertyName(), c === 'P')
    if (typeof set === 'string') this.scan.fail(set)
    return set
  }

  /** After `[`. Java: a `]` right after `[` or `[^` is a literal; `[` inside a class is a union and `&&` an intersection. */
  private emitClass (): void {
    let body = ''
    if (this.scan.peekSkipping() === '^') body += this.scan.next()
    if (this.scan.peekSkipping() === ']') body += `\\${this.scan.next()}`
    for (;;) {
      const c = this.scan.peekSkipping()
      if (c === '') this.scan.fail('unclosed character class: a "[" has no matching "]"')
      if (c === ']') break
      if (c === '[') this.scan.fail('character class union "[a[b]]" has no JavaScript equivalent')
      if (this.scan.startsWith('&&')) this.scan.fail('character class intersection "&&" has no JavaScript equivalent')
      body += this.readClassItem()
    }
    this.scan.next()
    this.out += `[${body}]`
  }

  /** One class member: a set escape, a single character or a range `a-z` (Java reads the `-` of `[\d-z]` as a literal). */
  private readClassItem (): string {
    const first = this.readClassAtom()
    if (typeof first !== 'number') return first
    if (this.scan.peekSkipping() !== '-') return classLiteral(first)
    const dash = this.scan.pos
    this.scan.next()
    const after = this.scan.peekSkipping()
    if (after === ']' || after === '[' || after === '') {
      this.scan.pos = dash // a trailing `-` is a literal: `[a-]`
      return classLiteral(first)
    }
    const last = this.readClassAtom()
    if (typeof last !== 'number') this.scan.fail('illegal character range: a range ends with a character class')
    if (last < first) this.scan.fail(`illegal character range ${String.fromCodePoint(first)}-${String.fromCodePoint(last)}`)
    return `${classLiteral(first)}-${classLiteral(last)}`
  }

  /** A code point, or class source to splice in as is (a set escape, or quoted `\Q...\E` text). */
  private readClassAtom (): number | string {
    const c = this.scan.next()
    if (c !== '\\') return c.codePointAt(0) ?? 0
    const e = this.scan.next()
    if (e === 'Q') return this.scan.readQuoted().map(classLiteral).join('')
    // Boundaries, anchors, back references and \R match positions or sequences, not one character.
    if (/^[1-9bBkRAGZz]$/.test(e)) this.scan.fail(`\\${e} is not allowed inside a character class`)
    const set = this.readSetEscape(e)
    if (set === undefined) return this.scan.readCharEscape(e)
    if (set.inside === null) this.scan.fail(`\\${e} cannot be negated inside a character class in JavaScript; move it outside the brackets`)
    return set.inside
  }
}

/** `u` (Unicode case folding) is what JavaScript's `i` always does; `c` (canonical equivalence) only matters for combining sequences. */
function withFlags (flags: Flags, letters: string, on: boolean, scan: PatternScanner): Flags {
  const next = { ...flags }
  for (const letter of letters) {
    if (letter === 'i' || letter === 's' || letter === 'm' || letter === 'x' || letter === 'd') next[letter] = on
    else if (letter === 'U') scan.fail('the (?U) UNICODE_CHARACTER_CLASS flag is not supported')
    else if (letter !== 'u' && letter !== 'c') scan.fail(`unknown inline flag "${letter}"`)
  }
  return next
}
