import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { RecordWriter, targetOffsetOf, type OffsetSegment, type OutRecord } from '../../../src/kafka/record-writer.ts'
import { settle } from '../../fakes/deferred.ts'
import { installFakeSend } from '../../fakes/producer-send.ts'
import { waitFor } from '../../helpers/wait.ts'

const PROPS = { 'bootstrap.servers': '127.0.0.1:1' }

/** A record of exactly `bytes` by RecordWriter's estimate (70 bytes of overhead + value). */
function sized (bytes: number, tag = 0): OutRecord {
  return { key: null, value: Buffer.alloc(bytes - 70, tag), headers: [], timestamp: BigInt(tag) }
}

const writers: RecordWriter[] = []
after(async () => { await Promise.all(writers.map(w => w.close())) })

function writer (maxChunkBytes: number, props: Record<string, string> = PROPS): RecordWriter {
  const w = new RecordWriter(props, 'kmirror-test', { idempotent: true, maxChunkBytes, cluster: { label: 'cluster B', alias: 'B' } })
  writers.push(w)
  return w
}

describe('targetOffsetOf', () => {
  it('counts from the base offset within a single segment', () => {
    const segments: OffsetSegment[] = [{ start: 0, baseOffset: 100 }]
    assert.deepEqual([0, 1, 4].map(i => targetOffsetOf(segments, i)), [100, 101, 104])
  })

  it('uses the segment a record falls in, its first record included', () => {
    // Given records 0..2 at 100.., 3..4 at 500.., 5 at 900 (other producers wrote in between)
    const segments: OffsetSegment[] = [{ start: 0, baseOffset: 100 }, { start: 3, baseOffset: 500 }, { start: 5, baseOffset: 900 }]
    assert.deepEqual([0, 1, 2, 3, 4, 5].map(i => targetOffsetOf(segments, i)), [100, 101, 102, 500, 501, 900])
  })

  it('handles segments whose base offsets do not grow with the index (a fresh target after a reset)', () => {
    const segments: OffsetSegment[] = [{ start: 0, baseOffset: 1000 }, { start: 2, baseOffset: 0 }]
    assert.deepEqual([0, 1, 2, 3].map(i => targetOffsetOf(segments, i)), [1000, 1001, 0, 1])
  })
})

describe('RecordWriter.write chunking (Producer.send replaced by a fake)', () => {
  it('sends small batches of several partitions in one request, one segment each', async t => {
    const send = installFakeSend(t)
    const segments = await writer(10_000).write([
      { topic: 'A.t', partition: 0, records: [sized(100), sized(100)] },
      { topic: 'A.t', partition: 1, records: [sized(100)] }
    ])
    assert.equal(send.requests.length, 1)
    assert.deepEqual(send.requests[0]!.map(m => m.partition), [0, 0, 1])
    assert.deepEqual(segments, [[{ start: 0, baseOffset: 0 }], [{ start: 0, baseOffset: 0 }]])
  })

  it('splits a partition into chunks of at most maxChunkBytes, one chunk per request round, and reports a segment per chunk', async t => {
    // Given 100-byte records, 300 bytes per chunk: 7 records of p0 make chunks [0,3) [3,6) [6,7), p1's 2 records one chunk
    const send = installFakeSend(t)
    const p0 = Array.from({ length: 7 }, (_, i) => sized(100, i))
    const segments = await writer(300).write([
      { topic: 'A.t', partition: 0, records: p0 },
      { topic: 'A.t', partition: 1, records: [sized(100), sized(100)] }
    ])
    // Then round 1 carries p0's first chunk and p1, rounds 2 and 3 the rest of p0
    assert.deepEqual(send.requests.map(r => r.map(m => `${m.partition}:${m.value![0]}`)), [
      ['0:0', '0:1', '0:2', '1:0', '1:0'], ['0:3', '0:4', '0:5'], ['0:6']
    ])
    // and each chunk's base offset (the fake leaves 10 offsets to other producers between requests)
    assert.deepEqual(segments, [
      [{ start: 0, baseOffset: 0 }, { start: 3, baseOffset: 13 }, { start: 6, baseOffset: 26 }],
      [{ start: 0, baseOffset: 0 }]
    ])
    assert.deepEqual(p0.map((_, i) => targetOffsetOf(segments[0]!, i)), [0, 1, 2, 13, 14, 15, 26])
  })

  it('keeps records that fill a chunk exactly together and counts key and header bytes', async t => {
    const send = installFakeSend(t)
    const withHeaders: OutRecord = { key: Buffer.alloc(5), value: Buffer.alloc(5), headers: [[Buffer.alloc(3), Buffer.alloc(2)]], timestamp: 0n }
    // 70 + 5 + 5 + (10 + 3 + 2) = 95 bytes; two of them and a 110-byte record fill 300 exactly
    const records = [withHeaders, withHeaders, sized(110)]
    await writer(300).write([{ topic: 'A.t', partition: 0, records }])
    assert.deepEqual(send.requests.map(r => r.length), [3])
    // and one byte less splits them
    await writer(299).write([{ topic: 'A.t', partition: 0, records }])
    assert.deepEqual(send.requests.slice(1).map(r => r.length), [2, 1])
  })

  it('sends a record larger than maxChunkBytes alone in its own chunk, never dropping or splitting it', async t => {
    const send = installFakeSend(t)
    const segments = await writer(300).write([{ topic: 'A.t', partition: 0, records: [sized(120, 1), sized(570, 2), sized(120, 3)] }])
    assert.deepEqual(send.requests.map(r => r.map(m => m.value![0])), [[1], [2], [3]])
    assert.deepEqual(segments[0]!.map(s => s.start), [0, 1, 2])
  })

  it('sends chunk k + 1 of a partition only after chunk k was acknowledged', async t => {
    const send = installFakeSend(t)
    const ack = send.holdNext()
    const writing = writer(100).write([{ topic: 'A.t', partition: 0, records: [sized(100, 1), sized(100, 2)] }])
    await settle()
    assert.equal(send.requests.length, 1)
    ack.resolve()
    await writing
    assert.equal(send.requests.length, 2)
  })

  it('returns no segment for an empty batch and sends nothing when every batch is empty', async t => {
    const send = installFakeSend(t)
    assert.deepEqual(await writer(300).write([{ topic: 'A.t', partition: 0, records: [] }]), [[]])
    assert.deepEqual(await writer(300).write([]), [])
    assert.equal(send.requests.length, 0)
  })
})

