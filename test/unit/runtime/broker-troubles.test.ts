/**
 * The brokers that troubled the process lately, as /status lists them: one entry per broker and kind, counted, the
 * newest first, forgotten after the window.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BrokerTroubles } from '../../../src/runtime/broker-troubles.ts'

const T0 = Date.parse('2026-12-05T03:00:00Z')
const silence = (broker: string, fenced: boolean, cause: string) => ({ broker, clusters: ['cluster B'], closed: 2, cause, again: false, fenced })

describe('BrokerTroubles', () => {
  it('lists each broker once per kind with its count, first and last time and last cause, the newest first', () => {
    const troubles = new BrokerTroubles(15 * 60_000)
    troubles.slow({ broker: '127.0.0.1:9001', cluster: 'cluster B', api: 'Produce', waitedMs: 10_200, first: true }, T0)
    troubles.slow({ broker: '127.0.0.1:9001', cluster: 'cluster B', api: 'Metadata', waitedMs: 11_000, first: false }, T0 + 1000)
    troubles.silence(silence('127.0.0.1:9001', true, 'a Produce request to broker 127.0.0.1:9001 unanswered for 3.1 s, and ...'), T0 + 2000)
    // (a broker that was first slow and then fenced has an entry of each kind)
    troubles.silence(silence('127.0.0.1:9002', false, 'Heartbeat given up'), T0 - 1000)
    assert.deepEqual(troubles.list(T0 + 3000), [
      { broker: '127.0.0.1:9001', clusters: ['cluster B'], kind: 'fenced', count: 1, firstAt: '2026-12-05T03:00:02.000Z', lastAt: '2026-12-05T03:00:02.000Z', cause: 'a Produce request to broker 127.0.0.1:9001 unanswered for 3.1 s, and ...' },
      { broker: '127.0.0.1:9001', clusters: ['cluster B'], kind: 'slow', count: 2, firstAt: '2026-12-05T03:00:00.000Z', lastAt: '2026-12-05T03:00:01.000Z', cause: 'a Metadata request to it still unanswered after 11.0 s' },
      { broker: '127.0.0.1:9002', clusters: ['cluster B'], kind: 'silent', count: 1, firstAt: '2026-12-05T02:59:59.000Z', lastAt: '2026-12-05T02:59:59.000Z', cause: 'Heartbeat given up' }
    ])
  })

  it('forgets a trouble whose last time is older than the window; a new one starts its count afresh', () => {
    const troubles = new BrokerTroubles(60_000)
    troubles.silence(silence('127.0.0.1:9001', false, 'first'), T0)
    troubles.silence(silence('127.0.0.1:9001', false, 'second'), T0 + 30_000)
    assert.deepEqual(troubles.list(T0 + 89_999).map(t => [t.count, t.cause]), [[2, 'second']])
    assert.deepEqual(troubles.list(T0 + 90_000), [])
    troubles.silence(silence('127.0.0.1:9001', false, 'third'), T0 + 100_000)
    assert.deepEqual(troubles.list(T0 + 100_000).map(t => [t.count, t.firstAt]), [[1, '2026-12-05T03:01:40.000Z']])
  })
})
