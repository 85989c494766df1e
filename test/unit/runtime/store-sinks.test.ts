import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { OffsetHistoryStore } from '../../../src/checkpoint/offset-history-store.ts'
import type { ProgressStore } from '../../../src/replication/progress-store.ts'
import type { SyncOutbox } from '../../../src/replication/sync-outbox.ts'
import { storeSinks } from '../../../src/runtime/flow-data-path.ts'

const config = { target: { alias: 'B' } } as unknown as FlowConfig
const history = { topic: 'mm2-history', append: async () => undefined } as unknown as OffsetHistoryStore
const progress = {} as unknown as ProgressStore

describe('storeSinks', () => {
  it('Given exactly-once with offset syncs on the source, then a lost membership empties the outbox they are queued in after each commit, and a round\'s syncs are not queued in it before its commit', async () => {
    const events: string[] = []
    const afterCommit = { dropQueued: () => { events.push('dropped') }, enqueue: () => { events.push('enqueued') } } as unknown as SyncOutbox
    const sinks = storeSinks(config, { history, progress, syncsInRound: null, outbox: null, afterCommit })
    await sinks.syncs!.send([{ topic: 't', partition: 0, upstreamOffset: 1, downstreamOffset: 1 } as never])
    sinks.syncs!.dropQueued!()
    assert.deepEqual(events, ['dropped'])
  })
})
