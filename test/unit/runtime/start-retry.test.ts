import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { isTransientStartFault, startBackoffMs, startWithRetries } from '../../../src/runtime/start-retry.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

const transient = (): KmirrorError => new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'check the brokers of cluster B (127.0.0.1:9): Connection closed', { retriable: true })

/** A clock that jumps by each wait's length, so no real time passes beyond the (short) real waits. */
function fakeClock (): { now: () => number, advance: (ms: number) => void } {
  let t = 0
  return { now: () => t, advance: ms => { t += ms } }
}

describe('start-up retries', () => {
  it('Given faults of each kind, then only those time can fix are waited for', () => {
    assert.equal(isTransientStartFault(transient()), true)
    assert.equal(isTransientStartFault(new KmirrorError(ErrorCodes.TIMEOUT, 'x', { retriable: true })), true)
    for (const code of [ErrorCodes.AUTHENTICATION, ErrorCodes.NOT_AUTHORIZED, ErrorCodes.CONFIG_INVALID, ErrorCodes.BROKER_INCOMPATIBLE]) {
      assert.equal(isTransientStartFault(new KmirrorError(code, 'x', { retriable: true })), false, code)
    }
    assert.equal(isTransientStartFault(new KmirrorError(ErrorCodes.TOPIC_CREATE, 'x')), false)
    // A wrong password or a missing grant stays so, whatever code carries it
    assert.equal(isTransientStartFault(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'x', { retriable: true, details: { kafkaErrors: ['SASL_AUTHENTICATION_FAILED'] } })), false)
    assert.equal(isTransientStartFault(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'x', { retriable: true, details: { kafkaErrors: ['TOPIC_AUTHORIZATION_FAILED'] } })), false)
    assert.equal(isTransientStartFault(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'x', { retriable: true, details: { kafkaErrors: ['COORDINATOR_LOAD_IN_PROGRESS'] } })), true)
    // A TLS verification failure or a host name that does not resolve is a setting to fix
    const untrusted = Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' })
    assert.equal(isTransientStartFault(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'x', { retriable: true, cause: untrusted })), false)
    const unknownHost = Object.assign(new Error('getaddrinfo ENOTFOUND kafka.invalid'), { code: 'ENOTFOUND' })
    assert.equal(isTransientStartFault(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'x', { retriable: true, cause: unknownHost })), false)
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9092'), { code: 'ECONNREFUSED' })
    assert.equal(isTransientStartFault(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'x', { retriable: true, cause: refused })), true)
    assert.equal(isTransientStartFault(new TypeError('bug')), false)
  })

  it('doubles the wait from 500 ms up to 15 s', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map(startBackoffMs), [500, 1000, 2000, 4000, 8000, 15_000, 15_000, 15_000])
  })

  it('Given two transient failures, then it cleans up after each, logs each wait with attempt and next delay, and starts on the third attempt', async () => {
    const { log, at } = memoryLogger()
    let attempts = 0
    let cleanUps = 0
    await startWithRetries(async () => { if (++attempts < 3) throw transient() }, {
      timeoutMs: 60_000, log, signal: new AbortController().signal, cleanUp: async () => { cleanUps++ }
    })
    assert.equal(attempts, 3)
    assert.equal(cleanUps, 2)
    const waits = at(LogLevels.warn)
    assert.deepEqual(waits.map(w => [w.attempt, w.nextDelayMs]), [[1, 500], [2, 1000]])
    assert.match(String((waits[0]!.err as { message: string }).message), /cluster B \(127\.0\.0\.1:9\): Connection closed/)
    assert.equal(at(LogLevels.info).length, 1)
  })

  it('Given a permanent fault, then it fails at once without waiting', async () => {
    const denied = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'denied', { retriable: true })
    let attempts = 0
    await assert.rejects(startWithRetries(async () => { attempts++; throw denied }, {
      timeoutMs: 60_000, log: memoryLogger().log, signal: new AbortController().signal, cleanUp: async () => undefined
    }), denied)
    assert.equal(attempts, 1)
  })

  it('Given a TLS listener that closes every connection without a word, then it gives up after three attempts', async () => {
    let attempts = 0
    const closed = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'check the brokers of cluster A (h:9093): Connection closed', { retriable: true, details: { kafkaErrors: [], closedOnTls: true } })
    await assert.rejects(startWithRetries(async () => { attempts++; throw closed }, {
      timeoutMs: 60_000, log: memoryLogger().log, signal: new AbortController().signal, cleanUp: async () => undefined
    }), closed)
    assert.equal(attempts, 3)
  })

  it('Given the limit is reached, then it fails with the last error', async () => {
    const clock = fakeClock()
    let attempts = 0
    await assert.rejects(startWithRetries(async () => { attempts++; clock.advance(1000); throw transient() }, {
      timeoutMs: 2500, log: memoryLogger().log, signal: new AbortController().signal, cleanUp: async () => undefined, now: clock.now
    }), /Connection closed/)
    // Each attempt takes 1 s on the clock: after the first 1.5 s are left (wait 500 ms), after the second 0.5 s
    // (wait capped to 500 ms), after the third none: it gives up.
    assert.equal(attempts, 3)
  })

  it('Given a stop during the wait, then no further attempt is made and the stop reason is raised', async () => {
    const stop = new AbortController()
    let attempts = 0
    const started = startWithRetries(async () => { attempts++; throw transient() }, {
      timeoutMs: 60_000, log: memoryLogger().log, signal: stop.signal, cleanUp: async () => undefined
    })
    stop.abort(new Error('stopping'))
    await assert.rejects(started, /stopping/)
    assert.equal(attempts, 1)
  })
})
