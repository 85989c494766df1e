import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import { findReferences, replaceReferences } from '../../../src/config/references.ts'
import { ConfigError, type ConfigProblem } from '../../../src/errors.ts'
import type { KmirrorConfig } from '../../../src/config/types.ts'
import { flowOf, problemFor, twoClusters, warningsFor } from './fixtures.ts'

const FILE = 'config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider'
const DIRECTORY = 'config.providers.dir.class = org.apache.kafka.common.config.provider.DirectoryConfigProvider'
const ENV = 'config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider'
const JAAS = (password: string): string => `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${password}";`

const root = mkdtempSync(join(tmpdir(), 'kmirror-providers-'))
after(() => rmSync(root, { recursive: true, force: true }))
const secrets = join(root, 'secrets.properties')
writeFileSync(secrets, 'password = file-pass-1\\\n  word\nuser: alice\nempty=\nbroker=b9:9092\n')
const secretsDir = join(root, 'secrets')
mkdirSync(join(secretsDir, 'nested'), { recursive: true })
writeFileSync(join(secretsDir, 'password'), 'dir-pass-2\n')
writeFileSync(join(root, 'outside-password'), 'linked-pass-3')
symlinkSync(join(root, 'outside-password'), join(secretsDir, 'linked'))

function load (lines: readonly string[], env: Record<string, string> = {}): KmirrorConfig {
  return parseConfig(twoClusters(...lines), 'mm2.properties', { env })
}

function problems (lines: readonly string[], env: Record<string, string> = {}): readonly ConfigProblem[] {
  try {
    load(lines, env)
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err))
    return err.problems
  }
  assert.fail('expected the configuration to be rejected')
}

describe('references', () => {
  it('are found with Kafka\'s pattern: provider, optional path, key; the path ends at the second colon', () => {
    assert.deepEqual(findReferences('a ${file:/etc/x.properties:pw} b ${env:HOME} ${vault:secret/db:user:name}'), [
      { text: '${file:/etc/x.properties:pw}', provider: 'file', path: '/etc/x.properties', key: 'pw' },
      { text: '${env:HOME}', provider: 'env', path: '', key: 'HOME' },
      { text: '${vault:secret/db:user:name}', provider: 'vault', path: 'secret/db', key: 'user:name' }
    ])
    assert.deepEqual(findReferences('${nocolon} $x {y:z} ${}'), [])
  })

  it('are replaced in one pass: a replacement is never searched for references again', () => {
    const replaced = replaceReferences('<${p:a}><${p:b}>', r => r.key === 'a' ? '${p:b}' : undefined)
    assert.equal(replaced, '<${p:b}><${p:b}>')
  })
})

describe('FileConfigProvider', () => {
  it('resolves ${file:path:key} in any value, reading the file as java.util.Properties (continuations, ":" separators)', () => {
    const config = load(['config.providers = file', FILE, `A.sasl.jaas.config = ${JAAS(`\${file:${secrets}:password}`)}`, `B.bootstrap.servers = \${file:${secrets}:broker}`])
    const flow = flowOf(config, 'A->B')
    assert.equal(flow.source.consumer['sasl.jaas.config'], JAAS('file-pass-1word'))
    assert.deepEqual(flow.target.bootstrapServers, ['b9:9092'])
  })

  it('accepts Connect\'s aliases of the class: FileConfigProvider and File', () => {
    for (const alias of ['FileConfigProvider', 'File']) {
      const config = load(['config.providers = f', `config.providers.f.class = ${alias}`, `A->B.topics = \${f:${secrets}:user}`])
      assert.deepEqual(flowOf(config, 'A->B').topics, ['alice'])
    }
  })

  it('treats every resolved value as a secret, even an empty-looking key name', () => {
    const config = load(['config.providers = file', FILE, `A->B.topics = \${file:${secrets}:password}`])
    assert.ok(config.secrets.includes('file-pass-1word'))
  })

  it('reports a missing file, a missing key (with a suggestion) and a missing path, each under the key and line, never a value', () => {
    const found = problems(['config.providers = file', FILE,
      `A.sasl.jaas.config = ${JAAS(`\${file:${join(root, 'nope.properties')}:password}`)}`,
      `A->B.topics = \${file:${secrets}:pasword}`,
      'B.ssl.key.password = ${file:password}'])
    assert.equal(problemFor(found, 'A.sasl.jaas.config').message,
      `line 7: \${file:${join(root, 'nope.properties')}:password}: ${join(root, 'nope.properties')} cannot be read (no such file or directory): check the path and its permissions`)
    assert.equal(problemFor(found, 'A->B.topics').message, `line 8: \${file:${secrets}:pasword}: ${secrets} has no key pasword (did you mean password?): add it to the file or fix the key`)
    assert.equal(problemFor(found, 'B.ssl.key.password').message, 'line 9: ${file:password}: has no file path: write ${file:/path/to/file.properties:password}')
    assert.ok(!JSON.stringify(found).includes('file-pass'))
  })

  it('refuses a path outside allowed.paths, also one that leaves it with "..", and accepts one inside', () => {
    const allowed = `config.providers.file.param.allowed.paths = ${root}`
    const outside = `${root}/../etc/passwd`
    const found = problems(['config.providers = file', FILE, allowed, `A->B.topics = \${file:${outside}:root}`])
    assert.match(problemFor(found, 'A->B.topics').message, new RegExp(`is outside config\\.providers\\.file\\.param\\.allowed\\.paths \\(${root}\\)`))
    const config = load(['config.providers = file', FILE, allowed, `A->B.topics = \${file:${root}/./sub/../secrets.properties:user}`])
    assert.deepEqual(flowOf(config, 'A->B').topics, ['alice'])
  })

  it('rejects allowed.paths entries that are relative, do not exist, or have spaces after the comma (Kafka does not trim)', () => {
    const found = problems(['config.providers = file', FILE, `config.providers.file.param.allowed.paths = ${root},${root}/missing, ${root},rel/dir`])
    const messages = found.filter(p => p.key === 'config.providers.file.param.allowed.paths').map(p => p.message)
    assert.deepEqual(messages, [
      `line 7: "${root}/missing" does not exist: Kafka requires every allowed path to exist`,
      `line 7: " ${root}" is not an absolute path (Kafka does not trim the entries: remove the spaces around the commas)`,
      'line 7: "rel/dir" is not an absolute path'
    ])
  })
})

