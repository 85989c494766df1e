/**
 * The one redactor: it knows every secret value of the loaded configuration and replaces it wherever text
 * leaves the process (stdout and stderr of every command, every log line, the `/status` document).
 * The configuration decides which values are secret (src/config/secrets.ts); this module only hides them, so
 * a secret stays hidden whatever key it came from and whatever message happens to quote it.
 */

export const REDACTED = '[redacted]'

/** The secret values of a configuration, by how sure kmirror is that they are secret (src/config/secrets.ts decides). */
export interface SecretValues {
  /**
   * Certainly secret (values of password keys, values config providers returned for keys that are not numbers,
   * flags or choices, JAAS option values, private keys): always hidden, however short. Long ones wherever they
   * appear; short and numeric ones where they stand as a whole token, so `ab` does not blank `about`.
   */
  readonly certain: readonly string[]
  /** Guessed from a key's name (`my.api.token`): hidden only when long enough not to be an ordinary word or number. */
  readonly guessed: readonly string[]
}

/**
 * Values shorter than this, plain numbers and true/false are only searched for as whole tokens, and only when
 * certainly secret: searched anywhere, every `1` or `abc` would blank out ordinary numbers and words.
 */
const MIN_LENGTH = 4
/**
 * A whole token: not preceded or followed by a letter, digit, `_` or `-`; or preceded by an escape of a JSON
 * string (`\n`, `\t`, `\u0007`: text quoting JSON, as `"line\n123456"`), whose letter or digits end the escape,
 * not start the token.
 */
const tokenBefore = '(?:(?<![\\w-])|(?<=\\\\(?:[bfnrt]|u[0-9a-fA-F]{4})))'
const tokenAfter = '(?![\\w-])'

export class Redactor {
  /** Search forms found wherever they appear, and those found only as whole tokens. */
  readonly #anywhere = new Set<string>()
  readonly #wholeTokens = new Set<string>()
  #pattern: RegExp | null = null
  #anywherePattern: RegExp | null = null

  constructor (secrets: Partial<SecretValues> = {}) {
    this.add(secrets)
  }

  /** Remembers secret values. */
  add (secrets: Partial<SecretValues>): void {
    const before = this.size
    for (const value of secrets.certain ?? []) this.#remember(value, true)
    for (const value of secrets.guessed ?? []) this.#remember(value, false)
    if (this.size === before) return
    this.#pattern = compile(this.#anywhere, this.#wholeTokens)
    this.#anywherePattern = compile(this.#anywhere, new Set())
  }

  #remember (value: string, certain: boolean): void {
    for (const candidate of new Set([value, value.trim()])) {
      if (candidate.trim() === '') continue
      const anywhere = worthSearchingAnywhere(candidate)
      if (!anywhere && !certain) continue
      for (const form of searchForms(candidate)) {
        if (anywhere) this.#anywhere.add(form)
        else if (!this.#anywhere.has(form)) this.#wholeTokens.add(form)
      }
    }
  }

  /** How many forms of secret values are searched for. */
  get size (): number {
    return this.#anywhere.size + this.#wholeTokens.size
  }

  /** TEXT with every secret replaced by `[redacted]`. */
  redact (text: string): string {
    return this.#pattern === null ? text : text.replace(this.#pattern, REDACTED)
  }

  /**
   * Serialized text whose values were already redacted with `redactValue` (a JSON log line, `/status`): only
   * the secrets searched anywhere are replaced, as a safety net. A short or numeric secret there would match
   * numbers of the document (an offset that happens to be 123456) and break the JSON, while every string of it
   * has been redacted before it was escaped.
   */
  redactSerialized (text: string): string {
    return this.#anywherePattern === null ? text : text.replace(this.#anywherePattern, REDACTED)
  }

  /**
   * VALUE with every string in it redacted, through arrays and plain objects (keys included), before it becomes
   * text: escaping (JSON, twice when a message quotes JSON) cannot hide a secret from the search then. Other
   * objects (errors, buffers, dates, class instances) are returned as they are.
   */
  redactValue (value: unknown): unknown {
    return this.#pattern === null ? value : this.#redactIn(value, new WeakSet())
  }

  #redactIn (value: unknown, seen: WeakSet<object>): unknown {
    if (typeof value === 'string') return this.redact(value)
    if (typeof value !== 'object' || value === null || seen.has(value)) return value
    seen.add(value)
    if (Array.isArray(value)) return value.map(item => this.#redactIn(item, seen))
    const prototype: unknown = Object.getPrototypeOf(value)
    if (prototype !== Object.prototype && prototype !== null) return value
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.redact(key), this.#redactIn(item, seen)]))
  }
}

