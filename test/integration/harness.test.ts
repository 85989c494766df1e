/**
 * The test harness itself, on a real cluster: what produce writes, readPartition reads back exactly, for
 * every codec; and read_committed drops aborted transactions without trusting the client's own filter.
 */
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { Consumer, Producer, ProduceAcks } from '@platformatic/kafka'
import { ensureClusters, getCluster } from '../helpers/clusters.ts'
import {
  clientOptions,
  createTopic,
  endOffsets,
  produce,
  produceTransactions,
  readBatches,
  readPartition,
  type Compression,
  type Header,
  type ReadRecord,
  type TestRecord,
  type TransactionStep,
  TIMESTAMP_BASE,
  waitForStable
} from '../helpers/kafka.ts'
import { uniqueName } from '../helpers/wait.ts'

const source = getCluster('source')
const CODECS: readonly Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
const PARTITIONS = 3
const PER_PARTITION = 40

before(async () => {
  await ensureClusters(['source'])
})

/** Every edge a replicator must carry unchanged, spread over the partitions. */
function edgeCaseRecords (topic: string): TestRecord[] {
  const repeated = Buffer.from('trace-id') // one Buffer object used twice as a key on purpose
  const records: TestRecord[] = []
  for (let i = 0; i < PARTITIONS * PER_PARTITION; i++) {
    const headers: Header[] =
      i % 4 === 0
        ? []
        : [
            [repeated, Buffer.from(`first-${i}`)],
            [Buffer.from('ü-utf8'), Buffer.from([0, 255, i % 256])],
            [repeated, Buffer.from(`second-${i}`)],
            [Buffer.from('empty'), Buffer.alloc(0)],
            [Buffer.from('nil'), null],
            [Buffer.from('trace-id'), Buffer.from(`third-${i}`)]
          ]
    records.push({
      topic,
      partition: i % PARTITIONS,
      key: i % 5 === 0 ? null : i % 5 === 1 ? Buffer.alloc(0) : Buffer.from(`key-${i}`),
      value: i % 7 === 0 ? null : i % 7 === 1 ? Buffer.alloc(0) : Buffer.from(`value-${i}-`.repeat(1 + (i % 13))),
      headers,
      // Explicit and not monotonic: negative timestamp deltas inside a batch must survive too.
      timestamp: 1_600_000_000_000n + BigInt((i * 7919) % 100_000) * 1000n
    })
  }
  return records
}

function expectedFor (records: readonly TestRecord[], offsets: readonly bigint[], partition: number): ReadRecord[] {
  return records
    .map((r, i) => ({ r, offset: offsets[i]! }))
    .filter(({ r }) => r.partition === partition)
    .map(({ r, offset }) => ({ offset, key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp }))
}

describe('harness: produce and readPartition round-trip every record exactly', () => {
  for (const codec of CODECS) {
    test(`records with null and empty keys and values, repeated headers and explicit timestamps read back exactly with ${codec}`, async t => {
      // Given a 3-partition topic
      const topic = uniqueName(`harness-${codec}`)
      await createTopic(source, topic, { partitions: PARTITIONS, t })
      const records = edgeCaseRecords(topic)

      // When every record is produced in one call with the codec
      const offsets = await produce(source, records, { compression: codec })

      // Then each partition holds exactly those records, in order, from offset 0
      for (let p = 0; p < PARTITIONS; p++) {
        const expected = expectedFor(records, offsets, p)
        assert.deepEqual(expected.map(r => r.offset), Array.from({ length: PER_PARTITION }, (_, i) => BigInt(i)))
        assert.deepEqual(await readPartition(source, topic, p, { isolation: 'read_uncommitted' }), expected)
        assert.deepEqual(await readPartition(source, topic, p, { isolation: 'read_committed' }), expected)
      }
      // And the duplicated header key kept all three values in order
      const withHeaders = (await readPartition(source, topic, 1, { isolation: 'read_uncommitted' }))[0]!
      assert.deepEqual(
        withHeaders.headers.filter(([k]) => k.toString() === 'trace-id').map(([, v]) => v?.toString()),
        ['first-1', 'second-1', 'third-1']
      )
      // And every partition was written as one batch of the codec
      for (let p = 0; p < PARTITIONS; p++) {
        const batches = await readBatches(source, topic, p)
        assert.deepEqual(
          batches.map(b => ({ codec: b.codec, first: b.firstOffset, last: b.lastOffset, isTransactional: b.isTransactional })),
          [{ codec, first: 0n, last: BigInt(PER_PARTITION - 1), isTransactional: false }]
        )
      }
    })
  }

  test('fromOffset and toOffset bound the records read, and endOffsets reports each high watermark', async t => {
    const topic = uniqueName('harness-range')
    await createTopic(source, topic, { partitions: 2, t })
    const records = edgeCaseRecords(topic).map(r => ({ ...r, partition: r.partition % 2 }))
    const offsets = await produce(source, records, { compression: 'lz4' })

    const all = expectedFor(records, offsets, 1)
    assert.deepEqual(await endOffsets(source, topic), [BigInt(records.length - all.length), BigInt(all.length)])
    assert.deepEqual(await readPartition(source, topic, 1, { isolation: 'read_uncommitted', fromOffset: 5n, toOffset: 9n }), all.slice(5, 9))
    assert.deepEqual(await readPartition(source, topic, 1, { isolation: 'read_uncommitted', fromOffset: 35n }), all.slice(35))
  })

  test('on a LogAppendTime topic, readPartition reports the broker\'s append time, not the producer\'s', async t => {
    const topic = uniqueName('harness-append-time')
    await createTopic(source, topic, { partitions: 1, configs: { 'message.timestamp.type': 'LogAppendTime' }, t })
    const before = BigInt(Date.now())
    const records = edgeCaseRecords(topic).filter(r => r.partition === 0).slice(0, 5)
    await produce(source, records, { compression: 'gzip' })
    const read = await readPartition(source, topic, 0, { isolation: 'read_uncommitted' })

    assert.deepEqual(read.map(r => r.value), records.map(r => r.value))
    const appendTimes = new Set(read.map(r => r.timestamp))
    assert.equal(appendTimes.size, 1, 'one batch, one append time')
    const [appendTime] = appendTimes
    assert.ok(appendTime! >= before - 1000n && appendTime! <= BigInt(Date.now()) + 1000n, `append time ${appendTime} is now`)
  })
})

