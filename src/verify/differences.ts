/**
 * The differences `kmirror verify` found in one partition, as ranges of consecutive offsets of one kind: a record
 * missing on the target, an extra record on the target, a record that differs (naming the fields), a record
 * absent on a compacted side (compaction removes records on each cluster at its own time: reported, not a
 * difference), or a duplicate: a target record that equals a source record whose copy is paired elsewhere (the
 * flow copied it again after a restart: at-least-once; reported, not a difference). Memory is bounded: past
 * `limit` ranges only the counts grow.
 */
import type { RecordField } from './record-digest.ts'

export const DifferenceKinds = { MISSING: 'missing', EXTRA: 'extra', DIFFERING: 'differing', COMPACTED: 'compacted', DUPLICATE: 'duplicate' } as const
export type DifferenceKind = (typeof DifferenceKinds)[keyof typeof DifferenceKinds]

/** Inclusive offsets. */
export interface OffsetSpan {
  readonly first: number
  readonly last: number
}

export interface DifferenceRange {
  readonly kind: DifferenceKind
  /** Source offsets (for extra records: null; for duplicates: the source records they are copies of). */
  readonly source: OffsetSpan | null
  /** Target offsets (for missing records: where the copy should be, null when no target offset pairs with them). */
  readonly target: OffsetSpan | null
  readonly records: number
  /** Differing records: the fields that differ in at least one of them. */
  readonly fields?: readonly RecordField[]
  /** Compacted: the side that no longer holds the record. */
  readonly side?: 'source' | 'target'
}

export type DifferenceCounts = Record<DifferenceKind, number>

interface OpenRange {
  kind: DifferenceKind
  source: { first: number, last: number } | null
  target: { first: number, last: number } | null
  records: number
  fields: Set<RecordField>
  side?: 'source' | 'target'
}

function continues (span: { last: number } | null, offset: number | null): boolean {
  if (span === null || offset === null) return span === null && offset === null
  return offset === span.last + 1
}

export class DifferenceLog {
  readonly #limit: number
  readonly #ranges: OpenRange[] = []
  readonly counts: DifferenceCounts = { missing: 0, extra: 0, differing: 0, compacted: 0, duplicate: 0 }
  #omitted = 0

  constructor (limit: number) {
    this.#limit = limit
  }

  /** One record; merged into the last range when it continues it (same kind and side, next offsets). */
  add (kind: DifferenceKind, source: number | null, target: number | null, fields: readonly RecordField[] = [], side?: 'source' | 'target'): void {
    this.counts[kind]++
    const last = this.#ranges.at(-1)
    if (last !== undefined && last.kind === kind && last.side === side && continues(last.source, source) && continues(last.target, target)) {
      if (last.source !== null) last.source.last = source!
      if (last.target !== null) last.target.last = target!
      last.records++
      for (const f of fields) last.fields.add(f)
      return
    }
    if (this.#ranges.length >= this.#limit) {
      this.#omitted++
      return
    }
    this.#ranges.push({
      kind,
      source: source === null ? null : { first: source, last: source },
      target: target === null ? null : { first: target, last: target },
      records: 1,
      fields: new Set(fields),
      ...(side === undefined ? {} : { side })
    })
  }

  /** Records counted in ranges beyond the limit (not listed). */
  get omitted (): number {
    return this.#omitted
  }

  /** True when a missing, extra or differing record was found (compaction or duplicates alone are no difference). */
  get hasDifferences (): boolean {
    return this.counts.missing + this.counts.extra + this.counts.differing > 0
  }

  ranges (): DifferenceRange[] {
    return this.#ranges.map(r => ({
      kind: r.kind,
      source: r.source === null ? null : { ...r.source },
      target: r.target === null ? null : { ...r.target },
      records: r.records,
      ...(r.kind === DifferenceKinds.DIFFERING ? { fields: [...r.fields] } : {}),
      ...(r.side === undefined ? {} : { side: r.side })
    }))
  }
}
