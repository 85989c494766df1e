/**
 * The character sets and properties of java.util.regex.Pattern, written as JavaScript `u`-mode regex source.
 * Each set comes in two forms: `outside` (a complete atom) and `inside` (contents to splice into a `[...]`),
 * or `inside: null` when JavaScript cannot splice it into a class (a negated set).
 */

export interface CharSet {
  readonly outside: string
  readonly inside: string | null
}

/** Java's `\s` without UNICODE_CHARACTER_CLASS is ASCII only: `[ \t\n\x0B\f\r]` (JavaScript's `\s` also matches Unicode spaces). */
const JAVA_SPACE = '\\t\\n\\v\\f\\r '
/** Java 8's `\h`: horizontal whitespace. */
const JAVA_HSPACE = ' \\t\\xA0\\u1680\\u180E\\u2000-\\u200A\\u202F\\u205F\\u3000'
/** Java 8's `\v`: vertical whitespace (not just the vertical tab, unlike JavaScript's `\v`). */
const JAVA_VSPACE = '\\n\\v\\f\\r\\x85\\u2028\\u2029'

/** Java's linebreak matcher `\R`: `\r\n` or any single vertical whitespace. */
export const JAVA_LINEBREAK = `(?:\\r\\n|[${JAVA_VSPACE}])`

function positive (inside: string): CharSet {
  return { outside: `[${inside}]`, inside }
}

function negative (inside: string): CharSet {
  return { outside: `[^${inside}]`, inside: null }
}

/** `\d \D \w \W` mean the same ASCII sets in both languages. `\S` inside a class is the one approximation: JavaScript's `\S` excludes Unicode spaces that Java's includes. */
const PREDEFINED: Readonly<Record<string, CharSet>> = {
  d: { outside: '\\d', inside: '\\d' },
  D: { outside: '\\D', inside: '\\D' },
  w: { outside: '\\w', inside: '\\w' },
  W: { outside: '\\W', inside: '\\W' },
  s: positive(JAVA_SPACE),
  S: { outside: `[^${JAVA_SPACE}]`, inside: '\\S' },
  h: positive(JAVA_HSPACE),
  H: negative(JAVA_HSPACE),
  v: positive(JAVA_VSPACE),
  V: negative(JAVA_VSPACE)
}

/** The escape letter of a predefined class (`\d`, `\s`, `\h`, ...), or undefined. */
export function predefinedClass (letter: string): CharSet | undefined {
  return PREDEFINED[letter]
}

/** Java's POSIX classes are US-ASCII only unless UNICODE_CHARACTER_CLASS is on (kmirror rejects `(?U)`). */
const POSIX: Readonly<Record<string, string>> = {
  Lower: 'a-z',
  Upper: 'A-Z',
  ASCII: '\\x00-\\x7F',
  Alpha: 'a-zA-Z',
  Digit: '0-9',
  Alnum: 'a-zA-Z0-9',
  Punct: '!-\\/:-@\\[-`\\{-~',
  Graph: '!-~',
  Print: ' -~',
  Blank: ' \\t',
  Cntrl: '\\x00-\\x1F\\x7F',
  XDigit: '0-9a-fA-F',
  Space: JAVA_SPACE
}

const GENERAL_CATEGORIES = new Set([
  'L', 'Lu', 'Ll', 'Lt', 'LC', 'Lm', 'Lo', 'M', 'Mn', 'Mc', 'Me', 'N', 'Nd', 'Nl', 'No',
  'P', 'Pc', 'Pd', 'Ps', 'Pe', 'Pi', 'Pf', 'Po', 'S', 'Sm', 'Sc', 'Sk', 'So',
  'Z', 'Zs', 'Zl', 'Zp', 'C', 'Cc', 'Cf', 'Cs', 'Co', 'Cn'
])

