/**
 * Pairs a partition's source offsets with its target offsets for `kmirror verify`, from the flow's offset history
 * (checkpoint/offset-history.ts): which source range must equal which target range, which offsets on either side
 * should hold nothing, and what is outside the comparison (not copied yet, before the history, in flight).
 *
 * Worked example. Runs (0→0, length 5), (6→5), replicated to source 10 / target 9, progress position 12, source
 * log [0, 15), target log [0, 11), no --since:
 *   paired       source [0, 5)  ↔ target [0, 5)
 *   source-only  source [5, 6)          a commit marker on the source: any record read there was never copied
 *   paired       source [6, 10) ↔ target [5, 9)
 *   source-only  source [10, 12)        read by the flow, nothing copied (markers, aborted records)
 *   not copied   source [12, 15)        the flow has not got there yet: in flight, not a difference
 *   unconfirmed  target [9, 11)         written past the stored position (copied, position not stored yet)
 *
 * A re-copy after a crash. Runs (0→0) and (5→10): the flow copied source [0, 10) to target [0, 10), stored position
 * 5 only, crashed, and copied again from source 5 to target 10. The first run is 5 records long (the shorter of
 * both sides' advance); source offsets then continue at once (no gap) while 5 target offsets lie between the runs:
 *   paired       source [0, 5)  ↔ target [0, 5)
 *   duplicate    target [5, 10) ~ source from 5   copies of the records paired again with target [10, ...)
 *   paired       source [5, ...) ↔ target [10, ...)
 * Such a target gap is compared by order with the source records the next run starts at: a record equal to its
 * counterpart is a duplicate, any other an extra record (so a gap that is no re-copy is still reported).
 */
import type { RunStart } from '../checkpoint/offset-history.ts'

/** Offsets [from, to). */
export interface OffsetRange {
  readonly from: number
  readonly to: number
}

export const SegmentKinds = {
  /** Source [from, to) must equal target [from, to) record by record. */
  PAIRED: 'paired',
  /** Source offsets that hold nothing copied: a record read there is missing on the target. */
  SOURCE_ONLY: 'source-only',
  /** Target offsets that hold no copy: a record read there is extra. */
  TARGET_ONLY: 'target-only',
  /**
   * Source [from, to) was copied to target [from, to) but where offsets are skipped inside is unknown (between two
   * MM2 offset syncs whose offsets do not advance alike): the n-th record of one side pairs with the n-th of the other.
   */
  ORDERED: 'ordered',
  /**
   * Target [from, to) lies between two runs while the source went on without a gap: the flow copied these records
   * again from `source.from` after a restart. The n-th target record is compared with the n-th source record from
   * there: equal, a duplicate; else extra.
   */
  DUPLICATE: 'duplicate'
} as const

export type Segment =
  | { readonly kind: typeof SegmentKinds.PAIRED | typeof SegmentKinds.ORDERED | typeof SegmentKinds.DUPLICATE, readonly source: OffsetRange, readonly target: OffsetRange }
  | { readonly kind: typeof SegmentKinds.SOURCE_ONLY, readonly source: OffsetRange }
  | { readonly kind: typeof SegmentKinds.TARGET_ONLY, readonly target: OffsetRange }

export interface PairingInput {
  /** The partition's runs, oldest first (PartitionOffsetHistory.runs). */
  readonly runs: readonly RunStart[]
  /** One past the last copied source record, and its target offset (PartitionOffsetHistory.replicatedEnd / targetEnd). */
  readonly replicatedEnd: number
  readonly targetEnd: number
  /** The flow's stored position (next source offset to read); -1 when none. */
  readonly position: number
  /** Log start and end (last stable offset) of each side. */
  readonly source: OffsetRange
  readonly target: OffsetRange
  /** First source offset to compare (the log start, or the offset of `--since`). */
  readonly sourceFrom: number
}

