/**
 * The batch writer in exactly-once mode against a topic its transaction coordinator does not know
 * (src/kafka/writer-transaction.ts): a topic just created waits "not now" and is written once known; a topic deleted
 * and created again meanwhile is never added by name and written at the old position.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BatchWriter, type BatchAck, type OutBatch } from '../../../src/kafka/batch-writer.ts'
import { FakeProduceBrokers } from '../../fakes/fake-produce-brokers.ts'

function batches (count: number): OutBatch[] {
  return Array.from({ length: count }, () => ({ recordCount: 1, build: () => Buffer.alloc(100) }))
}

function transactionalWriter (brokers: FakeProduceBrokers): BatchWriter {
  return new BatchWriter({ 'bootstrap.servers': '127.0.0.1:9092' }, 'test', {
    maxInFlight: 5, maxRequestBytes: 1, timeoutMs: 1000, cluster: { label: 'cluster B', alias: 'B' }, transactionalId: 'g-host:1:2'
  }, brokers.transport)
}

const KEY = (topic: string, partition: number): string => `${topic}\u0000${partition}`

async function waitForCondition (condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!await condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

describe('BatchWriter in exactly-once mode, a topic its coordinator does not know', () => {
  it('Given a remote topic the coordinator does not know yet, then its partition waits "not now", sent nothing, and is added and written once the coordinator knows it', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.new', 'id-new')
    brokers.missingTopics.add('A.new')
    let asked = 0
    const metadataAtAsk: number[] = []
    brokers.beforeAddPartitions = topics => {
      metadataAtAsk.push(brokers.metadataRequests)
      if (topics.includes('A.new') && ++asked === 2) brokers.missingTopics.delete('A.new')
    }
    const w = transactionalWriter(brokers)
    const acks: BatchAck[] = []

    const result = await w.write([{ topic: 'A.new', partition: 0, batches: batches(2) }], a => { acks.push(...a) })

    assert.deepEqual([result.failed, result.incomplete], [[], []])
    assert.deepEqual(acks.map(a => [a.write, a.batch]), [[0, 0], [0, 1]])
    assert.deepEqual(brokers.added, [[KEY('A.new', 0)]], 'added once, at the second ask')
    assert.equal(asked, 2)
    assert.ok(metadataAtAsk[1]! > metadataAtAsk[0]!, 'the metadata (topic ids) read again before it is asked for again')
    assert.equal(brokers.producerIds, 1, 'the same producer: nothing of it was sent')
    assert.equal(await w.commitTransaction(), true)
    assert.deepEqual(brokers.ended, [true])
  })

  it('Given a remote topic its coordinator never knows, then a write of it alone opens no transaction and asks for it with a back-off, not every probe; its probe says not ready within the back-off', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.missingTopics.add('A.gone')
    let asked = 0
    brokers.beforeAddPartitions = () => { asked++ }
    const w = transactionalWriter(brokers)

    const result = await w.write([{ topic: 'A.gone', partition: 1, batches: batches(1) }], () => undefined)

    assert.deepEqual([result.failed, result.incomplete], [[], [0]])
    assert.deepEqual(brokers.sent, [])
    assert.equal(w.transactionAdditions, 0, 'no transaction opened: the round is not told as aborted')
    assert.equal(await w.commitTransaction(), false)
    // (3 s of patience, asked at 0, 0.1, 0.3, 0.7, 1.5 s and maybe 3.1 s: not every 20-100 ms probe)
    assert.ok(asked >= 4 && asked <= 6, `asked ${asked} times`)
    assert.deepEqual([...await w.probeReady([{ topic: 'A.gone', partition: 1 }])], [], 'within its back-off')
  })

  it('Given a remote topic its coordinator never knows, then its partition is returned incomplete, sent nothing, and its wait names the coordinator and its own remedy; the other partition is written and committed', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.missingTopics.add('A.gone')
    const w = transactionalWriter(brokers)
    const acks: BatchAck[] = []

    const result = await w.write([{ topic: 'A.gone', partition: 1, batches: batches(1) }, { topic: 'A.u', partition: 0, batches: batches(1) }], a => { acks.push(...a) })

    assert.deepEqual([result.failed, result.incomplete], [[], [0]])
    assert.deepEqual(brokers.sent.map(s => s.topic), ['A.u'])
    assert.deepEqual(acks.map(a => a.write), [1])
    const reason = w.waitReason('A.gone', 1)
    assert.equal(reason?.error, 'UNKNOWN_TOPIC_OR_PARTITION')
    assert.match(reason?.detail ?? '', /^the transaction coordinator of g-host:1:2 on cluster B does not know its topic \(created moments ago/)
    assert.match(reason?.remedy ?? '', /^if it stays unknown, look for a broker of that cluster whose metadata lags behind/)
    assert.equal(w.transactionAdditions, 1)
    assert.equal(await w.commitTransaction(), true)
    // Once the coordinator knows it (and its back-off passed), the next write adds and writes it, and its wait reason goes
    brokers.missingTopics.delete('A.gone')
    await waitForCondition(async () => (await w.probeReady([{ topic: 'A.gone', partition: 1 }])).size === 1)
    const later = await w.write([{ topic: 'A.gone', partition: 1, batches: batches(1) }], () => undefined)
    assert.deepEqual([later.failed, later.incomplete], [[], []])
    assert.equal(w.waitReason('A.gone', 1), undefined)
  })

  it('Given a remote topic deleted and created again while its partition is being added, then nothing of it is written into the new topic: it fails REMOTE_TOPIC_RECREATED, the other partition is written and committed', async () => {
    // Given A.t and A.u written and committed under their topic ids
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.t', 'id-t1')
    brokers.topicIds.set('A.u', 'id-u1')
    const w = transactionalWriter(brokers)
    await w.write([{ topic: 'A.t', partition: 0, batches: batches(1) }, { topic: 'A.u', partition: 0, batches: batches(1) }], () => undefined)
    await w.commitTransaction()

    // When A.t is deleted as the next transaction adds it (its coordinator does not know it), then created again under a new id
    let asked = 0
    brokers.beforeAddPartitions = topics => {
      if (!topics.includes('A.t')) return
      asked++
      if (asked === 1) {
        brokers.missingTopics.add('A.t')
        brokers.topicIds.set('A.t', 'id-t2')
      } else {
        brokers.missingTopics.delete('A.t')
      }
    }
    const sentBefore = brokers.sent.length
    const acks: BatchAck[] = []
    const result = await w.write([{ topic: 'A.t', partition: 0, batches: batches(2) }, { topic: 'A.u', partition: 0, batches: batches(1) }], a => { acks.push(...a) })

    // Then A.t-0 fails as re-created, never added nor sent; A.u-0 is written and the transaction commits
    assert.deepEqual(result.failed.map(f => [f.write, f.topic, f.partition, f.error]), [[0, 'A.t', 0, 'REMOTE_TOPIC_RECREATED']])
    assert.equal(asked, 1, 'A.t was not asked for again by name')
    assert.deepEqual(brokers.sent.slice(sentBefore).map(s => s.topic), ['A.u'])
    assert.deepEqual(acks.map(a => a.write), [1])
    assert.deepEqual(brokers.added.at(-1), [KEY('A.u', 0)])
    assert.equal(await w.commitTransaction(), true)
  })
  it('Given a remote topic created again while its AddPartitionsToTxn took long (a coordinator busy), then the topic ids are read again before the produce: nothing is written into the new topic', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.t', 'id-t1')
    brokers.topicIds.set('A.u', 'id-u1')
    const w = transactionalWriter(brokers)
    await w.write([{ topic: 'A.t', partition: 0, batches: batches(1) }], () => undefined)
    await w.commitTransaction()
    // When the next transaction's AddPartitionsToTxn answers after 600 ms, A.t created again meanwhile
    brokers.addPartitionsDelayMs = 600
    brokers.beforeAddPartitions = () => { brokers.topicIds.set('A.t', 'id-t2') }
    const sentBefore = brokers.sent.length
    const result = await w.write([{ topic: 'A.t', partition: 0, batches: batches(1) }, { topic: 'A.u', partition: 0, batches: batches(1) }], () => undefined)
    // Then A.t-0 fails as re-created, sent nothing; A.u-0 is written
    assert.deepEqual(result.failed.map(f => [f.topic, f.partition, f.error]), [['A.t', 0, 'REMOTE_TOPIC_RECREATED']])
    assert.deepEqual(brokers.sent.slice(sentBefore).map(s => s.topic), ['A.u'])
    assert.equal(await w.commitTransaction(), true)
  })
})
