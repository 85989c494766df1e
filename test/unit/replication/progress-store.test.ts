import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FlowConfig } from '../../../src/config/types.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { decodeSourceOffsetKey, decodeSourceOffsetValue, encodeSourceOffsetKey, encodeSourceOffsetValue } from '../../../src/formats/connect-offset.ts'
import type { AdminClient } from '../../../src/kafka/admin-client.ts'
import { FetchOutcomes, type FetchedPartition, type FetchedRecord, type PartitionPosition, type RecordFetcher } from '../../../src/kafka/record-fetcher.ts'
import type { RecordWriter } from '../../../src/kafka/record-writer.ts'
import { FORGOTTEN, ProgressStore } from '../../../src/replication/progress-store.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { deferred, type Deferred } from '../../fakes/deferred.ts'

const flow = { source: { alias: 'A' }, target: { alias: 'B', producer: { 'transaction.timeout.ms': '60000' } }, offsetStorageTopic: 'mm2-offsets.A.internal', exactlyOnce: true } as unknown as FlowConfig
const admin = { describeTopics: async (names: readonly string[]) => new Map(names.map(n => [n, { name: n, id: 'x', partitions: 1 }])) } as unknown as AdminClient

/**
 * The offsets topic's one partition: progress of t-0 at 10, then (offset 1) the first record of another member's
 * transaction still open, then (offset 2) progress of t-0 at 20 committed by a third member after it. A
 * read_committed reader sees offset 0 only until the open transaction ends (after OPEN_FOR fetches).
 */
function sharedOffsetsTopic (openFor: number): { fetcher: RecordFetcher, asked: string[] } {
  const asked: string[] = []
  let fetches = 0
  const key = encodeSourceOffsetKey({ connectorName: 'MirrorSourceConnector', cluster: 'A', topic: 't', partition: 0 })
  const log = [10, null, 20].map((value, offset) => ({ offset, timestamp: 0n, key: value === null ? null : key, value: value === null ? null : encodeSourceOffsetValue(value), headers: [] }))
  const fetcher = {
    listOffsets: async (tps: readonly { topic: string, partition: number }[], which: string) => {
      asked.push(which)
      return new Map(tps.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : which === 'written' ? 3 : 1]))
    },
    fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => positions.map(p => {
      const stable = ++fetches > openFor ? 3 : 1
      return { topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records: log.slice(p.offset, stable), nextOffset: Math.max(p.offset, stable), highWatermark: 3, lastStableOffset: stable, logStartOffset: 0, bytes: 0 }
    })
  }
  return { fetcher: fetcher as unknown as RecordFetcher, asked }
}

describe('ProgressStore.load', () => {
  it('reads to the high watermark, waiting for a transaction open on the shared topic: progress committed behind it counts', async () => {
    const { fetcher, asked } = sharedOffsetsTopic(2)
    const stored = await new ProgressStore(flow, admin, fetcher, null).load({ readOnly: true, waitForTransactions: true })
    assert.deepEqual([...stored], [[partitionKey('t', 0), 20]])
    assert.ok(asked.includes('written'))
  })

  it('without waitForTransactions (commands, a start its group assignment reads again) takes what is stable now', async () => {
    const { fetcher, asked } = sharedOffsetsTopic(Number.MAX_SAFE_INTEGER)
    const stored = await new ProgressStore(flow, admin, fetcher, null).load({ readOnly: true })
    assert.deepEqual([...stored], [[partitionKey('t', 0), 10]])
    assert.equal(asked.includes('written'), false)
  })

  it('a load waiting for a transaction gives up at once when the flow stops (close), retriable', async () => {
    const { fetcher } = sharedOffsetsTopic(Number.MAX_SAFE_INTEGER)
    const store = new ProgressStore(flow, admin, fetcher, null)
    const loading = store.load({ readOnly: true, waitForTransactions: true })
    store.close()
    await assert.rejects(loading, (err: { code?: string, retriable?: boolean, message: string }) =>
      err.code === 'KMIRROR_ERR_PROGRESS' && err.retriable === true && /stopped reading mm2-offsets\.A\.internal: the flow is stopping/.test(err.message))
  })
})

/** A call the test holds: `sent` resolves once the fake received it, and the fake answers after `release`. */
interface HeldCall {
  readonly sent: Promise<void>
  release (): void
}

function holdCall (): { call: HeldCall, received: () => Promise<void> } {
  const sent = deferred()
  const released = deferred()
  return {
    call: { sent: sent.promise, release: () => { released.resolve() } },
    received: async () => {
      sent.resolve()
      await released.promise
    }
  }
}

