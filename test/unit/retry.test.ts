import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../src/errors.ts'
import { retryRetriable } from '../../src/retry.ts'

const notAvailable = (): KmirrorError => new KmirrorError(ErrorCodes.GROUP_MEMBERSHIP, 'FindCoordinator of group g on cluster B: Kafka error COORDINATOR_NOT_AVAILABLE', { retriable: true })

describe('retryRetriable', () => {
  it('Given a step refused twice for a moment (retriable), then it is asked again and its answer returned', async () => {
    let calls = 0
    const answer = await retryRetriable(async () => { if (++calls < 3) throw notAvailable(); return 'answered' }, 5_000)
    assert.equal(answer, 'answered')
    assert.equal(calls, 3)
  })

  it('Given a failure that is not retriable, then it is thrown at once, without a second attempt', async () => {
    let calls = 0
    const denied = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'DescribeGroups of group g on cluster B: GROUP_AUTHORIZATION_FAILED')
    await assert.rejects(retryRetriable(async () => { calls++; throw denied }, 5_000), denied)
    assert.equal(calls, 1)
  })

  it('Given a step refused past its patience, then no attempt starts after it and the last failure is thrown', async () => {
    let clock = 0
    let calls = 0
    const last = notAvailable()
    // Each attempt takes 300 ms of the fake clock; the patience is 1 s
    await assert.rejects(retryRetriable(async () => { calls++; clock += 300; throw last }, 1_000, { now: () => clock }), last)
    // (the pauses are real, not on it): attempts end at 300, 600 and 900 ms; a fourth would start after a 400 ms pause,
    // past the patience
    assert.equal(calls, 3)
  })

  it('Given a caller stopping, then no pause starts and the last failure is thrown', async () => {
    let calls = 0
    let stopping = false
    const last = notAvailable()
    await assert.rejects(retryRetriable(async () => { calls++; stopping = true; throw last }, 60_000, { stopped: () => stopping }), last)
    assert.equal(calls, 1)
  })
})
