/**
 * The one redactor: it knows every secret value of the loaded configuration and replaces it wherever text
 * leaves the process (stdout and stderr of every command, every log line, the `/status` document).
 * The configuration decides which values are secret (src/config/secrets.ts); this module only hides them, so
 * a secret stays hidden whatever key it came from and whatever message happens to quote it.
 */

export const REDACTED = '[redacted]'

/**
 * Values shorter than this are not searched for in free text: hiding every `1` or `abc` would blank out
 * ordinary numbers and words. `kmirror validate` still hides them, as it redacts per key.
 */
const MIN_LENGTH = 4

export class Redactor {
  readonly #values = new Set<string>()
  #pattern: RegExp | null = null

  constructor (values: Iterable<string> = []) {
    this.add(values)
  }

  /**
   * Remembers secret values. Plain numbers and `true`/`false` are skipped as well as short values: they occur
   * everywhere as data (offsets, counts, flags), and a secret is never one of them in practice.
   */
  add (values: Iterable<string>): void {
    let added = false
    for (const value of values) {
      for (const form of searchForms(value)) {
        if (!this.#values.has(form)) {
          this.#values.add(form)
          added = true
        }
      }
    }
    if (added) this.#pattern = compile(this.#values)
  }

  /** How many forms of secret values are searched for. */
  get size (): number {
    return this.#values.size
  }

  /** TEXT with every secret replaced by `[redacted]`. */
  redact (text: string): string {
    return this.#pattern === null ? text : text.replace(this.#pattern, REDACTED)
  }
}

/**
 * The forms a value takes in output: as it is, trimmed (Java trims most config values before use), and
 * escaped inside a JSON string (log lines, `/status`, `--json` output).
 */
function searchForms (value: string): string[] {
  const forms = new Set<string>()
  for (const candidate of [value, value.trim()]) {
    if (!worthSearching(candidate)) continue
    forms.add(candidate)
    forms.add(JSON.stringify(candidate).slice(1, -1))
  }
  return [...forms]
}

function worthSearching (value: string): boolean {
  if (value.length < MIN_LENGTH) return false
  return !/^[+-]?[0-9]+(\.[0-9]+)?$/.test(value) && !/^(true|false)$/i.test(value)
}

/** One alternation, longest values first, so a whole secret is replaced before a secret inside it. */
function compile (values: ReadonlySet<string>): RegExp | null {
  if (values.size === 0) return null
  const sorted = [...values].sort((a, b) => b.length - a.length)
  return new RegExp(sorted.map(escapeRegExp).join('|'), 'g')
}

function escapeRegExp (text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
}

/**
 * The process's redactor. Loading a configuration file (`loadConfig`) adds its secrets; the CLI's output
 * streams, the logger and the HTTP endpoint redact with it.
 */
export const processRedactor = new Redactor()

interface Writable {
  write: (...args: never[]) => boolean
}

/**
 * Makes every later `stream.write` of text (a string or UTF-8 bytes) go through `redactor` first. Used on
 * process.stdout and process.stderr by the CLI, so that no command can print a secret by accident.
 */
export function redactWrites (stream: NodeJS.WriteStream, redactor: Redactor = processRedactor): void {
  const original = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean
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
