import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { crc32c } from '../../../src/kafka/protocol/crc32c.ts'
import {
  BatchAttributes, codecOf, decodeRecords, encodeRecords, isForwardable, rewriteForTarget, scanBatches, verifyCrc, type FetchedRecord
} from '../../../src/kafka/record-batch.ts'
import { sourceRecord } from '../../fakes/in-memory-source.ts'
import { CODECS, decodeAll, encodeSourceBatch, sourceBatch } from '../../fakes/source-batches.ts'

const records = (offsets: readonly number[]): FetchedRecord[] => offsets.map(o => sourceRecord('t', 0, o))
const range = (first: number, count: number): number[] => Array.from({ length: count }, (_, i) => first + i)

describe('scanBatches', () => {
  it('finds each complete batch of a fetch response and leaves out a truncated last one', () => {
    // Given three batches back to back, the last one cut off by the broker's size limit
    const a = encodeSourceBatch({ records: records(range(10, 3)) })
    const b = encodeSourceBatch({ records: records(range(13, 2)), codec: 'lz4', attributes: BatchAttributes.TRANSACTIONAL, producerId: 77n })
    const c = encodeSourceBatch({ records: records(range(15, 4)) })
    for (const cut of [1, c.length - 12, c.length - 1]) {
      const response = Buffer.concat([a, b, c.subarray(0, cut)])
      // When it is scanned
      const batches = scanBatches(response, 't', 0)
      // Then the two complete batches come back with their header fields, as views of the response bytes
      assert.deepEqual(batches.map(x => [x.baseOffset, x.lastOffset, x.recordCount, x.attributes, x.producerId]),
        [[10, 12, 3, 0, 4242n], [13, 14, 2, BatchAttributes.TRANSACTIONAL | 3, 77n]], `cut at ${cut}`)
      assert.ok(batches[0]!.bytes.equals(a) && batches[1]!.bytes.equals(b))
      assert.equal(batches[1]!.bytes.buffer, response.buffer)
    }
    // and a complete last batch is found too
    assert.deepEqual(scanBatches(Buffer.concat([a, b, c]), 't', 0).map(x => x.baseOffset), [10, 13, 15])
    assert.deepEqual(scanBatches(Buffer.alloc(0), 't', 0), [])
  })

  it('refuses message formats older than v2 with a hint, not as a retriable error', () => {
    const old = encodeSourceBatch({ records: records([0]) })
    old[16] = 1
    assert.throws(() => scanBatches(old, 't', 3), (err: unknown) =>
      err instanceof KmirrorError && err.code === ErrorCodes.FETCH && !err.retriable && /t-3 holds records in message format v1 at offset 0/.test(err.message))
  })
})

describe('isForwardable', () => {
  it('forwards a batch whose records map one to one to consecutive offsets from the wanted offset', () => {
    const batch = sourceBatch({ records: records(range(20, 5)) })
    assert.equal(isForwardable(batch, 20), true)
    assert.equal(isForwardable(batch, 3), true)
    assert.equal(isForwardable(sourceBatch({ records: records(range(20, 5)), codec: 'zstd', attributes: BatchAttributes.TRANSACTIONAL }), 20), true)
  })

  it('does not forward a batch with compaction gaps, a head before the wanted offset, log-append time or control records', () => {
    // Compaction removed 21 and 22: lastOffsetDelta 4 but 3 records
    assert.equal(isForwardable(sourceBatch({ records: records([20, 23, 24]) }), 20), false)
    // Compaction removed the batch's last records: lastOffsetDelta beyond the last record
    assert.equal(isForwardable(sourceBatch({ records: records([20, 21]), lastOffset: 23 }), 20), false)
    // The fetch offset is inside the batch: 20 and 21 were copied already
    assert.equal(isForwardable(sourceBatch({ records: records(range(20, 5)) }), 22), false)
    // The broker set the timestamps (message.timestamp.type=LogAppendTime)
    assert.equal(isForwardable(sourceBatch({ records: records(range(20, 5)), attributes: BatchAttributes.LOG_APPEND_TIME, appendTime: 5n }), 20), false)
    // A transaction marker
    assert.equal(isForwardable(sourceBatch({ records: records([20]), attributes: BatchAttributes.CONTROL | BatchAttributes.TRANSACTIONAL }), 20), false)
  })
})

