/**
 * How `kmirror run` reports a start that failed (no Kafka): exit 3 as docs/errors.md says, a bug reported as a bug
 * (as every command reports one), anything else as the one line it always was.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { reportStartFailure } from '../../../src/cli/run-command.ts'
import { ErrorCodes, ExitCodes, KmirrorError } from '../../../src/errors.ts'
import { startFailure } from '../../../src/runtime/mirror-maker.ts'

test('a bug at start exits 3, printed as an internal error with its stack and cause; a cluster that cannot be reached exits 3 with its message', t => {
  const written: string[] = []
  t.mock.method(process.stderr, 'write', (chunk: string) => { written.push(chunk); return true })
  // A flow's start failed on a TypeError: MirrorMaker raises it as KMIRROR_ERR_INTERNAL, not as an unreachable cluster
  const bug = startFailure('A->B', new TypeError('Cannot read properties of undefined (reading \'alias\')'))
  assert.equal(bug.code, ErrorCodes.INTERNAL)
  assert.equal(reportStartFailure(bug), ExitCodes.START_FAILED)
  assert.match(written[0]!, /^kmirror: unexpected error, please report it \(KMIRROR_ERR_INTERNAL\): KmirrorError: flow A->B could not start: Cannot read properties of undefined \(reading 'alias'\)\n {4}at /)
  assert.match(written[0]!, /\ncaused by: TypeError: Cannot read properties of undefined \(reading 'alias'\)\n {4}at /)
  // Thrown outside any flow's start (the HTTP endpoint's set-up): the same
  assert.equal(reportStartFailure(new RangeError('Invalid array length')), ExitCodes.START_FAILED)
  assert.match(written[1]!, /^kmirror: unexpected error, please report it \(KMIRROR_ERR_INTERNAL\): RangeError: Invalid array length\n/)

  const refused = startFailure('A->B', new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'cluster B: connect ECONNREFUSED 127.0.0.1:1'))
  assert.equal(refused.code, ErrorCodes.CLUSTER_UNREACHABLE)
  assert.equal(reportStartFailure(refused), ExitCodes.START_FAILED)
  assert.equal(written[2], 'kmirror: flow A->B could not start: cluster B: connect ECONNREFUSED 127.0.0.1:1\n')
  // A failure of the network that is no KmirrorError stays an unreachable cluster
  assert.equal(startFailure('A->B', new Error('socket hang up')).code, ErrorCodes.CLUSTER_UNREACHABLE)
})
