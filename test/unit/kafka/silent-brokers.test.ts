import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { afterEach, describe, it } from 'node:test'
import { ConnectionPool, NetworkError, TimeoutError, type Connection } from '@platformatic/kafka'
import { clearSuspects, noteOutcome, suspectsLast } from '../../../src/kafka/broker-suspects.ts'
import { clearSilences, markSilent, onSilence, silentSince, watchClient, watchedPool, type SilenceReport } from '../../../src/kafka/silent-brokers.ts'

/** A connection that only records whether it was closed (and emits 'close' then, as the library's does). */
class FakeConnection extends EventEmitter {
  closed = false
  async close (): Promise<void> {
    this.closed = true
    this.emit('close')
  }
}

const frozen = { host: '127.0.0.1', port: 9001 }
const healthy = { host: '127.0.0.1', port: 9002 }

/** A connection to BROKER opened in POOL (as the pool tells its listeners). */
function connect (pool: EventEmitter, broker: { host: string, port: number }, event = 'connect'): FakeConnection {
  const connection = new FakeConnection()
  pool.emit(event, { broker, connection: connection as unknown as Connection })
  return connection
}

describe('silent brokers', () => {
  afterEach(() => { clearSilences(); clearSuspects() })

  it('closes every watched connection to a silent broker, in every pool and client, and no other', () => {
    const writer = watchedPool(new ConnectionPool('writer'), 'cluster B')
    const admin = watchClient(new EventEmitter() as EventEmitter & { on: never }, 'cluster B')
    const [a, b, c] = [connect(writer, frozen), connect(admin, { host: '127.0.0.1', port: 9001 }, 'client:broker:connect'), connect(writer, healthy)]
    const reports: SilenceReport[] = []
    const stop = onSilence(r => reports.push(r))
    try {
      assert.equal(markSilent(frozen, 'Heartbeat given up after 10000 ms', 1000), 2)
    } finally { stop() }
    assert.deepEqual([a.closed, b.closed, c.closed], [true, true, false])
    assert.deepEqual(reports, [{ broker: '127.0.0.1:9001', clusters: ['cluster B'], closed: 2, cause: 'Heartbeat given up after 10000 ms' }])
  })

  it('forgets a connection once it closed, and closes none a second time', () => {
    const pool = watchedPool(new ConnectionPool('fetcher'), 'cluster A')
    const gone = connect(pool, frozen)
    gone.emit('close')
    gone.closed = false
    assert.equal(markSilent(frozen, 'timeout', 1000), 0)
    assert.equal(gone.closed, false)
    const fresh = connect(pool, frozen)
    assert.equal(markSilent(frozen, 'timeout', 2000), 1)
    assert.equal(markSilent(frozen, 'timeout', 3000), 0)
    assert.equal(fresh.closed, true)
  })

  it('tells a metadata cache whether a broker it knows fell silent after its last read', () => {
    assert.equal(silentSince([frozen, healthy], 0), false)
    markSilent({ host: '127.0.0.1', port: 9001 }, 'timeout', 1000)
    assert.equal(silentSince([frozen, healthy], 999), true)
    assert.equal(silentSince([frozen, healthy], 1000), false)
    assert.equal(silentSince([healthy], 999), false)
  })

  it('is told by a timeout noted of a broker (not by a network failure, which is what a cut causes, nor by an answer)', () => {
    const pool = watchedPool(new ConnectionPool('coordinator'), 'cluster B')
    const first = connect(pool, frozen)
    noteOutcome(frozen, new NetworkError('Connection closed'), 1000)
    noteOutcome(frozen, new Error('NOT_COORDINATOR'), 1000)
    noteOutcome(frozen, undefined, 1000)
    assert.equal(first.closed, false)
    assert.equal(silentSince([frozen], 0), false)
    noteOutcome(frozen, new TimeoutError('Request timed out'), 2000)
    assert.equal(first.closed, true)
    assert.equal(silentSince([frozen], 1999), true)
    // A suspect as well: asked last by the requests any broker can answer.
    assert.deepEqual(suspectsLast([frozen, healthy], 2500), [healthy, frozen])
  })
})
