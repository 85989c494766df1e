import assert from 'node:assert/strict'
import { partitionKey } from '../../../src/topic-partition.ts'
import { describe, it } from 'node:test'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { asCopied, createHarness, offsetsWithGaps, startCopying, type Harness } from '../../fakes/replicator-harness.ts'
import { waitFor } from '../../helpers/wait.ts'
import type { FetchedRecord } from '../../../src/kafka/record-fetcher.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { ExactlyOnceDeps } from '../../../src/replication/flow-replicator.ts'
import { FetchOutcomes, type FetchedBatches } from '../../../src/kafka/fetch-results.ts'
import { SourceTopicIds } from '../../../src/replication/source-topic-ids.ts'
import { SourceRecreated } from '../../../src/replication/source-recreated.ts'
import type { PartitionState } from '../../../src/replication/partition-set.ts'

describe('FlowReplicator: a source topic deleted and created again while its partitions are copied', () => {
  it('Given a new topic id in a fetch answer, then the partition restarts at the new topic\'s log start, nothing of the new topic skipped nor written as a continuation of the old one; an error line and a count; the other topic untouched', async t => {
    // Given t (2 partitions) copied into A.t, and u into A.u, the source giving topic ids
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics })
    h.source.topicIds.set('t', 'id-t-1')
    h.source.topicIds.set('u', 'id-u')
    h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
    h.source.addPartition('u', 0, offsetsWithGaps(0, 9))
    await startCopying(h, t, [{ source: 't', remote: 'A.t', partitions: 2 }, { source: 'u', remote: 'A.u', partitions: 1 }])
    await waitFor(() => h.target.copied('A.t', 0).length === 20 && h.target.copied('A.t', 1).length === 10 && h.target.copied('A.u', 0).length === 10, { timeoutMs: 5000, intervalMs: 10, message: 'first copy' })
    const old: FetchedRecord[][] = [[...h.source.records('t', 0)], [...h.source.records('t', 1)]]

    // When t is deleted and created again with other records, more than the old topic's on partition 1 (a position
    // kept from the old topic would skip its first 10), and u gets more records
    h.source.topicIds.set('t', 'id-t-2')
    h.source.addPartition('t', 0, offsetsWithGaps(0, 4), { tag: 'new' })
    h.source.addPartition('t', 1, offsetsWithGaps(0, 24), { tag: 'new' })
    h.source.addPartition('u', 0, offsetsWithGaps(0, 14))

    // Then each remote partition holds the old topic's records, then every record of the new topic, in order
    await waitFor(() => h.target.copied('A.t', 0).length === 25 && h.target.copied('A.t', 1).length === 35 && h.target.copied('A.u', 0).length === 15, { timeoutMs: 5000, intervalMs: 10, message: 'the new topic copied' })
    for (const p of [0, 1]) assert.deepEqual(h.target.copied('A.t', p), [...old[p]!, ...h.source.records('t', p)].map(asCopied), `A.t-${p}`)
    assert.deepEqual(h.target.copied('A.u', 0), h.source.records('u', 0).map(asCopied))
    // (t-0 was past the new topic's end: out of range, it went back to the log start first, as before)
    const errors = h.logs.at(LogLevels.error).map(l => l.msg).filter(m => m.startsWith('source topic')).sort()
    assert.deepEqual(errors, [
      'source topic t was deleted and created again on cluster A (a new topic id): copying t-0 from offset 0, the new topic\'s log start, into A.t on cluster B (it was at 0 of the old topic; the remote topic keeps the old topic\'s records before the new ones)',
      'source topic t was deleted and created again on cluster A (a new topic id): copying t-1 from offset 0, the new topic\'s log start, into A.t on cluster B (it was at 10 of the old topic; the remote topic keeps the old topic\'s records before the new ones)'
    ])
    assert.equal(metrics.counts.get('sourcePartitionsRestarted{"flow":"A->B","topic":"t"}'), 2)
    assert.deepEqual([...new Set(h.syncs.restarts)].sort(), [partitionKey('t', 0), partitionKey('t', 1)])
    assert.deepEqual(h.replicator.status().filter(p => p.failure !== null), [])
    // and the stored progress follows the new topic
    await h.replicator.flush()
    assert.deepEqual(h.progress.latest(), { 't-0': 4, 't-1': 24, 'u-0': 14 })
  })

  it('Given partitions resumed from stored positions whose copy the offset history says came from another topic id, then they restart at the new topic\'s log start (nothing skipped); those of the same id, or of no known id, resume where stored', async t => {
    // Given t (3 partitions of 20 records) on a source giving topic ids, its progress stored at 9, 4 and 7, and the
    // offset history naming the old topic's id for t-0, the current one for t-1, none for t-2
    const copiedFrom = new Map([[partitionKey('t', 0), 'id-old'], [partitionKey('t', 1), 'id-new']])
    const h = createHarness({ copiedFrom: key => copiedFrom.get(key) })
    h.source.topicIds.set('t', 'id-new')
    for (const p of [0, 1, 2]) h.source.addPartition('t', p, offsetsWithGaps(0, 19))
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 9], [partitionKey('t', 1), 4], [partitionKey('t', 2), 7]]))

    // When kmirror copies t
    await startCopying(h, t, [{ source: 't', remote: 'A.t', partitions: 3 }])

    // Then t-0 (stored by a copy of the deleted topic) is copied whole, from the new topic's log start, and the
    // others from their stored positions
    await waitFor(() => h.target.copied('A.t', 0).length === 20 && h.target.copied('A.t', 1).length === 15 && h.target.copied('A.t', 2).length === 12, { timeoutMs: 5000, intervalMs: 10, message: 'copied' })
    assert.deepEqual(h.target.copied('A.t', 0), h.source.records('t', 0).map(asCopied))
    assert.deepEqual(h.target.copied('A.t', 1), h.source.records('t', 1).slice(5).map(asCopied))
    assert.deepEqual(h.target.copied('A.t', 2), h.source.records('t', 2).slice(8).map(asCopied))
    assert.deepEqual(h.logs.at(LogLevels.error).map(l => l.msg), [
      'source topic t was deleted and created again on cluster A (a new topic id): copying t-0 from offset 0, the new topic\'s log start, into A.t on cluster B (it was at 10 of the old topic; the remote topic keeps the old topic\'s records before the new ones)'
    ])
    // and the run starts of the new copy name the topic they came from, for the offset history
    const starts = h.syncs.sent.filter(e => e.runStart)
    assert.deepEqual([...new Set(starts.map(e => e.sourceTopicId))], ['id-new'])
    assert.deepEqual(starts.filter(e => e.partition === 0).map(e => e.upstreamOffset), [0])
  })

  it('Given partitions this instance let go, whose topic was created again and copied by their next owner, when they come back with that owner\'s stored positions, then they resume there (no restart); and one whose stored copy was of the old topic restarts though this instance saw the re-creation on another partition', async t => {
    // Given t (2 partitions) copied under id-1, then let go (another instance takes them)
    const copiedFrom = new Map<string, string>()
    const h = createHarness({ copiedFrom: key => copiedFrom.get(key) })
    h.source.topicIds.set('t', 'id-1')
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
    h.source.addPartition('t', 2, offsetsWithGaps(0, 9))
    await startCopying(h, t, [{ source: 't', remote: 'A.t', partitions: 3 }])
    await waitFor(() => [0, 1, 2].every(p => h.target.copied('A.t', p).length === 10), { timeoutMs: 5000, intervalMs: 10, message: 'first copy' })
    const refs = [0, 1].map(partition => ({ topic: 't', partition, remoteTopic: 'A.t' }))
    assert.equal(await h.replicator.releasePartitions(refs), true)
    // When t is created again with 40 records each: this instance sees it on t-2, which it kept; the next owner of
    // t-0 copied the new topic to 29 (the history names id-2), t-1's owner stopped before it noticed (its stored
    // position, 9, is of the old topic: the history names id-1)
    h.source.topicIds.set('t', 'id-2')
    for (const p of [0, 1, 2]) h.source.addPartition('t', p, offsetsWithGaps(0, 39), { tag: 'new' })
    await waitFor(() => h.target.copied('A.t', 2).length === 50, { timeoutMs: 5000, intervalMs: 10, message: 't-2 copied again' })
    copiedFrom.set(partitionKey('t', 0), 'id-2')
    copiedFrom.set(partitionKey('t', 1), 'id-1')
    await h.replicator.addPartitions(refs, new Map([[partitionKey('t', 0), 29], [partitionKey('t', 1), 9]]))

    // Then t-0 resumes at 30 (its 10 last records), and t-1 is copied whole from the new topic's log start
    await waitFor(() => h.target.copied('A.t', 0).length === 20 && h.target.copied('A.t', 1).length === 50, { timeoutMs: 5000, intervalMs: 10, message: 'copied on' })
    assert.deepEqual(h.target.copied('A.t', 0).slice(10), h.source.records('t', 0).slice(30).map(asCopied))
    assert.deepEqual(h.target.copied('A.t', 1).slice(10), h.source.records('t', 1).map(asCopied))
    const restarted = h.logs.at(LogLevels.error).map(l => l.msg).filter(m => m.startsWith('source topic')).map(m => /copying (t-\d) from offset (\d+)/.exec(m)?.slice(1).join(' from ')).sort()
    assert.deepEqual(restarted, ['t-1 from 0', 't-2 from 0'])
  })

  it('Given a source without topic ids, then answers are never taken for a re-created topic', async t => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    await startCopying(h, t, [{ source: 't', remote: 'A.t', partitions: 1 }])
    await waitFor(() => h.target.copied('A.t', 0).length === 10, { timeoutMs: 5000, intervalMs: 10, message: 'copy' })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
    await waitFor(() => h.target.copied('A.t', 0).length === 15, { timeoutMs: 5000, intervalMs: 10, message: 'copy on' })
    assert.deepEqual(h.logs.at(LogLevels.error), [])
  })
})

