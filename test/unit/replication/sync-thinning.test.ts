/**
 * Which queued MM2 offset syncs survive thinning: each partition's newest always, run starts while room allows, every
 * second of the rest per partition, in the order queued.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OffsetSyncEntry } from '../../../src/replication/offset-sync-tracker.ts'
import { thinSyncs } from '../../../src/replication/sync-thinning.ts'

function sync (partition: number, upstreamOffset: number, runStart = false): OffsetSyncEntry {
  return { topic: 't', partition, upstreamOffset, downstreamOffset: upstreamOffset + 7, runStart, previousUpstream: runStart ? upstreamOffset - 5 : -1 }
}

const names = (entries: readonly OffsetSyncEntry[]): string[] => entries.map(e => `${e.partition}@${e.upstreamOffset}`)

describe('thinSyncs', () => {
  it('halves each partition\'s syncs, the older of each pair going, the newest kept, the order unchanged', () => {
    const queued = [sync(0, 100), sync(1, 100), sync(0, 200), sync(1, 200), sync(0, 300), sync(1, 300), sync(0, 400), sync(0, 500)]
    assert.deepEqual(names(thinSyncs(queued, 5)), ['0@200', '1@200', '1@300', '0@400', '0@500'])
  })

  it('keeps run starts over the other syncs while that reaches the target', () => {
    const queued = [sync(0, 100, true), sync(0, 200), sync(0, 300), sync(0, 400), sync(0, 450, true), sync(0, 500), sync(0, 600)]
    assert.deepEqual(names(thinSyncs(queued, 3)), ['0@100', '0@450', '0@600'])
  })

  it('thins run starts too when they alone exceed the target (a compacted topic: every sync starts a run)', () => {
    const queued = Array.from({ length: 16 }, (_, i) => sync(0, i * 10, true))
    const kept = thinSyncs(queued, 4)
    assert.deepEqual(names(kept), ['0@30', '0@70', '0@110', '0@150'])
  })

  it('never goes below each partition\'s newest sync, whatever the target', () => {
    const queued = [sync(0, 1), sync(1, 1), sync(2, 1), sync(0, 2), sync(1, 2), sync(2, 2)]
    assert.deepEqual(names(thinSyncs(queued, 1)), ['0@2', '1@2', '2@2'])
  })

  it('leaves a queue at or under the target as it is', () => {
    const queued = [sync(0, 1), sync(0, 2)]
    assert.deepEqual(thinSyncs(queued, 2), queued)
  })
})
