import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PartitionOffsetHistory } from '../../../src/checkpoint/offset-history.ts'
import { OffsetSyncTracker } from '../../../src/replication/offset-sync-tracker.ts'

/** A small seeded generator (mulberry32), so failures reproduce. */
function random (seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6D2B79F5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Copied { up: number, down: number }

/** Copies records with random source gaps (markers, aborts, compaction) and, when asked, foreign target records. */
function copy (seed: number, count: number, foreign: boolean): Copied[] {
  const next = random(seed)
  const out: Copied[] = []
  let up = Math.floor(next() * 50)
  let down = Math.floor(next() * 20)
  for (let i = 0; i < count; i++) {
    out.push({ up, down })
    up += next() < 0.15 ? 1 + Math.floor(next() * 12) : 1
    down += foreign && next() < 0.05 ? 1 + Math.floor(next() * 3) : 1
  }
  return out
}

/** Feeds the copy through the real tracker and the history, as the data path and checkpoint store will. */
function historyOf (records: readonly Copied[], lagMax: number): PartitionOffsetHistory {
  const tracker = new OffsetSyncTracker(lagMax)
  for (const r of records) tracker.record('t-0', 't', 0, r.up, r.down)
  tracker.promoteDelayed()
  const history = new PartitionOffsetHistory()
  for (const s of tracker.takePending()) {
    if (s.runStart) history.addRunStart(s.upstreamOffset, s.downstreamOffset, s.previousUpstream)
    else history.markReplicatedTo(s.upstreamOffset + 1, s.downstreamOffset + 1)
  }
  return history
}

describe('PartitionOffsetHistory', () => {
  it('follows the worked example of its class comment', () => {
    const h = new PartitionOffsetHistory()
    h.addRunStart(0, 0)
    h.markReplicatedTo(5, 5)
    h.addRunStart(6, 5)
    h.markReplicatedTo(10, 9)
    assert.deepEqual(h.runs, [{ upstream: 0, downstream: 0 }, { upstream: 6, downstream: 5 }])
    assert.deepEqual([3, 5, 8, 10].map(c => h.toTarget(c).offset), [3, 5, 7, 9])
    assert.ok([3, 5, 8, 10].every(c => h.toTarget(c).exact))
    assert.deepEqual(h.toTarget(12), { offset: 9, exact: false, reason: 'source offset 12 is beyond what has been replicated (up to 10)' })
  })

  for (const foreign of [false, true]) {
    for (const lagMax of [0, 1, 7, 100]) {
      it(`translates every committed source offset exactly to the next copied record's target offset (lag ${lagMax}${foreign ? ', foreign target records' : ''})`, () => {
        for (let seed = 1; seed <= 60; seed++) {
          const records = copy(seed, 300, foreign)
          const history = historyOf(records, lagMax)
          let next = 0
          for (let c = records[0]!.up; c <= records.at(-1)!.up + 1; c++) {
            while (next < records.length && records[next]!.up < c) next++
            const expected = next < records.length ? records[next]!.down : records.at(-1)!.down + 1
            const t = history.toTarget(c)
            assert.deepEqual([t.offset, t.exact], [expected, true], `seed ${seed}, committed ${c}`)
          }
        }
      })
      it(`translates every target offset of a copied record back to its source offset (lag ${lagMax}${foreign ? ', foreign target records' : ''})`, () => {
        for (let seed = 1; seed <= 60; seed++) {
          const records = copy(seed, 300, foreign)
          const history = historyOf(records, lagMax)
          for (const r of records) assert.deepEqual(history.toSource(r.down), { offset: r.up, exact: true }, `seed ${seed}, target ${r.down}`)
          const end = history.toSource(records.at(-1)!.down + 1)
          assert.deepEqual(end, { offset: records.at(-1)!.up + 1, exact: true })
        }
      })
      it(`keeps one entry per run, not per record (lag ${lagMax}${foreign ? ', foreign target records' : ''})`, () => {
        const records = copy(7, 2000, foreign)
        let runs = 1
        for (let i = 1; i < records.length; i++) {
          if (records[i]!.up - records[i - 1]!.up !== 1 || records[i]!.down - records[i - 1]!.down !== 1) runs++
        }
        assert.equal(historyOf(records, lagMax).runs.length, runs)
      })
    }
  }

  it('replaces the runs a re-copy after a crash covers again: the newest copy is where consumers read', () => {
    const h = new PartitionOffsetHistory()
    h.addRunStart(0, 0)
    h.markReplicatedTo(150, 150)
    h.addRunStart(100, 150)
    h.markReplicatedTo(150, 200)
    assert.deepEqual(h.runs, [{ upstream: 0, downstream: 0 }, { upstream: 100, downstream: 150 }])
    assert.deepEqual(h.toTarget(120), { offset: 170, exact: true })
    assert.deepEqual(h.toTarget(50), { offset: 50, exact: true })
  })

  it('replaces every run mapping into target offsets written again (a remote topic created again, copied from a later log start)', () => {
    // Given runs 0 -> 0 and 300 -> 310, then the remote topic created again and copied from the source log start 500
    const h = new PartitionOffsetHistory()
    h.addRunStart(0, 0)
    h.addRunStart(300, 310, 299)
    h.markReplicatedTo(600, 610)
    const replaced = h.addRunStart(500, 0)
    h.markReplicatedTo(600, 100)
    // Then only the new copy's run is left: target 50 is source 550, not source 50 of the old copy
    assert.deepEqual(replaced.map(r => r.upstream), [0, 300])
    assert.deepEqual(h.runs, [{ upstream: 500, downstream: 0 }])
    assert.deepEqual(h.toSource(50), { offset: 550, exact: true })
    assert.deepEqual(h.toTarget(550), { offset: 50, exact: true })
    // and a commit before the new copy's start may skip: it says so
    assert.equal(h.toTarget(100).maySkip, true)
  })

  it('says a commit beyond the replicated range is not exact and never skips', () => {
    const h = new PartitionOffsetHistory()
    h.addRunStart(10, 0)
    h.markReplicatedTo(20, 10)
    assert.deepEqual(h.toTarget(20), { offset: 10, exact: true })
    const beyond = h.toTarget(25)
    assert.equal(beyond.offset, 10)
    assert.equal(beyond.exact, false)
    assert.equal(h.toTarget(3).exact, false)
    assert.equal(new PartitionOffsetHistory().toTarget(3).exact, false)
  })

  it('trims runs below the source log start but keeps the one that still covers it', () => {
    const h = new PartitionOffsetHistory()
    for (const [u, d] of [[0, 0], [10, 9], [20, 18], [30, 27]] as const) h.addRunStart(u, d)
    assert.equal(h.trimBelow(25), 2)
    assert.deepEqual(h.runs.map(r => r.upstream), [20, 30])
    assert.deepEqual(h.toTarget(25), { offset: 23, exact: true })
  })
})
