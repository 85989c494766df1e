/**
 * The topic refresh job's run (runtime/topic-refresh-job.ts): its abort stops writes on the target, never a change of
 * this instance's data path for partitions it still owns (a revoked job leaves them to it), and never adds one it no
 * longer owns (a lost membership owns none).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { RemoteTopics, type RefreshResult, type ReplicatedTopic } from '../../../src/metadata/remote-topics.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { JOB_REVOKED } from '../../../src/runtime/flow-work.ts'
import { topicRefreshJob } from '../../../src/runtime/topic-refresh-job.ts'
import type { PartitionRef } from '../../../src/replication/partition-set.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { deletionRecordingJob } from '../../fakes/deletion-recording-job.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { waitFor } from '../../helpers/wait.ts'
import { FakeTopicCluster } from '../metadata/topic-fake-cluster.ts'

const flowWith = (...lines: string[]) => parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', 'replication.factor = 1', ...lines].join('\n'), 'mm2.properties')
  .flows.find(f => f.name === 'A->B')!

/**
 * The job of an instance in a group over fake clusters, the target without topic ids (before Kafka 2.8): `orders`
 * (2 partitions) replicated into A.orders, of which this instance owns the partitions in OWNED.
 */
async function setup (owned: Set<string>, ...lines: string[]) {
  const flow = flowWith(...lines)
  const source = new FakeTopicCluster()
  const target = new FakeTopicCluster()
  target.withoutTopicIds = true
  source.addTopic('orders', 2)
  const topics = new RemoteTopics(flow, createReplicationPolicy(flow.replicationPolicy), source, target, memoryLogger().log)
  await topics.refresh()
  const dataPath: string[] = []
  let whileRemoving = async (_names: readonly string[]): Promise<void> => {}
  const replicator = {
    removeTopics: async (names: readonly string[]) => { dataPath.push(`remove ${names.join(',')}`); await whileRemoving(names) },
    addTopics: async (added: readonly ReplicatedTopic[], fromLogStart: ReadonlySet<string> = new Set(), owns: (tp: string) => boolean = () => true) => {
      for (const t of added) {
        for (let p = 0; p < t.partitions; p++) if (owns(partitionKey(t.source, p))) dataPath.push(`add ${t.source}-${p}${fromLogStart.has(t.source) ? ' from the log start' : ''}`)
      }
    },
    addPartitions: async (refs: readonly PartitionRef[], stored: ReadonlyMap<string, number>) => {
      for (const r of refs) dataPath.push(`add ${r.topic}-${r.partition} after stored ${stored.get(partitionKey(r.topic, r.partition)) ?? '-'}`)
    }
  }
  const forgotten: string[] = []
  let forgetFails = false
  const progress = {
    forget: async (ps: readonly { topic: string, partition: number }[]) => {
      if (forgetFails) throw new KmirrorError(ErrorCodes.PRODUCE, 'mm2-offsets.A.internal: NOT_LEADER_OR_FOLLOWER', { retriable: true })
      forgotten.push(...ps.map(p => `${p.topic}-${p.partition}`))
    },
    load: async () => new Map([[partitionKey('orders', 0), 41], [partitionKey('orders', 1), 17]]),
    topic: 'mm2-offsets.A.internal'
  }
  const refreshed: RefreshResult[] = []
  let afterRefresh = (): void => {}
  const refresher = { refresh: async (o: Parameters<RemoteTopics['refresh']>[0]) => { const r = await topics.refresh(o); afterRefresh(); return r }, returnedHandled: (t: readonly ReplicatedTopic[]) => { topics.returnedHandled(t) } }
  const logger = memoryLogger()
  const run = topicRefreshJob({ topics: refresher, replicator, progress, target: 'B', owns: tp => owned.has(tp), alone: false, before: null, refreshed: r => { refreshed.push(r) }, log: logger.log })
  return {
    source, target, dataPath, forgotten, refreshed, run, logger,
    failForget: () => { forgetFails = true },
    whileRemoving: (f: (names: readonly string[]) => Promise<void>) => { whileRemoving = f },
    onRefreshed: (f: () => void) => { afterRefresh = f }
  }
}