describe('FlowReplicator in exactly-once mode: a source topic created again', () => {
  it('Given the round that restarted the partition at the new topic\'s log start aborted, then the rewind keeps that restart: nothing of the new topic is skipped', async t => {
    // Given rounds as transactions: the progress a round stored counts once it committed
    let harness: Harness | undefined
    let committed: Record<string, number> = {}
    const eos: ExactlyOnceDeps = {
      rounds: {
        commitInDoubt: false,
        lastCommitted: true,
        settleDoubt: () => undefined,
        run: async fn => { const value = await fn(); committed = { ...harness!.progress.latest() }; return value },
        recover: async () => undefined,
        transactionalId: 'kmirror-A-B-0',
        endMembership: () => null
      },
      reloadProgress: async () => new Map(Object.entries(committed).map(([k, v]) => [k.replace(/-(\d+)$/, '\u0000$1'), v])),
      syncsAfterCommit: null
    }
    const h = harness = createHarness({ exactlyOnce: eos })
    h.source.topicIds.set('t', 'id-1')
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    h.source.addPartition('u', 0, offsetsWithGaps(0, 9))
    await startCopying(h, t, [{ source: 't', remote: 'A.t', partitions: 1 }, { source: 'u', remote: 'A.u', partitions: 1 }])
    await waitFor(() => committed['t-0'] === 9 && committed['u-0'] === 9, { timeoutMs: 5000, intervalMs: 10, message: 'the old topic copied and committed' })
    // When t is created again with 25 records and u gets more, and the round that finds t's new id fails writing u
    // (it aborts: the restart was in it)
    h.target.beforeWrite(() => { h.target.failNextWrite(new KmirrorError(ErrorCodes.PRODUCE, 'connection reset', { retriable: true })); h.target.beforeWrite(() => undefined) })
    h.source.topicIds.set('t', 'id-2')
    h.source.addPartition('t', 0, offsetsWithGaps(0, 24), { tag: 'new' })
    h.source.addPartition('u', 0, offsetsWithGaps(0, 14))
    // Then the new topic is copied from its log start all the same: its last 25 records on the target are the new topic's
    await waitFor(() => committed['t-0'] === 24 && committed['u-0'] === 14, { timeoutMs: 5000, intervalMs: 10, message: 'the new topic copied and committed' })
    const copied = h.target.copied('A.t', 0)
    assert.deepEqual(copied.slice(-25), h.source.records('t', 0).map(asCopied))
  })
})

