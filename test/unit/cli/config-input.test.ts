import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { loadCheckedConfig } from '../../../src/cli/config-input.ts'
import { loadConfig } from '../../../src/config/load.ts'
import { processRedactor, REDACTED } from '../../../src/redactor.ts'

const dir = mkdtempSync(join(tmpdir(), 'kmirror-config-input-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function configWithPassword (password: string): string {
  const file = join(dir, `${password}.properties`)
  writeFileSync(file, [
    'clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true',
    'A.security.protocol = SASL_PLAINTEXT', 'A.sasl.mechanism = PLAIN',
    `A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${password}";`
  ].join('\n'))
  return file
}

describe('the secrets of the configuration a command loads', () => {
  it('Given loadConfig alone (a library call), then the process redactor is left alone: secrets do not pile up', () => {
    const before = processRedactor.size
    const config = loadConfig(configWithPassword('library-pw-1'))
    assert.deepEqual(config.secrets.certain.includes('library-pw-1'), true)
    assert.equal(processRedactor.size, before)
    assert.equal(processRedactor.redact('library-pw-1'), 'library-pw-1')
  })

  it('Given a command loading its configuration, then everything it prints afterwards hides the secrets', () => {
    loadCheckedConfig(configWithPassword('command-pw-2'))
    assert.equal(processRedactor.redact('auth failed: command-pw-2'), `auth failed: ${REDACTED}`)
  })
})
