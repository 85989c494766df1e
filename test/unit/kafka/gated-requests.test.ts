/**
 * Produce requests of the library's Producer ask the lease as each goes out, its own retries included
 * (gated-requests.ts): the RecordWriter tests run the real library Producer over connections whose network half is
 * faked (a broker answering ApiVersions, Metadata, InitProducerId and Produce), so its retry logic is the real one.
 */
import assert from 'node:assert/strict'
import { after, describe, it, type TestContext } from 'node:test'
import { Connection, TimeoutError, UserError } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { gateConnection, PRODUCE_API_KEY } from '../../../src/kafka/gated-requests.ts'
import { RecordWriter } from '../../../src/kafka/record-writer.ts'

type SendArgs = Parameters<Connection['send']>

const TOPIC = 'mm2-offsets.A.internal'
const API_VERSIONS = 18
const METADATA = 3
const INIT_PRODUCER_ID = 22

/** What the fake broker answers a produce attempt: appended, or no answer in time (the library retries that). */
type ProduceOutcome = 'appended' | 'timed out'

interface FakeBroker {
  /** Produce requests written to the socket (their payload built and let through). */
  readonly produced: number
  /** Runs as a produce attempt is answered, before its caller hears (a test ends the lease there). */
  onProduceAnswered: (() => void) | null
}

/** The library's connections talk to a fake broker; OUTCOMES answer the produce attempts in order (then appended). */
function fakeBroker (t: TestContext, outcomes: ProduceOutcome[]): FakeBroker {
  const broker = { produced: 0, onProduceAnswered: null as (() => void) | null }
  t.mock.method(Connection.prototype, 'connect', (_host: string, _port: number, callback: (error: Error | null) => void) => { process.nextTick(callback, null) })
  t.mock.method(Connection.prototype, 'ready', (callback: (error: Error | null) => void) => { process.nextTick(callback, null) })
  t.mock.method(Connection.prototype, 'send', (...args: SendArgs) => {
    const [apiKey, , createPayload, , , , callback] = args
    const answer = (error: Error | null, response?: unknown): void => { setImmediate(() => { callback(error, response as never) }) }
    Promise.resolve().then(() => createPayload()).then(() => {
      if (apiKey === API_VERSIONS) answer(null, { errorCode: 0, apiKeys: apiKeys() })
      else if (apiKey === METADATA) answer(null, metadata())
      else if (apiKey === INIT_PRODUCER_ID) answer(null, { errorCode: 0, producerId: 1000n, producerEpoch: 0 })
      else if (apiKey === PRODUCE_API_KEY) {
        broker.produced++
        const outcome = outcomes.shift() ?? 'appended'
        setImmediate(() => {
          broker.onProduceAnswered?.()
          if (outcome === 'timed out') callback(new TimeoutError('Request timed out', { canRetry: true }), undefined as never)
          else callback(null, { responses: [{ name: TOPIC, partitionResponses: [{ index: 0, errorCode: 0, baseOffset: 41n }] }], throttleTimeMs: 0 } as never)
        })
      }
    }, (err: Error) => { callback(err, undefined as never) })
  })
  return broker
}

function apiKeys (): unknown[] {
  return [
    { apiKey: PRODUCE_API_KEY, name: 'Produce', minVersion: 3, maxVersion: 9 },
    { apiKey: METADATA, name: 'Metadata', minVersion: 0, maxVersion: 12 },
    { apiKey: API_VERSIONS, name: 'ApiVersions', minVersion: 0, maxVersion: 3 },
    { apiKey: INIT_PRODUCER_ID, name: 'InitProducerId', minVersion: 0, maxVersion: 4 }
  ]
}

function metadata (): unknown {
  return {
    throttleTimeMs: 0,
    clusterId: 'fake',
    controllerId: 1,
    brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }],
    topics: [{
      errorCode: 0,
      name: TOPIC,
      topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
      isInternal: false,
      partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
      topicAuthorizedOperations: 0
    }]
  }
}

const writers: RecordWriter[] = []
after(async () => { await Promise.all(writers.map(w => w.close())) })

function writer (fence: () => string | null): RecordWriter {
  const w = new RecordWriter({ 'bootstrap.servers': '127.0.0.1:9092', 'retry.backoff.ms': '10' }, 'kmirror-test-gated', {
    idempotent: true, maxChunkBytes: 64 * 1024, cluster: { label: 'cluster B', alias: 'B' }, fence
  })
  writers.push(w)
  return w
}

const record = { key: Buffer.from('k'), value: Buffer.from('v'), headers: [], timestamp: 1n }

