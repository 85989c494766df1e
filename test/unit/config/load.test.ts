import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { loadConfig } from '../../../src/config/load.ts'
import { ConfigError } from '../../../src/errors.ts'
import { twoClusters } from './fixtures.ts'

describe('loadConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kmirror-config-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('names the path when the file does not exist', () => {
    const path = join(dir, 'missing.properties')
    assert.throws(() => loadConfig(path), (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.equal(err.problems[0]?.message, `cannot read ${path} (no such file): check the path and its permissions`)
      assert.ok(err.cause instanceof Error)
      return true
    })
  })

  it('loads a file and records where it came from', () => {
    const path = join(dir, 'mm2.properties')
    writeFileSync(path, twoClusters())
    const config = loadConfig(path)
    assert.equal(config.sourceFile, path)
    assert.deepEqual(config.clusters, ['A', 'B'])
  })

  it('reads the file as ISO-8859-1, as java.util.Properties does, and warns about non-ASCII bytes', () => {
    const path = join(dir, 'latin1.properties')
    writeFileSync(path, Buffer.concat([Buffer.from(twoClusters()), Buffer.from('\nA->B.topics = café\n', 'utf8')]))
    const config = loadConfig(path)
    assert.deepEqual(config.flows[0]?.topics, ['cafÃ©'])
    assert.match(config.warnings[0]?.message ?? '', /^line 5 has non-ASCII characters/)
  })

  it('ignores a UTF-8 byte-order mark', () => {
    const path = join(dir, 'bom.properties')
    writeFileSync(path, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(twoClusters())]))
    assert.deepEqual(loadConfig(path).warnings, [])
  })
})
