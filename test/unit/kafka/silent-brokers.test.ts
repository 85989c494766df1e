import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { afterEach, describe, it } from 'node:test'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { ConnectionPool, NetworkError, TimeoutError, Writer, type Connection } from '@platformatic/kafka'
import { rejectAfter } from '../../../src/deadline.ts'
import { RequestTimeout } from '../../../src/kafka/protocol/negotiation.ts'
import { clearSuspects, noteOutcome, suspectsLast } from '../../../src/kafka/broker-suspects.ts'
import { AGAIN_WITHIN_MS, clearSilences, markSilent, onSilence, silentSince, watchClient, watchedPool, type SilenceReport } from '../../../src/kafka/silent-brokers.ts'

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

/** A library client as `watchClient` sees it: connection events, and metadata it can be told to forget. */
function fakeClient (): EventEmitter & { on: never, clearMetadata: () => void, cleared: number } {
  const client = new EventEmitter() as EventEmitter & { on: never, clearMetadata: () => void, cleared: number }
  client.cleared = 0
  client.clearMetadata = () => { client.cleared++ }
  return client
}

describe('silent brokers', () => {
  afterEach(() => { clearSilences(); clearSuspects() })

  it('closes every watched connection to a silent broker, in every pool and client, and no other', () => {
    const writer = watchedPool(new ConnectionPool('writer'), 'cluster B')
    const admin = watchClient(fakeClient(), 'cluster B')
    const [a, b, c] = [connect(writer, frozen), connect(admin, { host: '127.0.0.1', port: 9001 }, 'client:broker:connect'), connect(writer, healthy)]
    const reports: SilenceReport[] = []
    const stop = onSilence(r => reports.push(r))
    try {
      assert.equal(markSilent(frozen, 'Heartbeat given up after 10000 ms', 1000), 2)
    } finally { stop() }
    assert.deepEqual([a.closed, b.closed, c.closed], [true, true, false])
    assert.deepEqual(reports, [{ broker: '127.0.0.1:9001', clusters: ['cluster B'], closed: 2, cause: 'Heartbeat given up after 10000 ms', again: false, fenced: false }])
  })

  it('makes every watched library client read its metadata again at a silence: none goes back to a leader that froze', () => {
    const [producer, admin] = [watchClient(fakeClient(), 'cluster B'), watchClient(fakeClient(), 'cluster A')]
    assert.deepEqual([producer.cleared, admin.cleared], [0, 0])
    markSilent(frozen, 'Heartbeat given up after 10000 ms', 1000)
    assert.deepEqual([producer.cleared, admin.cleared], [1, 1])
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

  it('says whether the same broker was found silent within the last minute (the same outage going on)', () => {
    const reports: SilenceReport[] = []
    const stop = onSilence(r => reports.push(r))
    try {
      markSilent(frozen, 'timeout', 1000)
      markSilent(frozen, 'timeout', 1000 + AGAIN_WITHIN_MS - 1)
      markSilent(frozen, 'timeout', 1000 + 3 * AGAIN_WITHIN_MS)
    } finally { stop() }
    assert.deepEqual(reports.map(r => r.again), [false, true, false])
  })

  it('is told by a request unanswered on its connection (not by a connection attempt that timed out, a network failure, which is what a cut causes, or an answer)', () => {
    const pool = watchedPool(new ConnectionPool('coordinator'), 'cluster B')
    const first = connect(pool, frozen)
    noteOutcome(frozen, new NetworkError('Connection closed'), 1000)
    noteOutcome(frozen, new TimeoutError('Connection to 127.0.0.1:9001 timed out.'), 1000)
    noteOutcome(frozen, new Error('NOT_COORDINATOR'), 1000)
    noteOutcome(frozen, undefined, 1000)
    assert.equal(first.closed, false)
    assert.equal(silentSince([frozen], 0), false)
    noteOutcome(frozen, new RequestTimeout('Metadata v12 request to broker 127.0.0.1:9001 timed out (Request timed out)'), 2000)
    assert.equal(first.closed, true)
    assert.equal(silentSince([frozen], 1999), true)
    // A suspect as well: asked last by the requests any broker can answer.
    assert.deepEqual(suspectsLast([frozen, healthy], 2500), [healthy, frozen])
  })

  it('cuts a real connection at once even with writes queued that the silent broker never reads: its request fails, the pool drops it', async t => {
    // A listener that accepts and never reads: its receive buffer and then the socket's send buffer fill up.
    const sockets: Socket[] = []
    const server = createServer(socket => { socket.pause(); sockets.push(socket) })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    t.after(async () => { for (const s of sockets) s.destroy(); await new Promise(resolve => server.close(resolve)) })
    const broker = { host: '127.0.0.1', port: (server.address() as AddressInfo).port }
    const pool = watchedPool(new ConnectionPool('writer', { requestTimeout: 60_000 }), 'cluster B')
    t.after(async () => { await pool.close() })
    const connection = await pool.get(broker)
    const failed = new Promise<Error | null>(resolve => {
      connection.send(0, 3, () => Writer.create().append(Buffer.alloc(32 * 1024 * 1024)), () => null, false, false, (error: Error | null) => resolve(error))
    })
    const closed = new Promise<void>(resolve => connection.once('close', () => resolve()))
    assert.equal(markSilent(broker, 'Heartbeat given up'), 1)
    const error = await rejectAfter(failed, 2000, () => new Error('the request still waits 2 s after the cut'))
    assert.match(String(error), /Connection closed/)
    await rejectAfter(closed, 2000, () => new Error('the connection still open 2 s after the cut'))
    assert.equal(pool.has(broker), false)
  })
})