describe('rewriteForTarget', () => {
  it('sets the transactional bit for an exactly-once producer (and only the header changes, CRC as if recomputed)', () => {
    const batch = sourceBatch({ records: records(range(10, 3)), codec: 'lz4', attributes: 0, producerId: 5n, producerEpoch: 0, baseSequence: 0, partitionLeaderEpoch: 1 })
    const original = Buffer.from(batch.bytes)
    const out = rewriteForTarget(batch, { id: 77n, epoch: 4, transactional: true }, 9)
    assert.equal(out.readInt16BE(21), CODECS.indexOf('lz4') | BatchAttributes.TRANSACTIONAL)
    assert.ok(out.subarray(61).equals(original.subarray(61)))
    assert.equal(out.readUInt32BE(17), crc32c(out, 21))
  })

  it('encodes internal records of an exactly-once producer as a transactional batch with a valid CRC', () => {
    const bytes = encodeRecords([{ key: Buffer.from('k'), value: Buffer.from('v'), headers: [], timestamp: 1700000000000n }], 'none', { id: 8n, epoch: 1, transactional: true }, 3)
    const [batch] = scanBatches(bytes, 'mm2-offsets.A.internal', 0)
    assert.equal(batch!.attributes & BatchAttributes.TRANSACTIONAL, BatchAttributes.TRANSACTIONAL)
    verifyCrc(batch!, 'mm2-offsets.A.internal', 0)
    assert.equal(bytes.readInt32BE(53), 3)
  })

  for (const codec of CODECS) {
    it(`makes a ${codec} batch this producer's: records section byte for byte, header fields and a CRC as if recomputed`, () => {
      // Given a transactional source batch at offset 500 with its own producer, sequence and leader epoch
      const batch = sourceBatch({
        records: records(range(500, 6)), codec, attributes: BatchAttributes.TRANSACTIONAL, producerId: 4242n, producerEpoch: 3, baseSequence: 17, partitionLeaderEpoch: 7
      })
      const original = Buffer.from(batch.bytes)
      // When it is rewritten for producer 99/2 at sequence 1234
      const out = rewriteForTarget(batch, { id: 99n, epoch: 2 }, 1234)
      // Then only the producer fields, transactional bit, base offset and leader epoch changed
      assert.ok(out.subarray(61).equals(original.subarray(61)), 'records section unchanged')
      assert.equal(out.length, original.length)
      assert.equal(out.readBigInt64BE(0), 0n)
      assert.equal(out.readInt32BE(8), original.readInt32BE(8))
      assert.equal(out.readInt32BE(12), -1)
      assert.equal(out[16], 2)
      assert.equal(out.readInt16BE(21), CODECS.indexOf(codec))
      assert.ok(out.subarray(23, 43).equals(original.subarray(23, 43)), 'offset delta and timestamps unchanged')
      assert.equal(out.readBigInt64BE(43), 99n)
      assert.equal(out.readInt16BE(51), 2)
      assert.equal(out.readInt32BE(53), 1234)
      assert.equal(out.readInt32BE(57), 6)
      // and the derived CRC is the one a full recomputation gives
      assert.equal(out.readUInt32BE(17), crc32c(out, 21))
      const [rewritten] = scanBatches(out, 'A.t', 0)
      verifyCrc(rewritten!, 'A.t', 0)
      assert.equal(codecOf(rewritten!), codec)
      assert.deepEqual(decodeAll([rewritten!]), records(range(500, 6)).map((r, i) => ({ ...r, offset: i })))
    })
  }
})

describe('verifyCrc', () => {
  it('accepts an intact batch and stops at a flipped payload or header byte, naming the partition and offsets', () => {
    const intact = sourceBatch({ records: records(range(40, 3)), codec: 'gzip' })
    verifyCrc(intact, 't', 2)
    for (const position of [intact.bytes.length - 1, 61, 30]) {
      const bytes = Buffer.from(intact.bytes)
      bytes[position]! ^= 0x01
      const [corrupt] = scanBatches(bytes, 't', 2)
      assert.throws(() => verifyCrc(corrupt!, 't', 2), (err: unknown) =>
        err instanceof KmirrorError && err.code === ErrorCodes.FETCH && /t-2 at offsets 40\.\.42 is corrupt/.test(err.message), `byte ${position}`)
    }
  })
})

describe('decodeRecords', () => {
  it('returns the records at and after the wanted offset, with their offsets, keys, values, headers and timestamps', () => {
    // Given a compressed batch 10..14 and a fetch at 12
    const batch = sourceBatch({ records: records(range(10, 5)), codec: 'snappy' })
    const out: FetchedRecord[] = []
    decodeRecords(batch, 12, out)
    // Then 10 and 11 are dropped
    assert.deepEqual(out, records([12, 13, 14]))
  })

  it('keeps the offsets of a compacted batch and gives log-append-time records the broker time', () => {
    assert.deepEqual(decodeAll([sourceBatch({ records: records([3, 5, 9]), lastOffset: 11 })], 4), records([5, 9]))
    const appended = decodeAll([sourceBatch({ records: records([0, 1]), attributes: BatchAttributes.LOG_APPEND_TIME, appendTime: 1_800_000_000_000n })])
    assert.deepEqual(appended.map(r => r.timestamp), [1_800_000_000_000n, 1_800_000_000_000n])
  })
})

describe('encodeRecords', () => {
  it('encodes records as one batch of this producer that decodes to the same records', () => {
    for (const codec of CODECS) {
      const input = records(range(0, 4))
      const bytes = encodeRecords(input, codec, { id: 5n, epoch: 1 }, 300)
      const [batch] = scanBatches(bytes, 'A.t', 0)
      verifyCrc(batch!, 'A.t', 0)
      assert.deepEqual([batch!.producerId, bytes.readInt16BE(51), bytes.readInt32BE(53), batch!.recordCount, codecOf(batch!)], [5n, 1, 300, 4, codec])
      assert.deepEqual(decodeAll([batch!]), input)
    }
  })
})