/**
 * The offsets topic's one partition, in memory. A write appends its records (unless `aborting`: an aborted
 * exactly-once round, which read_committed never returns) and `written` lists them as [partition key, offset]. A read
 * returns what the log held when its fetch was sent. `holdNextRead` keeps that fetch's answer back until released (a
 * commit runs while the read is under way); `holdNextWrite` keeps a write from landing until released.
 */
const NOT_LEADER = new KmirrorError(ErrorCodes.PRODUCE, 'offsets topic: NOT_LEADER_OR_FOLLOWER', { retriable: true })

/** WRITER, whose next write after `holdNext` waits for the test to settle it (`reject`: the write fails). */
function heldWriter (writer: Pick<RecordWriter, 'write'>): { writer: Pick<RecordWriter, 'write'>, holdNext: () => Deferred<never> } {
  let next: Deferred<never> | null = null
  return {
    writer: {
      write: async batches => {
        const held = next
        next = null
        if (held === null) return await writer.write(batches)
        return await held.promise
      }
    },
    holdNext: () => (next = deferred<never>())
  }
}

function memoryOffsetsTopic (): {
  fetcher: RecordFetcher
  writer: Pick<RecordWriter, 'write'>
  written: [string, number][]
  append: (topic: string, partition: number, lastOffset: number) => void
  holdNextRead: () => HeldCall
  holdNextWrite: () => HeldCall
  setAborting: (aborting: boolean) => void
} {
  const log: FetchedRecord[] = []
  const written: [string, number][] = []
  let aborting = false
  let heldRead: (() => Promise<void>) | null = null
  let heldWrite: (() => Promise<void>) | null = null
  const append = (topic: string, partition: number, lastOffset: number): void => {
    log.push({ offset: log.length, timestamp: 0n, key: encodeSourceOffsetKey({ connectorName: 'MirrorSourceConnector', cluster: 'A', topic, partition }), value: encodeSourceOffsetValue(lastOffset), headers: [] })
  }
  const fetcher = {
    listOffsets: async (tps: readonly { topic: string, partition: number }[], which: string) =>
      new Map(tps.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : log.length])),
    fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => {
      const end = log.length
      const answer = positions.map(p => ({ topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records: log.slice(p.offset, end), nextOffset: end, highWatermark: end, lastStableOffset: end, logStartOffset: 0, bytes: 0 }))
      const hold = heldRead
      heldRead = null
      await hold?.()
      return answer
    }
  }
  const writer: Pick<RecordWriter, 'write'> = {
    write: async batches => {
      const hold = heldWrite
      heldWrite = null
      await hold?.()
      for (const record of batches.flatMap(b => b.records)) {
        const key = decodeSourceOffsetKey(record.key!)!
        const lastOffset = decodeSourceOffsetValue(record.value)!
        written.push([partitionKey(key.topic, key.partition), lastOffset])
        if (!aborting) append(key.topic, key.partition, lastOffset)
      }
      return batches.map(() => [])
    }
  }
  const holdNextRead = (): HeldCall => {
    const { call, received } = holdCall()
    heldRead = received
    return call
  }
  const holdNextWrite = (): HeldCall => {
    const { call, received } = holdCall()
    heldWrite = received
    return call
  }
  return { fetcher: fetcher as unknown as RecordFetcher, writer, written, append, holdNextRead, holdNextWrite, setAborting: a => { aborting = a } }
}

const readOnly = { readOnly: true, waitForTransactions: true } as const

function positionsOf (...entries: [string, number, number][]): Map<string, { topic: string, partition: number, lastOffset: number }> {
  return new Map(entries.map(([topic, partition, lastOffset]) => [partitionKey(topic, partition), { topic, partition, lastOffset }]))
}

