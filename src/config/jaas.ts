/**
 * `sasl.jaas.config` as Kafka's JaasConfig reads it: `<LoginModule> <flag> (name=value)* ;` once or more, through
 * java.io.StreamTokenizer with its default syntax, comments `//` and `/* *\/`, and `-`, `_` and `$` made letters.
 * So do the kafka-clients of every release to 4.1 (2.0.1, 3.9.1 and 4.1.1 were run on the same texts as this file:
 * the same entries, the same refusals); Kafka's trunk later set `resetSyntax()` and made almost every character a
 * letter, which no release kmirror meets does. Its rules, kept here because a password depends on them:
 * - characters, by code (StreamTokenizer counts 256 and up as letters):
 *   blanks 0-32; letters, which start and continue a word: a-z A-Z _ $, 160-255 and 256 up; number characters,
 *   which start a number and continue a word: 0-9 . -; the comment `/`; the quotes `"` and `'`; and every other
 *   character, a token of its own: ! # % & ( ) * + , : ; < = > ? @ [ \ ] ^ ` { | } ~ and 127-159;
 * - a value Java reads is a word or a quoted value: a number (`12345678`, `.5`, `-1`) has none, and `-` not
 *   before a digit or `.` stands alone (`-abc` is `-` then `abc`); so `password=P@ssw0rd;` is password=`P`, then
 *   `@`, `ssw0rd`: refused, as are `password=12345678;` and `uri=https://idp/token` (`:` stands alone). Values with
 *   any other character, or that start with a digit, `.` or `-`, must be quoted;
 * - `"..."` and `'...'` are quoted values: a backslash escapes any character, `\t \n \r \b \f \a \v` and octal
 *   (`\101`, at most `\377`) are decoded, and a line end closes an unclosed quote;
 * - `/` is a comment even alone: the character after it is taken, then the rest of that line;
 * - an option's name is read like a value, but Java takes any token before `=` (`@=x`, `1=x`, `==x`) under the
 *   name null: kmirror reads and drops it, as the PLAIN and SCRAM logins do (the OAUTHBEARER ones fail on it);
 * - every entry ends with `;`, and the flag is one of required, requisite, sufficient, optional (any case).
 * JaasConfig takes several entries; JaasContext, which every client uses, then refuses more than one
 * (sasl-options.ts). The same text that Java reads must mean the same here: a password kmirror decodes
 * differently is a refused login that looks like a wrong password. A refusal names no value: only the first
 * entry's login module when it is a class name, and only options whose name cannot be part of a value.
 */

export interface JaasEntry {
  readonly loginModule: string
  readonly flag: string
  readonly options: Readonly<Record<string, string>>
  /** Whether Java keeps an option under the name null (`@=x`): its OAUTHBEARER login fails on one. */
  readonly nullNamedOption: boolean
}

export type JaasParse = { readonly entries: readonly JaasEntry[] } | { readonly problem: string }

/** A token and where it was written: [start, end) in the text, quotes included. */
interface Token {
  /** 'word' and 'quoted' carry a value (Java's `sval`); 'number' and 'char' (a one-character token) do not. */
  readonly kind: 'word' | 'quoted' | 'number' | 'char'
  readonly text: string
  readonly start: number
  readonly end: number
}

const FLAGS = new Set(['REQUIRED', 'REQUISITE', 'SUFFICIENT', 'OPTIONAL'])
const ESCAPES: Readonly<Record<string, string>> = { a: '\u0007', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\u000b' }
/** A Java class name: the only login module a message names (a first token without a dot may be a value). */
const CLASS_NAME = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/
/** How to write a value Java reads, for the messages. */
const QUOTE_HINT = 'put values in double quotes: unquoted, Java reads only letters, digits, _, $, . and - and no value that starts with a digit, . or -'

function isBlank (code: number): boolean {
  return code <= 32
}

function isDigit (char: string | undefined): boolean {
  return char !== undefined && char >= '0' && char <= '9'
}

/** A letter of StreamTokenizer's default syntax, with Kafka's `-`, `_` and `$` (`-` starts a number first). */
function startsWord (char: string): boolean {
  const code = char.charCodeAt(0)
  return code >= 160 || /^[A-Za-z_$]$/.test(char)
}

function startsNumber (char: string): boolean {
  return isDigit(char) || char === '.' || char === '-'
}

function continuesWord (char: string): boolean {
  return startsWord(char) || startsNumber(char)
}

/** Every token of TEXT, comments and blanks left out. */
function tokenize (text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const char = text[i] as string
    if (isBlank(char.charCodeAt(0))) {
      i++
      continue
    }
    if (char === '/') {
      const after = skipComment(text, i)
      if (after === undefined) return tokens
      i = after
      continue
    }
    const token = readToken(text, i)
    tokens.push(token)
    i = token.end
  }
  return tokens
}

