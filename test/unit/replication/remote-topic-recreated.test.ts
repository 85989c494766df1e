import assert from 'node:assert/strict'
import { partitionKey } from '../../../src/topic-partition.ts'
import { describe, it } from 'node:test'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels } from '../../fakes/memory-logger.ts'
import { assertExactCopy, createHarness, offsetsWithGaps, startCopying } from '../../fakes/replicator-harness.ts'
import { waitFor } from '../../helpers/wait.ts'

describe('FlowReplicator: a remote topic deleted and created again while its partitions are copied', () => {
  it('Given a new topic id at the next write, then each partition starts again at the source\'s log start: the new topic is an exact copy, with an error line and a count', async t => {
    // Given t (2 partitions, log start 5 on partition 1) copied into A.t, and u into A.u
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics })
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    h.source.addPartition('t', 1, offsetsWithGaps(5, 9))
    h.source.addPartition('u', 0, offsetsWithGaps(0, 9))
    await startCopying(h, t, [{ source: 't', remote: 'A.t', partitions: 2 }, { source: 'u', remote: 'A.u', partitions: 1 }])
    await waitFor(() => h.target.copied('A.t', 0).length === 10 && h.target.copied('A.t', 1).length === 5 && h.target.copied('A.u', 0).length === 10, { timeoutMs: 5000, intervalMs: 10, message: 'first copy' })

    // When A.t is deleted and created again on the target, and more records arrive on every partition
    h.target.recreateTopic('A.t')
    h.source.addPartition('t', 0, offsetsWithGaps(0, 14))
    h.source.addPartition('t', 1, offsetsWithGaps(5, 14))
    h.source.addPartition('u', 0, offsetsWithGaps(0, 14))

    // Then A.t holds every source record again, exactly once and in order; A.u is untouched and continues
    await waitFor(() => h.target.copied('A.t', 0).length === 15 && h.target.copied('A.t', 1).length === 10 && h.target.copied('A.u', 0).length === 15, { timeoutMs: 5000, intervalMs: 10, message: 'copied again' })
    assertExactCopy(h, 't', 0, 'A.t')
    assertExactCopy(h, 't', 1, 'A.t')
    assertExactCopy(h, 'u', 0, 'A.u')
    const errors = h.logs.at(LogLevels.error).map(l => l.msg).sort()
    assert.deepEqual(errors, [
      'remote topic A.t was deleted and created again on cluster B (a new topic id): copying t-0 again from offset 0, its log start on cluster A (it was at 10; records retention already deleted there cannot be copied again)',
      'remote topic A.t was deleted and created again on cluster B (a new topic id): copying t-1 again from offset 5, its log start on cluster A (it was at 10; records retention already deleted there cannot be copied again)'
    ])
    assert.equal(metrics.counts.get('remotePartitionsCopiedAgain{"flow":"A->B","topic":"t"}'), 2)
    // and what was recorded of t's partitions (the offset history) is forgotten: it maps into the deleted topic
    assert.deepEqual([...h.syncs.restarts].sort(), [partitionKey('t', 0), partitionKey('t', 1)])
    assert.deepEqual(h.replicator.status().filter(p => p.failure !== null), [])
  })
})
