import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import type { ExactlyOnceDeps } from '../../../src/replication/flow-replicator.ts'
import { waitFor } from '../../helpers/wait.ts'
import { asCopied, createHarness, offsetsWithGaps, type Harness } from '../../fakes/replicator-harness.ts'

const T = { source: 't', remote: 'A.t', partitions: 1 } as const

interface RoundsOptions {
  /** The commit of the Nth round gets no answer (it went through, or not). */
  readonly lostCommits?: Readonly<Record<number, 'committed' | 'aborted'>>
  /** Where the offset syncs queued after a commit go (their upstream offsets); no queue without. */
  readonly queued?: number[]
  /** What the rounds say of the last round: committed (the default), or its transaction dropped by a lost membership. */
  readonly lastCommitted?: boolean
}

interface FakeRounds {
  readonly deps: ExactlyOnceDeps
  readonly committed: () => Record<string, number>
  readonly log: string[]
}

/** Rounds as transactions: the progress a round stored counts only once its callback and commit succeeded. */
function fakeRounds (h: () => Harness, { lostCommits = {}, queued, lastCommitted = true }: RoundsOptions = {}): FakeRounds {
  let committed: Record<string, number> = {}
  const log: string[] = []
  let inDoubt = false
  let commits = 0
  const deps: ExactlyOnceDeps = {
    rounds: {
      get commitInDoubt () { return inDoubt },
      lastCommitted,
      settleDoubt: wentThrough => { if (inDoubt) log.push(`settled ${wentThrough ? 'committed' : 'aborted'}`); inDoubt = false },
      run: async fn => {
        inDoubt = false
        try {
          const value = await fn()
          // LOST_COMMITS: the commit of the Nth round gets no answer (it went through, or not)
          const lost = lostCommits[++commits]
          if (lost !== undefined) {
            if (lost === 'committed') committed = { ...h().progress.latest() }
            inDoubt = true
            throw new KmirrorError(ErrorCodes.TIMEOUT, 'EndTxn timed out', { retriable: true })
          }
          committed = { ...h().progress.latest() }
          log.push('commit')
          return value
        } catch (err) {
          log.push('abort')
          throw err
        }
      },
      recover: async () => { log.push('recover') },
      transactionalId: 'kmirror-A-B-0',
      endMembership: () => null
    },
    // (keyed as the real store's: partitionKey)
    reloadProgress: async () => { log.push(`reload ${JSON.stringify(committed)}`); return new Map(Object.entries(committed).map(([k, v]) => [k.replace(/-(\d+)$/, '\u0000$1'), v])) },
    syncsAfterCommit: queued === undefined ? null : { enqueue: entries => { queued.push(...entries.map(e => e.upstreamOffset)) } }
  }
  return { deps, committed: () => committed, log }
}

/**
 * A replicator in exactly-once mode over fake rounds (fakeRounds), with source partition t-0 (offsets 0 to 11, with
 * gaps) to copy, BATCH_RECORDS records a batch (the source's default when not given), stopping once caught up.
 */
function harness (options: RoundsOptions & { readonly batchRecords?: number } = {}): { h: Harness, rounds: FakeRounds } {
  let created: Harness | undefined
  const rounds = fakeRounds(() => created!, options)
  const h = created = createHarness({ exactlyOnce: rounds.deps })
  h.source.addPartition('t', 0, offsetsWithGaps(0, 11))
  if (options.batchRecords !== undefined) h.source.batchRecords = options.batchRecords
  h.source.whenCaughtUp(() => h.replicator.stop())
  return { h, rounds }
}

/** Replicates topic t until the source is caught up. */
async function runRounds (h: Harness): Promise<void> {
  await h.replicator.addTopics([T])
  await h.replicator.run()
}

