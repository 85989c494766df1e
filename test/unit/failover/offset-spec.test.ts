import assert from 'node:assert/strict'
import { describe, it, test } from 'node:test'
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

test('--to-datetime takes ISO 8601 instants with a zone, and a bare date as midnight UTC', () => {
  const at = (text: string): unknown => parseOffsetSpec({ toDatetime: text })
  assert.deepEqual(at('2026-11-30T14:00:00Z'), { kind: 'datetime', timestampMs: Date.UTC(2026, 10, 30, 14) })
  assert.deepEqual(at('2026-11-30T14:00Z'), { kind: 'datetime', timestampMs: Date.UTC(2026, 10, 30, 14) })
  assert.deepEqual(at('2026-11-30T15:00:00.250+01:00'), { kind: 'datetime', timestampMs: Date.UTC(2026, 10, 30, 14, 0, 0, 250) })
  assert.deepEqual(at('2026-11-30T09:30:00-04:30'), { kind: 'datetime', timestampMs: Date.UTC(2026, 10, 30, 14) })
  assert.deepEqual(at('2026-11-30'), { kind: 'datetime', timestampMs: Date.UTC(2026, 10, 30) })
  assert.deepEqual(at('2028-02-29T00:00:00Z'), { kind: 'datetime', timestampMs: Date.UTC(2028, 1, 29) })
})

test('--to-datetime refuses everything else, naming the option and the accepted forms', () => {
  for (const text of ['0', '1 2 3', '2026-02-30', '2027-02-29', '2026-11-30T14:00:00', '2026-11-30 14:00:00Z', '2026-13-01', '2026-11-30T24:00:00Z',
    '2026-11-30T14:60:00Z', '2026-11-30T14:00:00+19:00', '2026-11-30T14:00:00+0100', '30/11/2026', 'yesterday', '']) {
    const result = parseOffsetSpec({ toDatetime: text })
    assert.ok('error' in result, `'${text}' must be refused`)
    assert.equal(result.error, `--to-datetime accepts an ISO 8601 instant only: 2026-11-30T14:00:00Z, 2026-11-30T15:00:00+01:00 (seconds and fractions optional) or a bare date 2026-11-30 (midnight UTC); got '${text}'`)
  }
})

describe('the kafka-consumer-groups.sh positions', () => {
  it('--to-current keeps the committed offset, and refuses a partition without one', () => {
    assert.deepEqual(resolveOffset({ kind: 'current' }, { current: 7, earliest: 0, latest: 10 }, 't-0'), { offset: 7 })
    assert.deepEqual(resolveOffset({ kind: 'current' }, { current: null, earliest: 0, latest: 10 }, 't-0'), { error: 't-0 has no committed offset to keep; use --to-offset, --to-earliest, --to-latest or --to-datetime' })
  })

  it('--by-duration is a datetime: now minus the duration', () => {
    assert.deepEqual(parseOffsetSpec({ byDuration: 'PT1H' }, Date.UTC(2026, 10, 30, 15)), { kind: 'datetime', timestampMs: Date.UTC(2026, 10, 30, 14) })
    assert.match((parseOffsetSpec({ byDuration: '1h' }) as { error: string }).error, /--by-duration accepts an ISO 8601 duration only: PnDTnHnMnS.*got '1h'/)
  })

  it('a negative --to-offset is refused before any cluster is read, pointing at --shift-by', () => {
    assert.deepEqual(parseOffsetSpec({ toOffset: '-3' }), { error: '--to-offset must be an offset 0 or more, got -3 (to move back from the current position, use --shift-by -3)' })
  })

  it('--from-file is one of the positions, exclusive with the others', () => {
    const positions = [{ topic: 'orders', partition: 0, offset: 4 }]
    assert.deepEqual(parseOffsetSpec({ fromFile: positions }), { kind: 'file', positions })
    assert.match((parseOffsetSpec({ fromFile: positions, toCurrent: true }) as { error: string }).error, /^give exactly one of .*--to-current.*--by-duration PnDTnHnMnS.*--from-file CSV$/)
  })
})
