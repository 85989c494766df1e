/**
 * Compares one partition's segments (pairing.ts) record by record, streaming both sides: memory holds one fetch
 * of each side, the per-range digests and at most `maxDifferences` difference ranges, whatever the partition's size.
 *
 * In a paired segment source offset s pairs with target offset t = s - source.from + target.from. Both sides are
 * read in offset order and merged on that pairing: a pair present on both sides is compared field by field, a
 * source record without its pair is missing on the target, a target record without its pair is extra (on a
 * compacted side, an absent record is reported as compacted, not as a difference). Offsets absent on both sides
 * (transaction markers, aborted records) are no records at all.
 *
 * Each paired segment is cut into ranges of at most `rangeRecords` source offsets; each range reports each side's
 * record count and digest (record-digest.ts). An ORDERED segment (MM2's offset syncs, pairing.ts) pairs records by
 * their order instead, and is one range. A DUPLICATE segment (a re-copy after a restart) is no range: each of its
 * target records is a duplicate when it equals the source record of the same rank from `source.from`, else extra.
 */
import type { FetchedRecord } from '../kafka/record-fetcher.ts'
import { DifferenceKinds, DifferenceLog } from './differences.ts'
import { SegmentKinds, type OffsetRange, type Segment } from './pairing.ts'
import { differingFields, RangeDigest } from './record-digest.ts'

/** Records of one side in [from, to), in offset order; null at the end. */
export interface RecordCursor {
  next: () => Promise<FetchedRecord | null>
  /** Offsets below this were deleted by retention while the cursor read (0 when none were). */
  deletedBelow?: () => number
}

export type OpenCursor = (range: OffsetRange) => RecordCursor

export interface SideDigest {
  readonly from: number
  readonly to: number
  readonly records: number
  readonly digest: string
}

export interface RangeReport {
  readonly source: SideDigest
  readonly target: SideDigest
  readonly equal: boolean
}

export interface CompareOptions {
  readonly rangeRecords: number
  readonly maxDifferences: number
  readonly sourceCompacted: boolean
  readonly targetCompacted: boolean
  /** Told of the records read on both sides, as they are read. */
  readonly onRecords?: (records: number) => void
}

export interface PartitionComparison {
  readonly ranges: RangeReport[]
  readonly differences: DifferenceLog
  readonly sourceRecords: number
  readonly targetRecords: number
}

interface Sides {
  readonly source: OpenCursor
  readonly target: OpenCursor
}

interface Tally {
  source: number
  target: number
}

export async function comparePartition (segments: readonly Segment[], sides: Sides, options: CompareOptions): Promise<PartitionComparison> {
  const differences = new DifferenceLog(options.maxDifferences)
  const ranges: RangeReport[] = []
  const tally: Tally = { source: 0, target: 0 }
  for (const segment of segments) {
    if (segment.kind === SegmentKinds.PAIRED) {
      for (const chunk of chunks(segment.source, segment.target, options.rangeRecords)) {
        ranges.push(await compareRange(chunk.source, chunk.target, sides, differences, options, tally, 'offset'))
      }
    } else if (segment.kind === SegmentKinds.ORDERED) {
      ranges.push(await compareRange(segment.source, segment.target, sides, differences, options, tally, 'order'))
    } else if (segment.kind === SegmentKinds.DUPLICATE) {
      await compareDuplicates(segment.source, segment.target, sides, differences, options, tally)
    } else if (segment.kind === SegmentKinds.SOURCE_ONLY) {
      await drain(sides.source(segment.source), r => { tally.source++; differences.add(DifferenceKinds.MISSING, r.offset, null) }, options)
    } else {
      await drain(sides.target(segment.target), r => { tally.target++; differences.add(DifferenceKinds.EXTRA, null, r.offset) }, options)
    }
  }
  return { ranges, differences, sourceRecords: tally.source, targetRecords: tally.target }
}

function * chunks (source: OffsetRange, target: OffsetRange, size: number): Generator<{ source: OffsetRange, target: OffsetRange }> {
  for (let from = source.from; from < source.to; from += size) {
    const to = Math.min(source.to, from + size)
    const shift = target.from - source.from
    yield { source: { from, to }, target: { from: from + shift, to: to + shift } }
  }
}

async function drain (cursor: RecordCursor, each: (record: FetchedRecord) => void, options: CompareOptions): Promise<void> {
  let read = 0
  for (let r = await cursor.next(); r !== null; r = await cursor.next()) {
    each(r)
    read++
    if (read % 1000 === 0) options.onRecords?.(1000)
  }
  options.onRecords?.(read % 1000)
}

