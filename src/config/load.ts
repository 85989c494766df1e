/**
 * mm2.properties → a validated, frozen KmirrorConfig: parse as Java does, resolve as MM2 does, report every
 * problem at once (ConfigError) and every surprise as a warning.
 */
import { readFileSync } from 'node:fs'
import { ConfigError, type ConfigProblem } from '../errors.ts'
import { Redactor } from '../redactor.ts'
import { buildFlows } from './flows.ts'
import { parseProperties, PropertiesSyntaxError, type ParsedProperties } from './properties.ts'
import { errnoCode } from './providers.ts'
import { quoteWith } from './quoted-values.ts'
import { resolveReferences, type ResolvedProperties } from './resolve-references.ts'
import { secretValues } from './secrets.ts'
import type { KmirrorConfig } from './types.ts'
import { jobIntervalWarnings } from './job-intervals.ts'
import { transactionTimeoutWarnings } from './transaction-timeout.ts'
import { dedupe, readClusters, validateEnabledFlows, validateStructure } from './validate.ts'
import { validateValues } from './validate-values.ts'
import { collectWarnings, type ConfigWarning } from './warnings.ts'

export { selectFlows } from './flows.ts'
export { describeConfig } from './describe.ts'
export { redactValue } from './secrets.ts'

export interface ParseOptions {
  /** The environment `${env:...}` references read; process.env by default. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** Parses the text of an mm2.properties file; `sourceFile` names it in messages. Throws ConfigError. */
export function parseConfig (text: string, sourceFile: string, options: ParseOptions = {}): KmirrorConfig {
  return buildConfig(text, sourceFile, [], options)
}

/**
 * Reads and parses an mm2.properties file. Throws ConfigError, also when the file cannot be read. The caller
 * hands `secrets` to whatever prints (the CLI: the process's redactor, cli/config-input.ts).
 */
export function loadConfig (path: string): KmirrorConfig {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (cause) {
    const reason = errnoCode(cause) === 'ENOENT' ? 'no such file' : (cause instanceof Error ? cause.message : String(cause))
    const error = new ConfigError([{ message: `cannot read ${path} (${reason}): check the path and its permissions` }], path)
    error.cause = cause
    throw error
  }
  return buildConfig(decodeLikeJava(bytes), path, encodingWarnings(bytes), {})
}

/**
 * MM2 loads the file through an InputStream, which `java.util.Properties` decodes as ISO-8859-1: we do the
 * same, so `topics = café` means here what it means to MM2. A UTF-8 byte-order mark is dropped first
 * (MM2 would glue it to the first key).
 */
function decodeLikeJava (bytes: Buffer): string {
  const hasBom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
  return (hasBom ? bytes.subarray(3) : bytes).toString('latin1')
}

function encodingWarnings (bytes: Buffer): ConfigWarning[] {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  const first = bytes.findIndex((byte, i) => i >= start && byte >= 0x80)
  if (first < 0) return []
  const line = bytes.subarray(0, first).filter(byte => byte === 0x0a).length + 1
  return [{
    message: `line ${line} has non-ASCII characters; like MM2 (java.util.Properties), kmirror reads the file as ISO-8859-1, so UTF-8 text such as "é" reads as "Ã©": write such characters as \\uXXXX escapes`
  }]
}

/** The parsed file; one that Java cannot load either is a configuration error naming its line. */
function parsePropertiesOf (text: string, sourceFile: string): ParsedProperties {
  try {
    return parseProperties(text)
  } catch (err) {
    if (err instanceof PropertiesSyntaxError) throw new ConfigError([{ message: err.message }], sourceFile)
    throw err
  }
}

function buildConfig (text: string, sourceFile: string, extraWarnings: readonly ConfigWarning[], options: ParseOptions): KmirrorConfig {
  const parsed = parsePropertiesOf(text, sourceFile)
  const resolved = resolveReferences(parsed, options.env)
  // MM2 reads `clusters` resolved too (MirrorMakerConfig is an AbstractConfig).
  const { aliases, problems } = readClusters(resolved.values)
  const secrets = secretValues(resolved.values, resolved.provided, aliases)
  const redactor = new Redactor(secrets)
  // A value from a config provider is shown as the reference it was written with, never as the value.
  const quote = quoteWith(resolved.references)
  const all: ConfigProblem[] = [
    ...problems, ...resolved.problems, ...validateStructure(parsed, aliases),
    ...validateValues(withoutUnresolved(resolved), aliases, quote)
  ]
  const flows = buildFlows(resolved.values, aliases)
  all.push(...validateEnabledFlows(flows))
  if (all.length > 0) throw new ConfigError(dedupe(all).map(p => ({ ...p, message: redactor.redact(p.message) })), sourceFile)
  const warnings = [
    ...extraWarnings, ...resolved.warnings, ...collectWarnings({ ...parsed, values: resolved.values }, aliases, quote),
    ...flows.filter(f => f.enabled).flatMap(jobIntervalWarnings), ...flows.filter(f => f.enabled).flatMap(transactionTimeoutWarnings)
  ]
  return Object.freeze({
    sourceFile,
    clusters: Object.freeze([...aliases]),
    flows: Object.freeze(flows),
    warnings: Object.freeze(warnings.map(w => Object.freeze({ ...w, message: redactor.redact(w.message) }))),
    secrets: Object.freeze({ certain: Object.freeze(secrets.certain), guessed: Object.freeze(secrets.guessed) }),
    references: Object.freeze({
      keys: resolved.references,
      // The same resolution of the values as written: where a flow differs from it, a reference is behind.
      flows: Object.freeze(resolved.references.size === 0 ? flows : buildFlows(parsed.values, aliases))
    })
  })
}

/** Keys whose references could not be resolved are reported once, for the reference, not again for the value. */
function withoutUnresolved (resolved: ResolvedProperties): Record<string, string> {
  return Object.fromEntries(Object.entries(resolved.values).filter(([key]) => !resolved.unresolved.has(key)))
}
