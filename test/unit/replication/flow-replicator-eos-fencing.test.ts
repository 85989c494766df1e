import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { KmirrorError } from '../../../src/errors.ts'
import { fencedError } from '../../../src/kafka/transactions.ts'
import type { ExactlyOnceDeps } from '../../../src/replication/flow-replicator.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { asCopied, createHarness, offsetsWithGaps, type Harness } from '../../fakes/replicator-harness.ts'
import { LogLevels } from '../../fakes/memory-logger.ts'
import { waitFor } from '../../helpers/wait.ts'

const T0 = { topic: 't', partition: 0, remoteTopic: 'A.t' }
const TXN = 'kmirror-A-B-host:1:2'
const EXPECTED = /lost its group membership/

/** Rounds as transactions, recording what happened; `endMembership` forgets the fencing as the BatchWriter does. */
function fakeRounds (h: () => Harness): { deps: ExactlyOnceDeps, log: string[] } {
  const log: string[] = []
  const deps: ExactlyOnceDeps = {
    rounds: {
      commitInDoubt: false,
      lastCommitted: true,
      settleDoubt: () => undefined,
      transactionalId: TXN,
      run: async fn => {
        try {
          const value = await fn()
          log.push('commit')
          return value
        } catch (err) {
          log.push('abort')
          throw err
        }
      },
      recover: async () => { log.push('recover') },
      endMembership: (): KmirrorError | null => { log.push('end'); return null }
    },
    reloadProgress: async () => new Map(Object.entries(h().progress.latest())),
    syncsAfterCommit: null
  }
  return { deps, log }
}

function fenced (): KmirrorError {
  return fencedError('write to cluster B', 'PRODUCER_FENCED', TXN)
}

/** A harness in exactly-once mode with a lease gate the test opens and closes. */
function setup (): { h: Harness, rounds: ReturnType<typeof fakeRounds>, lease: { reason: string | null, asked: number } } {
  let harness: Harness | undefined
  const rounds = fakeRounds(() => harness!)
  const lease: { reason: string | null, asked: number } = { reason: null, asked: 0 }
  const h = harness = createHarness({ exactlyOnce: rounds.deps, fence: () => { lease.asked++; return lease.reason } })
  h.source.addPartition('t', 0, offsetsWithGaps(0, 29))
  h.source.batchRecords = 2
  return { h, rounds, lease }
}

describe('FlowReplicator in exactly-once mode, fenced after its own lost membership', () => {
  it('a round fenced after the membership was lost ends quietly; work assigned again is copied to the end', async () => {
    // Given a partition being copied, round by round
    const { h, rounds } = setup()
    await h.replicator.addPartitions([T0], new Map())
    h.target.beforeWrite(() => {
      if (h.target.writeCalls !== 3) return
      // When the membership is lost while the third round writes, and that write answers PRODUCER_FENCED (the
      // leader fenced this member's transactional id before handing its partition over)
      h.replicator.loseAll()
      h.target.failNextWrite(fenced())
    })
    const running = h.replicator.run()
    let stopped: unknown = null
    running.catch(err => { stopped = err })
    await waitFor(() => rounds.log.includes('end') && h.replicator.status().length === 0 && h.logs.lines.some(l => EXPECTED.test(l.msg)),
      { timeoutMs: 5000, intervalMs: 5, message: 'the lost partition left, the fencing reported' })
    // Then the flow still runs, and says why the round was fenced once, at info level, naming group, cluster and id
    assert.equal(stopped, null)
    const lines = h.logs.lines.filter(l => EXPECTED.test(l.msg))
    assert.equal(lines.length, 1)
    assert.equal(lines[0]!.level, LogLevels.info)
    assert.equal(lines[0]!['transactionalId'], TXN)
    assert.equal(lines[0]!['cluster'], 'B')
    assert.ok(h.logs.lines.some(l => /transactional producer of that membership is ended/.test(l.msg)))
    assert.equal(h.logs.lines.filter(l => l.level >= LogLevels.warn && /step failed/.test(l.msg)).length, 0)
    // When the group assigns the partition again, with the progress the other instance stored (up to 19)
    await h.replicator.addPartitions([T0], new Map([[partitionKey('t', 0), 19]]))
    h.source.whenCaughtUp(() => h.replicator.stop())
    await running
    // Then it resumes at 20 and copies to the end
    assert.deepEqual(h.target.copied('A.t', 0).slice(-10), h.source.records('t', 0).slice(20).map(asCopied))
  })

  it('a round fenced while the lease does not hold waits for the lost membership instead of stopping the flow', async () => {
    // Given a partition being copied
    const { h, rounds, lease } = setup()
    await h.replicator.addPartitions([T0], new Map())
    h.target.beforeWrite(() => {
      if (h.target.writeCalls !== 3) return
      // When the process was frozen past its lease: its write answers PRODUCER_FENCED before the member noticed the loss
      lease.reason = 'the lease of member m in group g on cluster B is not valid'
      h.target.failNextWrite(fenced())
    })
    const running = h.replicator.run()
    let stopped: unknown = null
    running.catch(err => { stopped = err })
    await waitFor(() => h.logs.lines.some(l => EXPECTED.test(l.msg)), { timeoutMs: 5000, intervalMs: 5, message: 'the fencing reported' })
    // Then the flow waits (nothing fetched or written while the lease does not hold)
    const written = h.target.writeCalls
    const fetched = h.source.fetchCalls.length
    const asked = lease.asked
    await waitFor(() => lease.asked > asked + 3, { timeoutMs: 5000, intervalMs: 5, message: 'the gate asked again' })
    assert.equal(stopped, null)
    assert.equal(h.target.writeCalls, written)
    assert.equal(h.source.fetchCalls.length, fetched)
    // When the member notices the loss, joins again and is assigned the partition under its new lease
    h.replicator.loseAll()
    assert.ok(rounds.log.includes('end'))
    lease.reason = null
    await waitFor(() => h.replicator.status().length === 0, { timeoutMs: 5000, intervalMs: 5, message: 'the lost partition left' })
    await h.replicator.addPartitions([T0], new Map([[partitionKey('t', 0), 9]]))
    h.source.whenCaughtUp(() => h.replicator.stop())
    await running
    // Then it copies from 10 to the end, and reported the fencing once
    assert.deepEqual(h.target.copied('A.t', 0).slice(-20), h.source.records('t', 0).slice(10).map(asCopied))
    assert.equal(h.logs.lines.filter(l => EXPECTED.test(l.msg)).length, 1)
  })

  it('a round fenced while the membership holds stops the flow: another producer took this instance\'s transactional id', async () => {
    // Given a partition being copied under a valid lease
    const { h, rounds } = setup()
    await h.replicator.addPartitions([T0], new Map())
    const err = fenced()
    // When a write answers PRODUCER_FENCED with the membership intact
    h.target.beforeWrite(() => { if (h.target.writeCalls === 2) h.target.failNextWrite(err) })
    // Then the flow stops with that error, and never ended the producer
    await assert.rejects(h.replicator.run(), e => e === err)
    assert.equal(rounds.log.includes('end'), false)
    assert.equal(h.logs.lines.some(l => EXPECTED.test(l.msg)), false)
  })
})
