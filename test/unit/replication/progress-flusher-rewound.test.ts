/**
 * At-least-once mode: a partition copied again from a log start (a source or remote topic created again) has its
 * rewound position stored before the syncs of its new copy go to the offset history, so no stored position of the
 * old copy outlives the new copy's first run there (ARCHITECTURE invariant 46).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { OffsetSyncTracker } from '../../../src/replication/offset-sync-tracker.ts'
import { ProgressFlusher } from '../../../src/replication/progress-flusher.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'
import { RecordingProgress, RecordingSyncs } from '../../fakes/recording-sinks.ts'

const KEY = 't\u00000'

type Positions = ReadonlyMap<string, { topic: string, partition: number, lastOffset: number }>

const commitEvent = (positions: Positions): string => `commit ${[...positions.values()].map(p => `${p.topic}-${p.partition}@${p.lastOffset}`).join(',')}`

/** Each store recorded in EVENTS, and refused with ERROR until the function returned is called. */
function failingCommits (progress: RecordingProgress, events: string[], error: KmirrorError): () => void {
  let failing = true
  progress.onCommit(positions => {
    events.push(commitEvent(positions))
    if (failing) throw error
  })
  return () => { failing = false }
}

function setup () {
  const events: string[] = []
  const progress = new RecordingProgress()
  progress.onCommit(positions => { events.push(commitEvent(positions)) })
  const syncs = new RecordingSyncs()
  const send = syncs.send.bind(syncs)
  syncs.send = async entries => {
    events.push(`send ${entries.map(e => `${e.topic}-${e.partition}:${e.upstreamOffset}->${e.downstreamOffset}`).join(',')}`)
    await send(entries)
  }
  const tracker = new OffsetSyncTracker(100)
  const flusher = new ProgressFlusher({ flow: { name: 'A->B', offsetLagMax: 100, offsetFlushIntervalMs: 3_600_000 }, progress, syncs, log: memoryLogger().log, tracker, flushWhenCaughtUp: false })
  return { events, progress, syncs, tracker, flusher }
}

describe('ProgressFlusher: a partition restarted at a log start', () => {
  it('Given a partition restarted at offset 0, when the first sync of its new copy is sent, then -1 is stored first (the old copy\'s position never outlives the new run)', async () => {
    const { events, tracker, flusher } = setup()
    flusher.restarted(KEY, 't', 0, 0)
    tracker.record(KEY, 't', 0, 0, 20, 'id-2')
    flusher.sendSyncs()
    await flusher.flushSyncs()
    assert.deepEqual(events, ['commit t-0@-1', 'send t-0:0->20'])
    // and only once
    tracker.record(KEY, 't', 0, 5, 30, 'id-2')
    await flusher.flushSyncs()
    assert.deepEqual(events.slice(2), ['send t-0:5->30'])
  })

  it('Given the rewound position cannot be stored, then the syncs wait with it, and both go, in that order, at the next send', async () => {
    const { events, progress, syncs, tracker, flusher } = setup()
    const heal = failingCommits(progress, events, new KmirrorError(ErrorCodes.PRODUCE, 'offsets topic: NOT_LEADER_OR_FOLLOWER', { retriable: true }))
    flusher.restarted(KEY, 't', 0, 7)
    tracker.record(KEY, 't', 0, 7, 20, 'id-2')
    await assert.rejects(flusher.flushSyncs(), { message: /NOT_LEADER_OR_FOLLOWER/ })
    assert.deepEqual(syncs.sent, [], 'no sync before the rewound position is stored')
    heal()
    await flusher.flushSyncs()
    assert.deepEqual(events, ['commit t-0@6', 'commit t-0@6', 'send t-0:7->20'])
  })

  it('Given the store of a rewound position failing as the membership is lost, then it is not put back: the next membership never stores it', async () => {
    const { events, progress, tracker, flusher } = setup()
    const heal = failingCommits(progress, events, new KmirrorError(ErrorCodes.FENCED, 'the lease ended', { retriable: true }))
    flusher.restarted(KEY, 't', 0, 500)
    tracker.record(KEY, 't', 0, 500, 20, 'id-2')
    const sending = flusher.flushSyncs()
    // (lost while the store is under way)
    tracker.dropAll()
    flusher.dropRewound()
    // (its syncs dropped with the membership: the flush has nothing left to fail on)
    await sending
    heal()
    tracker.record('u\u00000', 'u', 0, 0, 0)
    await flusher.flushSyncs()
    assert.deepEqual(events, ['commit t-0@499', 'send u-0:0->0'])
  })

  it('Given a restarted partition released (its position stored) or removed before its rewound position went out, then it is never stored: the position is no longer this instance\'s', async () => {
    const { events, tracker, flusher } = setup()
    flusher.restarted(KEY, 't', 0, 500)
    flusher.restarted('t\u00001', 't', 1, 0)
    flusher.forgetRewound([KEY, 't\u00001'])
    tracker.record('u\u00000', 'u', 0, 0, 0)
    await flusher.flushSyncs()
    assert.deepEqual(events, ['send u-0:0->0'])
  })

  it('Given a restarted partition removed while the send carrying its rewound position is under way, when that send fails, then the position is not put back: never stored after it left', async () => {
    const { events, progress, tracker, flusher } = setup()
    const heal = failingCommits(progress, events, new KmirrorError(ErrorCodes.PRODUCE, 'offsets topic: NOT_LEADER_OR_FOLLOWER', { retriable: true }))
    flusher.restarted(KEY, 't', 0, 500)
    flusher.restarted('t\u00001', 't', 1, 0)
    tracker.record('u\u00000', 'u', 0, 0, 0)
    flusher.sendSyncs()
    // (t-0 leaves while the send is under way; t-1 stays)
    flusher.forgetRewound([KEY])
    await assert.rejects(flusher.flushSyncs(), { message: /NOT_LEADER_OR_FOLLOWER/ })
    heal()
    await flusher.flushSyncs()
    // (the flush sends again once the failed send ended, failing again; then the next one goes through: t-0 never again)
    assert.deepEqual(events, ['commit t-0@499,t-1@-1', 'commit t-1@-1', 'commit t-1@-1', 'send u-0:0->0'])
  })

  it('Given the membership lost after a restart, then the rewound position is not stored (the partition may be another instance\'s)', async () => {
    const { events, tracker, flusher } = setup()
    flusher.restarted(KEY, 't', 0, 0)
    flusher.dropRewound()
    tracker.record(KEY, 't', 0, 0, 20, 'id-2')
    await flusher.flushSyncs()
    assert.deepEqual(events, ['send t-0:0->20'])
  })
})
