/**
 * The group lease gate of the data path: while `fence` gives a reason, a round writes nothing and its partitions
 * stay where they were; once the lease holds again the copy goes on exactly where it stopped.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertExactCopy, createHarness, offsetsWithGaps } from '../../fakes/replicator-harness.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { waitFor } from '../../helpers/wait.ts'

test('no write round while the lease does not hold; the copy resumes where it stopped once it does', async () => {
  let lease: string | null = 'the lease of member m in group g on cluster B is not valid'
  const h = createHarness({ fence: () => lease })
  h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
  await h.replicator.addPartitions([{ topic: 't', partition: 0, remoteTopic: 'A.t' }], new Map())
  const running = h.replicator.run()
  await waitFor(() => h.source.fetchCalls.length >= 2, { timeoutMs: 5000, intervalMs: 5, message: 'two fetch rounds under an invalid lease' })
  assert.equal(h.target.writeCalls, 0, 'nothing written past the lease')
  assert.deepEqual(h.target.copied('A.t', 0), [])
  // The in-memory source answers at once: stop at the first fetch at the end, or the loop never yields.
  h.source.onFetch(positions => { if (positions.some(p => p.offset === h.source.highWatermark('t', 0))) h.replicator.stop() })
  lease = null
  await running
  assertExactCopy(h, 't', 0, 'A.t')
})

test('in a group, progress is stored as soon as every partition has caught up, not only at the flush interval', async () => {
  const h = createHarness({ flushWhenCaughtUp: true })
  h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
  await h.replicator.addPartitions([{ topic: 't', partition: 0, remoteTopic: 'A.t' }], new Map())
  let atEnd = 0
  h.source.onFetch(positions => { if (positions.some(p => p.offset === 20) && ++atEnd === 2) h.replicator.stop() })
  const running = h.replicator.run()
  await running
  const first = h.progress.commits[0]
  assert.ok(h.progress.commits.length >= 2, `stored when caught up, then at stop: ${h.progress.commits.length} commits`)
  assert.equal(first?.get(partitionKey('t', 0))?.lastOffset, 19)
})
