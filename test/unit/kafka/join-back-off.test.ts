import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { JoinBackOff } from '../../../src/kafka/join-back-off.ts'

const loading = new KmirrorError(ErrorCodes.GROUP_MEMBERSHIP, 'the coordinator is loading', { retriable: true, details: { kafkaErrors: ['COORDINATOR_LOAD_IN_PROGRESS'] } })
const other = new KmirrorError(ErrorCodes.TIMEOUT, 'no answer', { retriable: true })

test('the wait after a failed round starts at 250 ms, doubles up to 10 s, and starts over once a round goes through', () => {
  const backOff = new JoinBackOff(60_000)
  const waits = Array.from({ length: 8 }, () => backOff.failed(other).retryInMs)
  assert.deepEqual(waits, [250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000])
  backOff.reset()
  assert.equal(backOff.failed(other).retryInMs, 250)
})

test('a coordinator moving or loading is routine until the failures last a session timeout; any other cause is a warning at once', () => {
  assert.equal(new JoinBackOff(60_000).failed(loading).routine, true)
  assert.equal(new JoinBackOff(60_000).failed(other).routine, false)
  assert.equal(new JoinBackOff(0).failed(loading).routine, false, 'failing for a session timeout already')
})
