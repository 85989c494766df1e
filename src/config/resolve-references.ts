/**
 * Config providers applied to a parsed mm2.properties, before MM2's resolution (resolve.ts) reads any value.
 *
 * Where MM2 resolves: its `transform` resolves the worker and client configs it builds, and the Connect worker
 * resolves the connector configs at task start. So every value MM2 uses is resolved, with the top-level
 * `config.providers*` declarations; only `clusters` and the declarations themselves are read as written.
 * kmirror therefore resolves every other value once, up front, in one pass as Kafka's ConfigTransformer does.
 *
 * Kafka leaves a reference it cannot resolve as written, and the literal `${...}` text then reaches a client
 * (as a password, say). kmirror reports it instead: an undeclared provider, a missing file, key or variable, a
 * path outside `allowed.paths`, each under the property key and its line, showing the reference, never a value.
 */
import type { ConfigProblem } from '../errors.ts'
import type { ParsedProperties } from './properties.ts'
import { createProvider, providerClass, ProviderClasses, suggestedClass, type ConfigProvider } from './providers.ts'
import { findReferences, replaceReferences, type Reference } from './references.ts'
import { closest, didYouMean } from './suggest.ts'
import { newProps, splitList } from './values.ts'
import type { ConfigWarning } from './warnings.ts'

export interface ResolvedProperties {
  /** Every key of the file, with its references resolved (or as written when one could not be). */
  readonly values: Readonly<Record<string, string>>
  /** The references in each key's value, as written (only keys that have some). */
  readonly references: ReadonlyMap<string, readonly string[]>
  /** Every value a provider returned: secrets, wherever they appear. */
  readonly secrets: readonly string[]
  /** Keys holding a reference that could not be resolved (already reported). */
  readonly unresolved: ReadonlySet<string>
  readonly problems: readonly ConfigProblem[]
  readonly warnings: readonly ConfigWarning[]
}

const PROVIDERS_KEY = 'config.providers'

/** Keys MM2 reads before it resolves anything: their references stay as written. */
function isReadAsWritten (key: string): boolean {
  return key === 'clusters' || key === PROVIDERS_KEY || key.startsWith(`${PROVIDERS_KEY}.`)
}

export function resolveReferences (parsed: ParsedProperties, env: Readonly<Record<string, string | undefined>> = process.env): ResolvedProperties {
  const lines = lineNumbers(parsed)
  const at = (key: string): string => lines.has(key) ? `line ${lines.get(key) ?? 0}: ` : ''
  const declared = declareProviders(parsed.values, env, at)
  const values = newProps()
  const references = new Map<string, readonly string[]>()
  const secrets = new Set<string>()
  const unresolved = new Set<string>()
  const problems: ConfigProblem[] = [...declared.problems]
  const warnings: ConfigWarning[] = [...declared.warnings]
  for (const [key, value] of Object.entries(parsed.values)) {
    const found = findReferences(value)
    if (found.length === 0 || isReadAsWritten(key)) {
      values[key] = value
      if (found.length > 0) warnings.push({ key, message: `${at(key)}MM2 reads this key before it resolves references, so ${found.map(r => r.text).join(', ')} is used as written` })
      continue
    }
    references.set(key, found.map(r => r.text))
    values[key] = replaceReferences(value, reference => {
      const result = declared.lookup(reference)
      if ('value' in result) {
        secrets.add(result.value)
        return result.value
      }
      unresolved.add(key)
      if (result.problem !== undefined) problems.push({ key, message: `${at(key)}${reference.text}: ${result.problem}` })
      return undefined
    })
  }
  return { values, references, secrets: [...secrets], unresolved, problems, warnings }
}

function lineNumbers (parsed: ParsedProperties): Map<string, number> {
  // The last occurrence of a key is the one that counts, as in Java.
  return new Map(parsed.lines.map(entry => [entry.key, entry.line]))
}

type Result = { readonly value: string } | { readonly problem: string | undefined }

interface Declarations {
  /** A reference's value, or why not (undefined when the reason was already reported, e.g. a broken declaration). */
  readonly lookup: (reference: Reference) => Result
  readonly problems: readonly ConfigProblem[]
  readonly warnings: readonly ConfigWarning[]
}

/** `config.providers = a, b` with `config.providers.a.class` and `config.providers.a.param.*`, at top level. */
function declareProviders (values: Readonly<Record<string, string>>, env: Readonly<Record<string, string | undefined>>, at: (key: string) => string): Declarations {
  const names = splitList(values[PROVIDERS_KEY] ?? '')
  const providers = new Map<string, ConfigProvider>()
  const broken = new Set<string>()
  const problems: ConfigProblem[] = []
  const warnings: ConfigWarning[] = []
  for (const name of new Set(names)) {
    if (name === '') {
      problems.push({ key: PROVIDERS_KEY, message: `${at(PROVIDERS_KEY)}contains an empty name (two commas in a row, or a comma at an end): remove the extra comma` })
      continue
    }
    const classKey = `${PROVIDERS_KEY}.${name}.class`
    const written = values[classKey]
    const className = written === undefined ? undefined : providerClass(written)
    if (written === undefined || className === undefined) {
      broken.add(name)
      problems.push(written === undefined
        ? { key: PROVIDERS_KEY, message: `${at(PROVIDERS_KEY)}lists ${name}, but ${classKey} is not set: set it, e.g. ${classKey} = ${suggestedClass(name)}` }
        : { key: classKey, message: `${at(classKey)}${JSON.stringify(written)} is not a config provider kmirror has (it cannot load Java classes): use ${Object.values(ProviderClasses).join(', ')}` })
      continue
    }
    const setup = createProvider(name, className, values, env)
    problems.push(...setup.problems.map(([key, message]) => ({ key, message: `${at(key)}${message}` })))
    warnings.push(...setup.warnings.map(([key, message]) => ({ key, message })))
    if (setup.provider === undefined) broken.add(name)
    else providers.set(name, setup.provider)
  }
  warnings.push(...undeclaredClasses(values, names))
  const lookup = (reference: Reference): Result => {
    const provider = providers.get(reference.provider)
    if (provider !== undefined) return provider.lookup(reference.path, reference.key)
    if (broken.has(reference.provider)) return { problem: undefined }
    return { problem: unknownProvider(reference.provider, values, names) }
  }
  return { lookup, problems, warnings }
}

/** `config.providers.x.class` for an x that `config.providers` does not list: Kafka never creates it. */
function undeclaredClasses (values: Readonly<Record<string, string>>, names: readonly string[]): ConfigWarning[] {
  return Object.keys(values)
    .map(key => /^config\.providers\.(.+)\.class$/.exec(key))
    .filter(match => match !== null && !names.includes(match[1] ?? ''))
    .map(match => ({ key: match?.[0] ?? '', message: `declares provider ${match?.[1] ?? ''}, which is not listed in config.providers, so it is not used: add it to config.providers` }))
}

function unknownProvider (name: string, values: Readonly<Record<string, string>>, names: readonly string[]): string {
  const classKey = `${PROVIDERS_KEY}.${name}.class`
  if (values[classKey] !== undefined) return `provider ${name} is declared with ${classKey} but not listed in config.providers: add it there`
  const declaration = `config.providers = ${[...names, name].join(', ')} and ${classKey} = ${suggestedClass(name)}`
  if (names.length === 0) return `no config provider is declared, so nothing resolves this reference: declare one with ${declaration}`
  return `there is no config provider named ${name} (config.providers = ${names.join(', ')})${didYouMean(closest(name, names))}: fix the name, or declare it with ${declaration}`
}
