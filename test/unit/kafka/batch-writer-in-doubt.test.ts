import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BatchWriter, type BatchAck, type OutBatch } from '../../../src/kafka/batch-writer.ts'
import type { ProducerIdentity } from '../../../src/kafka/record-batch.ts'
import { FakeProduceBrokers } from '../../fakes/fake-produce-brokers.ts'

const KEY = 'A.t\u00000'

/**
 * One-record batches copying source offsets `from`, `from + 1`, ... (records of `content`: another content is other
 * records at the same offsets): their header carries the producer id and sequence they were built with (the fake
 * broker checks them), and `built` lists `offset@producer/sequence`.
 */
function batches (from: number, count: number, built: string[], withSpan = true, content = 0): OutBatch[] {
  return Array.from({ length: count }, (_, i) => ({
    recordCount: 1,
    ...(withSpan ? { firstOffset: from + i, lastOffset: from + i, fingerprint: () => 1000 * content + from + i } : {}),
    build: (producer: ProducerIdentity, sequence: number) => {
      built.push(`${from + i}@${producer.id}/${sequence}`)
      const b = Buffer.alloc(61)
      b.writeBigInt64BE(producer.id, 43)
      b.writeInt32BE(sequence, 53)
      b.writeInt32BE(1, 57)
      return b
    }
  }))
}

function setup (): { brokers: FakeProduceBrokers, writer: BatchWriter } {
  const brokers = new FakeProduceBrokers()
  brokers.idempotence = true
  // maxRequestBytes 1: one batch per request, so a lost answer loses exactly one batch's acknowledgement.
  const writer = new BatchWriter({ 'bootstrap.servers': '127.0.0.1:9092' }, 'test', { maxInFlight: 5, maxRequestBytes: 1, timeoutMs: 1000, cluster: { label: 'cluster B', alias: 'B' } }, brokers.transport)
  return { brokers, writer }
}

/** Writes and collects the acknowledgements; a thrown failure is returned as its message. */
async function write (writer: BatchWriter, writes: Parameters<BatchWriter['write']>[0]): Promise<{ acks: BatchAck[], error: string | null, incomplete: number[] }> {
  const acks: BatchAck[] = []
  try {
    const result = await writer.write(writes, a => { acks.push(...a) })
    assert.deepEqual(result.failed, [])
    return { acks, error: null, incomplete: result.incomplete }
  } catch (err) {
    return { acks, error: (err as Error).message, incomplete: [] }
  }
}

