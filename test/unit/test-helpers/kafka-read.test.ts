/**
 * The test helpers' read_committed filter (test/helpers/kafka-read.ts), which every exactly-once assertion trusts:
 * transactions are settled by their producer's next marker, whatever the epochs and however many aborts.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { RecordsBatch } from '@platformatic/kafka'
import { committedBatches } from '../../helpers/kafka-read.ts'

const TRANSACTIONAL = 0x10
const CONTROL = 0x20

function batch (firstOffset: number, count: number, producerId: number, epoch: number, attributes: number, key: Buffer | null = null): RecordsBatch {
  const records = Array.from({ length: count }, (_, i) => ({ length: 0, attributes: 0, timestampDelta: 0n, offsetDelta: i, key, value: null, headers: [] }))
  return {
    firstOffset: BigInt(firstOffset), length: 0, partitionLeaderEpoch: 0, magic: 2, crc: 0, attributes, lastOffsetDelta: count - 1,
    firstTimestamp: 0n, maxTimestamp: 0n, producerId: BigInt(producerId), producerEpoch: epoch, firstSequence: 0, records
  }
}

/** A control record's key: version 0, then type 0 (ABORT) or 1 (COMMIT). */
function marker (offset: number, producerId: number, epoch: number, commit: boolean): RecordsBatch {
  const key = Buffer.alloc(4)
  key.writeInt16BE(commit ? 1 : 0, 2)
  return batch(offset, 1, producerId, epoch, TRANSACTIONAL | CONTROL, key)
}

const data = (offset: number, count: number, producerId: number, epoch: number): RecordsBatch => batch(offset, count, producerId, epoch, TRANSACTIONAL)
const offsets = (batches: readonly RecordsBatch[]): bigint[] => batches.map(b => b.firstOffset)

test('a committed transaction between an abort and a data-less abort marker of the same producer is kept', () => {
  // The log of the failed exactly-once run: kmirror restarted (abort, epoch bumped), committed, then a round aborted
  // while the target broker was killed, after AddPartitionsToTxn and before its produce landed (a data-less marker).
  const log = [data(0, 975, 9000, 7), marker(975, 9000, 8, false), data(976, 1021, 9000, 9), marker(1997, 9000, 9, true),
    marker(1998, 9000, 10, false), data(1999, 23, 9000, 11), marker(2022, 9000, 11, true)]
  assert.deepEqual(offsets(committedBatches(log)), [976n, 1999n])
})

test('aborted and open transactions are dropped, non-transactional batches and other producers are kept in order', () => {
  const log = [batch(0, 2, -1, -1, 0), data(2, 3, 7, 0), data(5, 1, 8, 0), marker(6, 7, 0, false), data(7, 2, 8, 0),
    marker(9, 8, 0, true), data(10, 1, 7, 1), batch(11, 1, -1, -1, 0)]
  // 7's first transaction aborted, 8's committed (both its batches), 7's second still open
  assert.deepEqual(offsets(committedBatches(log)), [0n, 5n, 7n, 11n])
})
