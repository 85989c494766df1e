/**
 * A flush whose offset syncs are still going out when the membership is lost (a freeze past the session timeout,
 * a heartbeat answered UNKNOWN_MEMBER_ID) stores no position of the partitions lost meanwhile: their next owner has
 * them now, and a position stored after its own would be where it resumes, copying again what it had copied.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OffsetSyncEntry } from '../../../src/replication/offset-sync-tracker.ts'
import { OffsetSyncTracker } from '../../../src/replication/offset-sync-tracker.ts'
import type { PartitionState } from '../../../src/replication/partition-set.ts'
import { ProgressFlusher, positionsOf } from '../../../src/replication/progress-flusher.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'
import { RecordingProgress, RecordingSyncs } from '../../fakes/recording-sinks.ts'
import { waitFor } from '../../helpers/wait.ts'

/** Syncs whose sends wait until `release` is called. */
class HeldSyncs extends RecordingSyncs {
  #release: (() => void) | null = null
  held = false

  override async send (entries: readonly OffsetSyncEntry[]): Promise<void> {
    this.held = true
    await new Promise<void>(resolve => { this.#release = resolve })
    await super.send(entries)
  }

  release (): void {
    this.#release?.()
  }
}

function state (partition: number, position: number): PartitionState {
  return { key: `t-${partition}`, topic: 't', partition, position, lost: false } as unknown as PartitionState
}

describe('ProgressFlusher.flush and a membership lost meanwhile', () => {
  it('stores the positions of the partitions still owned and none of those lost while the syncs went out', async () => {
    const progress = new RecordingProgress()
    const syncs = new HeldSyncs()
    const tracker = new OffsetSyncTracker(100)
    const flusher = new ProgressFlusher({ flow: { name: 'A->B', offsetLagMax: 100, offsetFlushIntervalMs: 3_600_000 }, progress, syncs, log: memoryLogger().log, tracker, flushWhenCaughtUp: false })
    const states = [state(0, 558), state(1, 42)]
    tracker.record('t-0', 't', 0, 557, 900)

    // Given a flush whose positions were taken, waiting for its offset syncs
    const flushed = flusher.flush(positionsOf(states), states)
    await waitFor(() => syncs.held, { timeoutMs: 5_000, message: 'the syncs going out' })

    // When the membership is lost for partition 0 before they are written
    states[0]!.lost = true
    syncs.release()
    await flushed

    // Then partition 1's position is stored, partition 0's is not
    assert.deepEqual(progress.commits.map(c => [...c.keys()]), [['t-1']])
    assert.equal(progress.commits[0]!.get('t-1')?.lastOffset, 41)
  })
})
