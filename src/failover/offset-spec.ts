/**
 * Where `kmirror offsets set` moves a partition: pure resolution of `--to-offset`, `--to-earliest`,
 * `--to-latest`, `--to-current`, `--to-datetime`, `--by-duration` (a datetime: now minus the duration),
 * `--shift-by` and `--from-file` (an offset per partition, offsets-csv.ts) against the partition's valid range.
 *
 * The valid range of a committed offset is [log start, high watermark]: the log start re-reads everything
 * still stored, the high watermark is "caught up". Anything outside is refused with that range, never
 * clamped: a clamped position is not the one the operator asked for.
 */
import { ISO_DURATION_FORMS, parseIsoDuration } from './iso-duration.ts'
import { ISO_INSTANT_FORMS, parseIsoInstant } from './iso-instant.ts'
import type { CsvPosition } from './offsets-csv.ts'

export type OffsetSpec =
  | { readonly kind: 'offset', readonly offset: number }
  | { readonly kind: 'earliest' }
  | { readonly kind: 'latest' }
  | { readonly kind: 'current' }
  | { readonly kind: 'datetime', readonly timestampMs: number }
  | { readonly kind: 'shift', readonly by: number }
  | { readonly kind: 'file', readonly positions: readonly CsvPosition[] }

/** What one partition resolves against: a file's spec becomes that partition's `offset` first. */
export type PartitionSpec = Exclude<OffsetSpec, { kind: 'file' }>

export interface PartitionRange {
  readonly current: number | null
  readonly earliest: number
  readonly latest: number
  /** For 'datetime': the first offset at or after the time, -1 when every record is older. */
  readonly atTime?: number
}

export type Resolved = { readonly offset: number } | { readonly error: string }

export function resolveOffset (spec: PartitionSpec, range: PartitionRange, label: string): Resolved {
  let offset: number
  switch (spec.kind) {
    case 'offset': offset = spec.offset; break
    case 'earliest': return { offset: range.earliest }
    case 'latest': return { offset: range.latest }
    case 'current':
      if (range.current === null) return { error: `${label} has no committed offset to keep; use --to-offset, --to-earliest, --to-latest or --to-datetime` }
      offset = range.current
      break
    // No record at or after the time: the position after the last record.
    case 'datetime': return { offset: range.atTime === undefined || range.atTime < 0 ? range.latest : range.atTime }
    case 'shift':
      if (range.current === null) return { error: `${label} has no committed offset to shift; use --to-offset, --to-earliest, --to-latest or --to-datetime` }
      offset = range.current + spec.by
      break
  }
  if (offset < range.earliest || offset > range.latest) {
    return { error: `offset ${offset} of ${label} is outside the valid range [${range.earliest}, ${range.latest}] (log start to end)` }
  }
  return { offset }
}

export interface OffsetSpecOptions {
  readonly toOffset?: string
  readonly toEarliest?: boolean
  readonly toLatest?: boolean
  readonly toCurrent?: boolean
  readonly toDatetime?: string
  readonly byDuration?: string
  readonly shiftBy?: string
  /** `--from-file`, already read and parsed. */
  readonly fromFile?: readonly CsvPosition[]
}

const CHOICES = 'give exactly one of --to-offset N, --to-earliest, --to-latest, --to-current, --to-datetime ISO8601, --by-duration PnDTnHnMnS, --shift-by N, --from-file CSV'

/** The one spec named on the command line, or an error naming the choices. `nowMs` anchors --by-duration. */
export function parseOffsetSpec (options: OffsetSpecOptions, nowMs: number = Date.now()): OffsetSpec | { error: string } {
  const given: OffsetSpec[] = []
  const int = (text: string, name: string): number | string => /^-?\d+$/.test(text.trim()) && Number.isSafeInteger(Number(text)) ? Number(text) : `${name} must be an integer, got '${text}'`
  if (options.toOffset !== undefined) {
    const n = int(options.toOffset, '--to-offset')
    if (typeof n === 'string') return { error: n }
    if (n < 0) return { error: `--to-offset must be an offset 0 or more, got ${n} (to move back from the current position, use --shift-by ${n})` }
    given.push({ kind: 'offset', offset: n })
  }
  if (options.toEarliest === true) given.push({ kind: 'earliest' })
  if (options.toLatest === true) given.push({ kind: 'latest' })
  if (options.toCurrent === true) given.push({ kind: 'current' })
  if (options.toDatetime !== undefined) {
    const ms = parseIsoInstant(options.toDatetime)
    if (ms === null) return { error: `--to-datetime accepts an ISO 8601 instant only: ${ISO_INSTANT_FORMS}; got '${options.toDatetime}'` }
    given.push({ kind: 'datetime', timestampMs: ms })
  }
  if (options.byDuration !== undefined) {
    const ms = parseIsoDuration(options.byDuration)
    if (ms === null) return { error: `--by-duration accepts an ISO 8601 duration only: ${ISO_DURATION_FORMS}; got '${options.byDuration}'` }
    given.push({ kind: 'datetime', timestampMs: nowMs - ms })
  }
  if (options.shiftBy !== undefined) {
    const n = int(options.shiftBy, '--shift-by')
    if (typeof n === 'string') return { error: n }
    given.push({ kind: 'shift', by: n })
  }
  if (options.fromFile !== undefined) given.push({ kind: 'file', positions: options.fromFile })
  if (given.length !== 1) return { error: CHOICES }
  return given[0]!
}