describe('BatchWriter: batches in doubt (at-least-once)', () => {
  it('Given a produce request the broker appended but whose answer was lost, then the next write sends it again with the same producer id and sequence, and the broker keeps it once at its first offset', async () => {
    const { brokers, writer } = setup()
    const built: string[] = []
    // The first batch is acknowledged; the second is appended but its answer is lost.
    assert.deepEqual((await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(10, 1, built) }])).acks.map(a => a.baseOffset), [0])
    brokers.loseAnswers = 1
    const lost = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(11, 1, built) }])
    assert.match(lost.error ?? '', /connection closed before the answer/)

    // The caller copies again from its position (source offset 11), with one more batch fetched since.
    const again = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(11, 2, built) }])

    assert.equal(again.error, null)
    assert.deepEqual(again.acks.map(a => [a.batch, a.baseOffset]), [[0, 1], [1, 2]])
    assert.deepEqual(built, ['10@100/0', '11@100/1', '11@100/1', '12@100/2'])
    assert.deepEqual(brokers.appended.get(KEY), ['100/0', '100/1', '100/2'])
    assert.equal(brokers.producerIds, 1)
  })

  it('Given several batches in doubt and another partition acknowledged in the same write, then all of them are sent again in order, and the other partition goes on with its sequence', async () => {
    const { brokers, writer } = setup()
    const built: string[] = []
    // Both partitions have a first batch acknowledged (the first batch of a producer id goes alone); then both
    // requests of A.t-0 (one batch each) are handled and their answers lost.
    const first = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built) }, { topic: 'A.t', partition: 1, batches: batches(0, 1, []) }])
    assert.equal(first.error, null)
    brokers.loseAnswers = 2
    const lost = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(1, 2, built) }])
    assert.notEqual(lost.error, null)

    const again = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(1, 2, built) }, { topic: 'A.t', partition: 1, batches: batches(1, 1, []) }])

    assert.equal(again.error, null)
    assert.deepEqual(again.acks.filter(a => a.write === 0).map(a => a.baseOffset), [1, 2])
    assert.deepEqual(built, ['0@100/0', '1@100/1', '2@100/2', '1@100/1', '2@100/2'])
    assert.deepEqual(brokers.appended.get(KEY), ['100/0', '100/1', '100/2'])
    assert.deepEqual(brokers.appended.get('A.t\u00001'), ['100/0', '100/1'])
  })

  it('Given a batch in doubt, when the next write of its partition starts elsewhere (resumed from another position), then a new producer id is taken first and nothing is deduplicated against the old one', async () => {
    const { brokers, writer } = setup()
    const built: string[] = []
    brokers.loseAnswers = 1
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(5, 1, built) }])

    const again = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(3, 1, built) }])

    assert.equal(again.error, null)
    assert.deepEqual(built, ['5@100/0', '3@101/0'])
    assert.deepEqual(brokers.appended.get(KEY), ['100/0', '101/0'])
  })

  it('Given a batch in doubt, when the next write carries other records at the same source offsets (the source topic deleted and created again), then a new producer id is taken first: the new records are appended, not taken for duplicates', async () => {
    const { brokers, writer } = setup()
    const built: string[] = []
    brokers.loseAnswers = 1
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built) }])

    const again = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built, true, 1) }])

    assert.deepEqual(again.acks.map(a => a.baseOffset), [1])
    assert.deepEqual(built, ['0@100/0', '0@101/0'])
    assert.deepEqual(brokers.appended.get(KEY), ['100/0', '101/0'])
  })

  it('Given a batch in doubt that the broker no longer knows (restarted), then its resend is refused for its sequence, the partition is returned incomplete without a failure, and the next write renews the producer id', async () => {
    const { brokers, writer } = setup()
    const built: string[] = []
    assert.equal((await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built) }])).error, null)
    brokers.loseAnswers = 2
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(1, 2, built) }])
    brokers.restart()

    const refused = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(1, 2, built) }])
    assert.equal(refused.error, null)
    assert.deepEqual(refused.incomplete, [0])
    assert.deepEqual(refused.acks, [])

    const renewed = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(1, 2, built) }])
    assert.deepEqual(renewed.acks.map(a => a.baseOffset), [3, 4])
    assert.deepEqual(built.slice(-2), ['1@101/0', '2@101/1'])
  })

  it('Given a batch in doubt resent to a broker that forgot the producer (UNKNOWN_PRODUCER_ID, Kafka before 2.5), then the partition is returned incomplete and the next write renews the producer id', async () => {
    const { brokers, writer } = setup()
    const built: string[] = []
    brokers.loseAnswers = 1
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built) }])
    brokers.script.set(KEY, [59])

    const refused = await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built) }])
    assert.deepEqual([refused.error, refused.incomplete], [null, [0]])
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built) }])
    assert.deepEqual(built, ['0@100/0', '0@100/0', '0@101/0'])
  })

  it('Given a lost answer for batches that copy no source records (no source span), then the producer id is renewed as before', async () => {
    const { brokers, writer } = setup()
    const built: string[] = []
    brokers.loseAnswers = 1
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built, false) }])
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built, false) }])
    assert.deepEqual(built, ['0@100/0', '0@101/0'])
  })

  it('Given a refusal in the same write as a batch in doubt, then the producer id is renewed (a refused partition\'s sequences are unknown)', async () => {
    const { brokers, writer } = setup()
    const built: string[] = []
    brokers.script.set('A.u\u00000', [29]) // TOPIC_AUTHORIZATION_FAILED
    // One batch per request, in the order of the writes: the first request (A.t) loses its answer
    brokers.loseAnswers = 1
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built) }, { topic: 'A.u', partition: 0, batches: batches(0, 1, []) }])
    await write(writer, [{ topic: 'A.t', partition: 0, batches: batches(0, 1, built) }])
    assert.deepEqual(built, ['0@100/0', '0@101/0'])
  })

  it('Given the first batch of a producer id on a partition refused for its content (too large), then no later batch of it went out beside it: nothing of the partition is appended ahead of the refused batch', async () => {
    const { brokers, writer } = setup()
    // A Kafka 2.5+ broker takes any sequence from a producer without state on the partition: a second batch in
    // flight beside the refused first one would be appended, ahead of it.
    brokers.anyFirstSequence = true
    brokers.holdProduce = true
    brokers.script.set(KEY, [10]) // MESSAGE_TOO_LARGE
    const built: string[] = []
    const releasing = setInterval(() => brokers.release(), 5)
    let result: Awaited<ReturnType<BatchWriter['write']>>
    try {
      result = await writer.write([{ topic: 'A.t', partition: 0, batches: batches(0, 3, built) }, { topic: 'A.t', partition: 1, batches: batches(0, 1, []) }], () => undefined)
    } finally {
      clearInterval(releasing)
    }
    assert.deepEqual(result.failed.map(f => [f.partition, f.error]), [[0, 'MESSAGE_TOO_LARGE']])
    assert.deepEqual(built, ['0@100/0'], 'only the first batch went out')
    assert.equal(brokers.appended.get(KEY), undefined, 'nothing appended of the refused partition')
    assert.deepEqual(brokers.appended.get('A.t\u00001'), ['100/0'])
  })

  it('Given a partition with batches to send, then its first batch of the producer id goes alone and the others follow its acknowledgement, several in flight', async () => {
    const { brokers, writer } = setup()
    brokers.holdProduce = true
    const built: string[] = []
    const releasing = setInterval(() => brokers.release(), 5)
    try {
      const first = await writer.write([{ topic: 'A.t', partition: 0, batches: batches(0, 6, built) }], () => undefined)
      assert.deepEqual(first, { incomplete: [], failed: [] })
    } finally {
      clearInterval(releasing)
    }
    assert.deepEqual(brokers.appended.get(KEY), ['100/0', '100/1', '100/2', '100/3', '100/4', '100/5'])
    assert.ok(brokers.maxInFlight > 1, `the batches after the first were pipelined (${brokers.maxInFlight} in flight)`)
  })
})
