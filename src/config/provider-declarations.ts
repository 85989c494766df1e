/**
 * `config.providers = a, b` with `config.providers.a.class` and `config.providers.a.param.*`, at top level,
 * turned into providers the way MM2 builds them, twice:
 * 1. MirrorMakerConfig's own AbstractConfig creates the providers `config.providers` names exactly as it splits
 *    at commas (spaces kept: `file, env` names `file` and ` env`, and there is no ` env` class key), each
 *    configured with its parameters as written. They resolve every original, of which MM2 uses `clusters` and
 *    the provider parameters resolved.
 * 2. MirrorMakerConfig.transform and the Connect worker create the providers of the trimmed list, configured
 *    with the parameters resolved in step 1. They resolve every other value.
 * kmirror trims the names in step 1 too (and warns where MM2 would not find the provider), and creates a step-1
 * provider only when a reference needs it; it still reports a provider MM2 creates in step 1 with a reference
 * in a parameter, on which MM2 fails to start (`${env:DIRS}` is no absolute path, nor a valid regex).
 */
import type { ConfigProblem } from '../errors.ts'
import { createProvider, knownParams, PARAM_FORMATS, providerClass, ProviderClasses, suggestedClass, unknownParamWarnings, type ConfigProvider, type Lookup, type ProviderClass, type ProviderSetup } from './providers.ts'
import { findReferences, type Reference } from './references.ts'
import { closest, didYouMean } from './suggest.ts'
import { javaSplitAtCommas, splitList } from './values.ts'
import type { ConfigWarning } from './warnings.ts'

export const PROVIDERS_KEY = 'config.providers'

/** A reference's value, or why not (undefined when the reason was already reported, e.g. a broken declaration). */
export type Result = Lookup | { readonly problem: undefined }

type Values = Readonly<Record<string, string>>
type Env = Readonly<Record<string, string | undefined>>
type At = (key: string) => string

/**
 * The declarations of one file, and the providers made from them.
 * Invariants: a listed name is either in `#classes` (a class kmirror has) or in `#broken` (problem reported),
 * or both when MM2 would fail on a reference in its parameters; a broken name never resolves anything and its
 * references are not reported again; a provider configured with its parameters as written is made once.
 */
export class ProviderDeclarations {
  readonly problems: ConfigProblem[] = []
  readonly warnings: ConfigWarning[] = []
  readonly #values: Values
  readonly #env: Env
  readonly #at: At
  /** `config.providers` as written, its trimmed names, and the names MM2 finds exactly as split at commas. */
  readonly #written: string
  readonly #names: readonly string[]
  readonly #exact: ReadonlySet<string>
  readonly #classes = new Map<string, ProviderClass>()
  readonly #broken = new Set<string>()
  readonly #asWritten = new Map<string, ProviderSetup>()
  readonly #warned = new Set<string>()
  readonly #params: ReadonlySet<string>

