/**
 * A flush whose offset syncs are still going out when the membership is lost (a freeze past the session timeout,
 * a heartbeat answered UNKNOWN_MEMBER_ID) stores no position of the partitions lost meanwhile: their next owner has
 * them now, and a position stored after its own would be where it resumes, copying again what it had copied.
 */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { AdminClient } from '../../../src/kafka/admin-client.ts'
import type { RecordFetcher } from '../../../src/kafka/record-fetcher.ts'
import { RecordWriter } from '../../../src/kafka/record-writer.ts'
import { OwnershipGrants } from '../../../src/replication/ownership-grants.ts'
import { ProgressStore } from '../../../src/replication/progress-store.ts'
import { installFakeSend } from '../../fakes/producer-send.ts'
import type { OffsetSyncEntry } from '../../../src/replication/offset-sync-tracker.ts'
import { OffsetSyncTracker } from '../../../src/replication/offset-sync-tracker.ts'
import type { PartitionState } from '../../../src/replication/partition-set.ts'
import { ProgressFlusher, positionsOf, type StoredPositions } from '../../../src/replication/progress-flusher.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
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

describe('ProgressFlusher.flush through a real ProgressStore and RecordWriter, the membership lost during the store', () => {
  const flow = { name: 'A->B', source: { alias: 'A' }, target: { alias: 'B' }, offsetStorageTopic: 'mm2-offsets.A.internal', offsetLagMax: 100, offsetFlushIntervalMs: 3_600_000 } as unknown as FlowConfig
  const admin = { describeTopics: async (names: readonly string[]) => new Map(names.map(n => [n, { name: n, id: 'x', partitions: 1 }])) } as unknown as AdminClient
  const emptyTopic = {
    listOffsets: async (tps: readonly { topic: string, partition: number }[]) => new Map(tps.map(tp => [`${tp.topic}-${tp.partition}`, 0])),
    fetch: async () => []
  } as unknown as RecordFetcher

  async function storeWith (t: TestContext, syncs: HeldSyncs | null = null) {
    const send = installFakeSend(t)
    const writer = new RecordWriter({ 'bootstrap.servers': '127.0.0.1:1' }, 'kmirror-test', { idempotent: true, maxChunkBytes: 100_000, cluster: { label: 'cluster B', alias: 'B' } })
    t.after(async () => { await writer.close() })
    const store = new ProgressStore(flow, admin, emptyTopic, writer)
    await store.load({ readOnly: true })
    const grants = new OwnershipGrants()
    const { log, lines } = memoryLogger()
    // Each commit's outcome, to wait for the ones nobody awaits (a release's store goes on after its wait ended).
    const commits: Promise<number>[] = []
    const progress = { commit: (positions: StoredPositions, until?: AbortSignal) => { const c = store.commit(positions, until); commits.push(c.catch(() => -1)); return c } }
    const tracker = new OffsetSyncTracker(100)
    const flusher = new ProgressFlusher({ flow, progress, syncs, log, tracker, flushWhenCaughtUp: false, untilLost: () => grants.untilLost })
    return { send, writer, grants, lines, commits, tracker, flusher }
  }

  for (const renewed of [true, false]) {
    it(`sends no produce request once the membership the positions were taken under is lost${renewed ? ', though the renewed producer\'s lease holds' : ' (its signal alone)'}, and ends quietly`, async t => {
      const { send, writer, grants, lines, flusher } = await storeWith(t)
      const states = [state(4, 558)]

      // Given a flush whose store reads the progress topic's metadata (it finds the topic unknown a moment, and asks again)
      send.unknownTopicReads = 1
      const flushed = flusher.flush(positionsOf(states), states)
      await waitFor(() => send.unknownTopicReads === 0, { timeoutMs: 5_000, intervalMs: 5, message: 'the store reading the metadata' })

      // When the membership is lost meanwhile (and the internal producer renewed, as a lost heartbeat does: flow-work.ts)
      grants.lost()
      if (renewed) writer.renew()
      await flushed

      // Then the position was never sent, the flush did not fail, and nothing warns
      assert.equal(send.requests.length, 0)
      assert.equal(flusher.hasFailed(), false)
      assert.deepEqual(lines.filter(l => l.level > LogLevels.debug).map(l => l.msg), [])
      assert.deepEqual(lines.map(l => l.msg), ['the progress of a lost group membership is not stored'])
    })
  }

  it('a release\'s store whose offset syncs are still going out when the membership is lost never sends the positions (it gives up at once, its store goes on and is refused)', async t => {
    const syncs = new HeldSyncs()
    const { send, grants, lines, commits, tracker, flusher } = await storeWith(t, syncs)
    tracker.record('t-4', 't', 4, 557, 900)

    // Given a release storing partition 4's position, its offset syncs held on the way
    const released = flusher.storeReleased(positionsOf([state(4, 558)]), () => false, grants.untilLost)
    await waitFor(() => syncs.held, { timeoutMs: 5_000, message: 'the syncs going out' })

    // When the membership is lost (no producer renewed), then the syncs are written
    grants.lost()
    assert.equal(await released, false)
    syncs.release()
    await waitFor(() => commits.length === 1, { timeoutMs: 5_000, intervalMs: 5, message: 'the store going on after the release gave up' })
    await commits[0]

    // Then the position was never sent, and the warning names it as not stored
    assert.equal(send.requests.length, 0)
    assert.match(lines.find(l => l.level === LogLevels.warn)?.msg ?? '', /the progress of 1 released partition\(s\) is not stored: t-4 \(copied to offset 557\)/)
  })
})