export interface Pairing {
  readonly segments: readonly Segment[]
  /** Source offsets the flow has not copied yet (past its position): in flight, not a difference. */
  readonly notCopied: OffsetRange | null
  /** Target offsets past the history's end: copies whose position is not stored yet. Not compared. */
  readonly unconfirmed: OffsetRange | null
  /** Source records the flow should have copied but that precede its first copied offset. */
  readonly beforeHistory: OffsetRange | null
  /** Target offsets before the first run: copies whose history was trimmed, or records of someone else. Not compared. */
  readonly targetBeforeHistory: OffsetRange | null
}

export function range (from: number, to: number): OffsetRange | null {
  return to > from ? { from, to } : null
}

/** Records in run `i`: its stored length, else up to the next run on both sides, else up to the replicated end. */
function runLength (runs: readonly RunStart[], i: number, replicatedEnd: number): number {
  const run = runs[i]!
  if (run.length !== undefined) return run.length
  const next = runs[i + 1]
  if (next === undefined) return Math.max(0, replicatedEnd - run.upstream)
  return Math.max(0, Math.min(next.upstream - run.upstream, next.downstream - run.downstream))
}

/** The segments of a partition with a history, clipped to `sourceFrom` and to the target's log start. */
export function pairOffsets (input: PairingInput): Pairing {
  const { runs, sourceFrom } = input
  const copiedEnd = Math.max(input.replicatedEnd, input.position)
  const notCopied = range(Math.max(copiedEnd, sourceFrom), input.source.to)
  if (runs.length === 0) {
    return { segments: [], notCopied: range(Math.max(input.source.from, sourceFrom), input.source.to), unconfirmed: range(input.target.from, input.target.to), beforeHistory: null, targetBeforeHistory: null }
  }
  const first = runs[0]!
  const segments: Segment[] = []
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!
    const length = runLength(runs, i, input.replicatedEnd)
    pushPaired(segments, run.upstream, run.downstream, length, sourceFrom, input.target.from)
    const next = runs[i + 1]
    const gapSource = { from: run.upstream + length, to: next?.upstream ?? copiedEnd }
    const gapTarget = { from: run.downstream + length, to: next?.downstream ?? input.targetEnd }
    pushSourceOnly(segments, Math.max(gapSource.from, sourceFrom), gapSource.to)
    if (gapSource.to <= sourceFrom) continue
    const target = { from: Math.max(gapTarget.from, input.target.from), to: gapTarget.to }
    // The source went on without a gap while the target has records between the runs: a re-copy (file comment).
    if (next !== undefined && gapSource.from >= gapSource.to) pushDuplicate(segments, target, { from: next.upstream, to: copiedEnd })
    else pushTargetOnly(segments, target.from, target.to)
  }
  return {
    segments,
    notCopied,
    unconfirmed: range(Math.max(input.targetEnd, input.target.from), input.target.to),
    beforeHistory: range(Math.max(input.source.from, sourceFrom), Math.min(first.upstream, input.source.to)),
    targetBeforeHistory: sourceFrom <= first.upstream ? range(input.target.from, Math.min(first.downstream, input.target.to)) : null
  }
}

/**
 * A run clipped to source offsets at or after `sourceFrom` and target offsets at or after the target's log
 * start (older copies were deleted by the target's retention: nothing to compare).
 */
function pushPaired (segments: Segment[], upstream: number, downstream: number, length: number, sourceFrom: number, targetLogStart: number): void {
  const skip = Math.max(0, sourceFrom - upstream, targetLogStart - downstream)
  if (skip >= length) return
  segments.push({
    kind: SegmentKinds.PAIRED,
    source: { from: upstream + skip, to: upstream + length },
    target: { from: downstream + skip, to: downstream + length }
  })
}

function pushSourceOnly (segments: Segment[], from: number, to: number): void {
  if (to > from) segments.push({ kind: SegmentKinds.SOURCE_ONLY, source: { from, to } })
}

function pushDuplicate (segments: Segment[], target: OffsetRange, source: OffsetRange): void {
  if (target.to > target.from) segments.push({ kind: SegmentKinds.DUPLICATE, source, target })
}

function pushTargetOnly (segments: Segment[], from: number, to: number): void {
  if (to > from) segments.push({ kind: SegmentKinds.TARGET_ONLY, target: { from, to } })
}
