/**
 * Pairing from MM2's offset syncs, for partitions copied by MirrorMaker 2 (no kmirror offset history). A sync
 * (u → d) says source record u was written at target offset d: an exact anchor. Between two anchors, when source
 * and target offsets advance alike the records pair by offset (PAIRED); otherwise something in between took offsets
 * on one side only (a transaction marker, an aborted record, a sync MM2 dropped), and the records pair by order
 * (ORDERED). MM2's syncs topic is compacted, so the oldest anchors may be gone: the stretch before the first one
 * pairs by order from both log starts.
 *
 * Worked example. Syncs (0 → 0), (10 → 10), (20 → 19), MM2's position 25, source log [0, 30), target log [0, 24):
 *   paired   source [0, 10)  ↔ target [0, 10)
 *   ordered  source [10, 20) ↔ target [10, 19)   one offset of the source holds no copied record
 *   ordered  source [20, 25) ↔ target [19, 24)   after the last sync: up to MM2's position
 *   not copied yet: source [25, 30)
 */
import type { OffsetSyncValue } from '../formats/offset-sync.ts'
import { range, SegmentKinds, type OffsetRange, type Pairing, type Segment } from './pairing.ts'

export interface SyncPairingInput {
  /** The partition's syncs in the order they were written. */
  readonly syncs: readonly OffsetSyncValue[]
  /** MM2's stored position (next source offset to copy); -1 when none. */
  readonly position: number
  readonly source: OffsetRange
  readonly target: OffsetRange
  readonly sourceFrom: number
}

/**
 * The anchors of the newest copy: a sync at or before an earlier one's source offset (MM2 restarted and copied
 * again) replaces the anchors from that offset on, as the newest copy is where consumers of the target read.
 */
export function anchorsOf (syncs: readonly OffsetSyncValue[]): OffsetSyncValue[] {
  const anchors: OffsetSyncValue[] = []
  for (const sync of syncs) {
    while (anchors.length > 0 && anchors.at(-1)!.upstreamOffset >= sync.upstreamOffset) anchors.pop()
    anchors.push(sync)
  }
  return anchors
}

export function pairBySyncs (input: SyncPairingInput): Pairing & { readonly skipped: OffsetRange | null } {
  const anchors = anchorsOf(input.syncs)
  const { source, target, sourceFrom } = input
  const last = anchors.at(-1)
  if (last === undefined) {
    return { segments: [], notCopied: range(Math.max(source.from, sourceFrom), source.to), unconfirmed: range(target.from, target.to), beforeHistory: null, targetBeforeHistory: null, skipped: null }
  }
  const copiedEnd = Math.max(input.position, last.upstreamOffset + 1)
  const tailTargetEnd = Math.min(target.to, last.downstreamOffset + (copiedEnd - last.upstreamOffset))
  // Points: the log starts (exact when a sync pairs them), each sync (exact), the end of what was copied (not exact).
  const startsPaired = anchors.some(a => a.upstreamOffset === source.from && a.downstreamOffset === target.from)
  const points = [
    { upstreamOffset: source.from, downstreamOffset: target.from, exact: startsPaired },
    ...anchors.filter(a => a.upstreamOffset > source.from && a.downstreamOffset > target.from).map(a => ({ ...a, exact: true })),
    { upstreamOffset: copiedEnd, downstreamOffset: Math.max(tailTargetEnd, last.downstreamOffset), exact: false }
  ]
  const segments: Segment[] = []
  let skippedTo = -1
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!
    const b = points[i + 1]!
    if (b.upstreamOffset <= a.upstreamOffset) continue
    const s = { from: a.upstreamOffset, to: b.upstreamOffset }
    const t = { from: a.downstreamOffset, to: Math.max(a.downstreamOffset, b.downstreamOffset) }
    const alike = a.exact && b.exact && s.to - s.from === t.to - t.from
    if (alike) {
      const skip = Math.max(0, sourceFrom - s.from)
      if (skip < s.to - s.from) segments.push({ kind: SegmentKinds.PAIRED, source: { from: s.from + skip, to: s.to }, target: { from: t.from + skip, to: t.to } })
    } else if (s.from >= sourceFrom) {
      segments.push({ kind: SegmentKinds.ORDERED, source: s, target: t })
    } else if (s.to > sourceFrom) {
      // --since falls inside a stretch paired by order: where its records start on the target is unknown.
      skippedTo = s.to
    }
  }
  return {
    segments,
    notCopied: range(Math.max(copiedEnd, sourceFrom), source.to),
    unconfirmed: range(Math.max(tailTargetEnd, target.from), target.to),
    beforeHistory: null,
    targetBeforeHistory: null,
    skipped: skippedTo < 0 ? null : range(Math.max(sourceFrom, source.from), skippedTo)
  }
}