describe('RecordWriter.write messages and errors (Producer.send replaced by a fake)', () => {
  it('produces to the explicit partition with the timestamp, leaving out null keys and values', async t => {
    const send = installFakeSend(t)
    await writer(10_000).write([{ topic: 'A.t', partition: 3, records: [{ key: null, value: null, headers: [], timestamp: 42n }] }])
    assert.deepEqual(send.requests[0], [{ topic: 'A.t', partition: 3, timestamp: 42n }])
  })

  it('keeps repeated header keys, empty keys and their order', async t => {
    const send = installFakeSend(t)
    const h = Buffer.from('h')
    const empty = Buffer.alloc(0)
    await writer(10_000).write([{
      topic: 'A.t', partition: 0,
      records: [{ key: Buffer.from('k'), value: Buffer.from('v'), headers: [[h, Buffer.from('1')], [empty, Buffer.from('e')], [h, Buffer.from('2')]], timestamp: 1n }]
    }])
    const headers = send.requests[0]![0]!.headers as Map<Buffer, Buffer>
    assert.deepEqual([...headers].map(([k, v]) => [k.toString(), v.toString()]), [['h', '1'], ['', 'e'], ['h', '2']])
  })

  it('throws a retriable PRODUCE error naming the partition when the target acknowledges no offset for it', async t => {
    const send = installFakeSend(t)
    send.omitNext('A.t', 1)
    await assert.rejects(writer(10_000).write([
      { topic: 'A.t', partition: 0, records: [sized(100)] },
      { topic: 'A.t', partition: 1, records: [sized(100)] }
    ]), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.PRODUCE)
      assert.equal(err.retriable, true)
      assert.match(err.message, /no offset for A\.t-1/)
      return true
    })
  })

  it('wraps a failed send in a PRODUCE error that keeps the cause and counts the records, naming the topic written', async t => {
    const send = installFakeSend(t)
    const cause = new Error('socket hang up')
    send.failNext(cause)
    await assert.rejects(writer(10_000).write([{ topic: 'A.t', partition: 0, records: [sized(100), sized(100)] }]), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.cause, cause)
      assert.match(err.message, /write 2 record\(s\) to A\.t on cluster B: socket hang up/)
      return true
    })
  })

  it('refuses an unsupported compression.type, naming the key and the client', () => {
    assert.throws(() => writer(100, { ...PROPS, 'compression.type': 'brotli' }), (err: unknown) => {
      assert.ok(err instanceof KmirrorError)
      assert.equal(err.code, ErrorCodes.CONFIG_INVALID)
      assert.match(err.message, /compression\.type=brotli of kmirror-test is not supported/)
      return true
    })
  })

  it('accepts a compression.type with trailing spaces, which the Java client (and validation) accept', () => {
    assert.doesNotThrow(() => writer(100, { ...PROPS, 'compression.type': 'lz4 ' }))
  })
})