describe('SourceTopicIds', () => {
  it('Given a partition copied under an id, then a new id is a re-creation once, and the old id (a lagging broker\'s metadata) never flips it back', () => {
    const ids = new SourceTopicIds()
    const answer = (topicId: string | null): FetchedBatches => ({ topic: 't', partition: 0, outcome: FetchOutcomes.OK, fromOffset: 0, batches: [], nextOffset: 0, highWatermark: 0, lastStableOffset: 0, logStartOffset: 0, topicId })
    assert.deepEqual(['id-1', 'id-1', 'id-2', 'id-1', 'id-2', null, 'id-3'].map(id => ids.changed('t\u00000', answer(id))), [false, false, true, false, false, false, true])
    ids.forget('t\u00000')
    assert.equal(ids.changed('t\u00000', answer('id-2')), false, 'learnt afresh')
  })

  it('Given a partition resumed from a copy the offset history names, then its first answer is compared with that copy\'s id, whatever this instance saw of the partition or the topic before', () => {
    const ids = new SourceTopicIds()
    const answer = (topicId: string, partition = 0): FetchedBatches => ({ topic: 't', partition, outcome: FetchOutcomes.OK, fromOffset: 0, batches: [], nextOffset: 0, highWatermark: 0, lastStableOffset: 0, logStartOffset: 0, topicId })
    ids.resume('t\u00000', 'id-1')
    assert.equal(ids.changed('t\u00000', answer('id-2')), true, 'another topic than the stored copy\'s')
    // (t-1, handed to this instance after it saw t-0's topic created again: id-1 is retired here)
    ids.resume('t\u00001', 'id-1')
    assert.equal(ids.changed('t\u00001', answer('id-1', 1)), false, 'an answer under the retired id: a lagging broker, neither learnt nor a re-creation')
    assert.equal(ids.changed('t\u00001', answer('id-2', 1)), true, 'the stored copy was of the old topic, though this instance retired its id before')
    // (t-2: this instance copied it under id-1 once, let it go, and its next owner copied the new topic)
    assert.equal(ids.changed('t\u00002', answer('id-1', 2)), false)
    ids.resume('t\u00002', 'id-2')
    assert.equal(ids.changed('t\u00002', answer('id-2', 2)), false, 'the stored copy is of the topic there now')
  })
})

