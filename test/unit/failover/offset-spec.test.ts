import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseOffsetSpec, resolveOffset } from '../../../src/failover/offset-spec.ts'

const range = { current: 50, earliest: 10, latest: 100 }

test('each position resolves inside the partition\'s range', () => {
  assert.deepEqual(resolveOffset({ kind: 'offset', offset: 70 }, range, 't-0'), { offset: 70 })
  assert.deepEqual(resolveOffset({ kind: 'earliest' }, range, 't-0'), { offset: 10 })
  assert.deepEqual(resolveOffset({ kind: 'latest' }, range, 't-0'), { offset: 100 })
  assert.deepEqual(resolveOffset({ kind: 'shift', by: -40 }, range, 't-0'), { offset: 10 })
  assert.deepEqual(resolveOffset({ kind: 'datetime', timestampMs: 1 }, { ...range, atTime: 42 }, 't-0'), { offset: 42 })
  // every record is older than the time: the end
  assert.deepEqual(resolveOffset({ kind: 'datetime', timestampMs: 1 }, { ...range, atTime: -1 }, 't-0'), { offset: 100 })
})

test('positions outside [log start, end] are refused with the valid range, never clamped', () => {
  assert.deepEqual(resolveOffset({ kind: 'offset', offset: 101 }, range, 't-0'), { error: 'offset 101 of t-0 is outside the valid range [10, 100] (log start to end)' })
  assert.match((resolveOffset({ kind: 'shift', by: -41 }, range, 't-0') as { error: string }).error, /offset 9 of t-0 is outside the valid range \[10, 100\]/)
  assert.match((resolveOffset({ kind: 'shift', by: 1 }, { ...range, current: null }, 't-0') as { error: string }).error, /no committed offset to shift/)
})

test('exactly one position must be given, with valid numbers and dates', () => {
  assert.deepEqual(parseOffsetSpec({ toOffset: '12' }), { kind: 'offset', offset: 12 })
  assert.deepEqual(parseOffsetSpec({ shiftBy: '-3' }), { kind: 'shift', by: -3 })
  assert.deepEqual(parseOffsetSpec({ toDatetime: '2026-11-30T03:00:00Z' }), { kind: 'datetime', timestampMs: Date.parse('2026-11-30T03:00:00Z') })
  assert.match((parseOffsetSpec({}) as { error: string }).error, /exactly one of/)
  assert.match((parseOffsetSpec({ toEarliest: true, toLatest: true }) as { error: string }).error, /exactly one of/)
  assert.match((parseOffsetSpec({ toOffset: '1.5' }) as { error: string }).error, /--to-offset must be an integer/)
  assert.match((parseOffsetSpec({ toDatetime: 'yesterday' }) as { error: string }).error, /ISO 8601/)
})
