import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { StepFailures } from '../../../src/replication/step-failures.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

const timeout = (ms: number): KmirrorError => new KmirrorError(ErrorCodes.TIMEOUT, `fetch from cluster A timed out after ${ms} ms`, { retriable: true })
const unreachable = (): KmirrorError => new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'cluster A: no broker answers', { retriable: true })

describe('StepFailures', () => {
  it('warns once for a failure whose message differs only in its numbers, and counts every attempt', () => {
    // Given a step that times out four times, each after a slightly different wait
    const { log, at } = memoryLogger()
    const steps = new StepFailures(log)
    for (const ms of [5012, 5003, 5021, 5009]) steps.failed(timeout(ms), 1, 200)
    // Then one warning, the repeats at debug, and /status sees 4 attempts of the last error
    assert.deepEqual(at(LogLevels.warn).map(l => l.msg), ['replication step failed; retrying'])
    assert.equal(at(LogLevels.debug).filter(l => l.msg === 'replication step failed again; retrying').length, 3)
    const current = steps.current()
    assert.equal(current?.attempts, 4)
    assert.equal(current?.code, ErrorCodes.TIMEOUT)
    assert.equal(current?.message, 'fetch from cluster A timed out after 5009 ms')
  })

  it('keeps counting when the error changes: a step failing with alternating errors still reaches degraded', () => {
    // Given a step failing with one error, then another, then the first again
    const { log, at } = memoryLogger()
    const steps = new StepFailures(log)
    steps.failed(timeout(5000), 1, 200)
    const since = steps.current()?.since
    steps.failed(unreachable(), 2, 400)
    steps.failed(timeout(5000), 3, 800)
    // Then each change of error is a warning, the attempts add up, and the streak started at the first failure
    assert.equal(at(LogLevels.warn).length, 3)
    assert.equal(steps.current()?.attempts, 3)
    assert.equal(steps.current()?.since, since)
    // And once a step succeeds: one info line, nothing current
    steps.succeeded()
    assert.deepEqual(at(LogLevels.info).map(l => [l.msg, l.attempts]), [['replication steps succeed again', 3]])
    assert.equal(steps.current(), null)
  })

  it('warns again when the failure moves to another broker or cluster: numbers in names and addresses count', () => {
    const { log, at } = memoryLogger()
    const steps = new StepFailures(log)
    const refused = (address: string, cluster: string): KmirrorError =>
      new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `no broker of cluster ${cluster} answers: connect ECONNREFUSED ${address}`, { retriable: true })
    steps.failed(refused('10.0.0.1:9092', 'dc1'), 1, 200)
    steps.failed(refused('10.0.0.1:9092', 'dc1'), 2, 400)
    steps.failed(refused('10.0.0.1:9092', 'dc2'), 3, 800)
    steps.failed(refused('10.0.0.2:9092', 'dc2'), 4, 1600)
    assert.equal(at(LogLevels.warn).length, 3)
    assert.equal(steps.current()?.attempts, 4)
  })

  it('files an error kmirror did not classify as INTERNAL', () => {
    const steps = new StepFailures(memoryLogger().log)
    steps.failed(new TypeError('x is undefined'), 1, 200)
    assert.equal(steps.current()?.code, ErrorCodes.INTERNAL)
  })
})

describe('FailureStreak codes', () => {
  it('an error kmirror did not classify is INTERNAL in /status and in the recovery line alike', () => {
    const { log, at } = memoryLogger()
    const steps = new StepFailures(log)
    steps.failed(new TypeError('cannot read properties of undefined'), 1, 200)
    assert.equal(steps.current()?.code, ErrorCodes.INTERNAL)
    steps.succeeded()
    assert.equal(at(LogLevels.info)[0]?.code, ErrorCodes.INTERNAL)
  })
})
