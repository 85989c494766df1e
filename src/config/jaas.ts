/**
 * `sasl.jaas.config` as Kafka's JaasConfig reads it: `<LoginModule> <flag> (name=value)* ;` once or more, through
 * java.io.StreamTokenizer with JaasConfig's syntax. Its rules, kept here because a password depends on them:
 * - blanks are characters 0-32; a word is a run of any other characters but `/`, `"`, `'`, `;` and `=` (characters
 *   129-159 stand alone, as `;` and `=` do);
 * - `"..."` and `'...'` are quoted values: a backslash escapes any character, `\t \n \r \b \f \a \v` and octal
 *   (`\101`, at most `\377`) are decoded, and a line end closes an unclosed quote;
 * - `/* ... *\/` and `// ...` are comments, and so is a lone `/` up to the end of its line: an unquoted value
 *   cannot hold a `/` (`uri=https://idp` reads `https:`), which is why such values are quoted;
 * - every entry ends with `;`, and the flag is one of required, requisite, sufficient, optional (any case).
 * The same text that Java reads must mean the same here: a password kmirror decodes differently is a
 * refused login that looks like a wrong password.
 */

export interface JaasEntry {
  readonly loginModule: string
  readonly flag: string
  readonly options: Readonly<Record<string, string>>
}

export type JaasParse = { readonly entries: readonly JaasEntry[] } | { readonly problem: string }

/** A token and where it was written: [start, end) in the text, quotes included. */
interface Token {
  /** 'word' and 'quoted' carry a value; 'char' is `;`, `=` or a stand-alone character. */
  readonly kind: 'word' | 'quoted' | 'char'
  readonly text: string
  readonly start: number
  readonly end: number
}

const FLAGS = new Set(['REQUIRED', 'REQUISITE', 'SUFFICIENT', 'OPTIONAL'])
const ESCAPES: Readonly<Record<string, string>> = { a: '\u0007', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\u000b' }

function isBlank (code: number): boolean {
  return code <= 32
}

function isWordChar (char: string): boolean {
  const code = char.charCodeAt(0)
  if (isBlank(code) || (code > 128 && code < 160)) return false
  return !'/"\';='.includes(char)
}

/** Every token of TEXT, comments and blanks left out. */
function tokenize (text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  const lineEnd = (from: number): number => {
    let j = from
    while (j < text.length && text[j] !== '\n' && text[j] !== '\r') j++
    return j
  }
  while (i < text.length) {
    const char = text[i] as string
    if (isBlank(char.charCodeAt(0))) {
      i++
    } else if (isWordChar(char)) {
      const start = i
      while (i < text.length && isWordChar(text[i] as string)) i++
      tokens.push({ kind: 'word', text: text.slice(start, i), start, end: i })
    } else if (char === '"' || char === '\'') {
      const quoted = readQuoted(text, i)
      tokens.push(quoted)
      i = quoted.end
    } else if (char === '/') {
      if (text[i + 1] === '*') {
        const close = text.indexOf('*/', i + 2)
        if (close < 0) return tokens
        i = close + 2
      } else {
        // `//` and a lone `/` alike: the character after the slash is taken, then the rest of that line.
        i = lineEnd(Math.min(i + 2, text.length))
      }
    } else {
      tokens.push({ kind: 'char', text: char, start: i, end: i + 1 })
      i++
    }
  }
  return tokens
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

/** What Kafka's JaasConfig makes of TEXT: its entries, or why it refuses it (the message never quotes a value). */
export function parseJaasConfig (text: string): JaasParse {
  const tokens = tokenize(text)
  const entries: JaasEntry[] = []
  let i = 0
  const value = (token: Token | undefined): string | undefined => token === undefined || token.kind === 'char' ? undefined : token.text
  while (i < tokens.length) {
    const loginModule = value(tokens[i])
    if (loginModule === undefined || loginModule === '') return { problem: 'an entry does not start with a login module class' }
    if (i + 1 >= tokens.length) return { problem: `the control flag is missing after ${loginModule}` }
    const flag = value(tokens[i + 1])
    if (flag === undefined || !FLAGS.has(flag.toUpperCase())) return { problem: `the control flag after ${loginModule} is not one of required, requisite, sufficient, optional` }
    const options: Record<string, string> = {}
    let previous = `the control flag of ${loginModule}`
    i += 2
    while (i < tokens.length && tokens[i]?.text !== ';') {
      const name = value(tokens[i])
      const equals = tokens[i + 1]?.kind === 'char' && tokens[i + 1]?.text === '='
      const optionValue = equals ? value(tokens[i + 2]) : undefined
      if (name === undefined || optionValue === undefined) return { problem: optionProblem(name, equals, previous) }
      options[name] = optionValue
      previous = `option ${name}`
      i += 3
    }
    if (i >= tokens.length) return { problem: `the entry of ${loginModule} does not end with a semicolon (;)` }
    entries.push({ loginModule, flag, options })
    i++
  }
  if (entries.length === 0) return { problem: 'it names no login module' }
  return { entries }
}

/**
 * Why an option is not `name=value`, naming only what cannot be a secret: the option's name when an `=` follows
 * it, else the option before it (a password written without `password=` would be the bad token).
 */
function optionProblem (name: string | undefined, equals: boolean, previous: string): string {
  if (name !== undefined && equals) return `option ${name} has no value: write ${name}="..." (values with / or blanks in double quotes)`
  return `after ${previous}, name="value" options or the closing ; were expected`
}

/** The first login module of a JAAS config, or undefined when Kafka would refuse the text. */
export function parseJaas (text: string): JaasEntry | undefined {
  const parsed = parseJaasConfig(text)
  return 'entries' in parsed ? parsed.entries[0] : undefined
}

/** An option `name=value` as written: its name, its value as Java reads it, and [start, end) of the value as written. */
export interface JaasOptionText {
  readonly name: string
  readonly value: string
  readonly start: number
  readonly end: number
}

/** Every `name=value` of TEXT, even when the whole is not a valid JAAS config (to find and hide secrets in it). */
export function jaasOptionTexts (text: string): JaasOptionText[] {
  const tokens = tokenize(text)
  const options: JaasOptionText[] = []
  for (let i = 0; i + 2 < tokens.length; i++) {
    const [name, equals, written] = [tokens[i], tokens[i + 1], tokens[i + 2]] as [Token, Token, Token]
    if (name.kind === 'char' || equals.kind !== 'char' || equals.text !== '=' || written.kind === 'char') continue
    options.push({ name: name.text, value: written.text, start: written.start, end: written.end })
  }
  return options
}

/** The value of option NAME in a JAAS config (its first entry when Kafka reads it, else the first `NAME=...`). */
export function jaasOption (jaas: string, name: string): string | undefined {
  const parsed = parseJaas(jaas)
  if (parsed !== undefined) return parsed.options[name]
  return jaasOptionTexts(jaas).find(o => o.name === name)?.value
}
