import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BatchAttributes, type FetchedRecord, type SourceBatch } from '../../../src/kafka/record-batch.ts'
import { selectCommitted } from '../../../src/kafka/transaction-filter.ts'
import { sourceBatch } from '../../fakes/source-batches.ts'

const TX = BatchAttributes.TRANSACTIONAL
const record = (offset: number, key: Buffer | null = null): FetchedRecord => ({ offset, timestamp: 1_700_000_000_000n + BigInt(offset), key, value: Buffer.from(`v${offset}`), headers: [] })
const data = (first: number, last: number, producerId: bigint, attributes = 0): SourceBatch =>
  sourceBatch({ records: Array.from({ length: last - first + 1 }, (_, i) => record(first + i)), producerId, attributes })
/** A transaction marker: control record key = version 0, type 0 (abort) or 1 (commit). */
const marker = (offset: number, producerId: bigint, type: 0 | 1): SourceBatch =>
  sourceBatch({ records: [record(offset, Buffer.from([0, 0, 0, type]))], producerId, attributes: TX | BatchAttributes.CONTROL })
const ranges = (batches: readonly SourceBatch[]): string[] => batches.map(b => `${b.baseOffset}..${b.lastOffset}`)

describe('selectCommitted (read_committed filter)', () => {
  it('Given the worked example, then the aborted transaction and its marker are dropped and what is around it kept', () => {
    const batches = [data(8, 9, 7n), data(10, 12, 7n, TX), marker(13, 7n, 0), data(14, 15, 7n, TX)]
    const { batches: kept, nextOffset } = selectCommitted(batches, 8, [{ producerId: 7n, firstOffset: 10 }])
    assert.deepEqual(ranges(kept), ['8..9', '14..15'])
    assert.equal(nextOffset, 16)
  })

  it('Given a response that ends before the abort marker, then the aborted batches are dropped all the same', () => {
    const { batches: kept, nextOffset } = selectCommitted([data(0, 2, 5n, TX), data(3, 4, 6n, TX)], 0, [{ producerId: 5n, firstOffset: 0 }])
    assert.deepEqual(ranges(kept), ['3..4'])
    assert.equal(nextOffset, 5)
  })

  it('Given a committed transaction of the same producer after an aborted one, then only the aborted one is dropped', () => {
    const batches = [data(0, 1, 5n, TX), marker(2, 5n, 0), data(3, 4, 5n, TX), marker(5, 5n, 1)]
    const { batches: kept, nextOffset } = selectCommitted(batches, 0, [{ producerId: 5n, firstOffset: 0 }])
    assert.deepEqual(ranges(kept), ['3..4'])
    assert.equal(nextOffset, 6)
  })

  it('Given the aborted list out of order, then it is applied in offset order', () => {
    const batches = [data(0, 0, 1n, TX), marker(1, 1n, 0), data(2, 2, 2n, TX), marker(3, 2n, 0), data(4, 4, 3n)]
    const { batches: kept } = selectCommitted(batches, 0, [{ producerId: 2n, firstOffset: 2 }, { producerId: 1n, firstOffset: 0 }])
    assert.deepEqual(ranges(kept), ['4..4'])
  })

  it('Given read_uncommitted (no list), then aborted data is kept but control batches and batches before the fetch offset are not', () => {
    const batches = [data(0, 1, 5n), data(2, 3, 5n, TX), marker(4, 5n, 0), data(5, 6, 5n)]
    const { batches: kept, nextOffset } = selectCommitted(batches, 2, null)
    assert.deepEqual(ranges(kept), ['2..3', '5..6'])
    assert.equal(nextOffset, 7)
  })

  it('Given only a trailing marker, then nothing is returned and nextOffset passes the marker', () => {
    const { batches: kept, nextOffset } = selectCommitted([marker(9, 5n, 1)], 9, [])
    assert.deepEqual(kept, [])
    assert.equal(nextOffset, 10)
  })

  it('Given no batches, then nextOffset is the fetch offset', () => {
    assert.deepEqual(selectCommitted([], 42, []), { batches: [], nextOffset: 42 })
  })
})
