/**
 * Writes docs/metrics.md from src/metrics/definitions.ts. `--check` exits 1 when the file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { renderMetricsDocs } from '../src/metrics/docs.ts'

const file = join(import.meta.dirname, '..', 'docs', 'metrics.md')
const text = renderMetricsDocs()
if (process.argv.includes('--check')) {
  let current = ''
  try { current = readFileSync(file, 'utf8') } catch {}
  if (current !== text) {
    process.stderr.write('docs/metrics.md is stale: run node scripts/gen-metrics-docs.ts\n')
    process.exit(1)
  }
} else {
  writeFileSync(file, text)
}
