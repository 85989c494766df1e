/**
 * The group lease gate of the data path: while `fence` gives a reason, a round writes nothing and its partitions
 * stay where they were; once the lease holds again the copy goes on exactly where it stopped.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertExactCopy, createHarness, offsetsWithGaps } from '../../fakes/replicator-harness.ts'
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
