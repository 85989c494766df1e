/**
 * Which clusters' security settings a command checks before it connects: exactly those of the flows it runs.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { loadSelectedFlows } from '../../../src/cli/config-input.ts'
import { ConfigError } from '../../../src/errors.ts'

const dir = mkdtempSync(join(tmpdir(), 'kmirror-config-input-'))
after(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
function configFile (lines: readonly string[]): string {
  const file = join(dir, `mm2-${++files}.properties`)
  writeFileSync(file, `${lines.join('\n')}\n`)
  return file
}

/** Three clusters; C's keystore does not exist, so any check of C fails. */
const THREE = [
  'clusters = A, B, C', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'C.bootstrap.servers = c:9092',
  'C.security.protocol = SSL', `C.ssl.keystore.location = ${join(dir, 'no-such-keystore.jks')}`, 'C.ssl.keystore.password = x',
  'A->B.enabled = true'
]

describe('loadSelectedFlows', () => {
  it('does not check a cluster that no enabled flow reaches', () => {
    // Given only A->B enabled, and C with a keystore that does not exist
    // When the flows are loaded
    const { flows } = loadSelectedFlows(configFile(THREE), undefined)
    // Then A->B is selected and C's keystore is never opened
    assert.deepEqual(flows.map(f => f.name), ['A->B'])
  })

  it('does not check a cluster whose flows --clusters leaves out', () => {
    // Given C->A enabled too, but --clusters B keeps only the flows into B
    const file = configFile([...THREE, 'C->A.enabled = true'])
    // Then only A->B runs, and C is not checked
    assert.deepEqual(loadSelectedFlows(file, ['B']).flows.map(f => f.name), ['A->B'])
    // And without --clusters, C->A runs and C's keystore is a config error naming the key
    assert.throws(() => loadSelectedFlows(file, undefined), (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.match(err.message, /C\.ssl\.keystore\.location: .*no-such-keystore\.jks cannot be read \(no such file\)/)
      return true
    })
  })
})
