import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inPreferredOrder, sameAsBrokers, type Resolve } from '../../../src/kafka/same-broker.ts'

const hosts: Record<string, readonly string[]> = {
  localhost: ['127.0.0.1', '::1'],
  'kafka-1.internal': ['10.0.0.1'],
  'kafka-2.internal': ['10.0.0.2'],
  'lb.example': ['10.0.0.1', '10.0.0.2'],
  '127.0.0.1': ['127.0.0.1'],
  '10.0.0.1': ['10.0.0.1'],
  '10.0.0.3': ['10.0.0.3']
}
const resolve: Resolve = async host => hosts[host] ?? []

describe('sameAsBrokers', () => {
  it('finds a bootstrap server whose every address is a broker\'s, on the same port', async () => {
    assert.deepEqual(await sameAsBrokers(['localhost:9092', '10.0.0.1:9093'], ['127.0.0.1:9092', 'kafka-1.internal:9093'], 1000, resolve), ['localhost:9092', '10.0.0.1:9093'])
  })

  it('compares only the address families the brokers have: localhost (127.0.0.1 and ::1) is the broker at 127.0.0.1', async () => {
    assert.deepEqual(await sameAsBrokers(['localhost:9092'], ['127.0.0.1:9092'], 1000, resolve), ['localhost:9092'])
    assert.deepEqual(await sameAsBrokers(['localhost:9092'], ['127.0.0.1:9092', '[::2]:9092'], 1000, async h => h === '::2' ? ['::2'] : await resolve(h)), [])
  })

  it('keeps one on another port or host, one that does not resolve, and one whose other addresses are not among the brokers', async () => {
    assert.deepEqual(await sameAsBrokers(['localhost:9093', '10.0.0.3:9092', 'gone.example:9092', 'lb.example:9092'], ['127.0.0.1:9092', 'kafka-1.internal:9092'], 1000, resolve), [])
    assert.deepEqual(await sameAsBrokers(['lb.example:9092'], ['kafka-1.internal:9092', 'kafka-2.internal:9092'], 1000, resolve), ['lb.example:9092'])
  })

  it('finds nothing when resolving does not finish in time, or when there is nothing to compare', async () => {
    const never: Resolve = async () => await new Promise(() => {})
    const started = Date.now()
    assert.deepEqual(await sameAsBrokers(['localhost:9092'], ['127.0.0.1:9092'], 50, never), [])
    assert.ok(Date.now() - started < 1000)
    let asked = 0
    const counting: Resolve = async host => { asked++; return await resolve(host) }
    assert.deepEqual(await sameAsBrokers([], ['127.0.0.1:9092'], 1000, counting), [])
    assert.deepEqual(await sameAsBrokers(['localhost:9092'], [], 1000, counting), [])
    assert.equal(asked, 0)
  })
})

describe('inPreferredOrder', () => {
  const brokers = new Map([[1, { host: '127.0.0.1', port: 9092 }], [2, { host: '127.0.0.1', port: 9093 }], [3, { host: '127.0.0.1', port: 9094 }], [4, { host: 'Broker-4', port: 9095 }]])

  it('puts the brokers in bootstrap.servers order first (names compared in any case), the others after in metadata order', () => {
    assert.deepEqual(inPreferredOrder(brokers, ['127.0.0.1:9094', '127.0.0.1:9093']), [3, 2, 1, 4])
    assert.deepEqual(inPreferredOrder(brokers, ['broker-4:9095']), [4, 1, 2, 3])
    assert.deepEqual(inPreferredOrder(brokers, []), [1, 2, 3, 4])
  })
})
