/**
 * The three config providers Kafka ships, as MM2 configures them from `config.providers.<name>.class` and
 * `config.providers.<name>.param.*`: FileConfigProvider (a .properties file), DirectoryConfigProvider (one file
 * per key) and EnvVarConfigProvider (environment variables, KIP-887), with `allowed.paths` (KIP-993) and
 * `allowlist.pattern`. Where Kafka silently leaves a reference unresolved, kmirror reports why, naming what to fix.
 * No message here ever contains a value read from a provider.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { compileJavaRegexList, JavaRegexError } from '../policy/java-regex.ts'
import { AllowedPaths } from './allowed-paths.ts'
import { parseProperties, PropertiesSyntaxError } from './properties.ts'
import { closest, didYouMean } from './suggest.ts'
import { stripPrefix } from './values.ts'

export type Lookup = { readonly value: string } | { readonly problem: string }

export interface ConfigProvider {
  /** The value of `key` at `path`, or why there is none (a sentence that says what to fix). */
  lookup: (path: string, key: string) => Lookup
}

const PACKAGE = 'org.apache.kafka.common.config.provider.'
export const ProviderClasses = {
  FILE: `${PACKAGE}FileConfigProvider`,
  DIRECTORY: `${PACKAGE}DirectoryConfigProvider`,
  ENV: `${PACKAGE}EnvVarConfigProvider`
} as const
export type ProviderClass = (typeof ProviderClasses)[keyof typeof ProviderClasses]

const PARAMS: Readonly<Record<ProviderClass, readonly string[]>> = {
  [ProviderClasses.FILE]: ['allowed.paths'],
  [ProviderClasses.DIRECTORY]: ['allowed.paths'],
  [ProviderClasses.ENV]: ['allowlist.pattern']
}

/** What a parameter's value must be, for messages that cannot show the value (it came from a reference). */
export const PARAM_FORMATS: Readonly<Record<string, string>> = {
  'allowed.paths': 'a comma-separated list of absolute paths that exist, without spaces around the commas',
  'allowlist.pattern': 'a Java regular expression'
}

/** The parameters kmirror knows for the class: the others are ignored (with a warning). */
export function knownParams (className: ProviderClass): readonly string[] {
  return PARAMS[className]
}

/**
 * A class as Connect's plugin loader finds it: the full name, the simple name, or the simple name without
 * `ConfigProvider` (Connect's aliases `File`, `Directory`, `EnvVar`).
 */
export function providerClass (written: string): ProviderClass | undefined {
  const name = written.trim()
  return Object.values(ProviderClasses).find(full => {
    const simple = full.slice(PACKAGE.length)
    return name === full || name === simple || name === simple.replace(/ConfigProvider$/, '')
  })
}

/** The class a provider named like this most likely needs, for messages: `file` → FileConfigProvider. */
export function suggestedClass (name: string): string {
  const lower = name.toLowerCase()
  if (lower.startsWith('dir')) return ProviderClasses.DIRECTORY
  if (lower.startsWith('env')) return ProviderClasses.ENV
  return ProviderClasses.FILE
}

export interface ProviderSetup {
  readonly provider?: ConfigProvider
  /** Problems with the parameters, as [key, message]. */
  readonly problems: ReadonlyArray<readonly [string, string]>
}

/** Configures one provider from its `config.providers.<name>.param.*` keys, as `configure(params)` does in Kafka. */
export function createProvider (name: string, className: ProviderClass, values: Readonly<Record<string, string>>, env: Readonly<Record<string, string | undefined>>): ProviderSetup {
  const prefix = `config.providers.${name}.param.`
  const params = stripPrefix(values, prefix)
  const problems: Array<readonly [string, string]> = []
  if (className === ProviderClasses.ENV) {
    const pattern = params['allowlist.pattern']
    if (pattern === undefined) return { provider: new EnvVarProvider(name, null, env), problems }
    const regex = compileAllowlist(pattern, `${prefix}allowlist.pattern`, problems)
    return { provider: regex === undefined ? undefined : new EnvVarProvider(name, { regex, pattern }, env), problems }
  }
  const allowed = AllowedPaths.parse(params['allowed.paths'])
  if (allowed.problems.length > 0) {
    return { problems: allowed.problems.map(problem => [`${prefix}allowed.paths`, problem] as const) }
  }
  const provider = className === ProviderClasses.FILE ? new FileProvider(name, allowed.paths) : new DirectoryProvider(name, allowed.paths)
  return { provider, problems }
}

/** `config.providers.<name>.param.*` keys the class does not have: Kafka passes them on, and the class ignores them. */
export function unknownParamWarnings (name: string, className: ProviderClass, values: Readonly<Record<string, string>>): Array<readonly [string, string]> {
  const prefix = `config.providers.${name}.param.`
  const known = PARAMS[className]
  const simple = className.slice(PACKAGE.length)
  return Object.keys(stripPrefix(values, prefix)).filter(param => !known.includes(param)).map(param => [
    `${prefix}${param}`,
    `is not a parameter of ${simple}, so it is ignored${didYouMean(suggestParam(param, known, prefix))}`
  ] as const)
}

function suggestParam (param: string, known: readonly string[], prefix: string): string | undefined {
  const near = closest(param, known)
  return near === undefined ? undefined : `${prefix}${near}`
}

function compileAllowlist (pattern: string, key: string, problems: Array<readonly [string, string]>): RegExp | undefined {
  try {
    return compileJavaRegexList([pattern]) ?? undefined
  } catch (err) {
    if (!(err instanceof JavaRegexError)) throw err
    problems.push([key, `${err.message}: fix the regular expression (it is matched against each whole variable name)`])
    return undefined
  }
}

