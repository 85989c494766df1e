/**
 * kmirror's version, from package.json. The single executable (scripts/package.ts) has no package.json beside it:
 * its bundler replaces KMIRROR_BUNDLED_VERSION by the version at build time. Run from the sources or from dist/,
 * the name is not defined (`typeof` says 'undefined') and the file two levels up is read.
 */
import { readFileSync } from 'node:fs'

declare const KMIRROR_BUNDLED_VERSION: string | undefined

let cached: string | undefined

/** `unknown` if package.json cannot be read (never an error: it only labels output). */
export function packageVersion (): string {
  cached ??= typeof KMIRROR_BUNDLED_VERSION === 'string' ? KMIRROR_BUNDLED_VERSION : readPackageVersion()
  return cached
}

function readPackageVersion (): string {
  try {
    // src/version.ts and dist/version.js are both one level below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown }
    return typeof pkg.version === 'string' ? pkg.version : 'unknown'
  } catch {
    return 'unknown'
  }
}
