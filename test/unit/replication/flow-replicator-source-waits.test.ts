import assert from 'node:assert/strict'
import { describe, it, mock } from 'node:test'
import { partitionLag } from '../../../src/replication/flow-replicator.ts'
import { STALE_WAIT_MS } from '../../../src/replication/source-waits.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { createHarness, offsetsWithGaps, startCopying, type Harness } from '../../fakes/replicator-harness.ts'
import { waitFor } from '../../helpers/wait.ts'

const DOWN = { error: 'NETWORK_EXCEPTION', detail: 'its leader, broker 2 (a2:9092), cannot be read from: connection refused' }

function lagOf (h: Harness, partition: number): { records: number | null, seconds: number | null, waitSince: string | undefined } {
  const p = h.replicator.status().find(s => s.topic === 't' && s.partition === partition)!
  return { records: partitionLag(p), seconds: p.lagSeconds, waitSince: p.sourceWaitSince }
}

describe('FlowReplicator: the lag of a partition the source gives nothing of', () => {
  it('is unknown (records and seconds) once it waited STALE_WAIT_MS, not the stale one of its last answer; a short wait keeps it; its next answer computes it again', async t => {
    // Given t-0 and t-1 copied to their end (10 records each), with the clock under the test's control
    const h = createHarness()
    h.source.addPartition('t', 0, offsetsWithGaps(0, 9))
    h.source.addPartition('t', 1, offsetsWithGaps(0, 9))
    await startCopying(h, t, [{ source: 't', remote: 'A.t', partitions: 2 }])
    await waitFor(() => h.target.copied('A.t', 0).length === 10 && h.target.copied('A.t', 1).length === 10, { timeoutMs: 5000, intervalMs: 10, message: 'first copy' })
    mock.timers.enable({ apis: ['Date'], now: Date.now() })
    t.after(() => mock.timers.reset())
    const waitStart = Date.now()

    // When t-1's leader goes out of reach while 5 more records are written to it
    h.source.unreachable.set(partitionKey('t', 1), DOWN)
    h.source.addPartition('t', 1, offsetsWithGaps(0, 14))
    const asked = h.source.fetchCalls.length
    await waitFor(() => h.source.fetchCalls.length >= asked + 3, { timeoutMs: 5000, intervalMs: 5, message: 'rounds with t-1 unread' })

    // Then within STALE_WAIT_MS its last answer's lag stands (a round or two without an answer is no wait)
    assert.deepEqual(lagOf(h, 1), { records: 0, seconds: 0, waitSince: undefined })
    // and past it, its lag is unknown, in records and seconds, since the wait began; t-0's is unchanged
    mock.timers.tick(STALE_WAIT_MS)
    assert.deepEqual(lagOf(h, 1), { records: null, seconds: null, waitSince: new Date(waitStart).toISOString() })
    assert.deepEqual(lagOf(h, 0), { records: 0, seconds: 0, waitSince: undefined })

    // When its leader answers again, then its lag is computed again, and it is copied to its end
    h.source.unreachable.clear()
    await waitFor(() => h.target.copied('A.t', 1).length === 15, { timeoutMs: 5000, intervalMs: 10, message: 't-1 copied on' })
    assert.deepEqual(lagOf(h, 1), { records: 0, seconds: 0, waitSince: undefined })
  })
})
