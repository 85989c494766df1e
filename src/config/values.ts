/**
 * Java's readings of property strings, reproduced exactly: ConfigDef's LIST, BOOLEAN and number parsing,
 * and `Boolean.parseBoolean`. MM2 uses both boolean readings in different places (mm2-spec §1.1).
 */

/** Java's `String.trim()`: strips every char <= U+0020, and nothing else (unlike JavaScript's `trim`). */
export function javaTrim (value: string): string {
  return value.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '')
}

// Java's `\s` is ASCII-only; JavaScript's also matches no-break spaces and the like.
const COMMA_WITH_WHITESPACE = /[ \t\n\x0B\f\r]*,[ \t\n\x0B\f\r]*/

/**
 * ConfigDef LIST: trimmed, an empty string is an empty list, otherwise split on commas with the whitespace
 * around them removed. Like Java's `split(s, -1)`, empty entries are kept: `a,,b` has three entries.
 */
export function splitList (value: string): string[] {
  const trimmed = javaTrim(value)
  return trimmed === '' ? [] : trimmed.split(COMMA_WITH_WHITESPACE)
}

/** Java's `String.split(",")`: nothing trimmed, trailing empty entries dropped (`a, b,` → `a`, ` b`). */
export function javaSplitAtCommas (value: string): string[] {
  const parts = value.split(',')
  while (parts.length > 0 && parts.at(-1) === '') parts.pop()
  return parts
}

/** ConfigDef BOOLEAN: "true" or "false" in any case after trimming; anything else is invalid (undefined). */
export function parseConfigBoolean (value: string): boolean | undefined {
  const lower = javaTrim(value).toLowerCase()
  if (lower === 'true') return true
  if (lower === 'false') return false
  return undefined
}

/** `Boolean.parseBoolean`: only "true" in any case, untrimmed, is true; `yes`, `1`, `on` and `true ` are false. */
export function parseJavaBoolean (value: string | undefined): boolean {
  return value !== undefined && value.toLowerCase() === 'true'
}

export const IntegerWidths = { SHORT: 16, INT: 32, LONG: 64 } as const
export type IntegerWidth = (typeof IntegerWidths)[keyof typeof IntegerWidths]

/**
 * `Short.parseShort` / `Integer.parseInt` / `Long.parseLong` of the trimmed value: an optional sign and decimal
 * digits, within the signed range of the width. Returns undefined when Java would throw.
 * Longs beyond 2^53 lose precision as JavaScript numbers; they are only ever used as "very large".
 */
export function parseJavaInteger (value: string, width: IntegerWidth): number | undefined {
  const trimmed = javaTrim(value)
  if (!/^[+-]?[0-9]+$/.test(trimmed)) return undefined
  const big = BigInt(trimmed)
  const limit = 1n << BigInt(width - 1)
  if (big < -limit || big >= limit) return undefined
  return Number(big)
}

/**
 * A property map with no prototype, so a key such as `__proto__` in a user's file is stored like any other
 * instead of reaching Object.prototype. `freezeProps` turns it into a plain frozen object for consumers.
 */
export function newProps (): Record<string, string> {
  return Object.create(null) as Record<string, string>
}

export function freezeProps (props: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  return Object.freeze(Object.fromEntries(Object.entries(props)))
}

/** The keys of `props` that start with `prefix`, with the prefix removed (MM2's `stringsWithPrefixStripped`). */
export function stripPrefix (props: Readonly<Record<string, string>>, prefix: string): Record<string, string> {
  const result = newProps()
  for (const [key, value] of Object.entries(props)) {
    if (key.startsWith(prefix)) result[key.slice(prefix.length)] = value
  }
  return result
}

/** `put` for every entry of `from`: later sources win, as with Java's `Map.putAll`. */
export function putAll (into: Record<string, string>, from: Readonly<Record<string, string>>): void {
  for (const [key, value] of Object.entries(from)) into[key] = value
}

/** `putIfAbsent`. */
export function putIfAbsent (into: Record<string, string>, key: string, value: string): void {
  if (!Object.hasOwn(into, key)) into[key] = value
}
