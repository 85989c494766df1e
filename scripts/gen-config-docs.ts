/**
 * Writes docs/config.md from the schema table in src/config/schema.ts.
 * `node scripts/gen-config-docs.ts` regenerates it; `--check` exits 1 when the file is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { renderConfigDocs } from '../src/config/docs.ts'

const target = join(import.meta.dirname, '..', 'docs', 'config.md')
const rendered = renderConfigDocs()

if (process.argv.includes('--check')) {
  let current = ''
  try {
    current = readFileSync(target, 'utf8')
  } catch {}
  if (current !== rendered) {
    process.stderr.write('docs/config.md is out of date: run node scripts/gen-config-docs.ts\n')
    process.exit(1)
  }
} else {
  writeFileSync(target, rendered)
  process.stdout.write(`wrote ${target}\n`)
}
