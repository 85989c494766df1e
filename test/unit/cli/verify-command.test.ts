/**
 * `kmirror verify` input checks (a child process, no Kafka): every bad flag exits 2 before any cluster is
 * contacted (the clusters' address accepts no connection: contacting it would exit 3), and the text report names
 * each kind of difference with its offsets.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { isInternalError, reportCommandFailure } from '../../../src/cli/unexpected-errors.ts'
import { renderVerifyReport } from '../../../src/cli/verify-render.ts'
import { ErrorCodes, ExitCodes, KmirrorError } from '../../../src/errors.ts'
import { span, type PartitionReport } from '../../../src/verify/verify.ts'

const MAIN = join(import.meta.dirname, '..', '..', '..', 'src', 'cli', 'main.ts')
const dir = mkdtempSync(join(tmpdir(), 'kmirror-verify-'))
after(() => rmSync(dir, { recursive: true, force: true }))
const file = join(dir, 'mm2.properties')
writeFileSync(file, 'clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n')

function verify (...args: string[]): { code: number | null, stderr: string } {
  const result = spawnSync(process.execPath, [MAIN, 'verify', file, ...args], { encoding: 'utf8' })
  return { code: result.status, stderr: result.stderr }
}

test('bad flags exit 2 with what is wrong, before any cluster is contacted', () => {
  const cases: [string[], RegExp][] = [
    [['--from', 'A', '--to', 'A'], /--from and --to are both 'A': give the two different clusters of a flow/],
    [['--from', 'A', '--to', 'B', '--since', 'yesterday'], /--since accepts an ISO 8601 instant only: .*; got 'yesterday'/],
    [['--from', 'A', '--to', 'B', '--topics', 'orders('], /option '--topics <regex>' argument 'orders\(' is invalid\. 'orders\(' is not a Java regex kmirror can use: invalid Java regular expression "orders\(":/],
    [['--from', 'A', '--to', 'B', '--timeout', 'abc'], /--timeout must be a number of seconds above 0, got 'abc'/]
  ]
  for (const [args, message] of cases) {
    const { code, stderr } = verify(...args)
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`)
    assert.match(stderr, message)
  }
})

const base: PartitionReport = {
  topic: 'orders', partition: 0, remoteTopic: 'A.orders', status: 'different', basis: 'offset-history', sourceRecords: 30, targetRecords: 28,
  compared: { from: 0, to: 30 }, counts: { missing: 3, extra: 1, differing: 1, compacted: 1, duplicate: 0 }, omittedDifferences: 4, ranges: [],
  notCopied: { from: 30, to: 35 }, inFlight: { from: 28, to: 29 }, notes: ['a note'],
  differences: [
    { kind: 'missing', source: { first: 10, last: 12 }, target: { first: 10, last: 12 }, records: 3 },
    { kind: 'differing', source: { first: 7, last: 7 }, target: { first: 7, last: 7 }, records: 1, fields: ['value', 'headers'] },
    { kind: 'extra', source: null, target: { first: 20, last: 20 }, records: 1 },
    { kind: 'compacted', source: { first: 3, last: 3 }, target: { first: 3, last: 3 }, records: 1, side: 'target' }
  ]
}

test('the text report gives the verdict, a row per partition and each difference with its offsets', () => {
  const text = renderVerifyReport({ flow: 'A->B', from: 'A', to: 'B', since: null, equal: false, notes: [], partitions: [base, { ...base, partition: 1, status: 'equal', counts: { missing: 0, extra: 0, differing: 0, compacted: 0, duplicate: 0 }, differences: [], omittedDifferences: 0, notCopied: null, inFlight: null, notes: [] }] }, span)
  assert.match(text, /^verify A -> B \(flow A->B\): DIFFERENT: 1 of 2 partition\(s\) differ\n/)
  assert.match(text, /orders +0 +A\.orders +0-29 +30 +28 +DIFFERENT: 3 missing, 1 extra, 1 differing\n/)
  assert.match(text, /missing on the target: source offsets 10-12 \(3 records\), expected at target offsets 10-12/)
  assert.match(text, /differing: source offset 7 vs target offset 7 \(1 record; value, headers differ\)/)
  assert.match(text, /extra on the target: target offset 20 \(1 record\), no source record pairs with them/)
  assert.match(text, /compacted away on the target: source offset 3 \(1 record\), not a difference/)
  assert.match(text, /\.\.\. and 4 records more in ranges not listed/)
  assert.match(text, /not copied yet: source offsets 30-34 \(past the flow's stored position; not a difference\)/)
  assert.match(text, /in flight: target offsets 28 written past the stored position, not compared/)
  assert.match(text, /orders +1 +A\.orders +0-29 +30 +28 +equal\n/)
})

test('an internal error (KMIRROR_ERR_INTERNAL, or a TypeError of kmirror\'s own) exits 4 like every command; a cluster that cannot be read stays 3', () => {
  assert.equal(isInternalError(new KmirrorError(ErrorCodes.INTERNAL, 'an invariant broke')), true)
  assert.equal(isInternalError(new TypeError('Cannot read properties of undefined')), true)
  assert.equal(isInternalError(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'cluster B: ECONNREFUSED')), false)
  assert.equal(isInternalError(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })), false)
  assert.equal(isInternalError(new Error('socket hang up')), false)
})

test('every command reports a failure the same way: a bug exits 4 as a bug, anything else exits 3 naming what failed', (t) => {
  const written: string[] = []
  t.mock.method(process.stderr, 'write', (chunk: string) => { written.push(chunk); return true })
  assert.equal(reportCommandFailure(new TypeError('Cannot read properties of undefined'), 'cannot plan flow A->B'), ExitCodes.RUNTIME_FAILURE)
  assert.match(written[0]!, /^kmirror: unexpected error, please report it \(KMIRROR_ERR_INTERNAL\): TypeError: Cannot read properties of undefined/)
  assert.equal(reportCommandFailure(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'cluster B: ECONNREFUSED'), 'cannot plan flow A->B'), ExitCodes.START_FAILED)
  assert.equal(written[1], 'kmirror: cannot plan flow A->B: cluster B: ECONNREFUSED (KMIRROR_ERR_CLUSTER_UNREACHABLE)\n')
  assert.equal(reportCommandFailure(new Error('timed out'), '', '; nothing was written'), ExitCodes.START_FAILED)
  assert.equal(written[2], 'kmirror: timed out; nothing was written\n')
})
