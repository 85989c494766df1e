/**
 * The single executable `dist/kmirror-linux-x64` (`npm run package`) on a host without Node: it is run with an
 * environment whose PATH holds no `node` (nor anything else), from a directory outside the repository.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { REPO_ROOT } from '../helpers/clusters.ts'
import { authFile, httpsGet, selfSignedCertificate } from '../helpers/https.ts'
import { createTopic, endOffsets, produce, readPartition, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const BINARY = join(REPO_ROOT, 'dist', 'kmirror-linux-x64')

/** Builds the executable unless dist/ holds one built from the same sources, lock file and Node. */
function buildBinary (): string {
  const output = execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'package.ts'), '--if-stale'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 240_000 })
  return output.trim()
}

/** An environment with no Node anywhere: PATH is an empty directory, HOME a fresh one, nothing else. */
function nodelessEnv (t: TestContext): { env: Record<string, string>, dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kmirror-binary-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return { env: { PATH: dir, HOME: dir }, dir }
}

function runBinary (args: readonly string[], env: Record<string, string>, cwd: string): { status: number | null, stdout: string, stderr: string } {
  const result = spawnSync(BINARY, args, { env, cwd, encoding: 'utf8', timeout: 30_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

test('the single executable ignores NODE_OPTIONS, runs --version, validate and a real replication without Node, and stops on SIGTERM with exit 0', { timeout: 300_000 }, async t => {
  // Given the executable, built (or fresh from an earlier build), and an environment where no node can be found
  const started = Date.now()
  t.diagnostic(`${buildBinary()} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
  const { env, dir } = nodelessEnv(t)
  assert.equal((spawnSync('node', ['--version'], { env, cwd: dir }).error as NodeJS.ErrnoException | undefined)?.code, 'ENOENT')

  // When asked its version, Then it prints package.json's
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version
  const shown = runBinary(['--version'], env, dir)
  assert.deepEqual(shown, { status: 0, stdout: `${version}\n`, stderr: '' })
  // and a host's NODE_OPTIONS does not reach the Node inside it (a plain node would fail to --require the file)
  const injected = { ...env, NODE_OPTIONS: '--require /nonexistent/inject.js' }
  assert.equal(spawnSync(process.execPath, ['-e', ''], { env: injected, encoding: 'utf8' }).status, 1, 'node itself honours that NODE_OPTIONS')
  assert.deepEqual(runBinary(['--version'], injected, dir), { status: 0, stdout: `${version}\n`, stderr: '' })
  // (Node options come from its command line only: --node-options reaches Node and is not kmirror's argument)
  assert.equal(runBinary(['--node-options=--require /nonexistent/inject.js', '--version'], env, dir).status, 1)
  assert.deepEqual(runBinary(['--node-options=--max-old-space-size=256', '--version'], env, dir), { status: 0, stdout: `${version}\n`, stderr: '' })

  // When it validates a configuration, Then it prints the flow and its topics and exits 0
  const topic = uniqueName('binary')
  const config = writeTempFile(mm2Properties({ source: 'source', target: 'target', extra: [`A->B.topics = ${topic}`, 'refresh.topics.interval.seconds = 1'] }), '.properties', t)
  const validated = runBinary(['validate', config], env, dir)
  assert.equal(validated.status, 0, validated.stderr)
  assert.match(validated.stdout, /A->B {2}enabled/)
  assert.match(validated.stdout, new RegExp(`topics +${topic}`))

  // When it runs the flow over 200 records on 2 partitions
  await createTopic('source', topic, { partitions: 2, t })
  const records: TestRecord[] = Array.from({ length: 200 }, (_, i) => ({
    topic, partition: i % 2, key: Buffer.from(`key-${i}`), value: Buffer.from(`value-${i}`), headers: [[Buffer.from('h'), Buffer.from(String(i))]], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
  await produce('source', records)
  // (its HTTP endpoint over TLS with basic authentication: node:https and node:crypto inside the executable)
  const tls = selfSignedCertificate(t)
  const users = authFile(tls.dir, { ops: 'binary pw' })
  const kmirror = spawnKmirror(['run', config, '--progress-interval', '0', '--http-port', '0', '--http-host', '127.0.0.1',
    '--http-tls-cert', tls.cert, '--http-tls-key', tls.key, '--http-auth-file', users], { executable: BINARY, env, cwd: dir, t })
  const port = (await kmirror.waitForOutput(/"port":(\d+),"tls":true,"basicAuth":true[^\n]*HTTP endpoint/, 30_000))[1]
  // (started with the Node flags of src/cli/node-flags.ts, from the executable's own sea-config)
  await kmirror.waitForOutput(/"node":"v[\d.]+ --max-semi-space-size=16"[^\n]*kmirror started/, 30_000)
  await waitFor(async () => (await endOffsets('target', `A.${topic}`).catch(() => [])).reduce((a, b) => a + b, 0n) === 200n,
    { timeoutMs: 60_000, message: 'the binary copied 200 records' })

  // Then the target holds exactly the source's records, partition by partition
  for (const partition of [0, 1]) {
    const source = await readPartition('source', topic, partition, { isolation: 'read_committed' })
    const target = await readPartition('target', `A.${topic}`, partition, { isolation: 'read_committed' })
    assert.equal(source.length, 100)
    assert.deepEqual(target, source)
  }

  // And its endpoint serves the copy counts over HTTPS to the right user only
  const ca = readFileSync(tls.cert)
  assert.equal((await httpsGet(`https://127.0.0.1:${port}/metrics`, ca)).status, 401)
  await waitFor(async () => (await httpsGet(`https://127.0.0.1:${port}/metrics`, ca, { user: 'ops', password: 'binary pw' })).body
    .split('\n').filter(l => l.startsWith(`kmirror_records_copied_total{flow="A->B",topic="${topic}"}`)).reduce((n, l) => n + Number(l.split(' ').pop()), 0) === 200,
  { timeoutMs: 20_000, message: '/metrics shows 200 records copied' })

  // And SIGTERM stops it cleanly, having stored its progress
  kmirror.kill('SIGTERM')
  assert.deepEqual(await kmirror.waitForExit(15_000), { code: 0, signal: null })
  assert.match(kmirror.stderr, /"msg":"stopped"/)
})