describe('RecordWriter: the library\'s own retries ask the lease', () => {
  it('sends no retry of the library once the lease ended while the first attempt was out, and fails FENCED naming the cluster', async t => {
    // Given a progress write whose first attempt gets no answer in time, the lease ending meanwhile
    const broker = fakeBroker(t, ['timed out'])
    let leaseEnded = false
    broker.onProduceAnswered = () => { leaseEnded = true }
    const w = writer(() => (leaseEnded ? 'the lease ran out' : null))
    // When the write is made
    const err = await w.write([{ topic: TOPIC, partition: 0, records: [record] }]).then(() => null, (e: unknown) => e)
    // Then the library's retry never went out, and the write fails as fenced, retriable, naming the cluster
    assert.equal(broker.produced, 1)
    assert.ok(err instanceof KmirrorError)
    assert.equal(err.code, ErrorCodes.FENCED)
    assert.equal(err.retriable, true)
    assert.match(err.message, /cluster B: .*the lease ran out/)
  })

  it('sends no retry of a write begun under a lost membership once the writer is renewed, even with the next lease holding', async t => {
    // Given a progress write whose first attempt gets no answer in time, and the membership lost meanwhile
    const broker = fakeBroker(t, ['timed out'])
    const w = writer(() => null)
    broker.onProduceAnswered = () => { w.renew() }
    // When the write is made (the lease holding again: a new membership)
    const err = await w.write([{ topic: TOPIC, partition: 0, records: [record] }]).then(() => null, (e: unknown) => e)
    // Then the library's retry never went out, and the write failed, retriable
    assert.equal(broker.produced, 1)
    assert.ok(err instanceof KmirrorError)
    assert.equal(err.retriable, true)
    // And the renewed writer writes
    broker.onProduceAnswered = null
    assert.deepEqual(await w.write([{ topic: TOPIC, partition: 0, records: [record] }]), [[{ start: 0, baseOffset: 41 }]])
  })

  it('keeps the library\'s retries while the lease holds', async t => {
    // Given a first attempt with no answer in time, the lease holding throughout
    const broker = fakeBroker(t, ['timed out'])
    const w = writer(() => null)
    // When the write is made, then the library's retry goes out and the record is acknowledged
    const segments = await w.write([{ topic: TOPIC, partition: 0, records: [record] }])
    assert.equal(broker.produced, 2)
    assert.deepEqual(segments, [[{ start: 0, baseOffset: 41 }]])
  })
})

describe('gateConnection', () => {
  /** A connection whose requests are answered only when the test says so. */
  function heldConnection (): { connection: Connection, written: number[], answer: () => void } {
    const written: number[] = []
    const callbacks: (() => void)[] = []
    const fake = {
      send: (...args: SendArgs) => {
        const [apiKey, , createPayload, , , , callback] = args
        try {
          createPayload()
        } catch (err) {
          callback(err as Error, undefined as never)
          return
        }
        written.push(apiKey)
        callbacks.push(() => { callback(null, 'answer' as never) })
      }
    }
    return { connection: fake as unknown as Connection, written, answer: () => { callbacks.shift()?.() } }
  }

  it('hands a request to the connection only once the one before is answered, and asks the gate then', () => {
    // Given a gated connection with a produce request out, and another one waiting behind it
    const { connection, written, answer } = heldConnection()
    let reason: string | null = null
    gateConnection(connection, new Set([PRODUCE_API_KEY]), () => { if (reason !== null) throw new KmirrorError(ErrorCodes.FENCED, reason, { retriable: true }) })
    const outcomes: unknown[] = []
    const send = (apiKey: number): void => {
      connection.send(apiKey, 9, () => ({}) as never, () => undefined as never, false, false, (error: Error | null | undefined) => { outcomes.push(error ?? 'answered') })
    }
    send(PRODUCE_API_KEY)
    send(PRODUCE_API_KEY)
    assert.deepEqual(written, [PRODUCE_API_KEY])
    // When the lease ends before the first is answered
    reason = 'the lease ran out'
    answer()
    // Then the second is never written: it fails, not retriable to the library, with the gate's error as its cause
    assert.deepEqual(written, [PRODUCE_API_KEY])
    assert.equal(outcomes[0], 'answered')
    const refused = outcomes[1]
    assert.ok(refused instanceof UserError)
    assert.equal(refused.canRetry, false)
    assert.ok(refused.cause instanceof KmirrorError)
    assert.equal(refused.cause.code, ErrorCodes.FENCED)
  })

  it('lets requests of other APIs through a closed gate, one at a time in the order asked', () => {
    const { connection, written, answer } = heldConnection()
    gateConnection(connection, new Set([PRODUCE_API_KEY]), () => { throw new Error('closed') })
    for (const apiKey of [METADATA, INIT_PRODUCER_ID]) connection.send(apiKey, 1, () => ({}) as never, () => undefined as never, false, false, () => undefined)
    assert.deepEqual(written, [METADATA])
    answer()
    assert.deepEqual(written, [METADATA, INIT_PRODUCER_ID])
  })
})
