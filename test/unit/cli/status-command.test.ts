/**
 * `kmirror status` exit codes without Kafka (the readers of each side are fakes): a bug is reported as in every
 * command, exit 4; a target that cannot be read is shown as such, exit 3 when no flow could be read.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { statusCommand } from '../../../src/cli/status-command.ts'
import { ErrorCodes, ExitCodes, KmirrorError } from '../../../src/errors.ts'
import type { StatusReaders } from '../../../src/runtime/status.ts'

const dir = mkdtempSync(join(tmpdir(), 'kmirror-status-'))
after(() => rmSync(dir, { recursive: true, force: true }))
const file = join(dir, 'mm2.properties')
writeFileSync(file, 'clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n')

const failing = (err: unknown): StatusReaders => ({ target: async () => { throw err }, source: async () => { throw err } })

test('a bug while reading the status exits 4 as an internal error, with its stack; a target that cannot be read exits 3 naming it', async t => {
  const written: string[] = []
  t.mock.method(process.stderr, 'write', (chunk: string) => { written.push(chunk); return true })
  t.mock.method(process.stdout, 'write', () => true)
  const code = await statusCommand(file, { clusters: undefined, json: false }, undefined, failing(new TypeError('Cannot read properties of undefined (reading \'last\')')))
  assert.equal(code, ExitCodes.RUNTIME_FAILURE)
  assert.equal(written.length, 1)
  assert.match(written[0]!, /^kmirror: unexpected error, please report it \(KMIRROR_ERR_INTERNAL\): TypeError: Cannot read properties of undefined \(reading 'last'\)\n {4}at /)

  written.length = 0
  const unreachable = await statusCommand(file, { clusters: undefined, json: false }, undefined, failing(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'cluster B: connect ECONNREFUSED 127.0.0.1:1')))
  assert.equal(unreachable, ExitCodes.START_FAILED)
  assert.deepEqual(written, ['kmirror: flow A->B: cannot read the stored progress on B: cluster B: connect ECONNREFUSED 127.0.0.1:1\n'])
})