/** The token at START, which is no blank and no comment: as StreamTokenizer tries them, a number first. */
function readToken (text: string, start: number): Token {
  const char = text[start] as string
  if (startsNumber(char)) return readNumber(text, start)
  if (startsWord(char)) return readWord(text, start)
  if (char === '"' || char === '\'') return readQuoted(text, start)
  return { kind: 'char', text: char, start, end: start + 1 }
}

/** Where reading goes on after the comment at START (a `/`), or undefined when an unclosed `/*` ends the text. */
function skipComment (text: string, start: number): number | undefined {
  if (text[start + 1] === '*') {
    const close = text.indexOf('*/', start + 2)
    return close < 0 ? undefined : close + 2
  }
  // `//` and a lone `/` alike: the character after the slash is taken (a line end too), then the rest of that line.
  let i = Math.min(start + 2, text.length)
  while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++
  return i
}

function readWord (text: string, start: number): Token {
  let i = start + 1
  while (i < text.length && continuesWord(text[i] as string)) i++
  return { kind: 'word', text: text.slice(start, i), start, end: i }
}

/** A number as StreamTokenizer reads it: `-`?, digits with one `.`; a `-` before anything else stands alone. */
function readNumber (text: string, start: number): Token {
  let i = start
  if (text[i] === '-') {
    if (text[i + 1] !== '.' && !isDigit(text[i + 1])) return { kind: 'char', text: '-', start, end: start + 1 }
    i++
  }
  let seenDot = false
  for (; i < text.length; i++) {
    if (text[i] === '.' && !seenDot) seenDot = true
    else if (!isDigit(text[i])) break
  }
  return { kind: 'number', text: text.slice(start, i), start, end: i }
}

function readQuoted (text: string, start: number): Token {
  const quote = text[start]
  let value = ''
  let i = start + 1
  while (i < text.length && text[i] !== quote && text[i] !== '\n' && text[i] !== '\r') {
    if (text[i] !== '\\') {
      value += text[i]
      i++
      continue
    }
    const escaped = text[i + 1]
    if (escaped === undefined) return { kind: 'quoted', text: value + '\uffff', start, end: text.length }
    const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4))?.[0] ?? ''
    const digits = octal.length === 3 && escaped > '3' ? octal.slice(0, 2) : octal
    if (digits !== '') {
      value += String.fromCharCode(parseInt(digits, 8))
      i += 1 + digits.length
    } else {
      value += ESCAPES[escaped] ?? escaped
      i += 2
    }
  }
  return { kind: 'quoted', text: value, start, end: text[i] === quote ? i + 1 : i }
}

/** Java's `sval` of a token: the text of a word or quoted value, else undefined (null in Java). */
function valueOf (token: Token | undefined): string | undefined {
  return token?.kind === 'word' || token?.kind === 'quoted' ? token.text : undefined
}

function isChar (token: Token | undefined, char: string): boolean {
  return token?.kind === 'char' && token.text === char
}

/** What Kafka's JaasConfig makes of TEXT: its entries, or why it refuses it (the message never quotes a value). */
export function parseJaasConfig (text: string): JaasParse {
  const tokens = tokenize(text)
  const entries: JaasEntry[] = []
  let i = 0
  while (i < tokens.length) {
    const read = readEntry(tokens, i, entries.length)
    if ('problem' in read) return read
    entries.push(read.entry)
    i = read.next
  }
  if (entries.length === 0) return { problem: 'it names no login module' }
  return { entries }
}

type EntryRead = { readonly entry: JaasEntry, readonly next: number } | { readonly problem: string }

/**
 * The entry whose login module is TOKENS[START], the INDEX-th of the text (0 for the first), as parseAppConfigurationEntry
 * reads it. Only the first entry's login module is named, when it is a class name: a later "entry" may be the rest
 * of a password that holds an unquoted `;` (`password=Xy7pq;Secr3tTail;`).
 */
