/**
 * `allowed.paths` of FileConfigProvider and DirectoryConfigProvider (KIP-993), as Kafka's AllowedPaths reads it:
 * a comma-separated list (split at each comma, nothing trimmed) of absolute paths that must exist; a requested
 * path is allowed when, normalised, it lies inside one of them (whole path components, no symbolic-link
 * resolution). Unset or empty allows every path.
 */
import { existsSync } from 'node:fs'
import { posix } from 'node:path'

export class AllowedPaths {
  readonly #paths: readonly string[]

  private constructor (paths: readonly string[]) {
    this.#paths = paths
  }

  /** The allowed paths of a parameter value (null when every path is allowed), or the problems with it. */
  static parse (value: string | undefined): { readonly paths: AllowedPaths | null, readonly problems: readonly string[] } {
    if (value === undefined || value === '') return { paths: null, problems: [] }
    const problems: string[] = []
    const paths: string[] = []
    for (const entry of javaSplitAtCommas(value)) {
      const path = normalize(entry)
      const spaces = entry !== entry.trim() ? ' (Kafka does not trim the entries: remove the spaces around the commas)' : ''
      if (!posix.isAbsolute(path)) problems.push(`${JSON.stringify(entry)} is not an absolute path${spaces}`)
      else if (!existsSync(path)) problems.push(`${JSON.stringify(entry)} does not exist: Kafka requires every allowed path to exist`)
      else paths.push(path)
    }
    return { paths: problems.length > 0 ? null : new AllowedPaths(paths), problems }
  }

  /** The normalised path, which Kafka then reads, when it lies inside an allowed path; undefined otherwise. */
  check (requested: string): string | undefined {
    const path = normalize(requested)
    return this.#paths.some(allowed => allowed === '/' || path === allowed || path.startsWith(`${allowed}/`)) ? path : undefined
  }

  describe (): string {
    return this.#paths.join(', ')
  }
}

/** Java's Path.normalize for Unix paths: `.` and `..` resolved lexically, repeated and trailing slashes dropped. */
function normalize (path: string): string {
  const normalized = posix.normalize(path)
  return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized
}

/** Java's `String.split(",")`: trailing empty entries are dropped. */
function javaSplitAtCommas (value: string): string[] {
  const parts = value.split(',')
  while (parts.length > 0 && parts.at(-1) === '') parts.pop()
  return parts
}