describe('SourceRecreated.sift', () => {
  it('Given a partition lost (membership) while its fetch was out, when the answer shows a new topic id, then nothing of its copy is restarted or forgotten here: its next owner sees the new id itself', () => {
    const restarted: string[] = []
    const state = { key: 't\u00000', topic: 't', partition: 0, remoteTopic: 'A.t', position: 10, lost: false } as unknown as PartitionState
    const sift = new SourceRecreated({ flow: 'A->B', aliases: { source: 'A', target: 'B' }, log: memoryLogger().log, metrics: new CountingMetrics(), state: () => state, restart: s => { restarted.push(s.key) } })
    const answer = (topicId: string): FetchedBatches => ({ topic: 't', partition: 0, outcome: FetchOutcomes.OK, fromOffset: 10, batches: [], nextOffset: 10, highWatermark: 20, lastStableOffset: 20, logStartOffset: 0, topicId })
    sift.sift([answer('id-1')])
    state.lost = true
    assert.equal(sift.sift([answer('id-2')]).length, 1)
    assert.deepEqual([restarted, state.position], [[], 10])
    // (owned again, under a new membership: the re-creation is seen)
    state.lost = false
    assert.equal(sift.sift([answer('id-2')]).length, 0)
    assert.deepEqual(restarted, ['t\u00000'])
  })
})
