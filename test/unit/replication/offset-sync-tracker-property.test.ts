/*
 * Property tests: for random partitions (seeded, so a failure names its seed), the syncs OffsetSyncTracker
 * emits translate every copied record exactly, whether it was fed record by record or run by run, and their
 * number grows with discontinuities and offset.lag.max, not with records.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { OffsetSyncTracker, type OffsetSyncEntry } from '../../../src/replication/offset-sync-tracker.ts'
import { effectiveSyncs, translateByStep, translateClamped } from '../../fakes/offset-translation.ts'
import { createPrng, type Prng } from '../../fakes/prng.ts'

const KEY = 't\u00000'
const SEEDS = 300
const RECORDS = 400
const LAGS = [0, 1, 2, 3, 7, 50, 100] as const

interface Pair { readonly up: number, readonly down: number }

interface Shape {
  /** The target sometimes jumps (another producer, a pre-filled topic). */
  readonly downstreamGaps: boolean
  /** The source is sometimes read again from an earlier offset (records re-sent after a failed write). */
  readonly rewinds: boolean
}

/**
 * (source offset, target offset) of each copied record. The source holds records with gaps of 1 (markers) or
 * more (aborted transactions, compaction); with rewinds, the copy sometimes goes back a few records and copies
 * them again (a write that failed after part of it was acknowledged), as a real re-read would.
 */
function generate (rng: Prng, shape: Shape): Pair[] {
  const existing: number[] = []
  let offset = rng.int(0, 1000)
  for (let i = 0; i < RECORDS; i++) {
    existing.push(offset)
    const r = rng.next()
    offset += r < 0.08 ? 2 : r < 0.11 ? rng.int(3, 40) : 1
  }
  const pairs: Pair[] = []
  let down = rng.int(0, 1000)
  for (let i = 0; i < existing.length; i++) {
    if (shape.rewinds && rng.chance(0.01)) i = Math.max(0, i - rng.int(0, 20))
    pairs.push({ up: existing[i]!, down })
    down += shape.downstreamGaps && rng.chance(0.03) ? rng.int(2, 20) : 1
  }
  return pairs
}

/** Maximal runs whose source and target offsets both advance by one. */
function runsOf (pairs: readonly Pair[]): { first: Pair, count: number }[] {
  const runs: { first: Pair, count: number }[] = []
  for (const [i, p] of pairs.entries()) {
    const prev = pairs[i - 1]
    const last = runs.at(-1)
    if (last !== undefined && prev !== undefined && p.up === prev.up + 1 && p.down === prev.down + 1) last.count++
    else runs.push({ first: p, count: 1 })
  }
  return runs
}

/** Everything the tracker emits for the pairs: the due syncs, then the promoted delayed one (a flush). */
function drain (tracker: OffsetSyncTracker): OffsetSyncEntry[] {
  const out = tracker.takePending()
  tracker.promoteDelayed()
  return [...out, ...tracker.takePending()]
}

function syncsPerRecord (pairs: readonly Pair[], lag: number): OffsetSyncEntry[] {
  const tracker = new OffsetSyncTracker(lag)
  for (const p of pairs) tracker.record(KEY, 't', 0, p.up, p.down)
  return drain(tracker)
}

function syncsPerRun (pairs: readonly Pair[], lag: number): OffsetSyncEntry[] {
  const tracker = new OffsetSyncTracker(lag)
  for (const run of runsOf(pairs)) tracker.recordRun(KEY, 't', 0, run.first.up, run.first.down, run.count)
  return drain(tracker)
}

/** Every record's source offset translates to its target offset (its latest copy when it was copied twice). */
function assertExact (pairs: readonly Pair[], syncs: readonly OffsetSyncEntry[], context: string): void {
  const latest = new Map<number, number>()
  for (const p of pairs) latest.set(p.up, p.down)
  const kept = effectiveSyncs(syncs)
  for (const [up, down] of latest) {
    assert.equal(translateByStep(kept, up), down, `${context}: source offset ${up}`)
  }
}

