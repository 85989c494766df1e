import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BatchWriter, type BatchAck, type OutBatch } from '../../../src/kafka/batch-writer.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { ProducerIdentity } from '../../../src/kafka/record-batch.ts'
import { FakeProduceBrokers } from '../../fakes/fake-produce-brokers.ts'

const NOT_LEADER_OR_FOLLOWER = 6
const TOPIC_AUTHORIZATION_FAILED = 29

/** One-record batches that remember the producer id and sequence each attempt was built with. */
function batches (count: number, built: string[], label = ''): OutBatch[] {
  return Array.from({ length: count }, (_, i) => ({
    recordCount: 1,
    build: (producer: ProducerIdentity, sequence: number) => { built.push(`${label}${i}@${producer.id}/${sequence}`); return Buffer.alloc(100) }
  }))
}

function writer (brokers: FakeProduceBrokers, maxInFlight = 5): BatchWriter {
  // maxRequestBytes 1: every produce request carries one batch, so requests in flight are counted exactly.
  return new BatchWriter({ 'bootstrap.servers': '127.0.0.1:9092' }, 'test', { maxInFlight, maxRequestBytes: 1, timeoutMs: 1000, cluster: { label: 'cluster B', alias: 'B' } }, brokers.transport)
}

describe('BatchWriter', () => {
  it('Given maxInFlight 2, then never more than 2 produce requests of a broker are outstanding, and every batch is acknowledged in order', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.holdProduce = true
    const built: string[] = []
    const acks: BatchAck[] = []
    const releasing = setInterval(() => brokers.release(), 5)
    try {
      const result = await writer(brokers, 2).write([{ topic: 'A.t', partition: 0, batches: batches(6, built) }], a => { acks.push(...a) })
      assert.deepEqual(result, { incomplete: [], failed: [] })
    } finally {
      clearInterval(releasing)
    }
    assert.equal(brokers.maxInFlight, 2)
    assert.deepEqual(acks.map(a => [a.batch, a.baseOffset]), [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [5, 5]])
    assert.deepEqual(built, ['0@100/0', '1@100/1', '2@100/2', '3@100/3', '4@100/4', '5@100/5'])
  })

  it('Given the group membership lost while a write is under way, then it sends no request more and fails FENCED (retriable), even with the lease of a new membership holding', async () => {
    const brokers = new FakeProduceBrokers()
    const w = writer(brokers, 1)
    const acks: BatchAck[] = []
    await assert.rejects(w.write([{ topic: 'A.t', partition: 0, batches: batches(4, []) }], a => {
      acks.push(...a)
      // (the fence hook is unset: the lease "holds" throughout)
      if (acks.length === 1) w.endMembership()
    }), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.FENCED)
      assert.equal(err.retriable, true)
      assert.match(err.message, /the group membership this write began under was lost/)
      return true
    })
    assert.equal(brokers.sent.length, 1)
    assert.deepEqual(acks.map(a => a.batch), [0])
    // And the next write (of the new membership) goes out
    const next: BatchAck[] = []
    await w.write([{ topic: 'A.t', partition: 1, batches: batches(1, []) }], a => { next.push(...a) })
    assert.deepEqual(next.map(a => a.batch), [0])
  })

  it('Given the lease ending between the gate before a produce request and its write to the socket, then the request is not sent: nothing appended, the write fails FENCED', async () => {
    const brokers = new FakeProduceBrokers()
    let lease: string | null = null
    const w = new BatchWriter({ 'bootstrap.servers': '127.0.0.1:9092' }, 'test', { maxInFlight: 1, maxRequestBytes: 1, timeoutMs: 1000, cluster: { label: 'cluster B', alias: 'B' }, fence: () => lease }, brokers.transport)
    await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], () => undefined)
    brokers.beforeSocketWrite = api => { if (api === 'Produce') lease = 'the lease of member m is not valid' }
    await assert.rejects(w.write([{ topic: 'A.t', partition: 0, batches: batches(2, []) }], () => undefined), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.FENCED)
      assert.match(err.message, /the lease of member m is not valid/)
      return true
    })
    assert.equal(brokers.sent.length, 1, 'only the first write\'s request reached the broker')
  })

  it('Given a produce answer that asks for throttling (KIP-219), then the next request to that broker waits that long', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.throttles.push(80)
    await writer(brokers, 1).write([{ topic: 'A.t', partition: 0, batches: batches(2, []) }], () => undefined)
    const [first, second] = brokers.sent
    assert.ok(second!.at - first!.at >= 75, `second request ${second!.at - first!.at} ms after the first`)
  })

  it('Given batches refused "not now" (leader moving), then the sequence is rewound and they are sent again with the same producer id and sequences', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.script.set('A.t\u00000', [0, NOT_LEADER_OR_FOLLOWER, NOT_LEADER_OR_FOLLOWER])
    const built: string[] = []
    const acks: BatchAck[] = []
    const result = await writer(brokers).write([{ topic: 'A.t', partition: 0, batches: batches(3, built) }], a => { acks.push(...a) })
    assert.deepEqual(result, { incomplete: [], failed: [] })
    assert.deepEqual(built, ['0@100/0', '1@100/1', '2@100/2', '1@100/1', '2@100/2'])
    assert.deepEqual(acks.map(a => a.batch), [0, 1, 2])
    assert.equal(brokers.producerIds, 1)
  })

  it('Given a partition that answered "not now" in an earlier write, then its data goes out again only once a probe finds its leader ready', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.script.set('A.t\u00000', [NOT_LEADER_OR_FOLLOWER])
    brokers.unready.add('A.t\u00000')
    const w = writer(brokers)
    const write = () => [{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.t', partition: 1, batches: batches(1, []) }]
    const sentTo = (partition: number) => brokers.sent.filter(s => s.partition === partition).length
    // The partition answers "not now" and its probes find it not ready: left incomplete, the other acknowledged.
    assert.deepEqual(await w.write(write(), () => undefined), { incomplete: [0], failed: [] })
    assert.deepEqual([sentTo(0), sentTo(1)], [1, 1])
    // Still not ready at the next write: probed, its data not sent again.
    assert.deepEqual(await w.write(write(), () => undefined), { incomplete: [0], failed: [] })
    assert.deepEqual([sentTo(0), sentTo(1)], [1, 2])
    // Ready: sent (with the same producer id and the rewound sequence) and acknowledged.
    brokers.unready.delete('A.t\u00000')
    const acks: BatchAck[] = []
    assert.deepEqual(await w.write(write(), a => { acks.push(...a) }), { incomplete: [], failed: [] })
    assert.deepEqual([sentTo(0), sentTo(1)], [2, 3])
    assert.deepEqual(acks.map(a => a.write).sort(), [0, 1])
    assert.equal(brokers.producerIds, 1)
  })

  it('Given a partition waiting for its leader, when probeReady finds it ready, then it says so and the next write sends its data without probing it again', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.script.set('A.t\u00000', [NOT_LEADER_OR_FOLLOWER])
    brokers.unready.add('A.t\u00000')
    const w = writer(brokers)
    const write = () => [{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.t', partition: 1, batches: batches(1, []) }]
    assert.deepEqual(await w.write(write(), () => undefined), { incomplete: [0], failed: [] })
    // Not ready yet: the probe (no data sent) says so
    const sentBefore = brokers.sent.length
    assert.deepEqual(await w.probeReady([{ topic: 'A.t', partition: 0 }]), new Set())
    // Ready: named by its key
    brokers.unready.delete('A.t\u00000')
    assert.deepEqual(await w.probeReady([{ topic: 'A.t', partition: 0 }]), new Set(['A.t\u00000']))
    assert.equal(brokers.sent.length, sentBefore)
    // The next write sends it at once: no probe first
    const probes = brokers.probes
    assert.deepEqual(await w.write(write(), () => undefined), { incomplete: [], failed: [] })
    assert.equal(brokers.probes, probes)
    assert.equal(brokers.sent.filter(s => s.partition === 0).length, 2)
  })

  it('Given two leaders, one of them losing the probe\'s connection (restarting), then probeReady still finds the other\'s partitions ready', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.ledBy2.add('A.u')
    brokers.failingProbes.add(2)
    const ready = await writer(brokers).probeReady([{ topic: 'A.t', partition: 0 }, { topic: 'A.u', partition: 0 }])
    assert.deepEqual(ready, new Set(['A.t\u00000']))
  })

  it('Given a leader nothing can connect to (killed), then its partitions wait "not now" with nothing sent, the other leader\'s are acknowledged, and once it is back they go with their sequences untouched', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.idempotence = true
    brokers.ledBy2.add('A.u')
    brokers.unready.add('A.u\u00000')
    brokers.unreachable.add(2)
    const w = writer(brokers)
    const write = () => [{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.u', partition: 0, batches: batches(1, []) }]
    const acks: BatchAck[] = []
    // When a write goes to both
    assert.deepEqual(await w.write(write(), a => { acks.push(...a) }), { incomplete: [1], failed: [] })
    // Then only broker 1's partition was sent and acknowledged; broker 2's waits, named as not answering
    assert.deepEqual(brokers.sent.map(s => s.topic), ['A.t'])
    assert.deepEqual(acks.map(a => a.write), [0])
    assert.deepEqual(w.waitReason('A.u', 0), { error: 'NETWORK_EXCEPTION', detail: 'its leader, broker 2 (127.0.0.1:9093), does not answer' })
    // And once broker 2 is back, its partition is sent with the same producer id, from sequence 0
    brokers.unreachable.clear()
    brokers.unready.clear()
    assert.deepEqual(await w.write([write()[1]!], () => undefined), { incomplete: [], failed: [] })
    assert.equal(brokers.appended.get('A.u\u00000')?.length, 1)
    assert.match(brokers.appended.get('A.u\u00000')![0]!, /\/0$/)
    assert.equal(brokers.producerIds, 1)
  })

  it('Given a partition answered "not now", whose leader becomes unreachable between the probe that found it ready and the retry, then it is returned incomplete, never reported as written', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.ledBy2.add('A.u')
    brokers.script.set('A.u\u00000', [NOT_LEADER_OR_FOLLOWER])
    let connects = 0
    // Broker 2's third connection (produce, probe, retry) is refused
    brokers.beforeConnect = node => { if (node === 2 && ++connects === 3) brokers.unreachable.add(2) }
    const acks: BatchAck[] = []
    const result = await writer(brokers).write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.u', partition: 0, batches: batches(1, []) }], a => { acks.push(...a) })
    assert.deepEqual(result, { incomplete: [1], failed: [] })
    assert.deepEqual(acks.map(a => a.write), [0])
  })

  it('Given a partition past the partition count of its remote topic, then waitReason says the topic was not grown, not that a broker is down', async () => {
    // Given remote topic A.t with 4 partitions (its growth to 6 refused or not done yet)
    const brokers = new FakeProduceBrokers()
    const w = writer(brokers)
    // When partitions 4 and 5 are probed
    assert.deepEqual(await w.probeReady([{ topic: 'A.t', partition: 4 }, { topic: 'A.t', partition: 5 }, { topic: 'A.t', partition: 3 }]), new Set(['A.t\u00003']))
    // Then each names the topic's partition count and the growth, with the error of a partition that does not exist
    const grown = { error: 'UNKNOWN_TOPIC_OR_PARTITION', detail: 'remote topic A.t on cluster B has 4 partitions, not this one: its growth to the source topic\'s partition count has not happened yet or failed (the topic refresh logs why: a missing ALTER grant, a policy)' }
    assert.deepEqual([w.waitReason('A.t', 4), w.waitReason('A.t', 5)], [grown, grown])
  })

  it('Given partitions not ready for different reasons, then waitReason names each, with the broker; nothing once a probe finds one ready or it is forgotten', async () => {
    // Given A.t-0 whose leader answers NOT_LEADER_OR_FOLLOWER, A.t-1 without a leader, A.u-0 led by a broker that
    // does not answer, and A.gone-0 of a topic the target does not have
    const brokers = new FakeProduceBrokers()
    brokers.unready.add('A.t\u00000')
    brokers.noLeader.add('A.t\u00001')
    brokers.ledBy2.add('A.u')
    brokers.failingProbes.add(2)
    brokers.refusedTopics.set('A.gone', 3)
    const w = writer(brokers)
    // When they are probed
    const partitions = [{ topic: 'A.t', partition: 0 }, { topic: 'A.t', partition: 1 }, { topic: 'A.u', partition: 0 }, { topic: 'A.gone', partition: 0 }, { topic: 'A.t', partition: 2 }]
    assert.deepEqual(await w.probeReady(partitions), new Set(['A.t\u00002']))
    // Then each says why
    assert.deepEqual(w.waitReason('A.t', 0), { error: 'NOT_LEADER_OR_FOLLOWER', detail: 'its leader, broker 1 (127.0.0.1:9092), answers NOT_LEADER_OR_FOLLOWER for it' })
    assert.deepEqual(w.waitReason('A.t', 1), { error: 'LEADER_NOT_AVAILABLE', detail: 'no broker of cluster B leads it (its leader is down or fenced, and no replica in sync can take over)' })
    assert.deepEqual(w.waitReason('A.u', 0), { error: 'NETWORK_EXCEPTION', detail: 'its leader, broker 2 (127.0.0.1:9093), does not answer' })
    assert.deepEqual(w.waitReason('A.gone', 0), { error: 'UNKNOWN_TOPIC_OR_PARTITION', detail: 'cluster B does not have it yet' })
    assert.equal(w.waitReason('A.t', 2), undefined)
    // And once ready, or forgotten, nothing
    brokers.unready.clear()
    await w.probeReady([{ topic: 'A.t', partition: 0 }])
    assert.equal(w.waitReason('A.t', 0), undefined)
    w.forgetPartition('A.t', 1)
    assert.equal(w.waitReason('A.t', 1), undefined)
  })

  it('Given the target\'s metadata cannot be read while partitions wait, then waitReason names that failure for each, not nothing', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.failingMetadata = true
    const w = writer(brokers)
    assert.deepEqual(await w.probeReady([{ topic: 'A.t', partition: 0 }, { topic: 'A.u', partition: 3 }]), new Set())
    for (const [topic, partition] of [['A.t', 0], ['A.u', 3]] as const) {
      const reason = w.waitReason(topic, partition)
      assert.equal(reason?.error, 'NETWORK_EXCEPTION')
      assert.match(reason.detail, /^where it is led is not known: read the metadata of cluster B before writing: connection to broker 1 lost/)
    }
    // And once the metadata is read again and the leader answers, nothing
    brokers.failingMetadata = false
    await w.probeReady([{ topic: 'A.t', partition: 0 }])
    assert.equal(w.waitReason('A.t', 0), undefined)
  })

  it('Given a partition waiting for its leader through a whole write, then its probes read the metadata again at most once a second', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.script.set('A.t\u00000', [NOT_LEADER_OR_FOLLOWER])
    brokers.unready.add('A.t\u00000')
    const started = Date.now()
    // Nothing acknowledged: probed for the whole 3 s patience, every 20 ms then every 100 ms.
    assert.deepEqual(await writer(brokers).write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], () => undefined), { incomplete: [0], failed: [] })
    const seconds = (Date.now() - started) / 1000
    assert.ok(brokers.probes >= 20, `${brokers.probes} probes`)
    // One read for the send, then one per started second of probing.
    assert.ok(brokers.metadataRequests <= 2 + Math.ceil(seconds), `${brokers.metadataRequests} Metadata requests over ${brokers.probes} probes in ${seconds} s`)
  })

  it('Given a partition the target refuses (TOPIC_AUTHORIZATION_FAILED), then it comes back typed in `failed`, the other partition is acknowledged, and the next write uses a new producer id', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.script.set('A.u\u00000', [TOPIC_AUTHORIZATION_FAILED])
    const acks: BatchAck[] = []
    const w = writer(brokers)
    const result = await w.write([{ topic: 'A.t', partition: 0, batches: batches(2, []) }, { topic: 'A.u', partition: 0, batches: batches(2, []) }], a => { acks.push(...a) })
    assert.deepEqual(result.incomplete, [])
    assert.deepEqual(result.failed.map(f => ({ write: f.write, error: f.error, kind: f.kind, refusedBatch: f.refusedBatch, retriable: f.retriable })),
      [{ write: 1, error: 'TOPIC_AUTHORIZATION_FAILED', kind: 'authorization', refusedBatch: false, retriable: false }])
    assert.match(result.failed[0]!.hint ?? '', /^grant WRITE on topic A\.u to .* \(kafka-acls\.sh .*--operation Write --topic A\.u;/, 'the exact grant')
    assert.deepEqual(acks.filter(a => a.write === 1), [])
    assert.deepEqual(acks.filter(a => a.write === 0).map(a => a.batch), [0, 1])
    const built: string[] = []
    await w.write([{ topic: 'A.u', partition: 0, batches: batches(1, built) }], () => undefined)
    assert.deepEqual(built, ['0@101/0'])
  })

  it('Given a batch too large for the remote topic, then the failure says the batch itself was refused', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.script.set('A.t\u00000', [10]) // MESSAGE_TOO_LARGE
    const result = await writer(brokers).write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], () => undefined)
    assert.equal(result.failed[0]?.refusedBatch, true)
    assert.equal(result.failed[0]?.hint, 'raise max.message.bytes of the topic written to (or message.max.bytes of that cluster\'s brokers)')
  })

  it('Given a remote topic the target refuses to describe, then it is refused with DESCRIBE at once (not waited for as leaderless), and the others are written', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.refusedTopics.set('A.u', TOPIC_AUTHORIZATION_FAILED)
    const acks: BatchAck[] = []
    const started = Date.now()
    const result = await writer(brokers).write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.u', partition: 0, batches: batches(1, []) }], a => { acks.push(...a) })
    assert.ok(Date.now() - started < 1000)
    assert.deepEqual(result.failed.map(f => [f.write, f.error, f.operation]), [[1, 'TOPIC_AUTHORIZATION_FAILED', 'DESCRIBE']])
    assert.match(result.failed[0]!.hint ?? '', /^grant WRITE on topic A\.u to /, 'WRITE, which implies the DESCRIBE refused and is what the next write needs')
    assert.deepEqual(acks.map(a => a.write), [0])
  })

  it('Given a remote topic created again under a new topic id, then its partitions are sent nothing and fail with REMOTE_TOPIC_RECREATED once; the next write goes to the new topic', async () => {
    // Given A.t and A.u written under their topic ids
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.t', 'id-t1')
    brokers.topicIds.set('A.u', 'id-u1')
    const w = writer(brokers)
    await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.t', partition: 1, batches: batches(1, []) }, { topic: 'A.u', partition: 0, batches: batches(1, []) }], () => undefined)

    // When A.t is deleted and created again (a new id), and partitions 0 and 1 of A.t, and A.u, are written
    brokers.topicIds.set('A.t', 'id-t2')
    const sentBefore = brokers.sent.length
    const acks: BatchAck[] = []
    const result = await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.u', partition: 0, batches: batches(1, []) }], a => { acks.push(...a) })

    // Then only A.u is sent; A.t-0 fails, naming both ids, retriable
    assert.deepEqual(result.failed.map(f => [f.write, f.topic, f.partition, f.error, f.retriable]), [[0, 'A.t', 0, 'REMOTE_TOPIC_RECREATED', true]])
    assert.match(result.failed[0]!.message ?? '', /topic A\.t on cluster B has a new topic id \(id-t1 before, id-t2 now\)/)
    assert.deepEqual(acks.map(a => a.write), [1])
    assert.deepEqual(brokers.sent.slice(sentBefore).map(s => s.topic), ['A.u'])

    // And A.t-1, written for the first time since, fails too; A.t-0's next write goes through under the new id
    const later = await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.t', partition: 1, batches: batches(1, []) }], () => undefined)
    assert.deepEqual(later.failed.map(f => [f.topic, f.partition, f.error]), [['A.t', 1, 'REMOTE_TOPIC_RECREATED']])
  })

  it('Given a remote topic found created again by a write that then throws (another partition\'s request lost), then the next write fails it with REMOTE_TOPIC_RECREATED: never sent into the new topic at the old position', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.t', 'id-t1')
    brokers.topicIds.set('A.u', 'id-u1')
    const w = writer(brokers)
    await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.u', partition: 0, batches: batches(1, []) }], () => undefined)
    // When A.t is created again and the write of A.t-0 and A.u-0 throws (A.u's answer lost)
    brokers.topicIds.set('A.t', 'id-t2')
    brokers.loseAnswers = 1
    await assert.rejects(w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }, { topic: 'A.u', partition: 0, batches: batches(1, []) }], () => undefined))
    // Then the next write still fails A.t-0 as re-created, and sends nothing of it
    const sentBefore = brokers.sent.length
    const again = await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], () => undefined)
    assert.deepEqual(again.failed.map(f => [f.topic, f.partition, f.error]), [['A.t', 0, 'REMOTE_TOPIC_RECREATED']])
    assert.equal(brokers.sent.length, sentBefore)
    // and once it was told, the next write goes to the new topic
    const after = await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], () => undefined)
    assert.deepEqual(after.failed, [])
  })

  it('Given a partition forgotten (it left the data path), then its next write learns the topic id afresh and is sent', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.t', 'id-1')
    const w = writer(brokers)
    await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], () => undefined)
    brokers.topicIds.set('A.t', 'id-2')
    w.forgetPartition('A.t', 0)
    const result = await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], () => undefined)
    assert.deepEqual(result, { incomplete: [], failed: [] })
  })

  it('Given partitions with nothing to write, then recreatedPartitions names those whose remote topic has a new topic id, once', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.t', 'id-1')
    brokers.topicIds.set('A.u', 'id-u')
    const w = writer(brokers)
    const partitions = [{ topic: 'A.t', partition: 0 }, { topic: 'A.t', partition: 1 }, { topic: 'A.u', partition: 0 }]
    assert.deepEqual(await w.recreatedPartitions(partitions), [])
    brokers.topicIds.set('A.t', 'id-2')
    assert.deepEqual(await w.recreatedPartitions(partitions), [{ topic: 'A.t', partition: 0 }, { topic: 'A.t', partition: 1 }])
    assert.deepEqual(await w.recreatedPartitions(partitions), [])
  })

  it('Given brokers answering the old and the new topic id in turn after a re-creation, then the partition fails REMOTE_TOPIC_RECREATED once, nothing is sent on an old-id answer, and it is written once the new id is answered', async () => {
    // Given A.t-0 written under id-1
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.t', 'id-1')
    const w = writer(brokers)
    await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], () => undefined)

    // When A.t is created again as id-2, and a lagging broker answers id-1 in between the up-to-date one's answers
    brokers.topicIds.set('A.t', 'id-2')
    brokers.laggingTopicIds.set('A.t', 'id-1')
    brokers.metadataFrom.push('current', 'lagging', 'lagging', 'current', 'lagging', 'current', 'lagging')
    const sentBefore = brokers.sent.length
    const errors: string[] = []
    let acked = 0
    for (let attempt = 0; attempt < 8 && acked === 0; attempt++) {
      const result = await w.write([{ topic: 'A.t', partition: 0, batches: batches(1, []) }], a => { acked += a.length })
      errors.push(...result.failed.map(f => f.error))
    }

    // Then the re-creation is reported once, the partition is written once, and only on an id-2 answer
    assert.deepEqual(errors, ['REMOTE_TOPIC_RECREATED'])
    assert.equal(acked, 1)
    assert.deepEqual(brokers.sent.slice(sentBefore).map(s => s.topicId), ['id-2'])
  })

  it('Given an idle partition checked while brokers answer the old and the new topic id in turn, then recreatedPartitions names it once', async () => {
    const brokers = new FakeProduceBrokers()
    brokers.topicIds.set('A.t', 'id-1')
    const w = writer(brokers)
    const partitions = [{ topic: 'A.t', partition: 0 }]
    assert.deepEqual(await w.recreatedPartitions(partitions), [])
    brokers.topicIds.set('A.t', 'id-2')
    brokers.laggingTopicIds.set('A.t', 'id-1')
    brokers.metadataFrom.push('current', 'lagging', 'current', 'lagging')
    const found: number[] = []
    for (let check = 0; check < 4; check++) found.push((await w.recreatedPartitions(partitions)).length)
    assert.deepEqual(found, [1, 0, 0, 0])
  })
})