/**
 * Target records copied again after a restart, compared by order with the source records from `source.from`: equal,
 * a duplicate of that source record; different, or past the source's end, extra. Only the target's records count as
 * read here (the source ones are counted where they are paired).
 */
async function compareDuplicates (source: OffsetRange, target: OffsetRange, sides: Sides, differences: DifferenceLog, options: CompareOptions, tally: Tally): Promise<void> {
  const sourceCursor = sides.source(source)
  const targetCursor = sides.target(target)
  let sourceDone = false
  let read = 0
  for (let t = await targetCursor.next(); t !== null; t = await targetCursor.next()) {
    read++
    const s = sourceDone ? null : await sourceCursor.next()
    if (s === null) sourceDone = true
    if (s !== null && differingFields(s, t).length === 0) differences.add(DifferenceKinds.DUPLICATE, s.offset, t.offset)
    else differences.add(DifferenceKinds.EXTRA, null, t.offset)
  }
  tally.target += read
  options.onRecords?.(read)
}

/**
 * Merges one range of both sides; see the file comment. By `offset`, records pair by their offsets; by `order`
 * (an ORDERED segment), the n-th record of each side pair, and a record left over on one side has no pair offset.
 */
async function compareRange (source: OffsetRange, target: OffsetRange, sides: Sides, differences: DifferenceLog, options: CompareOptions, tally: Tally, pairBy: 'offset' | 'order'): Promise<RangeReport> {
  const byOffset = pairBy === 'offset'
  const shift = target.from - source.from
  const sourceCursor = sides.source(source)
  const targetCursor = sides.target(target)
  const digests = { source: new RangeDigest(), target: new RangeDigest() }
  let s = await sourceCursor.next()
  let t = await targetCursor.next()
  while (s !== null || t !== null) {
    // By order, both sides advance together: a present record always pairs with the other side's next one.
    const sourceAt = s === null ? Number.POSITIVE_INFINITY : byOffset ? s.offset : 0
    const pairedAt = t === null ? Number.POSITIVE_INFINITY : byOffset ? t.offset - shift : 0
    if (s !== null && sourceAt <= pairedAt) digests.source.add(s)
    if (t !== null && pairedAt <= sourceAt) digests.target.add(t)
    if (s !== null && t !== null && sourceAt === pairedAt) {
      const fields = differingFields(s, t)
      if (fields.length > 0) differences.add(DifferenceKinds.DIFFERING, s.offset, t.offset, fields)
    } else if (s !== null && sourceAt < pairedAt) {
      recordAlone(differences, { offset: s.offset, pair: byOffset ? s.offset + shift : null, side: 'source' }, options.targetCompacted, targetCursor)
    } else if (t !== null) {
      recordAlone(differences, { offset: t.offset, pair: byOffset ? t.offset - shift : null, side: 'target' }, options.sourceCompacted, sourceCursor)
    }
    const advanceSource = s !== null && sourceAt <= pairedAt
    const advanceTarget = t !== null && pairedAt <= sourceAt
    if (advanceSource) s = await sourceCursor.next()
    if (advanceTarget) t = await targetCursor.next()
  }
  const sourceDigest = { ...source, records: digests.source.records, digest: digests.source.finish() }
  const targetDigest = { ...target, records: digests.target.records, digest: digests.target.finish() }
  tally.source += sourceDigest.records
  tally.target += targetDigest.records
  options.onRecords?.(sourceDigest.records + targetDigest.records)
  return { source: sourceDigest, target: targetDigest, equal: sourceDigest.records === targetDigest.records && sourceDigest.digest === targetDigest.digest }
}

/**
 * A record of one side without its pair on the other: missing (a source record) or extra (a target record); on a
 * compacted other side, compacted; nothing when its pair was deleted by retention while the range was read.
 */
function recordAlone (differences: DifferenceLog, alone: { offset: number, pair: number | null, side: 'source' | 'target' }, otherCompacted: boolean, other: RecordCursor): void {
  const { offset, pair, side } = alone
  if (pair !== null && pair < (other.deletedBelow?.() ?? 0)) return
  const source = side === 'source' ? offset : pair
  const target = side === 'source' ? pair : offset
  if (otherCompacted) differences.add(DifferenceKinds.COMPACTED, source, target, [], side === 'source' ? 'target' : 'source')
  else if (side === 'source') differences.add(DifferenceKinds.MISSING, source, target)
  else differences.add(DifferenceKinds.EXTRA, null, target)
}
