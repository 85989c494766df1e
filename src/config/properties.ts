/**
 * mm2.properties read exactly as `java.util.Properties.load` reads it (properties-file matches it byte for byte),
 * keeping line numbers so that every message can point at the line to fix.
 */
import { Properties } from 'properties-file/parser'

export interface PropertyLine {
  readonly key: string
  readonly value: string
  /** 1-based line where the entry starts (continuation lines may follow it). */
  readonly line: number
  /** The first physical line as written, for messages. */
  readonly text: string
  /** Whether `=` or `:` separates key and value; without one Java splits at the first whitespace. */
  readonly hasSeparator: boolean
}

export interface ParsedProperties {
  /** Last value wins for duplicate keys, as in Java. */
  readonly values: Readonly<Record<string, string>>
  /** Every entry in file order, duplicates included. */
  readonly lines: readonly PropertyLine[]
  /** The entry whose last line ends in a `\` continuation with nothing after it (a cut-off file). */
  readonly danglingContinuation?: PropertyLine
}

/** A file `java.util.Properties.load` would refuse too (a malformed `\uXXXX` escape), with the line to fix. */
export class PropertiesSyntaxError extends Error {
  readonly line: number

  constructor (line: number, message: string) {
    super(`line ${line}: ${message}`)
    this.name = 'PropertiesSyntaxError'
    this.line = line
  }
}

/** Throws PropertiesSyntaxError for a file Java cannot load either. */
export function parseProperties (text: string): ParsedProperties {
  const malformed = findMalformedEscape(text)
  if (malformed !== undefined) {
    // The characters after \u are not quoted: they may be part of a password.
    throw new PropertiesSyntaxError(malformed.line, `malformed \\uXXXX escape at column ${malformed.column} (Java's Properties.load refuses the file too): ` +
      'a \\u must be followed by 4 hexadecimal digits; write a literal backslash as \\\\')
  }
  let document: Properties
  try {
    document = new Properties(text)
  } catch {
    // The library's message may quote the value; the line is not known here.
    throw new PropertiesSyntaxError(0, 'the file cannot be read as Java properties (a malformed \\u escape on a continued line?): a \\u must be followed by 4 hexadecimal digits; write a literal backslash as \\\\')
  }
  const values = Object.create(null) as Record<string, string>
  const lines: PropertyLine[] = []
  for (const node of document.getProperties()) {
    const entry: PropertyLine = {
      key: node.key,
      value: node.value,
      line: node.startingLineNumber,
      text: node.rawLines[0] ?? '',
      hasSeparator: node.separatorChar !== undefined
    }
    values[node.key] = node.value
    lines.push(entry)
  }
  const dangling = endsInContinuation(document) ? lines.at(-1) : undefined
  return dangling === undefined ? { values, lines } : { values, lines, danglingContinuation: dangling }
}

/**
 * Whether the last entry of the file continues (`\` at the end of a line) into nothing: either the file ends
 * right after the backslash, or only blank lines follow, which Java joins as an empty continuation.
 * Java accepts both silently; they usually mean a cut-off file, e.g. `topics = a, \` missing its last line.
 */
function endsInContinuation (document: Properties): boolean {
  const last = document.nodes.findLastIndex(node => node.type !== 'blank')
  const node = document.nodes[last]
  if (node?.type !== 'property') return false
  const lastLine = node.rawLines.at(-1) ?? ''
  if (node.rawLines.length > 1 && lastLine.trim() === '') return true
  return (/\\+$/.exec(lastLine)?.[0].length ?? 0) % 2 === 1
}

/**
 * The first `\u` escape not followed by 4 hexadecimal digits, outside comment lines. A backslash escaped by
 * another (`\\u`) starts no escape.
 */
function findMalformedEscape (text: string): { line: number, column: number } | undefined {
  const lines = text.split(/\r\n|\r|\n/)
  let continued = false
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    // A line a backslash continues is part of a value, even when it starts with # or ! (as Java reads it).
    const comment: boolean = !continued && /^[ \t\f]*[#!]/.test(line)
    continued = !comment && (/\\+$/.exec(line)?.[0].length ?? 0) % 2 === 1
    if (comment) continue
    for (const m of line.matchAll(/(\\+)u(.{0,4})/g)) {
      if (m[1]!.length % 2 === 1 && !/^[0-9a-fA-F]{4}$/.test(m[2]!)) return { line: i + 1, column: m.index + m[1]!.length }
    }
  }
  return undefined
}
