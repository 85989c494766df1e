/**
 * Files kmirror serves or reads at run time that are not code (the web console's page, styles and scripts, say),
 * kept under src/ beside the code that uses them. Read them only through `readAsset`: run from the sources (or
 * dist/) it reads the file; in the single executable (scripts/package.ts) there is no src/, and every non-.ts
 * file under src/ is embedded in the executable under the same relative path.
 */
import { readFileSync } from 'node:fs'
import { getAsset, isSea } from 'node:sea'

/** The bytes of `path`, relative to src/ (`http/console/index.html`); throws if there is no such asset. */
export function readAsset (path: string): Buffer {
  if (isSea()) return Buffer.from(getAsset(path))
  return readFileSync(new URL(path, new URL('./', import.meta.url)))
}
