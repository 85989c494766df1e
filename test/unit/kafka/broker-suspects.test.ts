import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { AuthenticationError, MultipleErrors, NetworkError, TimeoutError, type Connection } from '@platformatic/kafka'
import { addressOf, askAnyBroker, clearSuspects, noteOutcome, SUSPECT_MS, suspectsLast } from '../../../src/kafka/broker-suspects.ts'

const [a, b, c] = [{ host: '127.0.0.1', port: 1 }, { host: 'Broker-2', port: 2 }, { host: '127.0.0.1', port: 3 }]

describe('broker suspects', () => {
  afterEach(clearSuspects)

  it('keeps the order while no broker failed', () => {
    assert.deepEqual(suspectsLast([a, b, c]), [a, b, c])
  })

  it('puts a broker that timed out or failed on the network last, the least recently failed first among them', () => {
    noteOutcome(a, new TimeoutError('Request timed out'), 1000)
    noteOutcome({ host: 'broker-2', port: 2 }, new NetworkError('Connection closed'), 500)
    assert.deepEqual(suspectsLast([a, b, c], 2000), [c, b, a])
  })

  it('never leaves a broker out, and forgets a suspicion once the broker answers or after SUSPECT_MS', () => {
    noteOutcome(a, new TimeoutError('Request timed out'), 1000)
    noteOutcome(c, new TimeoutError('Request timed out'), 1000)
    assert.deepEqual(suspectsLast([a, c], 2000), [a, c])
    assert.deepEqual(suspectsLast([a, b, c], 1000 + SUSPECT_MS), [a, b, c])
    noteOutcome(a)
    assert.deepEqual(suspectsLast([a, b, c], 2000), [a, b, c])
  })

  it('does not suspect a broker for an answer it gave (an error the broker sent is not its silence)', () => {
    noteOutcome(a, new Error('NOT_COORDINATOR'), 1000)
    assert.deepEqual(suspectsLast([a, b], 2000), [a, b])
  })

  it('suspects the brokers the library could not connect to before the one that took the connection', async () => {
    const tried: string[][] = []
    const pool = { getFirstAvailable: async (brokers: { host: string, port: number }[]) => { tried.push(brokers.map(x => `${x.host}:${x.port}`)); return { host: '127.0.0.1', port: 3 } as unknown as Connection } }
    assert.equal(await askAnyBroker(pool, [a, b, c], async () => 'answer'), 'answer')
    assert.deepEqual(suspectsLast([a, b, c]), [c, a, b])
    // the next ask tries the one that took it first
    await askAnyBroker(pool, [a, b, c], async () => 'answer')
    assert.deepEqual(tried[1], ['127.0.0.1:3', '127.0.0.1:1', 'Broker-2:2'])
  })

  it('suspects every broker when none took a connection, unless authentication was refused', async () => {
    const failing = (error: Error) => ({ getFirstAvailable: async () => { throw new MultipleErrors('Cannot connect to any broker.', [error]) } })
    await assert.rejects(askAnyBroker(failing(new AuthenticationError('SASL refused')), [a, b], async () => 'never'))
    assert.deepEqual(suspectsLast([c, a, b]), [c, a, b])
    await assert.rejects(askAnyBroker(failing(new NetworkError('Connection refused')), [a, b], async () => 'never'))
    assert.deepEqual(suspectsLast([a, c, b]), [c, a, b])
  })

  it('reads the address of a connection, or none while it has none', () => {
    assert.deepEqual(addressOf({ host: 'h', port: 9 }), { host: 'h', port: 9 })
    assert.equal(addressOf({ host: undefined, port: undefined }), undefined)
  })
})