/** A source whose answers to topics asked by name wait, once `hold` was called, until `answer`. */
class HeldProbes extends FakeTopicCluster {
  #held: Promise<void> | null = null
  #release = (): void => {}

  hold (): void {
    this.#held = new Promise(resolve => { this.#release = resolve })
  }

  answer (): void {
    this.#release()
    this.#held = null
  }

  override async probeTopics (names: readonly string[]): ReturnType<FakeTopicCluster['probeTopics']> {
    const answers = super.probeTopics(names)
    await this.#held
    return await answers
  }
}

const revoked = (): KmirrorError => new KmirrorError(ErrorCodes.FENCED, `job refresh-topics stopped: ${JOB_REVOKED}`, { retriable: true })

describe('the topic refresh job', () => {
  it('Given a deletion proven with sync.topic.deletions.enabled, when the job is revoked as the data path lets go of the topic (its remote topic not deleted yet), then the partitions of it this instance owns are taken back from their stored positions: owned, they must not stay uncopied', async () => {
    // Given orders hidden on the source (stale metadata) long enough to count as deleted, this instance owning orders-0
    const { source, target, dataPath, refreshed, run, whileRemoving } = await setup(new Set([partitionKey('orders', 0)]), 'sync.topic.deletions.enabled = true')
    source.hideTopic('orders')
    await run(new AbortController().signal)
    // When the refresh that proves the deletion lets go of orders, and the job is revoked then
    const job = new AbortController()
    const reason = revoked()
    whileRemoving(async () => { job.abort(reason) })
    await assert.rejects(run(job.signal), err => err === reason)
    // Then the remote topic stays, and orders-0 is copied on from its stored position (read again)
    assert.equal(target.has('A.orders'), true)
    assert.deepEqual(dataPath, ['remove orders', 'add orders-0 after stored 41'])
    assert.equal(refreshed.length, 1)
  })

  it('Given a remote topic deleted by hand on a target without topic ids, then the run creates it again and copies again from the log start the partitions of it this instance owns', async () => {
    const { target, dataPath, refreshed, forgotten, run } = await setup(new Set([partitionKey('orders', 0)]))
    await target.deleteTopics(['A.orders'])
    await run(new AbortController().signal)
    assert.equal(target.has('A.orders'), true)
    assert.deepEqual(dataPath, ['remove orders', 'add orders-0 from the log start'])
    assert.deepEqual(refreshed.map(r => r.recopy), [['orders']])
    // and the stored positions of every partition of it are forgotten (they are the deleted remote topic's): orders-1,
    // if assigned here at this rebalance, starts at the log start too
    assert.deepEqual(forgotten, ['orders-0', 'orders-1'])
  })

  it('Given a remote topic deleted by hand on a target without topic ids, when its stored positions cannot be forgotten, then that is told and the partitions owned here are copied again all the same', async () => {
    const { target, dataPath, logger, failForget, run } = await setup(new Set([partitionKey('orders', 0)]))
    failForget()
    await target.deleteTopics(['A.orders'])
    await run(new AbortController().signal)
    assert.deepEqual(dataPath, ['remove orders', 'add orders-0 from the log start'])
    assert.deepEqual(logger.at(LogLevels.warn).map(l => l.msg), ['could not forget the stored positions of orders in mm2-offsets.A.internal on cluster B, copied again from the log start into its remote topic created again: ' +
      'a partition of it that changes owner (or a restart) before its new copy\'s progress is stored resumes at its old position, and the remote topic lacks the records before it'])
  })

  it('Given a remote topic deleted by hand, when the job is revoked while the data path lets go of it (created again already), then the run rejects but the partitions this instance still owns are copied again from the log start', async () => {
    // Given this instance owns orders-0 (orders-1 is another instance's)
    const { target, dataPath, refreshed, forgotten, run, whileRemoving } = await setup(new Set([partitionKey('orders', 0)]))
    await target.deleteTopics(['A.orders'])
    // When the job is revoked as the refresh takes orders out of the data path to copy it again
    const job = new AbortController()
    const reason = revoked()
    whileRemoving(async () => { job.abort(reason) })
    await assert.rejects(run(job.signal), err => err === reason)
    // Then orders-0 is back in the data path from the log start: the job moved, the partition did not; nothing is
    // written once the run is aborted (the positions stay)
    assert.deepEqual(dataPath, ['remove orders', 'add orders-0 from the log start'])
    assert.deepEqual(forgotten, [])
    // and the group is not told of the run's topics (the instance that runs the job now tells it)
    assert.deepEqual(refreshed, [])
  })

  it('Given a remote topic deleted by hand, when the membership is lost while the data path lets go of it, then none of its partitions is added again: this instance owns none any more', async () => {
    const owned = new Set([partitionKey('orders', 0), partitionKey('orders', 1)])
    const { target, dataPath, run, whileRemoving } = await setup(owned)
    await target.deleteTopics(['A.orders'])
    const membership = new AbortController()
    const reason = new KmirrorError(ErrorCodes.FENCED, 'not running jobs of flow A->B any more: the group membership that owned it ended', { retriable: true })
    // (FlowWork.lose: every partition is owned no more, then the runs are aborted)
    whileRemoving(async () => { owned.clear(); membership.abort(reason) })
    await assert.rejects(run(membership.signal), err => err === reason)
    assert.deepEqual(dataPath, ['remove orders'])
  })

  it('Given a source topic back after this instance found it deleted, when the job is revoked before its positions are forgotten, then nothing is forgotten: the next run forgets them', async () => {
    const { source, forgotten, run, onRefreshed } = await setup(new Set())
    source.removeTopic('orders')
    await run(new AbortController().signal)
    await run(new AbortController().signal)
    source.addTopic('orders', 2)
    // When the job is revoked once the refresh that finds it back has ended
    const job = new AbortController()
    const reason = revoked()
    onRefreshed(() => { job.abort(reason) })
    await assert.rejects(run(job.signal), err => err === reason)
    onRefreshed(() => {})
    // Then no position is forgotten by that run, and the next forgets them
    assert.deepEqual(forgotten, [])
    await run(new AbortController().signal)
    assert.deepEqual(forgotten, ['orders-0', 'orders-1'])
  })

  it('Given an absence counted here, when the job comes back while a run of the membership lost before still waits for the source\'s answer, then the first run of the new stay counts from zero: that answer, asked before the job came back, counts toward no deletion', async () => {
    // Given `gone` answered absent once by this instance's refresh
    const flow = flowWith()
    const source = new HeldProbes()
    source.addTopic('orders', 1)
    source.addTopic('gone', 1)
    const topics = new RemoteTopics(flow, createReplicationPolicy(flow.replicationPolicy), source, new FakeTopicCluster(), memoryLogger().log)
    const { run, deleted } = deletionRecordingJob(topics)
    await run(new AbortController().signal)
    source.removeTopic('gone')
    await run(new AbortController().signal)
    assert.deepEqual(deleted, [[], []])
    // When a run asks the source about `gone` again, and the membership is lost before the answer (the run aborted,
    // not waited for)
    source.hold()
    const membership = new AbortController()
    const lostRun = run(membership.signal)
    await waitFor(() => source.callsOf('probeTopics').length === 2, { timeoutMs: 2000, intervalMs: 5, message: 'the run asking about gone' })
    const reason = new KmirrorError(ErrorCodes.FENCED, 'not running jobs of flow A->B any more: the group membership that owned it ended', { retriable: true })
    membership.abort(reason)
    // and the job comes back to this instance (its stop not told: `released` plays no part), its run at assignment
    // queued behind that run
    topics.acquired()
    const runAtAssignment = run(new AbortController().signal)
    source.answer()
    await assert.rejects(lostRun, err => err === reason)
    await runAtAssignment
    // Then that run proves nothing: `gone` is absent once in this stay, deleted only at the next refresh
    assert.deepEqual(deleted, [[], [], []])
    await run(new AbortController().signal)
    assert.deepEqual(deleted, [[], [], [], ['gone']])
  })
})
