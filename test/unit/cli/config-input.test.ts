/**
 * Which clusters' security settings a command checks before it connects: exactly those of the flows it runs;
 * and where the secrets of the loaded configuration go.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { loadSelectedFlows } from '../../../src/cli/config-input.ts'
import { loadConfig } from '../../../src/config/load.ts'
import { ConfigError } from '../../../src/errors.ts'
import { processRedactor, REDACTED } from '../../../src/redactor.ts'

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

describe('the secrets of the configuration a command loads', () => {
  const withPassword = (password: string): string => configFile([
    'clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true',
    'A.security.protocol = SASL_PLAINTEXT', 'A.sasl.mechanism = PLAIN',
    `A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${password}";`
  ])

  it('Given loadConfig alone (a library call), then the process redactor is left alone: secrets do not pile up', () => {
    const before = processRedactor.size
    const config = loadConfig(withPassword('library-pw-1'))
    assert.equal(config.secrets.certain.includes('library-pw-1'), true)
    assert.equal(processRedactor.size, before)
    assert.equal(processRedactor.redact('library-pw-1'), 'library-pw-1')
  })

  it('Given a command loading its configuration, then everything it prints afterwards hides the secrets', () => {
    loadSelectedFlows(withPassword('command-pw-2'), undefined)
    assert.equal(processRedactor.redact('auth failed: command-pw-2'), `auth failed: ${REDACTED}`)
  })
})
