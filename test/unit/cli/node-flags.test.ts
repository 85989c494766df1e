import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { seaConfig } from '../../../scripts/package.ts'
import { NODE_FLAGS } from '../../../src/cli/node-flags.ts'

const ROOT = join(import.meta.dirname, '..', '..', '..')

test('every launcher starts Node with the flags of node-flags.ts: the shebang, npm run kmirror and the executable', () => {
  assert.deepEqual(NODE_FLAGS, ['--max-semi-space-size=16'])
  const shebang = readFileSync(join(ROOT, 'src', 'cli', 'main.ts'), 'utf8').split('\n')[0]
  assert.equal(shebang, `#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`)
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  assert.equal(scripts['kmirror'], `node ${NODE_FLAGS.join(' ')} src/cli/main.ts`)
  assert.deepEqual(seaConfig('kmirror.cjs', 'kmirror.blob').execArgv, NODE_FLAGS)
})