  constructor (values: Values, env: Env, at: At) {
    this.#values = values
    this.#env = env
    this.#at = at
    this.#written = values[PROVIDERS_KEY] ?? ''
    this.#names = splitList(this.#written)
    this.#exact = new Set(javaSplitAtCommas(this.#written))
    this.warnings.push(...undeclaredClasses(values, this.#names), ...unlistedParams(values, this.#names))
    for (const name of new Set(this.#names)) this.#declare(name)
    this.#params = new Set([...this.#classes].flatMap(([name, className]) => paramKeys(name, className)))
  }

  #declare (name: string): void {
    const className = declaredClass(name, this.#values, this.#at, this.problems)
    if (className === undefined) {
      this.#broken.add(name)
      return
    }
    this.#classes.set(name, className)
    this.warnings.push(...unknownParamWarnings(name, className, this.#values).map(([key, message]) => ({ key, message })))
    const inParams = this.#exact.has(name) ? referencesInParams(name, className, this.#values, this.#at) : []
    this.problems.push(...inParams)
    if (inParams.length > 0) this.#broken.add(name)
  }

  /**
   * Whether step 1 resolves KEY: `clusters`, and the parameters of the listed providers. The other
   * `config.providers*` keys are read as written: the names and classes, and parameters no provider reads.
   */
  isResolvedEarly (key: string): boolean {
    return key === 'clusters' || this.#params.has(key)
  }

  /** Step 1: a reference in KEY, resolved with the provider configured with its parameters as written. */
  early (reference: Reference, key: string): Result {
    const className = this.#classes.get(reference.provider)
    if (className === undefined || this.#broken.has(reference.provider)) return this.#unknown(reference)
    const once = `${reference.provider}\u0000${key}`
    if (!this.#exact.has(reference.provider) && !this.#warned.has(once)) {
      this.#warned.add(once)
      this.warnings.push({ key: PROVIDERS_KEY, message: untrimmedName(reference, key, this.#written) })
    }
    return lookupIn(this.#setupAsWritten(reference.provider, className).provider, reference)
  }

  /**
   * Step 2: the providers configured with RESOLVED parameters (every value after step 1); WRITTEN holds the
   * keys that had references, as written, so that problems with those parameters name the reference.
   */
  configure (resolved: Values, written: ReadonlyMap<string, string>): { readonly lookup: (reference: Reference) => Result, readonly problems: readonly ConfigProblem[] } {
    const providers = new Map<string, ConfigProvider | undefined>()
    const problems: ConfigProblem[] = []
    for (const [name, className] of this.#classes) {
      if (this.#broken.has(name)) continue
      if (paramKeys(name, className).every(key => resolved[key] === this.#values[key])) {
        providers.set(name, this.#setupAsWritten(name, className).provider)
        continue
      }
      const setup = createProvider(name, className, resolved, this.#env)
      problems.push(...setup.problems.map(([key, message]) => paramProblem(key, message, written, this.#at)))
      providers.set(name, setup.provider)
    }
    const lookup = (reference: Reference): Result => providers.has(reference.provider) ? lookupIn(providers.get(reference.provider), reference) : this.#unknown(reference)
    return { lookup, problems }
  }

  #unknown (reference: Reference): Result {
    return this.#broken.has(reference.provider) ? { problem: undefined } : { problem: unknownProvider(reference.provider, this.#values, this.#names) }
  }

  #setupAsWritten (name: string, className: ProviderClass): ProviderSetup {
    let setup = this.#asWritten.get(name)
    if (setup === undefined) {
      setup = createProvider(name, className, this.#values, this.#env)
      this.#asWritten.set(name, setup)
      this.problems.push(...setup.problems.map(([key, message]) => ({ key, message: `${this.#at(key)}${message}` })))
    }
    return setup
  }
}

function paramKeys (name: string, className: ProviderClass): string[] {
  return knownParams(className).map(param => `${PROVIDERS_KEY}.${name}.param.${param}`)
}

function lookupIn (provider: ConfigProvider | undefined, reference: Reference): Result {
  return provider === undefined ? { problem: undefined } : provider.lookup(reference.path, reference.key)
}

/** The class of a listed provider, or undefined with the problem reported. */
function declaredClass (name: string, values: Values, at: At, problems: ConfigProblem[]): ProviderClass | undefined {
  if (name === '') {
    problems.push({ key: PROVIDERS_KEY, message: `${at(PROVIDERS_KEY)}contains an empty name (two commas in a row, or a comma at an end): remove the extra comma` })
    return undefined
  }
  const classKey = `${PROVIDERS_KEY}.${name}.class`
  const written = values[classKey]
  const className = written === undefined ? undefined : providerClass(written)
  if (written === undefined) {
    problems.push({ key: PROVIDERS_KEY, message: `${at(PROVIDERS_KEY)}lists ${name}, but ${classKey} is not set: set it, e.g. ${classKey} = ${suggestedClass(name)}` })
  } else if (className === undefined) {
    problems.push({ key: classKey, message: `${at(classKey)}${JSON.stringify(written)} is not a config provider kmirror has (it cannot load Java classes): use ${Object.values(ProviderClasses).join(', ')}` })
  }
  return className
}

/** MM2 configures a step-1 provider with the reference text itself, and fails to start on it. */
function referencesInParams (name: string, className: ProviderClass, values: Values, at: At): ConfigProblem[] {
  return paramKeys(name, className).flatMap(key => {
    const found = findReferences(values[key] ?? '')
    if (found.length === 0) return []
    return [{
      key,
      message: `${at(key)}${found.map(r => r.text).join(', ')}: MM2 configures provider ${name} with its parameters as written, before it resolves any reference, and would fail to start on this one: write the value itself`
    }]
  })
}

function paramProblem (key: string, message: string, written: ReadonlyMap<string, string>, at: At): ConfigProblem {
  const asWritten = written.get(key)
  if (asWritten === undefined) return { key, message: `${at(key)}${message}` }
  const param = key.slice(key.indexOf('.param.') + '.param.'.length)
  return { key, message: `${at(key)}the value of ${asWritten} is not valid: it must be ${PARAM_FORMATS[param] ?? 'a valid value'}` }
}

function untrimmedName (reference: Reference, key: string, written: string): string {
  const listed = javaSplitAtCommas(written).find(entry => entry.trim() === reference.provider) ?? reference.provider
  return `lists ${JSON.stringify(listed)} with spaces around the name: MM2 resolves clusters and the provider parameters with providers named exactly as config.providers splits at commas, so it would not find ${JSON.stringify(listed)} for ${reference.text} in ${key} (kmirror trims the names): write config.providers = ${splitList(written).join(',')}`
}

/** `config.providers.x.class` for an x that `config.providers` does not list: Kafka never creates it. */
function undeclaredClasses (values: Values, names: readonly string[]): ConfigWarning[] {
  return Object.keys(values).flatMap(key => {
    const name = /^config\.providers\.(.+)\.class$/.exec(key)?.[1]
    if (name === undefined || names.includes(name)) return []
    return [{ key, message: `declares provider ${name}, which is not listed in config.providers, so it is not used: add it to config.providers` }]
  })
}

/** `config.providers.x.param.p` for an x that `config.providers` does not list: nothing reads it. */
function unlistedParams (values: Values, names: readonly string[]): ConfigWarning[] {
  return Object.keys(values).flatMap(key => {
    const name = /^config\.providers\.(.+?)\.param\./.exec(key)?.[1]
    if (name === undefined || names.includes(name)) return []
    return [{ key, message: `is a parameter of provider ${name}, which is not listed in config.providers, so it is not used` }]
  })
}

function unknownProvider (name: string, values: Values, names: readonly string[]): string {
  const classKey = `${PROVIDERS_KEY}.${name}.class`
  if (values[classKey] !== undefined) return `provider ${name} is declared with ${classKey} but not listed in config.providers: add it there`
  const declaration = `config.providers = ${[...names, name].join(', ')} and ${classKey} = ${suggestedClass(name)}`
  if (names.length === 0) return `no config provider is declared, so nothing resolves this reference: declare one with ${declaration}`
  return `there is no config provider named ${name} (config.providers = ${names.join(', ')})${didYouMean(closest(name, names))}: fix the name, or declare it with ${declaration}`
}