function assertBounded (pairs: readonly Pair[], syncs: readonly OffsetSyncEntry[], lag: number, context: string): void {
  const discontinuities = runsOf(pairs).length - 1
  const bound = discontinuities + Math.floor(pairs.length / lag) + 2 // + first record + promoted one
  assert.ok(syncs.length <= bound, `${context}: ${syncs.length} syncs > ${bound} (${discontinuities} discontinuities)`)
}

function forEachCase (shape: Shape, check: (pairs: Pair[], lag: number, context: string) => void): void {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const rng = createPrng(seed)
    const lag = rng.pick(LAGS)
    check(generate(rng, shape), lag, `seed ${seed}, offset.lag.max ${lag}`)
  }
}

describe('OffsetSyncTracker properties', () => {
  const shapes: [string, Shape][] = [
    ['source gaps, contiguous target', { downstreamGaps: false, rewinds: false }],
    ['source gaps and target gaps', { downstreamGaps: true, rewinds: false }],
    ['source gaps, target gaps and source rewinds', { downstreamGaps: true, rewinds: true }]
  ]
  for (const [name, shape] of shapes) {
    it(`translates every record exactly, fed record by record or run by run (${name})`, () => {
      forEachCase(shape, (pairs, lag, context) => {
        assertExact(pairs, syncsPerRecord(pairs, lag), `${context}, record`)
        assertExact(pairs, syncsPerRun(pairs, lag), `${context}, recordRun`)
      })
    })

    it(`emits the same syncs from recordRun as from record for offset.lag.max > 0 (${name})`, () => {
      forEachCase(shape, (pairs, lag, context) => {
        if (lag > 0) assert.deepEqual(syncsPerRun(pairs, lag), syncsPerRecord(pairs, lag), context)
      })
    })

    it(`bounds the syncs by discontinuities + records / offset.lag.max + 2 (${name})`, () => {
      forEachCase(shape, (pairs, lag, context) => {
        if (lag === 0) return
        assertBounded(pairs, syncsPerRecord(pairs, lag), lag, `${context}, record`)
        assertBounded(pairs, syncsPerRun(pairs, lag), lag, `${context}, recordRun`)
      })
    })
  }

  it('syncs every record with recordRun and offset.lag.max = 0, exactly as record does (MM2 semantics)', () => {
    // MM2's checkpoint connector rounds up between syncs, so at lag 0 it needs a sync at every record.
    forEachCase({ downstreamGaps: false, rewinds: false }, (pairs, lag, context) => {
      if (lag !== 0) return
      assert.equal(syncsPerRecord(pairs, 0).length, pairs.length, context)
      assert.deepEqual(syncsPerRun(pairs, 0), syncsPerRecord(pairs, 0), context)
    })
  })

  it('translates a committed offset inside a source gap to the next copied record once capped by the next sync', () => {
    // Given a contiguous target, every source offset C from the first to the last record (gaps included)
    // must map to the target offset of the first record at or after C (design-notes §1)
    forEachCase({ downstreamGaps: false, rewinds: false }, (pairs, lag, context) => {
      const syncs = effectiveSyncs(syncsPerRun(pairs, lag))
      let next = 0
      for (let c = pairs[0]!.up; c <= pairs.at(-1)!.up; c++) {
        while (pairs[next]!.up < c) next++
        assert.equal(translateClamped(syncs, c), pairs[next]!.down, `${context}: committed offset ${c}`)
      }
    })
  })

  it('overshoots with the plain step rule when a committed offset lies inside a gap wider than one offset', () => {
    // Given records 0..9 -> 0..9, an aborted transaction at 10..19 and its marker at 20, then 21 -> 10
    const tracker = new OffsetSyncTracker(100)
    tracker.recordRun(KEY, 't', 0, 0, 0, 10)
    tracker.recordRun(KEY, 't', 0, 21, 10, 5)
    const syncs = drain(tracker)
    // When a consumer committed 15 (inside the aborted range): the next record it would read is 21 -> 10
    // Then the step rule says 15 (skipping five copied records), the capped rule says 10
    assert.equal(translateByStep(syncs, 15), 15)
    assert.equal(translateClamped(syncs, 15), 10)
  })
})