/** Plain records for transaction steps; VALUE tags each one so a leak is easy to spot. */
function txRecords (tag: string, count: number, partitions: number): TransactionStep['records'] {
  return Array.from({ length: count }, (_, i) => ({
    partition: i % partitions,
    key: Buffer.from(`${tag}-k${i}`),
    value: Buffer.from(`${tag}-${i}`),
    headers: [[Buffer.from('step'), Buffer.from(tag)]],
    timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
}

const values = (records: readonly ReadRecord[]): string[] => records.map(r => r.value?.toString() ?? '<null>')

describe('harness: read_committed drops aborted transactions by itself', () => {
  // Several aborts from one producer, back to back: the client's own filter keeps only one aborted range
  // per producer id and loses the others (reference/ts-stack.md §1 risk 2).
  const plan: TransactionStep[] = [
    { commit: true, records: txRecords('c1', 4, 2) },
    { commit: false, records: txRecords('a1', 6, 2) },
    { commit: false, records: txRecords('a2', 2, 2) },
    { commit: true, records: txRecords('c2', 4, 2) },
    { commit: false, records: txRecords('a3', 4, 2) },
    { commit: true, records: txRecords('c3', 2, 2) },
    { commit: false, records: txRecords('a4', 2, 2) }
  ]
  const onPartition = (tags: readonly string[], partition: number): string[] =>
    plan
      .filter(step => tags.some(tag => step.records[0]!.value!.toString().startsWith(`${tag}-`)))
      .flatMap(step => step.records.filter(r => r.partition === partition).map(r => r.value!.toString()))

  for (const codec of ['none', 'zstd'] as const) {
    test(`read_committed returns only committed records and read_uncommitted returns all, with ${codec}`, async t => {
      // Given committed and aborted transactions of one producer on a 2-partition topic
      const topic = uniqueName(`harness-txn-${codec}`)
      await createTopic(source, topic, { partitions: 2, t })
      const offsets = await produceTransactions(source, topic, plan, { compression: codec })

      for (let p = 0; p < 2; p++) {
        // When each partition is read both ways, in big fetches and in one-batch fetches (so an abort
        // marker never arrives in the same response as its records)
        for (const fetchMaxBytes of [undefined, 1]) {
          const committed = await readPartition(source, topic, p, { isolation: 'read_committed', fetchMaxBytes })
          const everything = await readPartition(source, topic, p, { isolation: 'read_uncommitted', fetchMaxBytes })
          // Then read_committed has exactly the committed records, read_uncommitted every data record
          assert.deepEqual(values(committed), onPartition(['c1', 'c2', 'c3'], p), `committed, partition ${p}, fetchMaxBytes ${fetchMaxBytes}`)
          assert.deepEqual(values(everything), onPartition(['c1', 'a1', 'a2', 'c2', 'a3', 'c3', 'a4'], p))
          // And offsets are those produce reported (markers take offsets, so there are gaps)
          const produced = plan.flatMap((step, s) => step.records.map((r, i) => ({ p: r.partition, v: r.value!.toString(), o: offsets[s]![i]! })))
          assert.deepEqual(
            everything.map(r => r.offset),
            produced.filter(x => x.p === p).map(x => x.o)
          )
          assert.deepEqual(committed[0]?.headers, [[Buffer.from('step'), Buffer.from('c1')]])
        }
      }
      // And the log holds one transactional batch per step and partition plus one marker after each
      const batches = await readBatches(source, topic, 0)
      assert.deepEqual(
        batches.map(b => (b.isControl ? (b.isAbortMarker ? 'ABORT' : 'COMMIT') : `${b.codec}:${b.records.length}`)),
        plan.flatMap(step => [`${codec}:${step.records.filter(r => r.partition === 0).length}`, step.commit ? 'COMMIT' : 'ABORT'])
      )
      assert.ok(batches.every(b => b.isTransactional))
    })
  }

  test('interleaved transactions of two producers on one partition: only the committed one is read', async t => {
    // Given producer P1 opens a transaction, P2 commits one in the middle of it, and P1 aborts
    const topic = uniqueName('harness-txn-interleaved')
    await createTopic(source, topic, { partitions: 1, t })
    const open = (tag: string) => new Producer({ ...clientOptions(source, tag), transactionalId: uniqueName(tag), idempotent: true, acks: ProduceAcks.ALL })
    const p1 = open('harness-p1')
    const p2 = open('harness-p2')
    t.after(() => Promise.all([p1.close(), p2.close()]))
    const message = (v: string) => ({ topic, partition: 0, value: Buffer.from(v), timestamp: TIMESTAMP_BASE })

    const tx1 = await p1.beginTransaction()
    await tx1.send({ messages: [message('p1-a'), message('p1-b')] })
    const tx2 = await p2.beginTransaction()
    await tx2.send({ messages: [message('p2-a')] })
    await tx1.send({ messages: [message('p1-c')] })
    await tx2.send({ messages: [message('p2-b')] })
    await tx2.commit()
    await tx1.send({ messages: [message('p1-d')] })
    await tx1.abort()
    await waitForStable(source, topic)

    // Then read_committed sees P2's records only, whatever the fetch size
    for (const fetchMaxBytes of [undefined, 1]) {
      assert.deepEqual(values(await readPartition(source, topic, 0, { isolation: 'read_committed', fetchMaxBytes })), ['p2-a', 'p2-b'])
    }
    assert.deepEqual(values(await readPartition(source, topic, 0, { isolation: 'read_uncommitted' })), ['p1-a', 'p1-b', 'p2-a', 'p1-c', 'p2-b', 'p1-d'])
  })

  test('canary: the client\'s own read_committed filter leaks aborted records (why readPartition filters itself)', async t => {
    // Given commits and aborts from one producer
    const topic = uniqueName('harness-txn-canary')
    await createTopic(source, topic, { partitions: 1, t })
    await produceTransactions(source, topic, [
      { commit: true, records: txRecords('c1', 2, 1) },
      { commit: false, records: txRecords('a1', 2, 1) },
      { commit: false, records: txRecords('a2', 2, 1) },
      { commit: true, records: txRecords('c2', 2, 1) }
    ])
    // When it is fetched with read_committed, one batch per response, and only the client's filter applied
    const consumer = new Consumer({ ...clientOptions(source, 'harness-canary'), groupId: uniqueName('harness-canary') })
    t.after(() => consumer.close(true))
    const [end] = await endOffsets(source, topic, { isolation: 'read_committed' })
    const topicMetadata = (await consumer.metadata({ topics: [topic] })).topics.get(topic)!
    const seen: string[] = []
    for (let offset = 0n; offset < end!; ) {
      const response = await consumer.fetch({
        node: topicMetadata.partitions[0]!.leader,
        topics: [{ topicId: topicMetadata.id, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, partitionMaxBytes: 1 }] }],
        isolationLevel: 1,
        maxBytes: 1,
        maxWaitTime: 100
      })
      for (const batch of response.responses[0]?.partitions[0]?.records ?? []) {
        if ((batch.attributes & 0x20) === 0) seen.push(...batch.records.map(r => r.value!.toString()))
        offset = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n
      }
    }
    // Then the client lets the aborted records through (an abort marker never shares a response with its
    // records here), while readPartition does not. If the first assertion fails after a client upgrade,
    // upstream fixed its filter: keep ours anyway and drop this canary.
    assert.deepEqual(seen, ['c1-0', 'c1-1', 'a1-0', 'a1-1', 'a2-0', 'a2-1', 'c2-0', 'c2-1'])
    assert.deepEqual(values(await readPartition(source, topic, 0, { isolation: 'read_committed', fetchMaxBytes: 1 })), ['c1-0', 'c1-1', 'c2-0', 'c2-1'])
  })
})
