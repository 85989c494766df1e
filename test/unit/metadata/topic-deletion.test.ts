/**
 * The data path side of a source topic deletion: the refresh calls FlowReplicator.removeTopics, which lets go of
 * the topic's partitions between two fetch rounds while the other topics keep being copied.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { partitionKey } from '../../../src/topic-partition.ts'
import { assertExactCopy, createHarness, offsetsWithGaps } from '../../fakes/replicator-harness.ts'

const T = { source: 't', remote: 'A.t', partitions: 1 }
const U = { source: 'u', remote: 'A.u', partitions: 2 }

describe('FlowReplicator.removeTopics', () => {
  it('stops fetching a removed topic between two fetch rounds while the other topics are copied to the end', async () => {
    // Given two topics being copied, five offsets per fetch
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 49))
    h.source.addPartition('u', 0, offsetsWithGaps(0, 29))
    h.source.addPartition('u', 1, offsetsWithGaps(0, 29))
    await h.replicator.addTopics([T, U])
    let removal: Promise<void> | null = null
    h.source.onFetch(() => {
      // When the refresh removes t during the second fetch round
      if (h.source.fetchCalls.length === 2) removal = h.replicator.removeTopics(['t'])
    })
    h.source.onFetch(positions => {
      if (positions.every(p => p.topic === 'u' && p.offset === 30)) h.replicator.stop()
    })
    await h.replicator.run()
    await removal
    // Then the round in progress finished with t, and from the next round on t was no longer asked for
    assert.ok(h.source.fetchCalls[1]!.some(p => p.topic === 't'))
    assert.ok(h.source.fetchCalls.slice(2).every(call => call.every(p => p.topic === 'u')))
    assert.equal(h.target.copied('A.t', 0).length, 10)
    assertExactCopy(h, 'u', 0, 'A.u')
    assertExactCopy(h, 'u', 1, 'A.u')
    assert.deepEqual(h.replicator.status().map(s => s.topic), ['u', 'u'])
    // And its position is no longer stored
    assert.deepEqual(Object.keys(h.progress.latest()).sort(), ['u-0', 'u-1'])
  })

  it('applies at once when the data path is not running, and a topic added again starts afresh', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    h.replicator.setStoredProgress(new Map([[partitionKey('t', 0), 4]]))
    await h.replicator.addTopics([T])
    assert.equal(h.replicator.status()[0]!.position, 5)
    await h.replicator.removeTopics(['t'])
    assert.deepEqual(h.replicator.status(), [])
    // A topic of the same name (re-created on the source) is read from its start, not from the old position
    await h.replicator.addTopics([T])
    assert.equal(h.replicator.status()[0]!.position, 0)
  })

  it('resolves a removal requested after the data path stopped', async () => {
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 4))
    h.source.whenCaughtUp(() => h.replicator.stop())
    await h.replicator.addTopics([T])
    await h.replicator.run()
    await h.replicator.removeTopics(['t'])
    assert.deepEqual(h.replicator.status(), [])
  })
})
