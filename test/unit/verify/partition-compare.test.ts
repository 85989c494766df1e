import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FetchedRecord } from '../../../src/kafka/record-fetcher.ts'
import { comparePartition, type OpenCursor, type RecordCursor } from '../../../src/verify/partition-compare.ts'
import type { Segment } from '../../../src/verify/pairing.ts'

function record (offset: number, value: string, overrides: Partial<FetchedRecord> = {}): FetchedRecord {
  return { offset, timestamp: 1_700_000_000_000n + BigInt(offset), key: Buffer.from(`k${value}`), value: Buffer.from(value), headers: [[Buffer.from('h'), Buffer.from(value)]], ...overrides }
}

/** A side holding `records` (sorted by offset). */
function side (records: readonly FetchedRecord[]): { open: OpenCursor } {
  const open: OpenCursor = range => {
    const wanted = records.filter(r => r.offset >= range.from && r.offset < range.to)
    let i = 0
    const cursor: RecordCursor = { next: async () => wanted[i++] ?? null }
    return cursor
  }
  return { open }
}

const OPTIONS = { rangeRecords: 4, maxDifferences: 10, sourceCompacted: false, targetCompacted: false }
const PAIRED: Segment = { kind: 'paired', source: { from: 0, to: 10 }, target: { from: 100, to: 110 } }

function copy (records: readonly FetchedRecord[], shift: number): FetchedRecord[] {
  return records.map(r => ({ ...r, offset: r.offset + shift }))
}

const SOURCE = Array.from({ length: 10 }, (_, i) => record(i, `v${i}`))

test('an exact copy: every range has the same count and digest on both sides, no difference', async () => {
  const result = await comparePartition([PAIRED], { source: side(SOURCE).open, target: side(copy(SOURCE, 100)).open }, OPTIONS)
  assert.deepEqual(result.ranges.map(r => [r.source.from, r.source.to, r.source.records, r.target.from, r.target.to, r.target.records, r.equal]), [
    [0, 4, 4, 100, 104, 4, true], [4, 8, 4, 104, 108, 4, true], [8, 10, 2, 108, 110, 2, true]
  ])
  assert.equal(result.ranges[0]!.source.digest, result.ranges[0]!.target.digest)
  assert.notEqual(result.ranges[0]!.source.digest, result.ranges[1]!.source.digest)
  assert.equal(result.differences.hasDifferences, false)
  assert.deepEqual([result.sourceRecords, result.targetRecords], [10, 10])
})

test('a record altered on the target is named with both offsets and the fields that differ; its range digest differs', async () => {
  const target = copy(SOURCE, 100)
  target[5] = { ...target[5]!, value: Buffer.from('changed') }
  target[6] = { ...target[6]!, timestamp: 5n }
  const result = await comparePartition([PAIRED], { source: side(SOURCE).open, target: side(target).open }, OPTIONS)
  assert.deepEqual(result.differences.ranges(), [{ kind: 'differing', source: { first: 5, last: 6 }, target: { first: 105, last: 106 }, records: 2, fields: ['value', 'timestamp'] }])
  assert.deepEqual(result.ranges.map(r => r.equal), [true, false, true])
  assert.equal(result.differences.counts.differing, 2)
})

test('a gap on the target is a missing range with the source offsets and the target offsets where the copies belong', async () => {
  const target = copy(SOURCE, 100).filter(r => r.offset < 103 || r.offset > 105)
  const result = await comparePartition([PAIRED], { source: side(SOURCE).open, target: side(target).open }, OPTIONS)
  assert.deepEqual(result.differences.ranges(), [{ kind: 'missing', source: { first: 3, last: 5 }, target: { first: 103, last: 105 }, records: 3 }])
  assert.deepEqual([result.sourceRecords, result.targetRecords], [10, 7])
})

test('an extra target record, and records in one-sided segments, are extra or missing', async () => {
  const target = [...copy(SOURCE.slice(0, 10), 100)]
  const segments: Segment[] = [PAIRED, { kind: 'source-only', source: { from: 10, to: 12 } }, { kind: 'target-only', target: { from: 110, to: 111 } }]
  const source = [...SOURCE.slice(0, 3), ...SOURCE.slice(4), record(11, 'late')]
  const result = await comparePartition(segments, { source: side(source).open, target: side([...target, record(110, 'stray')]).open }, OPTIONS)
  assert.deepEqual(result.differences.ranges(), [
    { kind: 'extra', source: null, target: { first: 103, last: 103 }, records: 1 },
    { kind: 'missing', source: { first: 11, last: 11 }, target: null, records: 1 },
    { kind: 'extra', source: null, target: { first: 110, last: 110 }, records: 1 }
  ])
})