describe('DirectoryConfigProvider', () => {
  it('resolves ${dir:path:file} to the whole file, untrimmed, following symbolic links', () => {
    const config = load(['config.providers = dir', DIRECTORY, `A->B.topics = \${dir:${secretsDir}:password}`, `B->A.topics = \${dir:${secretsDir}:linked}`])
    assert.deepEqual(flowOf(config, 'A->B').topics, ['dir-pass-2'])
    assert.equal(flowOf(config, 'A->B').properties.topics, 'dir-pass-2\n')
    assert.equal(flowOf(config, 'B->A').properties.topics, 'linked-pass-3')
  })

  it('reports a missing file (with a suggestion), a subdirectory and a path that is not a directory', () => {
    const found = problems(['config.providers = dir', DIRECTORY,
      `A->B.topics = \${dir:${secretsDir}:pasword}`, `B->A.topics = \${dir:${secretsDir}:nested}`, `A->B.groups = \${dir:${secrets}:password}`])
    assert.match(problemFor(found, 'A->B.topics').message, /has no file named pasword \(did you mean password\?\): the key is the name of a file directly in the directory$/)
    assert.match(problemFor(found, 'B->A.topics').message, /has no file named nested/)
    assert.match(problemFor(found, 'A->B.groups').message, /cannot be listed \(not a directory\): the path must be a readable directory$/)
  })
})

describe('EnvVarConfigProvider', () => {
  it('resolves ${env:VAR} from the environment', () => {
    const config = load(['config.providers = env', ENV, 'A.sasl.jaas.config = ${env:KM_JAAS}'], { KM_JAAS: JAAS('env-pass-4') })
    assert.equal(flowOf(config, 'A->B').source.admin['sasl.jaas.config'], JAAS('env-pass-4'))
  })

  it('reports an unset variable, one outside allowlist.pattern (a Java regex over the whole name), and a path', () => {
    const found = problems(['config.providers = env', ENV, 'config.providers.env.param.allowlist.pattern = KM_.*',
      'A->B.topics = ${env:KM_UNSET}', 'B->A.topics = ${env:HOME}', 'A->B.groups = ${env:/etc:KM_SET}'], { KM_SET: 'x', HOME: '/root' })
    assert.equal(problemFor(found, 'A->B.topics').message, 'line 8: ${env:KM_UNSET}: environment variable KM_UNSET is not set: set it in kmirror\'s environment')
    assert.equal(problemFor(found, 'B->A.topics').message, 'line 9: ${env:HOME}: environment variable HOME is not allowed by config.providers.env.param.allowlist.pattern = KM_.*: extend the pattern or use another variable')
    assert.equal(problemFor(found, 'A->B.groups').message, 'line 10: ${env:/etc:KM_SET}: has a path, which EnvVarConfigProvider does not take: write ${env:KM_SET}')
  })

  it('rejects an allowlist.pattern that is not a valid regex', () => {
    assert.match(problemFor(problems(['config.providers = env', ENV, 'config.providers.env.param.allowlist.pattern = KM_(']), 'config.providers.env.param.allowlist.pattern').message, /^line 7: .*fix the regular expression/)
  })
})

