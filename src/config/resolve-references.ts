/**
 * Config providers applied to a parsed mm2.properties, before MM2's resolution (resolve.ts) reads any value.
 *
 * Where MM2 resolves: MirrorMakerConfig is an AbstractConfig, which resolves every original with the providers
 * declared at top level (so `clusters` and the provider parameters are read resolved); its `transform` resolves
 * the worker and client configs it builds, and the Connect worker resolves the connector configs at task start.
 * So every value MM2 uses is resolved; only the `config.providers` names and classes are read as written.
 * kmirror resolves in the same two steps (provider-declarations.ts): `clusters` and the parameters first, then
 * every other value, each once, in one pass as Kafka's ConfigTransformer does.
 *
 * Kafka leaves a reference it cannot resolve as written, and the literal `${...}` text then reaches a client
 * (as a password, say). kmirror reports it instead: an undeclared provider, a missing file, key or variable, a
 * path outside `allowed.paths`, each under the property key and its line, showing the reference, never a value.
 */
import type { ConfigProblem } from '../errors.ts'
import { ProviderDeclarations, PROVIDERS_KEY, type Result } from './provider-declarations.ts'
import type { ParsedProperties } from './properties.ts'
import { findReferences, replaceReferences, type Reference } from './references.ts'
import { newProps } from './values.ts'
import type { ConfigWarning } from './warnings.ts'

export interface ResolvedProperties {
  /** Every key of the file, with its references resolved (or as written when one could not be). */
  readonly values: Readonly<Record<string, string>>
  /** The keys whose value holds references, with the value as written (messages show it instead of the value). */
  readonly references: ReadonlyMap<string, string>
  /** The values providers returned, by the key whose value they are part of: secrets (secrets.ts). */
  readonly provided: ReadonlyMap<string, readonly string[]>
  /** Keys holding a reference that could not be resolved (already reported). */
  readonly unresolved: ReadonlySet<string>
  readonly problems: readonly ConfigProblem[]
  readonly warnings: readonly ConfigWarning[]
}

/** The declarations themselves (names, classes, parameters no provider reads): read as written. */
function isDeclaration (key: string): boolean {
  return key === PROVIDERS_KEY || key.startsWith(`${PROVIDERS_KEY}.`)
}

type Env = Readonly<Record<string, string | undefined>>

export function resolveReferences (parsed: ParsedProperties, env: Env = process.env): ResolvedProperties {
  const lines = lineNumbers(parsed)
  const at = (key: string): string => lines.has(key) ? `line ${lines.get(key) ?? 0}: ` : ''
  const declared = new ProviderDeclarations(parsed.values, env, at)
  const step = new Resolution(at)
  const keys = Object.keys(parsed.values)
  const early = keys.filter(key => declared.isResolvedEarly(key))
  for (const key of early) step.resolve(key, parsed.values[key] ?? '', reference => declared.early(reference, key))
  const late = declared.configure({ ...parsed.values, ...step.values }, step.references)
  for (const key of keys.filter(key => !early.includes(key))) {
    const value = parsed.values[key] ?? ''
    if (isDeclaration(key)) step.keep(key, value)
    else step.resolve(key, value, late.lookup)
  }
  const values = newProps()
  for (const key of keys) values[key] = step.values[key] ?? ''
  return {
    values,
    references: step.references,
    provided: step.provided,
    unresolved: step.unresolved,
    problems: [...declared.problems, ...late.problems, ...step.problems],
    warnings: [...declared.warnings, ...step.warnings]
  }
}

/** The values resolved so far, and what resolving them found. */
class Resolution {
  readonly values = newProps()
  readonly references = new Map<string, string>()
  readonly provided = new Map<string, string[]>()
  readonly unresolved = new Set<string>()
  readonly problems: ConfigProblem[] = []
  readonly warnings: ConfigWarning[] = []
  readonly #at: (key: string) => string

  constructor (at: (key: string) => string) {
    this.#at = at
  }

  /** A declaration key: kept as written, with a warning if a name or class holds a reference. */
  keep (key: string, value: string): void {
    this.values[key] = value
    const found = findReferences(value)
    if (found.length === 0 || (key !== PROVIDERS_KEY && !key.endsWith('.class'))) return
    this.warnings.push({ key, message: `${this.#at(key)}config provider names and classes are read as written (MM2 needs them before it can resolve anything), so ${found.map(r => r.text).join(', ')} is used as written: write the name or class itself` })
  }

  resolve (key: string, value: string, lookup: (reference: Reference) => Result): void {
    if (findReferences(value).length === 0) {
      this.values[key] = value
      return
    }
    this.references.set(key, value)
    this.values[key] = replaceReferences(value, reference => {
      const result = lookup(reference)
      if ('value' in result) {
        this.provided.set(key, [...(this.provided.get(key) ?? []), result.value])
        return result.value
      }
      this.unresolved.add(key)
      if (result.problem !== undefined) this.problems.push({ key, message: `${this.#at(key)}${reference.text}: ${result.problem}` })
      return undefined
    })
  }
}

function lineNumbers (parsed: ParsedProperties): Map<string, number> {
  // The last occurrence of a key is the one that counts, as in Java.
  return new Map(parsed.lines.map(entry => [entry.key, entry.line]))
}
