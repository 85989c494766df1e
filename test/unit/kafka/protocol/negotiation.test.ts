import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Connection } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../../../../src/errors.ts'
import { ApiVersionsApi } from '../../../../src/kafka/protocol/api-versions.ts'
import { FetchApi } from '../../../../src/kafka/protocol/fetch.ts'
import { MetadataApi } from '../../../../src/kafka/protocol/metadata.ts'
import { BrokerApis, brokerApis, sendRequest } from '../../../../src/kafka/protocol/negotiation.ts'
import { ProduceApi } from '../../../../src/kafka/protocol/produce.ts'
import { ByteWriter } from '../../../../src/kafka/protocol/wire.ts'

type Ranges = Record<number, [number, number]>

/** An ApiVersions answer in the layout of VERSION (v0 layout for an error, as brokers send it). */
function apiVersionsAnswer (version: number, errorCode: number, ranges: Ranges): Buffer {
  const flexible = version >= 3 && errorCode === 0
  const w = new ByteWriter(flexible)
  w.int16(errorCode).structs(Object.entries(ranges), (w, [key, [min, max]]) => { w.int16(Number(key)).int16(min).int16(max) })
  if (errorCode === 0 && version >= 1) w.int32(0)
  w.tags()
  return w.toBuffer()
}

/** A connection whose broker answers ApiVersions like a broker that knows ApiVersions up to MAXAPIVERSIONS. */
function fakeBroker (ranges: Ranges, maxApiVersions: number, listsOwnRangeOnError: boolean): { connection: Connection, asked: { key: number, version: number }[] } {
  const asked: { key: number, version: number }[] = []
  const connection = {
    host: '10.0.0.7',
    port: 9092,
    send (key: number, version: number, _payload: unknown, parse: (c: number, k: number, v: number, r: { buffer: { buffer: Buffer }, position: number }) => unknown, _h: boolean, _rh: boolean, callback: (e: Error | null, r?: unknown) => void) {
      asked.push({ key, version })
      if (key === FetchApi.key) {
        // An answer cut short: the decoder must not read past it.
        try { callback(null, parse(1, key, version, { buffer: { buffer: Buffer.from('000000', 'hex') }, position: 0 })) } catch (error) { callback(error as Error) }
        return
      }
      if (key !== ApiVersionsApi.key) { callback(new Error('connection closed: the broker does not know this request')); return }
      const body = version > maxApiVersions
        ? apiVersionsAnswer(0, 35, listsOwnRangeOnError ? { 18: [0, maxApiVersions] } : {})
        : apiVersionsAnswer(version, 0, ranges)
      try {
        callback(null, parse(1, key, version, { buffer: { buffer: body }, position: 0 }))
      } catch (error) {
        callback(error as Error)
      }
    }
  }
  return { connection: connection as unknown as Connection, asked }
}

const KAFKA_3_6: Ranges = { 0: [0, 9], 1: [0, 15], 2: [0, 8], 3: [0, 12], 18: [0, 3], 22: [0, 4] }
const KAFKA_2_1: Ranges = { 0: [0, 7], 1: [0, 10], 2: [0, 4], 3: [0, 7], 18: [0, 2], 22: [0, 1] }
const KAFKA_2_0: Ranges = { 0: [0, 6], 1: [0, 8], 2: [0, 3], 3: [0, 6], 18: [0, 2], 22: [0, 1] }

describe('version negotiation', () => {
  test('each API is sent at the highest version both kmirror and the broker speak', () => {
    const apis = new BrokerApis(new Map(Object.entries(KAFKA_3_6).map(([k, [min, max]]) => [Number(k), { min, max }])), 'b:1')
    assert.equal(apis.versionFor(FetchApi), 15)
    assert.equal(apis.versionFor(ProduceApi), 9)
    assert.equal(apis.versionFor(MetadataApi), 12)
    assert.equal(apis.release, 'Kafka 3.5-3.6')
  })

  test('a broker newer than kmirror gets kmirror\'s newest version, never the broker\'s', () => {
    const apis = new BrokerApis(new Map([[1, { min: 4, max: 18 }], [0, { min: 3, max: 13 }]]), 'b:1')
    assert.equal(apis.versionFor(FetchApi), FetchApi.maxVersion)
    assert.equal(apis.versionFor(ProduceApi), ProduceApi.maxVersion)
    assert.equal(apis.release, 'Kafka 4.1 or newer')
  })

  test('a Kafka 2.1 broker, which answers ApiVersions v3 with UNSUPPORTED_VERSION and no range, is asked again at v0', async () => {
    const { connection, asked } = fakeBroker(KAFKA_2_1, 2, false)
    const apis = await brokerApis(connection)
    assert.deepEqual(asked, [{ key: 18, version: 3 }, { key: 18, version: 0 }])
    assert.equal(apis.versionFor(FetchApi), 10)
    assert.equal(apis.versionFor(ProduceApi), 7)
    assert.equal(apis.release, 'Kafka 2.1-2.2')
  })

  test('a broker that names its ApiVersions range in the error is asked again at the highest version it named', async () => {
    const { connection, asked } = fakeBroker(KAFKA_2_1, 1, true)
    await brokerApis(connection)
    assert.deepEqual(asked, [{ key: 18, version: 3 }, { key: 18, version: 1 }])
  })

  test('ApiVersions is asked once per connection', async () => {
    const { connection, asked } = fakeBroker(KAFKA_3_6, 3, true)
    await Promise.all([brokerApis(connection), brokerApis(connection)])
    await brokerApis(connection)
    assert.equal(asked.length, 1)
  })

  test('a fetch of a topic without a topic id stays at v12 on a broker that offers v13+ (ZooKeeper brokers with an older inter.broker.protocol.version)', () => {
    const apis = new BrokerApis(new Map(Object.entries(KAFKA_3_6).map(([k, [min, max]]) => [Number(k), { min, max }])), 'b:1')
    assert.equal(apis.versionFor(FetchApi, 12), 12)
    assert.equal(apis.versionFor(FetchApi), 15)
  })

  test('an answer kmirror cannot read is an INTERNAL error naming the API, version and broker, never retried', async () => {
    const { connection } = fakeBroker(KAFKA_3_6, 3, true)
    await assert.rejects(sendRequest(connection, FetchApi, { maxWaitMs: 0, minBytes: 0, maxBytes: 0, isolationLevel: 1, topics: [] }, 'cluster A'), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.INTERNAL)
      assert.equal(err.retriable, false)
      assert.match(err.message, /^Fetch v15 with cluster A broker 10\.0\.0\.7:9092 \(Kafka 3\.5-3\.6\): response ends at byte 3/)
      return true
    })
  })

  test('a broker older than Kafka 2.1 gets BROKER_INCOMPATIBLE naming the cluster, broker, API, both ranges and the floor; nothing is sent to it', async () => {
    const { connection, asked } = fakeBroker(KAFKA_2_0, 2, false)
    await assert.rejects(sendRequest(connection, FetchApi, { maxWaitMs: 0, minBytes: 0, maxBytes: 0, isolationLevel: 1, topics: [] }, 'cluster legacy'), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.BROKER_INCOMPATIBLE)
      assert.equal(err.retriable, false)
      assert.match(err.message, /^cluster legacy broker 10\.0\.0\.7:9092 \(looks like Kafka 2\.0 or older\) offers Fetch v0-v8, kmirror needs v10-v17: kmirror works with Apache Kafka 2\.1 or newer/)
      return true
    })
    assert.deepEqual(asked.map(a => a.key), [18, 18])
  })
})