describe('provider declarations', () => {
  it('reports a reference to an undeclared provider, saying how to declare it', () => {
    assert.equal(problemFor(problems(['A.ssl.key.password = ${file:/etc/kafka/secrets.properties:key}']), 'A.ssl.key.password').message,
      'line 5: ${file:/etc/kafka/secrets.properties:key}: no config provider is declared, so nothing resolves this reference: declare one with config.providers = file and config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider')
    assert.match(problemFor(problems(['config.providers = env', ENV, 'A->B.topics = ${ENV:X}']), 'A->B.topics').message,
      /there is no config provider named ENV \(config\.providers = env\) \(did you mean env\?\)/)
  })

  it('reports a listed provider without a class, an unknown class (naming the supported ones), and an unlisted class used by a reference', () => {
    const found = problems(['config.providers = file, vault', 'config.providers.vault.class = com.example.VaultConfigProvider', ENV, 'A->B.topics = ${env:X}'])
    assert.equal(found.find(p => p.key === 'config.providers')?.message,
      'line 5: lists file, but config.providers.file.class is not set: set it, e.g. config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider')
    assert.match(problemFor(found, 'config.providers.vault.class').message, /"com\.example\.VaultConfigProvider" is not a config provider kmirror has \(it cannot load Java classes\): use org\.apache\.kafka\.common\.config\.provider\.FileConfigProvider, .*DirectoryConfigProvider, .*EnvVarConfigProvider$/)
    assert.equal(problemFor(found, 'A->B.topics').message, 'line 8: ${env:X}: provider env is declared with config.providers.env.class but not listed in config.providers: add it there')
  })

  it('reports every problem of a file at once', () => {
    const found = problems(['config.providers = file, env', FILE, ENV,
      'A->B.topics = ${file:/no/such:k}', 'B->A.topics = ${env:UNSET_1}', 'A->B.groups = ${nope:k}', 'B.bootstrap.servers = ${env:UNSET_2}'])
    assert.deepEqual(found.map(p => p.key).sort(), ['A->B.groups', 'A->B.topics', 'B->A.topics', 'B.bootstrap.servers'])
  })

  it('warns about unknown parameters, unlisted classes, declarations written per cluster or flow, and references MM2 does not resolve', () => {
    const config = load(['config.providers = file', FILE, 'config.providers.file.param.allowed.path = /tmp', 'config.providers.x.class = File',
      'A.config.providers = file', 'A->B.config.providers.file.class = File', 'config.providers.y.param.z = ${env:X}'])
    assert.deepEqual(warningsFor(config, 'config.providers.file.param.allowed.path'), ['is not a parameter of FileConfigProvider, so it is ignored (did you mean config.providers.file.param.allowed.paths?)'])
    assert.deepEqual(warningsFor(config, 'config.providers.x.class'), ['declares provider x, which is not listed in config.providers, so it is not used: add it to config.providers'])
    assert.match(warningsFor(config, 'A.config.providers')[0] ?? '', /^has no effect: config providers are declared at top level only/)
    assert.match(warningsFor(config, 'A->B.config.providers.file.class')[0] ?? '', /write config\.providers\.file\.class without the prefix$/)
    assert.deepEqual(warningsFor(config, 'config.providers.y.param.z'), ['line 11: MM2 reads this key before it resolves references, so ${env:X} is used as written'])
  })

  it('resolves each path once and every reference in a value, keeping the text around them', () => {
    const config = load(['config.providers = file, env', FILE, ENV, `A->B.topics = \${file:${secrets}:user}-\${env:KM_T}, static`], { KM_T: 'orders' })
    assert.deepEqual(flowOf(config, 'A->B').topics, ['alice-orders', 'static'])
  })

  it('names the reference when a resolved value is invalid, without showing the value', () => {
    const found = problems(['config.providers = file', FILE, `A.consumer.fetch.max.bytes = \${file:${secrets}:password}`])
    assert.equal(problemFor(found, 'A.consumer.fetch.max.bytes').message,
      `must be a whole number (a Java int), not "[redacted]" (the value comes from \${file:${secrets}:password})`)
  })
})
