import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { renderConfigDocs } from '../../../src/config/docs.ts'
import { findKey, KEYS } from '../../../src/config/schema.ts'

describe('the schema table and docs/config.md', () => {
  it('keeps docs/config.md in step with the schema (run node scripts/gen-config-docs.ts)', () => {
    const file = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'config.md'), 'utf8')
    assert.equal(file, renderConfigDocs())
  })

  it('lists every key once', () => {
    assert.equal(new Set(KEYS.map(spec => spec.name)).size, KEYS.length)
  })

  it('documents kmirror\'s offset.flush.interval.ms default next to Connect\'s', () => {
    assert.equal(findKey('offset.flush.interval.ms')?.default, '5000')
    assert.equal(findKey('offset.flush.interval.ms')?.mm2Default, '60000')
    assert.match(renderConfigDocs(), /\| `offset\.flush\.interval\.ms` \| `5000` \| .* kmirror default differs \(MM2: `60000`\)/)
  })

  it('gives every ENUM its values and every key a one-line doc', () => {
    for (const spec of KEYS) {
      assert.ok(spec.doc.length > 0 && !spec.doc.includes('\n'), spec.name)
      if (spec.type === 'enum') assert.ok((spec.values?.length ?? 0) > 0, spec.name)
    }
  })
})