function readEntry (tokens: readonly Token[], start: number, index: number): EntryRead {
  const loginModule = valueOf(tokens[start])
  const named = index === 0 && loginModule !== undefined && CLASS_NAME.test(loginModule)
  const module = named ? loginModule : `entry ${index + 1}`
  const entryName = named ? `the entry of ${loginModule}` : `entry ${index + 1}`
  if (loginModule === undefined || loginModule === '') return { problem: `entry ${index + 1} does not start with a login module class` }
  if (start + 1 >= tokens.length) return { problem: `the control flag of ${module} is missing` }
  const flag = valueOf(tokens[start + 1])
  if (flag === undefined || !FLAGS.has(flag.toUpperCase())) return { problem: `the control flag of ${module} is not one of required, requisite, sufficient, optional` }
  const options: Record<string, string> = {}
  let nullNamedOption = false
  let previous = `the control flag of ${module}`
  let i = start + 2
  for (let n = 1; i < tokens.length && !isChar(tokens[i], ';'); n++, i += 3) {
    // A name is shown only where it cannot be the rest of a value written with a blank: in the first entry, the
    // first option or one after a quoted value.
    const shown = index === 0 && tokens[i]?.kind === 'word' && (n === 1 || tokens[i - 1]?.kind === 'quoted')
    const option = shown ? `option ${tokens[i]?.text ?? ''}` : `option ${n} of ${entryName}`
    const problem = optionProblem(tokens.slice(i, i + 3), option, previous)
    if (problem !== undefined) return { problem }
    const name = valueOf(tokens[i])
    if (name !== undefined) options[name] = tokens[i + 2]?.text ?? ''
    else nullNamedOption = true
    previous = option
  }
  if (i >= tokens.length) return { problem: `${entryName} does not end with a semicolon (;)` }
  return { entry: { loginModule, flag, options, nullNamedOption }, next: i + 1 }
}

/**
 * Why the tokens [name, =, value] of OPTION are not an option Java reads, or undefined when they are. Without the
 * `=`, the bad token is not named but placed after PREVIOUS: it may be part of a secret (`password=P@ssw0rd`).
 */
function optionProblem ([, equals, value]: readonly Token[], option: string, previous: string): string | undefined {
  if (!isChar(equals, '=')) return `after ${previous}, name="value" options or the closing ; were expected (${QUOTE_HINT})`
  if (valueOf(value) !== undefined) return undefined
  if (value === undefined || isChar(value, ';')) return `${option} has no value (${QUOTE_HINT})`
  return `${option} has a value Java does not read (${QUOTE_HINT})`
}

/** The first login module of a JAAS config, or undefined when Kafka would refuse the text. */
export function parseJaas (text: string): JaasEntry | undefined {
  const parsed = parseJaasConfig(text)
  return 'entries' in parsed ? parsed.entries[0] : undefined
}

/**
 * An option `name=value` as written: its name, its value as Java reads it (as written when Java reads none), and
 * [start, end) of the value as written.
 */
export interface JaasOptionText {
  readonly name: string
  readonly value: string
  readonly start: number
  readonly end: number
}

/**
 * Every `name=value` of TEXT, even when the whole is not a valid JAAS config (to find and hide secrets in it). An
 * unquoted value is written up to a blank, quote, `;` or `=`, although Java may read only its start (`P` of
 * `P@ssw0rd`, `https` of `https://idp`, nothing of `12345678`) and then refuse the text: all of it is what to hide.
 */
export function jaasOptionTexts (text: string): JaasOptionText[] {
  const tokens = tokenize(text)
  const options: JaasOptionText[] = []
  for (let i = 0; i + 2 < tokens.length; i++) {
    const [name, equals, first] = [tokens[i], tokens[i + 1], tokens[i + 2]] as [Token, Token, Token]
    if (isChar(name, ';') || !isChar(equals, '=') || isChar(first, ';') || isChar(first, '=')) continue
    let end = first.end
    if (first.kind !== 'quoted') while (end < text.length && !isBlank(text.charCodeAt(end)) && !';=\'"'.includes(text[end] as string)) end++
    options.push({ name: name.text, value: valueOf(first) ?? text.slice(first.start, end), start: first.start, end })
  }
  return options
}

/** The value of option NAME in a JAAS config (its first entry when Kafka reads it, else the first `NAME=...`). */
export function jaasOption (jaas: string, name: string): string | undefined {
  const parsed = parseJaas(jaas)
  if (parsed !== undefined) return parsed.options[name]
  return jaasOptionTexts(jaas).find(o => o.name === name)?.value
}