describe('ProgressStore: a load while the data path commits', () => {
  it('a commit that starts and ends while a load reads is not undone by the older read: the same position again writes nothing, a rewind to the read value is written', async () => {
    // Given t-0 stored at 5, and a load whose read of 5 is under way
    const topic = memoryOffsetsTopic()
    topic.append('t', 0, 5)
    const store = new ProgressStore(flow, admin, topic.fetcher, topic.writer)
    await store.load(readOnly)
    const read = topic.holdNextRead()
    const loading = store.load(readOnly)
    await read.sent
    // When t-0 is committed at 7 before the read answers
    assert.equal(await store.commit(positionsOf(['t', 0, 7])), 1)
    read.release()
    // Then the load hands out what it read, and the store still knows 7 is stored
    assert.deepEqual([...await loading], [[partitionKey('t', 0), 5]])
    assert.equal(await store.commit(positionsOf(['t', 0, 7])), 0)
    assert.equal(await store.commit(positionsOf(['t', 0, 5])), 1)
    assert.deepEqual(topic.written, [[partitionKey('t', 0), 7], [partitionKey('t', 0), 5]])
  })

  it('a commit begun before a load and acknowledged while it reads (its write not in the read) is not undone either', async () => {
    // Given t-0 stored at 5, and a commit of 7 whose write has not landed yet
    const topic = memoryOffsetsTopic()
    topic.append('t', 0, 5)
    const store = new ProgressStore(flow, admin, topic.fetcher, topic.writer)
    await store.load(readOnly)
    const write = topic.holdNextWrite()
    const committing = store.commit(positionsOf(['t', 0, 7]))
    await write.sent
    // When a load reads 5, and the write lands and is acknowledged before the read answers
    const read = topic.holdNextRead()
    const loading = store.load(readOnly)
    await read.sent
    write.release()
    assert.equal(await committing, 1)
    read.release()
    // Then the load hands out what it read, and the store still knows 7 is stored
    assert.deepEqual([...await loading], [[partitionKey('t', 0), 5]])
    assert.equal(await store.commit(positionsOf(['t', 0, 7])), 0)
    assert.equal(await store.commit(positionsOf(['t', 0, 5])), 1)
    assert.deepEqual(topic.written, [[partitionKey('t', 0), 7], [partitionKey('t', 0), 5]])
  })

  it('a commit that fails while a load reads leaves the key to the read: a value another instance stored counts, a rewind below it is written', async () => {
    // Given t-0 stored at 5 here, then at 9 by another instance, and a load whose read is under way
    const topic = memoryOffsetsTopic()
    topic.append('t', 0, 5)
    const { writer, holdNext } = heldWriter(topic.writer)
    const store = new ProgressStore(flow, admin, topic.fetcher, writer)
    await store.load(readOnly)
    topic.append('t', 0, 9)
    const read = topic.holdNextRead()
    const loading = store.load(readOnly)
    await read.sent
    // When a commit of 7 fails meanwhile
    const held = holdNext()
    const failing = store.commit(positionsOf(['t', 0, 7]))
    held.reject(NOT_LEADER)
    await assert.rejects(failing, /NOT_LEADER_OR_FOLLOWER/)
    read.release()
    // Then the store takes the read (9) for t-0: 9 again writes nothing, a rewind to 5 is written
    assert.deepEqual([...await loading], [[partitionKey('t', 0), 9]])
    assert.equal(await store.commit(positionsOf(['t', 0, 9])), 0)
    assert.equal(await store.commit(positionsOf(['t', 0, 5])), 1)
    assert.deepEqual(topic.written, [[partitionKey('t', 0), 5]])
  })

  it('a commit that fails after a load that ended while it was under way (the load kept the older value in memory) leaves the key unknown: its next commit writes, whatever the value', async () => {
    // Given t-0 stored at 5 here, then at 9 by another instance
    const topic = memoryOffsetsTopic()
    topic.append('t', 0, 5)
    const { writer, holdNext } = heldWriter(topic.writer)
    const store = new ProgressStore(flow, admin, topic.fetcher, writer)
    await store.load(readOnly)
    topic.append('t', 0, 9)
    // When a load reads (9) while a commit of 7 is under way, ends, and then the commit fails
    const read = topic.holdNextRead()
    const loading = store.load(readOnly)
    await read.sent
    const held = holdNext()
    const committing = store.commit(positionsOf(['t', 0, 7]))
    read.release()
    assert.deepEqual([...await loading], [[partitionKey('t', 0), 9]])
    held.reject(NOT_LEADER)
    await assert.rejects(committing, /NOT_LEADER_OR_FOLLOWER/)
    // Then a rewind to 5 (the value the load kept in memory) is written, not taken as stored
    assert.equal(await store.commit(positionsOf(['t', 0, 5])), 1)
    assert.deepEqual(topic.written, [[partitionKey('t', 0), 5]])
  })

  it('hands out a forgotten position (-1 newest) as FORGOTTEN only when asked (the data path), never as a position; one stored again after is a position', async () => {
    // Given t-0 forgotten, t-1 forgotten then stored at 4, t-2 stored at 9
    const topic = memoryOffsetsTopic()
    topic.append('t', 0, 10)
    topic.append('t', 0, -1)
    topic.append('t', 1, -1)
    topic.append('t', 1, 4)
    topic.append('t', 2, 9)
    const store = new ProgressStore(flow, admin, topic.fetcher, topic.writer)
    // Then a command's load leaves t-0 out, the data path's names it forgotten
    assert.deepEqual([...await store.load(readOnly)].sort(), [[partitionKey('t', 1), 4], [partitionKey('t', 2), 9]])
    assert.deepEqual([...await store.load({ ...readOnly, forgotten: true })].sort(), [[partitionKey('t', 0), FORGOTTEN], [partitionKey('t', 1), 4], [partitionKey('t', 2), 9]])
    // And the store still knows nothing needs writing for t-0 at -1
    assert.equal(await store.commit(positionsOf(['t', 0, -1])), 0)
  })

  it('a forget (-1) racing a load stays forgotten: -1 again writes nothing, the old higher position is written', async () => {
    // Given t-0 stored at 10, and a load whose read of 10 is under way
    const topic = memoryOffsetsTopic()
    topic.append('t', 0, 10)
    const store = new ProgressStore(flow, admin, topic.fetcher, topic.writer)
    await store.load(readOnly)
    const read = topic.holdNextRead()
    const loading = store.load(readOnly)
    await read.sent
    // When t-0 is forgotten (its source topic came back) before the read answers
    await store.forget([{ topic: 't', partition: 0 }])
    read.release()
    // Then the load hands out what it read, and the store knows -1 is stored
    assert.deepEqual([...await loading], [[partitionKey('t', 0), 10]])
    assert.equal(await store.commit(positionsOf(['t', 0, -1])), 0)
    assert.equal(await store.commit(positionsOf(['t', 0, 10])), 1)
    assert.deepEqual(topic.written, [[partitionKey('t', 0), -1], [partitionKey('t', 0), 10]])
  })

  it('keys no commit wrote during the load take the read: a value another instance stored counts, a key the read lacks is written again', async () => {
    // Given t-0 at 5 and t-1 at 8 stored and loaded, then changed by another instance: t-0 to 9, t-1 forgotten
    const topic = memoryOffsetsTopic()
    topic.append('t', 0, 5)
    topic.append('t', 1, 8)
    const store = new ProgressStore(flow, admin, topic.fetcher, topic.writer)
    await store.load(readOnly)
    topic.append('t', 0, 9)
    topic.append('t', 1, -1)
    // When a load reads while t-2 is committed
    const read = topic.holdNextRead()
    const loading = store.load(readOnly)
    await read.sent
    assert.equal(await store.commit(positionsOf(['t', 2, 3])), 1)
    read.release()
    // Then t-0 and t-1 are what was read, t-2 what was committed
    assert.deepEqual([...await loading], [[partitionKey('t', 0), 9]])
    assert.equal(await store.commit(positionsOf(['t', 0, 9], ['t', 1, 8], ['t', 2, 3])), 1)
    assert.deepEqual(topic.written, [[partitionKey('t', 2), 3], [partitionKey('t', 1), 8]])
  })

  it('a reload after an aborted round takes what was read, but for a key committed while it read', async () => {
    // Given t-0 stored at 10, then committed at 20 in a round that was aborted
    const topic = memoryOffsetsTopic()
    topic.append('t', 0, 10)
    const store = new ProgressStore(flow, admin, topic.fetcher, topic.writer)
    await store.load(readOnly)
    topic.setAborting(true)
    assert.equal(await store.commit(positionsOf(['t', 0, 20])), 1)
    topic.setAborting(false)
    // When the reload reads while t-1 is committed
    const read = topic.holdNextRead()
    const reloading = store.reload()
    await read.sent
    assert.equal(await store.commit(positionsOf(['t', 1, 4])), 1)
    read.release()
    // Then t-0 is back at the committed 10 and t-1 stays at 4
    assert.deepEqual([...await reloading], [[partitionKey('t', 0), 10]])
    assert.equal(await store.commit(positionsOf(['t', 0, 10], ['t', 1, 4])), 0)
    assert.equal(await store.commit(positionsOf(['t', 0, 20])), 1)
    assert.deepEqual(topic.written, [[partitionKey('t', 0), 20], [partitionKey('t', 1), 4], [partitionKey('t', 0), 20]])
  })
})
