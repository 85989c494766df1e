import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { readAsset } from '../../src/assets.ts'
import { packageVersion } from '../../src/version.ts'

describe('files read at run time', () => {
  it('packageVersion is package.json\'s version when run from the sources', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    assert.equal(packageVersion(), pkg.version)
  })

  it('readAsset reads a file by its path under src/, and fails for one that is not there', () => {
    assert.deepEqual(readAsset('cli/sea-main.ts'), readFileSync(new URL('../../src/cli/sea-main.ts', import.meta.url)))
    assert.throws(() => readAsset('http/no-such-asset.html'), { code: 'ENOENT' })
  })
})