describe('RecordWriter.write and the target\'s partition count', () => {
  it('refreshes metadata before writing to a partition the cached metadata does not know yet', async t => {
    // Given cached metadata from before the remote topic grew from 2 to 5 partitions
    const send = installFakeSend(t)
    send.partitionCounts.cached = 2
    send.partitionCounts.refreshed = 5
    // When records for partition 4 are written, Then metadata is refreshed first and they go to partition 4
    await writer(10_000).write([{ topic: 'A.t', partition: 4, records: [sized(100)] }])
    assert.equal(send.forcedMetadata, 1)
    assert.deepEqual(send.requests[0]!.map(m => m.partition), [4])
  })

  it('asks again for the metadata of a topic the broker does not know yet (created a moment ago), then writes; past its patience the write fails retriable, naming the topic', async t => {
    const send = installFakeSend(t)
    send.unknownTopicReads = 3
    await writer(10_000).write([{ topic: 'heartbeats', partition: 0, records: [sized(100)] }])
    assert.deepEqual(send.requests[0]!.map(m => m.topic), ['heartbeats'])
    assert.equal(send.forcedMetadata, 3, 'asked again fresh')
    send.unknownTopicReads = 1000
    await assert.rejects(writer(10_000).write([{ topic: 'heartbeats', partition: 0, records: [sized(100)] }]),
      (err: unknown) => err instanceof KmirrorError && err.retriable && /Unknown topic heartbeats/.test(err.message))
    assert.equal(send.requests.length, 1)
  })

  it('sends nothing, with a retriable error, while the target does not have the partition', async t => {
    // The library would map partition 4 of a 2-partition topic to partition 0: records in the wrong partition.
    const send = installFakeSend(t)
    send.partitionCounts.cached = 2
    send.partitionCounts.refreshed = 2
    await assert.rejects(writer(10_000).write([{ topic: 'A.t', partition: 4, records: [sized(100)] }]),
      (err: unknown) => (err as { code?: string, retriable?: boolean }).code === 'KMIRROR_ERR_PRODUCE' && (err as { retriable: boolean }).retriable)
    assert.equal(send.requests.length, 0)
  })
})

describe('RecordWriter.write and the group membership it began under (Producer.send replaced by a fake)', () => {
  const isFencedByLoss = (err: unknown): boolean => err instanceof KmirrorError && err.code === ErrorCodes.FENCED && err.details['fence'] === 'membership lost'

  it('Given the producer renewed (membership lost) while a chunk is acknowledged, then the next chunk is sent on no producer and the write fails FENCED, though no lease refuses it', async t => {
    const send = installFakeSend(t)
    const w = writer(100)
    const ack = send.holdNext()
    const writing = w.write([{ topic: 'A.t', partition: 0, records: [sized(100, 1), sized(100, 2)] }])
    await settle()
    w.renew()
    ack.resolve()
    await assert.rejects(writing, isFencedByLoss)
    assert.deepEqual(send.requests.map(r => r.map(m => m.value![0])), [[1]])
  })

  it('Given its until signal aborted while the metadata is read, then nothing is sent and the write fails FENCED', async t => {
    const send = installFakeSend(t)
    // The first metadata read finds the topic unknown: the writer asks again after a pause, the loss comes meanwhile
    send.unknownTopicReads = 1
    const membership = new AbortController()
    const writing = writer(10_000).write([{ topic: 'A.t', partition: 0, records: [sized(100)] }], { until: membership.signal })
    await waitFor(() => send.unknownTopicReads === 0, { timeoutMs: 5_000, intervalMs: 5, message: 'the first metadata read' })
    membership.abort()
    await assert.rejects(writing, isFencedByLoss)
    assert.equal(send.requests.length, 0)
  })

  it('Given a write begun after a renew, then it writes through the new producer as usual', async t => {
    const send = installFakeSend(t)
    const w = writer(10_000)
    w.renew()
    await w.write([{ topic: 'A.t', partition: 0, records: [sized(100, 7)] }], { until: new AbortController().signal })
    assert.deepEqual(send.requests.map(r => r.map(m => m.value![0])), [[7]])
  })
})
