import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { FetchOutcomes, type FetchedPartition, type PartitionPosition, type RecordFetcher } from '../../../src/kafka/record-fetcher.ts'
import { type HeldReadListener, readTopicToEnd } from '../../../src/kafka/topic-reader.ts'
import { partitionKey } from '../../../src/topic-partition.ts'

/** A fetcher whose topics have one record in each partition and whose fetch fails with `err`. */
function refusingFetcher (err: Error, grantee?: RecordFetcher['grantee']): RecordFetcher {
  const fetcher = {
    listOffsets: async (tps: readonly { topic: string, partition: number }[], which: string) => new Map(tps.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : 1])),
    fetch: async () => { throw err },
    ...(grantee === undefined ? {} : { grantee })
  }
  return fetcher as unknown as RecordFetcher
}

const refused = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'fetch of mm2-offsets.A.internal-0 from broker 1 (b:9092) of cluster B failed with Kafka error TOPIC_AUTHORIZATION_FAILED', { retriable: true, details: { kafkaErrors: ['TOPIC_AUTHORIZATION_FAILED'] } })

describe('readTopicToEnd', () => {
  it('names the READ grant on the topic, the principal and the cluster when the read is refused', async () => {
    const fetcher = refusingFetcher(refused, { principal: 'User:bob', cluster: { label: 'cluster B', alias: 'B', brokers: 'b:9092', protocol: 'PLAINTEXT' } })
    await assert.rejects(readTopicToEnd(fetcher, 'mm2-offsets.A.internal', 1, () => undefined), (err: KmirrorError) => {
      assert.equal(err.code, ErrorCodes.NOT_AUTHORIZED)
      assert.match(err.message, /^reading mm2-offsets\.A\.internal on cluster B was refused \(TOPIC_AUTHORIZATION_FAILED\): grant READ on topic mm2-offsets\.A\.internal to User:bob on cluster B \(kafka-acls\.sh --bootstrap-server b:9092 --add --allow-principal User:bob --operation Read --topic mm2-offsets\.A\.internal;/)
      assert.equal(err.cause, refused)
      return true
    })
  })

  it('leaves any other error as it is', async () => {
    const other = new KmirrorError(ErrorCodes.FETCH, 'fetch failed', { retriable: true })
    await assert.rejects(readTopicToEnd(refusingFetcher(other, { principal: 'User:bob', cluster: { label: 'cluster B', alias: 'B', brokers: 'b:9092', protocol: 'PLAINTEXT' } }), 't', 1, () => undefined), (err: unknown) => err === other)
  })

  /**
   * One partition of 6 records, the one at offset 2 the first of a transaction still open: a read_committed fetch
   * returns offsets 0-1 until it ends (after OPEN_FOR fetches), then everything.
   */
  /**
   * A log of one partition listed from START to 6 whose fetches (2 ms each) bring no record: the Nth fetch answers
   * the last stable offset and high watermark `answer(N)` gives, and moves the position up to that stable offset.
   */
  function recordlessLog (start: number, answer: (fetch: number) => { stable: number, high: number }): RecordFetcher {
    let fetches = 0
    const fetcher = {
      listOffsets: async (tps: readonly { topic: string, partition: number }[], which: string) => new Map(tps.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? start : 6])),
      fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => {
        await delay(2)
        const { stable, high } = answer(++fetches)
        return positions.map(p => ({ topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records: [], nextOffset: Math.max(p.offset, stable), highWatermark: high, lastStableOffset: stable, logStartOffset: 0, bytes: 0 }))
      }
    }
    return fetcher as unknown as RecordFetcher
  }

  function openTransactionLog (openFor: number, fetchMs = 0) {
    let fetches = 0
    const record = (offset: number) => ({ offset, timestamp: 0n, key: Buffer.from(`k${offset}`), value: null, headers: [] })
    const fetcher = {
      listOffsets: async (tps: readonly { topic: string, partition: number }[], which: string) =>
        new Map(tps.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : which === 'written' ? 6 : 2])),
      fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => {
        // (a broker's read_committed fetch at the last stable offset waits before it answers empty)
        if (fetchMs > 0) await delay(fetchMs)
        return positions.map(p => {
          const stable = ++fetches > openFor ? 6 : 2
          const records = Array.from({ length: Math.max(0, stable - p.offset) }, (_, i) => record(p.offset + i))
          return { topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records, nextOffset: Math.max(p.offset, stable), highWatermark: 6, lastStableOffset: stable, logStartOffset: 0, bytes: 0 }
        })
      }
    }
    return fetcher as unknown as RecordFetcher
  }

  it('reads to the end the reader sees by default: a transaction still open hides what was committed after it', async () => {
    const read: number[] = []
    await readTopicToEnd(openTransactionLog(3), 't', 1, (_, r) => read.push(r.offset))
    assert.deepEqual(read, [0, 1])
  })

  it('with through written, waits for the open transaction to end and reads everything written', async () => {
    const read: number[] = []
    await readTopicToEnd(openTransactionLog(3), 't', 1, (_, r) => read.push(r.offset), { through: 'written' })
    assert.deepEqual(read, [0, 1, 2, 3, 4, 5])
  })

  it('with through written, gives up at its deadline naming the partition and offsets where it waited, and why', async () => {
    await assert.rejects(readTopicToEnd(openTransactionLog(Number.MAX_SAFE_INTEGER), 'mm2-offsets.A.internal', 1, () => undefined, { through: 'written', timeoutMs: 30 }), (err: KmirrorError) => {
      assert.equal(err.code, ErrorCodes.PROGRESS)
      assert.equal(err.retriable, true)
      assert.match(err.message, /^reading mm2-offsets\.A\.internal to its end took longer than 30 ms \(partition 0 at offset 2 of 6\): a transaction still open there holds read_committed readers/)
      return true
    })
  })
  it('with through written, tells its listener once when an open transaction holds a partition past the listener\'s delay, naming it and the offsets, then its end', async () => {
    const told: unknown[] = []
    const held: HeldReadListener = {
      tellAfterMs: 20,
      held: r => told.push({ ...r, partitions: r.partitions.map(p => ({ ...p, since: typeof p.since })), heldMs: r.heldMs >= 20 }),
      released: (r, waitedMs, reached) => told.push({ released: r.topic, waitedMs: waitedMs >= 20, reached })
    }
    const read: number[] = []
    await readTopicToEnd(openTransactionLog(20, 3), 'mm2-offsets.A.internal', 1, (_, r) => read.push(r.offset), { through: 'written', held })
    assert.deepEqual(read, [0, 1, 2, 3, 4, 5])
    assert.deepEqual(told, [
      { topic: 'mm2-offsets.A.internal', partitions: [{ partition: 0, offset: 2, end: 6, since: 'number' }], heldMs: true, timeoutMs: 60_000 },
      { released: 'mm2-offsets.A.internal', waitedMs: true, reached: true }
    ])
  })

  it('after telling a read held, tells its listener when the partitions held change: moved on (none), held again by another transaction, done', async () => {
    // (the last stable offset at 2 for 20 fetches, at 4 for 20 more, then the high watermark 6)
    const fetcher = recordlessLog(0, n => { const stable = n <= 20 ? 2 : n <= 40 ? 4 : 6; return { stable, high: 6 } })
    const told: string[] = []
    const held: HeldReadListener = {
      tellAfterMs: 15,
      held: r => told.push(`held ${r.partitions.map(p => `${p.partition}@${p.offset}`).join()}`),
      changed: (_, partitions) => told.push(`changed ${partitions.map(p => `${p.partition}@${p.offset}`).join()}`),
      released: (_, __, reached) => told.push(`released ${reached}`)
    }
    await readTopicToEnd(fetcher, 't', 1, () => undefined, { through: 'written', held })
    assert.deepEqual(told, ['held 0@2', 'changed ', 'changed 0@4', 'changed ', 'released true'])
  })

  it('tells a read that gives up after it was told held that it stopped without reaching its end', async () => {
    const told: string[] = []
    const held: HeldReadListener = { tellAfterMs: 5, held: r => told.push(`held ${r.topic}`), released: (r, _, reached) => told.push(`released ${r.topic} ${reached}`) }
    await assert.rejects(readTopicToEnd(openTransactionLog(Number.MAX_SAFE_INTEGER, 2), 't', 1, () => undefined, { through: 'written', timeoutMs: 40, held }), /took longer than 40 ms/)
    assert.deepEqual(told, ['held t', 'released t false'])
  })

  it('does not take a partition whose last stable offset is its high watermark (a new leader lagging) as held', async () => {
    // (the listed end 6, the leader answering 2 as both its high watermark and last stable offset for a while)
    const fetcher = recordlessLog(2, n => { const high = n > 15 ? 6 : 2; return { stable: high, high } })
    const told: string[] = []
    await readTopicToEnd(fetcher, 't', 1, () => undefined, { through: 'written', held: { tellAfterMs: 0, held: r => told.push(r.topic), released: r => told.push(r.topic) } })
    assert.deepEqual(told, [])
  })

  it('tells nothing of a read that ends before the delay, or of one that is not held (through stable, or read to its end)', async () => {
    const told: string[] = []
    const held: HeldReadListener = { tellAfterMs: 10_000, held: r => told.push(`held ${r.topic}`), released: r => told.push(`released ${r.topic}`) }
    await readTopicToEnd(openTransactionLog(3, 1), 't', 1, () => undefined, { through: 'written', held })
    await readTopicToEnd(openTransactionLog(50, 1), 't', 1, () => undefined, { through: 'stable', held: { ...held, tellAfterMs: 0 } })
    assert.deepEqual(told, [])
  })
  it('asks for the log start again when an out-of-range answer gives none (-1), rather than reading from 0 until its deadline', async () => {
    // (the log start moved from 0 to 4 after the read began; records 4-5 are left)
    const asked: string[] = []
    const fetcher = {
      listOffsets: async (tps: readonly { topic: string, partition: number }[], which: string) => {
        asked.push(which)
        return new Map(tps.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? (asked.length > 2 ? 4 : 0) : 6]))
      },
      fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => positions.map(p => p.offset < 4
        ? { topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OUT_OF_RANGE, records: [], nextOffset: p.offset, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, bytes: 0 }
        : { topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records: [4, 5].map(offset => ({ offset, timestamp: 0n, key: null, value: null, headers: [] })), nextOffset: 6, highWatermark: 6, lastStableOffset: 6, logStartOffset: 4, bytes: 0 })
    }
    const read: number[] = []
    await readTopicToEnd(fetcher as unknown as RecordFetcher, 't', 1, (_, r) => read.push(r.offset), { timeoutMs: 1000 })
    assert.deepEqual(read, [4, 5])
    assert.deepEqual(asked.sort(), ['earliest', 'earliest', 'latest'])
  })
})
