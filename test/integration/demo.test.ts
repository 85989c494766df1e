/**
 * `npm run demo` works end to end on its own clusters (ports 29092 and 29192): the README's first command.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { REPO_ROOT } from '../helpers/clusters.ts'

test('the demo replicates its sample topic and finds every partition identical', { timeout: 300_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'scripts', 'demo.ts')], { cwd: REPO_ROOT, timeout: 280_000, maxBuffer: 16 * 1024 * 1024 })
  assert.match(stdout, /records copied\s+300,000/)
  assert.match(stdout, /partitions equal 6 \/ 6/)
})