/** Java's binary properties (`\p{IsAlphabetic}`; Java ignores their case) and the JavaScript property each one is. */
const BINARY_PROPERTIES: Readonly<Record<string, string>> = {
  ALPHABETIC: 'Alphabetic',
  IDEOGRAPHIC: 'Ideographic',
  LETTER: 'L',
  LOWERCASE: 'Lowercase',
  UPPERCASE: 'Uppercase',
  TITLECASE: 'Lt',
  PUNCTUATION: 'P',
  CONTROL: 'Cc',
  WHITE_SPACE: 'White_Space',
  WHITESPACE: 'White_Space',
  DIGIT: 'Nd',
  HEX_DIGIT: 'Hex_Digit',
  HEXDIGIT: 'Hex_Digit',
  JOIN_CONTROL: 'Join_Control',
  JOINCONTROL: 'Join_Control',
  NONCHARACTER_CODE_POINT: 'Noncharacter_Code_Point',
  NONCHARACTERCODEPOINT: 'Noncharacter_Code_Point',
  ASSIGNED: 'Assigned'
}

/** Java's `\p{LD}`: Character.isLetterOrDigit. */
const LETTER_OR_DIGIT = '\\p{L}\\p{Nd}'

function unicodeProperty (jsProperty: string, negated: boolean): CharSet {
  const atom = `\\${negated ? 'P' : 'p'}{${jsProperty}}`
  return { outside: atom, inside: atom }
}

function posixClass (name: string, negated: boolean): CharSet | undefined {
  const inside = POSIX[name]
  if (inside === undefined) return undefined
  return negated ? negative(inside) : positive(inside)
}

/**
 * Resolves the name inside `\p{...}` the way Pattern.CharPredicates does: `In...` is a block (JavaScript has none),
 * `Is...` a binary property, general category, POSIX class or script, `script=`/`sc=`, `general_category=`/`gc=`,
 * a bare POSIX class or general category. Returns a string describing the problem when it cannot be translated.
 */
export function propertyClass (name: string, negated: boolean): CharSet | string {
  const eq = name.indexOf('=')
  if (eq >= 0) return keyedProperty(name.slice(0, eq), name.slice(eq + 1), negated)
  if (name.startsWith('In')) return `Unicode blocks (\\p{${name}}) have no JavaScript equivalent`
  if (name.startsWith('java')) return `java.lang.Character properties (\\p{${name}}) have no JavaScript equivalent`
  if (name.startsWith('Is')) return isProperty(name.slice(2), negated)
  if (GENERAL_CATEGORIES.has(name)) return unicodeProperty(name, negated)
  if (name === 'LD') return negated ? negative(LETTER_OR_DIGIT) : positive(LETTER_OR_DIGIT)
  return posixClass(name, negated) ?? `unknown character property \\p{${name}}`
}

function isProperty (name: string, negated: boolean): CharSet | string {
  const binary = BINARY_PROPERTIES[name.toUpperCase()]
  if (binary !== undefined) return unicodeProperty(binary, negated)
  if (GENERAL_CATEGORIES.has(name)) return unicodeProperty(name, negated)
  const posix = posixClass(name, negated)
  if (posix !== undefined) return posix
  return scriptProperty(name, negated)
}

function keyedProperty (key: string, value: string, negated: boolean): CharSet | string {
  if (key === 'sc' || key === 'script') return scriptProperty(value, negated)
  if ((key === 'gc' || key === 'general_category') && GENERAL_CATEGORIES.has(value)) return unicodeProperty(value, negated)
  if (key === 'blk' || key === 'block') return `Unicode blocks (\\p{${key}=${value}}) have no JavaScript equivalent`
  return `unknown character property \\p{${key}=${value}}`
}

/** Java accepts script names in any case (`IsLATIN`); JavaScript wants `Latin`, so the name is title-cased per word. */
function scriptProperty (name: string, negated: boolean): CharSet | string {
  const canonical = name.split('_').map(w => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join('_')
  for (const candidate of [name, canonical]) {
    const set = unicodeProperty(`Script=${candidate}`, negated)
    if (compiles(set.outside)) return set
  }
  return `unknown character property or script \\p{${name}}`
}

function compiles (source: string): boolean {
  try {
    new RegExp(source, 'u') // eslint-disable-line no-new
    return true
  } catch {
    return false
  }
}