/** The path Kafka reads (normalised when allowed.paths is set), or why it refuses it. */
function allowedPath (name: string, path: string, allowed: AllowedPaths | null): { readonly path: string } | { readonly problem: string } {
  if (allowed === null) return { path }
  const checked = allowed.check(path)
  if (checked !== undefined) return { path: checked }
  return { problem: `${path} is outside config.providers.${name}.param.allowed.paths (${allowed.describe()}): move it there or add its directory to allowed.paths` }
}

/** `${file:/path/to/file.properties:key}`: the file is read once, as java.util.Properties reads a UTF-8 Reader. */
class FileProvider implements ConfigProvider {
  readonly #name: string
  readonly #allowed: AllowedPaths | null
  readonly #files = new Map<string, Readonly<Record<string, string>> | string>()

  constructor (name: string, allowed: AllowedPaths | null) {
    this.#name = name
    this.#allowed = allowed
  }

  lookup (path: string, key: string): Lookup {
    if (path === '') return { problem: `has no file path: write \${${this.#name}:/path/to/file.properties:${key}}` }
    const allowed = allowedPath(this.#name, path, this.#allowed)
    if ('problem' in allowed) return allowed
    let file = this.#files.get(allowed.path)
    if (file === undefined) {
      file = readPropertiesFile(allowed.path)
      this.#files.set(allowed.path, file)
    }
    if (typeof file === 'string') return { problem: file }
    const value = file[key]
    if (value !== undefined) return { value }
    // No "did you mean": the file's keys are not shown. A file holding only a password on one line is read as a
    // key without value, so a near miss would print the password.
    return { problem: `${allowed.path} has no key ${key}: add it to the file as ${key}=... (a properties file; a file holding only the secret needs \${directory:...} instead) or fix the key` }
  }
}

function readPropertiesFile (path: string): Readonly<Record<string, string>> | string {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (err) {
    return `${path} cannot be read (${fileError(err)}): check the path and its permissions`
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return `${path} is not valid UTF-8, which FileConfigProvider requires: save it as UTF-8`
  }
  try {
    return parseProperties(text).values
  } catch (err) {
    if (err instanceof PropertiesSyntaxError) return `${path} cannot be read as a properties file: ${err.message}`
    throw err
  }
}

/** `${directory:/path/to/dir:file}`: the whole content of a regular file directly inside the directory. */
class DirectoryProvider implements ConfigProvider {
  readonly #name: string
  readonly #allowed: AllowedPaths | null
  readonly #listings = new Map<string, readonly string[] | string>()

  constructor (name: string, allowed: AllowedPaths | null) {
    this.#name = name
    this.#allowed = allowed
  }

  lookup (path: string, key: string): Lookup {
    if (path === '') return { problem: `has no directory path: write \${${this.#name}:/path/to/directory:${key}}` }
    const allowed = allowedPath(this.#name, path, this.#allowed)
    if ('problem' in allowed) return allowed
    const directory = allowed.path
    let names = this.#listings.get(directory)
    if (names === undefined) {
      names = listDirectory(directory)
      this.#listings.set(directory, names)
    }
    if (typeof names === 'string') return { problem: names }
    const file = join(directory, key)
    if (!names.includes(key) || !isRegularFile(file)) {
      return { problem: `${directory} has no file named ${key}${didYouMean(closest(key, names))}: the key is the name of a file directly in the directory` }
    }
    try {
      return { value: readFileSync(file).toString('utf8') }
    } catch (err) {
      return { problem: `${file} cannot be read (${fileError(err)}): check its permissions` }
    }
  }
}

function listDirectory (path: string): readonly string[] | string {
  try {
    return readdirSync(path)
  } catch (err) {
    return `${path} cannot be listed (${fileError(err)}): the path must be a readable directory`
  }
}

/** Like Java's Files.isRegularFile: follows symbolic links (Kubernetes mounts secrets as links). */
function isRegularFile (path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** `${env:VARIABLE}`: a variable of kmirror's environment whose name matches `allowlist.pattern` (default: any). */
class EnvVarProvider implements ConfigProvider {
  readonly #name: string
  readonly #allowlist: { readonly regex: RegExp, readonly pattern: string } | null
  readonly #env: Readonly<Record<string, string | undefined>>

  constructor (name: string, allowlist: { readonly regex: RegExp, readonly pattern: string } | null, env: Readonly<Record<string, string | undefined>>) {
    this.#name = name
    this.#allowlist = allowlist
    this.#env = env
  }

  lookup (path: string, key: string): Lookup {
    if (path !== '') return { problem: `has a path, which EnvVarConfigProvider does not take: write \${${this.#name}:${key}}` }
    if (this.#allowlist !== null && !this.#allowlist.regex.test(key)) {
      return { problem: `environment variable ${key} is not allowed by config.providers.${this.#name}.param.allowlist.pattern = ${this.#allowlist.pattern}: extend the pattern or use another variable` }
    }
    const value = this.#env[key]
    if (value === undefined) return { problem: `environment variable ${key} is not set: set it in kmirror's environment` }
    return { value }
  }
}

function fileError (err: unknown): string {
  const code = errnoCode(err)
  if (code === 'ENOENT') return 'no such file or directory'
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'EISDIR') return 'it is a directory'
  if (code === 'ENOTDIR') return 'not a directory'
  return code ?? (err instanceof Error ? err.message : String(err))
}

/** The `code` of a Node file-system error (`ENOENT`, ...), if ERR is one. */
export function errnoCode (err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined
}
