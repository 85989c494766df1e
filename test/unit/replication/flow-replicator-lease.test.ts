/**
 * The group lease gate of the data path: while `fence` gives a reason, no round runs (nothing fetched, nothing
 * written) and its partitions stay where they were; once the lease holds again the copy goes on exactly where it
 * stopped.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertExactCopy, createHarness, offsetsWithGaps } from '../../fakes/replicator-harness.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { waitFor } from '../../helpers/wait.ts'

test('no round while the lease does not hold (nothing fetched, nothing written, no round counted); the copy resumes where it stopped once it does', async () => {
  let lease: string | null = 'the lease of member m in group g on cluster B is not valid'
  let asked = 0
  const h = createHarness({ fence: () => { asked++; return lease } })
  h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
  await h.replicator.addPartitions([{ topic: 't', partition: 0, remoteTopic: 'A.t' }], new Map())
  const createdAt = h.replicator.lastRoundAt
  const running = h.replicator.run()
  await waitFor(() => asked >= 3, { timeoutMs: 5000, intervalMs: 5, message: 'the gate asked three times under an invalid lease' })
  assert.equal(h.source.fetchCalls.length, 0, 'nothing fetched: nothing could be written')
  assert.equal(h.target.writeCalls, 0, 'nothing written past the lease')
  assert.deepEqual(h.target.copied('A.t', 0), [])
  assert.equal(h.replicator.lastRoundAt, createdAt, 'no round completed: health sees the pause')
  // The in-memory source answers at once: stop at the first fetch at the end, or the loop never yields.
  h.source.onFetch(positions => { if (positions.some(p => p.offset === h.source.highWatermark('t', 0))) h.replicator.stop() })
  lease = null
  await running
  assertExactCopy(h, 't', 0, 'A.t')
})

test('a lease that stops holding between a round\'s fetch and its write parks nothing as waiting for the target: once it holds again the copy goes on, no partition reported failing', async () => {
  let lease: string | null = null
  let asked = 0
  const h = createHarness({ fence: () => { asked++; return lease } })
  h.source.addPartition('t', 0, offsetsWithGaps(0, 19))
  h.source.batchRecords = 5
  await h.replicator.addPartitions([{ topic: 't', partition: 0, remoteTopic: 'A.t' }], new Map())
  // The gate closes as the second round fetches: that round's write finds it closed
  h.source.onFetch(() => { if (h.source.fetchCalls.length === 2) lease = 'the lease ran out' })
  const running = h.replicator.run()
  await waitFor(() => lease !== null && asked >= 5, { timeoutMs: 5000, intervalMs: 5, message: 'the gate closed and asked again' })
  assert.deepEqual(h.replicator.status().map(p => [p.position, p.failure]), [[5, null]], 'the fetched round was not written, nothing set aside')
  h.source.whenCaughtUp(() => h.replicator.stop())
  lease = null
  await running
  assertExactCopy(h, 't', 0, 'A.t')
  assert.deepEqual(h.replicator.status().map(p => p.failure), [null])
  assert.equal(h.target.probeCalls, 0, 'never parked as waiting for the target (its leader was never in question)')
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