describe('FlowReplicator in exactly-once mode', () => {
  it('stores progress inside every round, and after a failed round resumes every partition at its committed progress', async () => {
    // Given rounds of two records, the third write failing after its first batch was acknowledged
    const { h, rounds } = harness({ batchRecords: 2 })
    h.target.beforeWrite(() => {
      if (h.target.writeCalls === 3) h.target.failNextWrite(new KmirrorError(ErrorCodes.PRODUCE, 'connection reset', { retriable: true }), { afterSegments: 1 })
    })
    // When it copies everything
    await runRounds(h)
    // Then the failed round was aborted, the transaction recovered, the committed progress read again
    const aborted = rounds.log.indexOf('abort')
    assert.deepEqual(rounds.log.slice(aborted, aborted + 2), ['abort', 'recover'])
    const resumedAt = (JSON.parse(rounds.log[aborted + 2]!.slice('reload '.length)) as Record<string, number>)['t-0']! + 1
    assert.ok(rounds.log.slice(0, aborted).every(e => e === 'commit') && aborted >= 1, rounds.log.join(', '))
    // And the copy went on from the last committed position: the target's tail (what read_committed keeps) is exact
    const expected = h.source.records('t', 0).map(asCopied)
    const copied = h.target.copied('A.t', 0)
    assert.ok(copied.length > expected.length, 'the aborted attempt was sent')
    assert.deepEqual(copied.slice(copied.length - (expected.length - resumedAt)), expected.slice(resumedAt))
    assert.deepEqual(rounds.committed(), { 't-0': 11 })
    // And nothing was stored outside a round (no flush at stop)
    assert.ok(rounds.log.filter(e => e === 'commit').length >= h.progress.commits.length - 1)
  })

  it('queues the offset syncs of a committed round for the source cluster after its commit, none of a round whose transaction a lost membership dropped', async () => {
    for (const committedRound of [true, false]) {
      const queued: number[] = []
      const { h } = harness({ queued, lastCommitted: committedRound })
      await runRounds(h)
      if (committedRound) assert.ok(queued.length > 0 && queued[0] === 0, `syncs queued: ${JSON.stringify(queued)}`)
      else assert.deepEqual(queued, [])
    }
  })

  it('queues the source offset syncs of a round whose commit got no answer once it is settled as committed, as those of any committed round', async () => {
    const run = async (lostCommits: Readonly<Record<number, 'committed'>>): Promise<number[]> => {
      const queued: number[] = []
      const { h } = harness({ lostCommits, queued, batchRecords: 2 })
      await runRounds(h)
      return queued
    }
    const baseline = await run({})
    assert.ok(baseline.length > 0)
    // (then a sync where the rewind restarted the partition's tracking, as after any restart)
    const settled = await run({ 1: 'committed' })
    assert.deepEqual(settled.slice(0, baseline.length), baseline, JSON.stringify(settled))
  })

  it('a release whose membership is lost while it waits for MM2\'s syncs is not told as stored (the last round may have been aborted)', async () => {
    const { h } = harness({ batchRecords: 2 })
    Object.assign(h.syncs, { settle: async () => { h.replicator.loseAll(); return 0 } })
    let release: Promise<boolean> | null = null
    h.target.beforeWrite(() => { if (h.target.writeCalls === 2) release = h.replicator.releasePartitions([{ topic: 't', partition: 0 }]) })
    const running = runRounds(h)
    await waitFor(() => release !== null, { timeoutMs: 5000, intervalMs: 5, message: 'the release during the second write' })
    const stored = await release
    h.replicator.stop()
    await running
    assert.equal(stored, false)
  })

  it('stops at once on FENCED, storing nothing more', async () => {
    const { h, rounds } = harness({ batchRecords: 2 })
    const fenced = new KmirrorError(ErrorCodes.FENCED, 'PRODUCER_FENCED')
    h.target.beforeWrite(() => { if (h.target.writeCalls === 2) h.target.failNextWrite(fenced) })
    const commits = (): number => h.progress.commits.length
    await assert.rejects(runRounds(h), err => err === fenced)
    assert.deepEqual(rounds.log, ['commit', 'abort'])
    assert.equal(commits(), 1)
  })

  it('settles a round whose commit got no answer from the committed progress: one that went through is not copied again, one that did not is', async () => {
    for (const lost of ['committed', 'aborted'] as const) {
      // Given rounds of two records, the commit of the second round without an answer
      const { h, rounds } = harness({ lostCommits: { 2: lost }, batchRecords: 2 })
      await runRounds(h)
      // Then the doubt was settled as the committed progress says, once
      assert.deepEqual(rounds.log.filter(e => e.startsWith('settled')), [`settled ${lost}`], rounds.log.join(', '))
      assert.deepEqual(h.logs.lines.filter(l => l.msg.startsWith('the commit of the last round got no answer')).map(l => l.msg),
        [lost === 'committed' ? 'the commit of the last round got no answer, and it went through: its records are visible once, nothing is copied again'
          : 'the commit of the last round got no answer, and it did not go through: nothing of it is visible, its records are copied again'])
      // and the copy ends complete, the records of a round that went through copied once only
      assert.deepEqual(rounds.committed(), { 't-0': 11 })
      const expected = h.source.records('t', 0).map(asCopied)
      const copied = h.target.copied('A.t', 0)
      if (lost === 'committed') assert.deepEqual(copied, expected, 'each record sent once')
      else {
        assert.ok(copied.length > expected.length, 'the round that did not go through was sent again')
        const reload = rounds.log.find(e => e.startsWith('reload '))!
        const resumedAt = (JSON.parse(reload.slice('reload '.length)) as Record<string, number>)['t-0']! + 1
        assert.deepEqual(copied.slice(copied.length - (expected.length - resumedAt)), expected.slice(resumedAt), 'copied again from the committed progress on')
      }
    }
  })
})
