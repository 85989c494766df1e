/**
 * Which queued MM2 offset syncs survive thinning: each partition's first and newest and every sync that goes back
 * always, run starts while room allows, every second of the rest per partition, in the order queued.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OffsetSyncEntry } from '../../../src/replication/offset-sync-tracker.ts'
import { thinSyncs } from '../../../src/replication/sync-thinning.ts'

function sync (partition: number, upstreamOffset: number, runStart = false, downstreamOffset = upstreamOffset + 7): OffsetSyncEntry {
  return { topic: 't', partition, upstreamOffset, downstreamOffset, runStart, previousUpstream: runStart ? upstreamOffset - 5 : -1 }
}

const names = (entries: readonly OffsetSyncEntry[]): string[] => entries.map(e => `${e.partition}@${e.upstreamOffset}`)

describe('thinSyncs', () => {
  it('halves each partition\'s syncs, the older of each pair going, the first and newest kept, the order unchanged', () => {
    const queued = [sync(0, 100), sync(1, 100), sync(0, 200), sync(1, 200), sync(0, 300), sync(1, 300), sync(0, 400), sync(0, 500)]
    assert.deepEqual(names(thinSyncs(queued, 5)), ['0@100', '1@100', '0@300', '1@300', '0@500'])
  })

  it('keeps run starts over the other syncs while that reaches the target', () => {
    const queued = [sync(0, 100, true), sync(0, 200), sync(0, 300), sync(0, 400), sync(0, 450, true), sync(0, 500), sync(0, 600)]
    assert.deepEqual(names(thinSyncs(queued, 3)), ['0@100', '0@450', '0@600'])
  })

  it('thins run starts too when they alone exceed the target (a compacted topic: every sync starts a run)', () => {
    const queued = Array.from({ length: 16 }, (_, i) => sync(0, i * 10, true))
    const kept = thinSyncs(queued, 4)
    assert.deepEqual(names(kept), ['0@0', '0@80', '0@150'])
  })

  it('never goes below each partition\'s first and newest sync, whatever the target', () => {
    const queued = [sync(0, 1), sync(1, 1), sync(2, 1), sync(0, 2), sync(1, 2), sync(2, 2), sync(0, 3)]
    assert.deepEqual(names(thinSyncs(queued, 1)), ['0@1', '1@1', '2@1', '1@2', '2@2', '0@3'])
  })

  it('never drops a sync that goes back (a remote topic created again, copied again from downstream 0): MM2 would skip records without it', () => {
    // Every sync a run start (a transactional source), so even run starts must go to reach the target
    const queued = [sync(0, 900, true, 900), sync(0, 1000, true, 1000), sync(0, 500, true, 0), sync(0, 600, true, 100), sync(0, 700, true, 200), sync(0, 1100, true, 600), sync(0, 1200, true, 700)]
    const kept = thinSyncs(queued, 2)
    assert.deepEqual(kept.map(e => `${e.upstreamOffset}->${e.downstreamOffset}`), ['900->900', '500->0', '1200->700'])
    // MM2's reading: a sync lower than the one before resets what it knew, so source offset 1150 translates from
    // 500->0 (to 1 at most: consumers re-read), never from 1000->1000 past the records copied again.
    const known: OffsetSyncEntry[] = []
    for (const e of kept) {
      if (known.length > 0 && (e.upstreamOffset < known.at(-1)!.upstreamOffset || e.downstreamOffset < known.at(-1)!.downstreamOffset)) known.length = 0
      known.push(e)
    }
    const at1150 = known.filter(e => e.upstreamOffset <= 1150).at(-1)!
    assert.equal(at1150.downstreamOffset + 1, 1, 'translated no further than the true position (650)')
  })

  it('leaves a queue at or under the target as it is', () => {
    const queued = [sync(0, 1), sync(0, 2)]
    assert.deepEqual(thinSyncs(queued, 2), queued)
  })
})
