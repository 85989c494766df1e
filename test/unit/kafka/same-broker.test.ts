import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inPreferredOrder, notAmong, type Resolve } from '../../../src/kafka/same-broker.ts'

const hosts: Record<string, readonly string[]> = {
  localhost: ['127.0.0.1', '::1'],
  'kafka-1.internal': ['10.0.0.1'],
  'bootstrap.example': ['10.0.0.1', '10.0.0.2'],
  '127.0.0.1': ['127.0.0.1'],
  '10.0.0.1': ['10.0.0.1'],
  '10.0.0.3': ['10.0.0.3']
}
const resolve: Resolve = async host => hosts[host] ?? []

describe('notAmong', () => {
  it('leaves out a bootstrap server written as a broker, whatever the case or the IPv6 brackets', async () => {
    assert.deepEqual(await notAmong(['Kafka-1.internal:9092', '[::1]:9093'], ['kafka-1.internal:9092', '::1:9093'], 1000, resolve), [])
  })

  it('leaves out a bootstrap server whose name resolves to a broker\'s address on the same port', async () => {
    assert.deepEqual(await notAmong(['localhost:9092', 'bootstrap.example:9092'], ['127.0.0.1:9092', 'kafka-1.internal:9092'], 1000, resolve), [])
  })

  it('keeps one on another port or another host, and one that does not resolve', async () => {
    assert.deepEqual(await notAmong(['localhost:9093', '10.0.0.3:9092', 'gone.example:9092'], ['127.0.0.1:9092', '10.0.0.1:9092'], 1000, resolve),
      ['localhost:9093', '10.0.0.3:9092', 'gone.example:9092'])
  })

  it('keeps every server not named as a broker when resolving does not finish in time', async () => {
    const never: Resolve = async () => await new Promise(() => {})
    const started = Date.now()
    assert.deepEqual(await notAmong(['localhost:9092', '127.0.0.1:9093'], ['127.0.0.1:9092', '127.0.0.1:9093'], 50, never), ['localhost:9092'])
    assert.ok(Date.now() - started < 1000)
  })

  it('resolves nothing when every server is named as a broker', async () => {
    let asked = 0
    const counting: Resolve = async host => { asked++; return await resolve(host) }
    assert.deepEqual(await notAmong(['127.0.0.1:9092'], ['127.0.0.1:9092', '127.0.0.1:9093'], 1000, counting), [])
    assert.equal(asked, 0)
  })

  it('resolves real names through the system resolver', async () => {
    assert.deepEqual(await notAmong(['localhost:9092'], ['127.0.0.1:9092'], 5000), [])
  })
})

describe('inPreferredOrder', () => {
  const brokers = new Map([[1, { host: '127.0.0.1', port: 9092 }], [2, { host: '127.0.0.1', port: 9093 }], [3, { host: '127.0.0.1', port: 9094 }], [4, { host: 'Broker-4', port: 9095 }]])

  it('puts the brokers in bootstrap.servers order first, the others after in metadata order, the avoided last', () => {
    assert.deepEqual(inPreferredOrder(brokers, ['127.0.0.1:9094', '127.0.0.1:9093'], new Set()), [3, 2, 1, 4])
    assert.deepEqual(inPreferredOrder(brokers, ['127.0.0.1:9094', '127.0.0.1:9093'], new Set(['127.0.0.1:9094'])), [2, 1, 4, 3])
    assert.deepEqual(inPreferredOrder(brokers, [], new Set(['broker-4:9095', '127.0.0.1:9092'])), [2, 3, 1, 4])
  })
})