test('offsets absent on both sides (markers) are no difference; a record absent on a compacted side is reported as compacted', async () => {
  const source = SOURCE.filter(r => r.offset !== 2)
  const target = copy(SOURCE, 100).filter(r => r.offset !== 102 && r.offset !== 107)
  const result = await comparePartition([PAIRED], { source: side(source).open, target: side(target).open }, { ...OPTIONS, targetCompacted: true })
  assert.deepEqual(result.differences.ranges(), [{ kind: 'compacted', source: { first: 7, last: 7 }, target: { first: 107, last: 107 }, records: 1, side: 'target' }])
  assert.equal(result.differences.hasDifferences, false)
})

test('differences beyond the limit are counted, not listed', async () => {
  const source = Array.from({ length: 1000 }, (_, i) => record(i, `v${i}`))
  const target = copy(source, 0).map(r => r.offset % 2 === 0 ? { ...r, key: null } : r)
  const result = await comparePartition([{ kind: 'paired', source: { from: 0, to: 1000 }, target: { from: 0, to: 1000 } }], { source: side(source).open, target: side(target).open }, { ...OPTIONS, rangeRecords: 100, maxDifferences: 3 })
  assert.equal(result.differences.counts.differing, 500)
  assert.equal(result.differences.ranges().length, 3)
  assert.equal(result.differences.omitted, 497)
  assert.equal(result.ranges.length, 10)
})

test('an ordered segment pairs the n-th records of both sides whatever their offsets; leftovers are missing or extra', async () => {
  const target = [{ ...SOURCE[0]!, offset: 50 }, { ...SOURCE[1]!, offset: 52 }, { ...SOURCE[2]!, offset: 53 }, { ...SOURCE[3]!, offset: 54, value: Buffer.from('changed') }]
  const result = await comparePartition([{ kind: 'ordered', source: { from: 0, to: 5 }, target: { from: 50, to: 55 } }], { source: side(SOURCE.slice(0, 5)).open, target: side(target).open }, OPTIONS)
  assert.deepEqual(result.differences.ranges(), [
    { kind: 'differing', source: { first: 3, last: 3 }, target: { first: 54, last: 54 }, records: 1, fields: ['value'] },
    { kind: 'missing', source: { first: 4, last: 4 }, target: null, records: 1 }
  ])
  assert.equal(result.ranges.length, 1)
})

test('records whose pair retention deleted while the range was read are no difference', async () => {
  // The source's log start moved to 4 after the comparison began: target copies of 0..3 have no source to compare with
  const source: OpenCursor = range => {
    const cursor = side(SOURCE.filter(r => r.offset >= 4)).open(range)
    return { next: cursor.next, deletedBelow: () => 4 }
  }
  const result = await comparePartition([PAIRED], { source, target: side(copy(SOURCE, 100)).open }, OPTIONS)
  assert.deepEqual(result.differences.ranges(), [])
  assert.deepEqual([result.sourceRecords, result.targetRecords], [6, 10])
})

test('a re-copy: target records equal to the source records from the next run\'s start are duplicates, not a difference; others are extra', async () => {
  // Given source 0..9 copied to target 0..9, of which 5..9 again to target 10..14 after a restart, and target 9 altered
  const first = copy(SOURCE, 0)
  first[9] = { ...first[9]!, value: Buffer.from('changed') }
  const target = [...first, ...copy(SOURCE.slice(5), 5)]
  const segments: Segment[] = [
    { kind: 'paired', source: { from: 0, to: 5 }, target: { from: 0, to: 5 } },
    { kind: 'duplicate', target: { from: 5, to: 10 }, source: { from: 5, to: 10 } },
    { kind: 'paired', source: { from: 5, to: 10 }, target: { from: 10, to: 15 } }
  ]
  const result = await comparePartition(segments, { source: side(SOURCE).open, target: side(target).open }, { ...OPTIONS, rangeRecords: 10 })
  assert.deepEqual(result.differences.ranges(), [
    { kind: 'duplicate', source: { first: 5, last: 8 }, target: { first: 5, last: 8 }, records: 4 },
    { kind: 'extra', source: null, target: { first: 9, last: 9 }, records: 1 }
  ])
  assert.deepEqual(result.differences.counts, { missing: 0, extra: 1, differing: 0, compacted: 0, duplicate: 4 })
  assert.deepEqual([result.sourceRecords, result.targetRecords], [10, 15])
  // and duplicates alone are no difference
  const clean = await comparePartition(segments, { source: side(SOURCE).open, target: side([...copy(SOURCE, 0), ...copy(SOURCE.slice(5), 5)]).open }, { ...OPTIONS, rangeRecords: 10 })
  assert.equal(clean.differences.counts.duplicate, 5)
  assert.equal(clean.differences.hasDifferences, false)
})
