import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { OffsetHistoryStore } from '../../../src/checkpoint/offset-history-store.ts'
import type { ProgressStore } from '../../../src/replication/progress-store.ts'
import type { SyncOutbox } from '../../../src/replication/sync-outbox.ts'
import { storeSinks } from '../../../src/runtime/flow-data-path.ts'

const config = { target: { alias: 'B' } } as unknown as FlowConfig
const history = { topic: 'mm2-history', append: async () => undefined, membershipLost: () => undefined } as unknown as OffsetHistoryStore
const progress = {} as unknown as ProgressStore

describe('storeSinks', () => {
  it('Given exactly-once with offset syncs on the source, then a lost membership empties the outbox they are queued in after each commit, and a round\'s syncs are not queued in it before its commit', async () => {
    const events: string[] = []
    const afterCommit = { dropQueued: () => { events.push('dropped') }, enqueue: () => { events.push('enqueued') } } as unknown as SyncOutbox
    const tombstones = { ...history, membershipLost: () => { events.push('tombstones dropped') } } as unknown as OffsetHistoryStore
    const sinks = storeSinks(config, { history: tombstones, progress, syncsInRound: null, outbox: null, afterCommit })
    await sinks.syncs!.send([{ topic: 't', partition: 0, upstreamOffset: 1, downstreamOffset: 1 } as never])
    sinks.syncs!.dropQueued!()
    assert.deepEqual(events, ['dropped', 'tombstones dropped'])
    // (without MM2's syncs beside the data path, the history's tombstones are dropped all the same)
    storeSinks(config, { history: tombstones, progress, syncsInRound: null, outbox: null }).syncs!.dropQueued!()
    assert.deepEqual(events, ['dropped', 'tombstones dropped', 'tombstones dropped'])
  })

  it('Given MM2\'s syncs written beside the data path (at least once, or after each commit), then a hand-over can wait for them, and its warning names where they go', async () => {
    for (const mode of ['outbox', 'afterCommit'] as const) {
      const asked: number[] = []
      const queue = { dropQueued: () => undefined, enqueue: () => undefined, settled: async (timeoutMs: number) => { asked.push(timeoutMs); return 2 }, writesTo: { topic: 'mm2-offset-syncs.B.internal', cluster: 'A' } } as unknown as SyncOutbox
      const sinks = storeSinks(config, { history, progress, syncsInRound: null, outbox: mode === 'outbox' ? queue : null, afterCommit: mode === 'afterCommit' ? queue : null })
      assert.equal(await sinks.syncs!.settle!(1234), 2, mode)
      assert.deepEqual(asked, [1234], mode)
      assert.deepEqual(sinks.syncs!.settlesTo, { topic: 'mm2-offset-syncs.B.internal', cluster: 'A' }, mode)
    }
    // (syncs written with the round, or none: nothing to wait for)
    assert.equal(storeSinks(config, { history, progress, syncsInRound: null, outbox: null }).syncs!.settle, undefined)
  })

  it('Given a progress store begun under a membership, then its loss signal reaches both writes, the history\'s extents and the positions', async () => {
    const seen: [string, AbortSignal | undefined][] = []
    const withExtents = { ...history, checkpointExtents: async (_: unknown, until?: AbortSignal) => { seen.push(['extents', until]) } } as unknown as OffsetHistoryStore
    const positions = { commit: async (_: unknown, until?: AbortSignal) => { seen.push(['progress', until]); return 1 } } as unknown as ProgressStore
    const membership = new AbortController()
    const sinks = storeSinks(config, { history: withExtents, progress: positions, syncsInRound: null, outbox: null })
    assert.equal(await sinks.progress.commit(new Map([['t-0', { topic: 't', partition: 0, lastOffset: 4 }]]), membership.signal), 1)
    assert.deepEqual(seen, [['extents', membership.signal], ['progress', membership.signal]])
  })

  it('Given syncs taken under a membership lost while the history took them, then they are not queued for MM2\'s topic, and the history write had the signal', async () => {
    const events: string[] = []
    const membership = new AbortController()
    const appending = { ...history, append: async (_: unknown, until?: AbortSignal) => { events.push(`append ${until === membership.signal}`); membership.abort() } } as unknown as OffsetHistoryStore
    const outbox = { dropQueued: () => undefined, enqueue: () => { events.push('enqueued') } } as unknown as SyncOutbox
    const sinks = storeSinks(config, { history: appending, progress, syncsInRound: null, outbox })
    await assert.rejects(sinks.syncs!.send([{ topic: 't', partition: 0, upstreamOffset: 1, downstreamOffset: 1 } as never], membership.signal))
    assert.deepEqual(events, ['append true'])
  })
})