/**
 * The forms a value takes in output: as it is; escaped inside a JSON string (log lines, `/status`, `--json`
 * output), also twice (a message quoting JSON, logged as JSON); and URL-encoded (a query string or a form body,
 * as OAuth token requests send the client secret).
 */
function searchForms (value: string): string[] {
  const json = jsonEscaped(value)
  return [...new Set([value, json, jsonEscaped(json), encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2)])]
}

function jsonEscaped (value: string): string {
  return JSON.stringify(value).slice(1, -1)
}

function worthSearchingAnywhere (value: string): boolean {
  if (value.length < MIN_LENGTH) return false
  return !/^[+-]?[0-9]+(\.[0-9]+)?$/.test(value) && !/^(true|false)$/i.test(value)
}

/** One alternation, longest values first, so a whole secret is replaced before a secret inside it. */
function compile (anywhere: ReadonlySet<string>, wholeTokens: ReadonlySet<string>): RegExp | null {
  const alternatives = [
    ...[...anywhere].map(form => ({ form, source: escapeRegExp(form) })),
    ...[...wholeTokens].map(form => ({ form, source: `${tokenBefore}${escapeRegExp(form)}${tokenAfter}` }))
  ]
  if (alternatives.length === 0) return null
  alternatives.sort((a, b) => b.form.length - a.form.length)
  return new RegExp(alternatives.map(a => a.source).join('|'), 'g')
}

function escapeRegExp (text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
}

/**
 * The process's redactor. The CLI adds the secrets of the configuration it loads (cli/config-input.ts); its
 * output streams, the logger and the HTTP endpoint redact with it.
 */
export const processRedactor = new Redactor()

interface Writable {
  write: (...args: never[]) => boolean
}

type Write = (chunk: unknown, ...rest: unknown[]) => boolean

/** The write of each stream before redactWrites patched it (writeJson writes past the stream's redaction). */
const unredactedWrites = new WeakMap<object, Write>()

/**
 * Makes every later `stream.write` of text (a string or UTF-8 bytes) go through `redactor` first. Used on
 * process.stdout and process.stderr by the CLI, so that no command can print a secret by accident.
 */
export function redactWrites (stream: NodeJS.WriteStream, redactor: Redactor = processRedactor): void {
  const original = stream.write.bind(stream) as Write
  unredactedWrites.set(stream, original)
  const write = (chunk: unknown, ...rest: unknown[]): boolean => original(redactChunk(chunk, redactor), ...rest)
  ;(stream as Writable).write = write as Writable['write']
}

function redactChunk (chunk: unknown, redactor: Redactor): unknown {
  if (redactor.size === 0) return chunk
  if (typeof chunk === 'string') return redactor.redact(chunk)
  if (chunk instanceof Uint8Array) {
    const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8')
    const redacted = redactor.redact(text)
    return redacted === text ? chunk : Buffer.from(redacted, 'utf8')
  }
  return chunk
}

/**
 * VALUE as a JSON document for scripts (`--json` output): every string in it redacted before it is serialized
 * (short and numeric secrets where they stand as whole tokens), then the document searched once more for the
 * secrets searched anywhere (Redactor.redactSerialized). Numbers stay numbers: `{"offset":3600}` stays valid JSON
 * with a secret `3600`.
 */
export function redactedJson (value: unknown, redactor: Redactor = processRedactor): string {
  // Through JSON first, so that the redactor walks exactly what JSON shows (toJSON, class instances as objects).
  const data: unknown = JSON.parse(JSON.stringify(value) ?? 'null')
  return redactor.redactSerialized(JSON.stringify(redactor.redactValue(data), null, 2))
}

/**
 * Writes VALUE as JSON (redactedJson) and a newline to STREAM, past the stream's own redaction (redactWrites):
 * that one searches text for short and numeric secrets as whole tokens and would turn `{"offset":3600}` into
 * `{"offset":[redacted]}`, which is no JSON. The document is redacted by value instead.
 */
export function writeJson (stream: NodeJS.WriteStream, value: unknown, redactor: Redactor = processRedactor): void {
  const write = unredactedWrites.get(stream) ?? (stream.write.bind(stream) as Write)
  write(`${redactedJson(value, redactor)}\n`)
}
