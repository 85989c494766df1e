import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OffsetHistoryStore } from '../../../src/checkpoint/offset-history-store.ts'
import { parseConfig } from '../../../src/config/load.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import type { FlowReplicator, PartitionRef } from '../../../src/replication/flow-replicator.ts'
import { RemoteTopics } from '../../../src/metadata/remote-topics.ts'
import { FlowWork, JOB_REVOKED, MEMBERSHIP_ENDED } from '../../../src/runtime/flow-work.ts'
import type { FlowJob } from '../../../src/runtime/job-registry.ts'
import { Scheduler } from '../../../src/runtime/scheduler.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { deletionRecordingJob } from '../../fakes/deletion-recording-job.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { waitFor } from '../../helpers/wait.ts'
import { FakeTopicCluster } from '../metadata/topic-fake-cluster.ts'

const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', 'A->B.topics = orders.*'].join('\n'), 'mm2.properties')
  .flows.find(f => f.name === 'A->B')!

/** FlowWork over recording fakes: what it asked of the data path, the stores and the heartbeats, in order. */
function setup (options: { ownership?: 'all' | 'assigned', heartbeats?: boolean, refresh?: { periodic: boolean, failures: number, run?: (signal: AbortSignal) => Promise<void>, assigned?: () => void }, checkpoints?: (signal: AbortSignal) => Promise<void> } = {}) {
  const calls: string[] = []
  let ownedNow: (p: { topic: string, partition: number }) => boolean = () => false
  let duringRelease: () => Promise<void> = async () => undefined
  let releaseStored = true
  const replicator = {
    addPartitions: async (refs: readonly PartitionRef[], stored: ReadonlyMap<string, number>) => { calls.push(`add ${refs.map(r => `${r.topic}-${r.partition}>${r.remoteTopic}@${stored.get(partitionKey(r.topic, r.partition)) ?? '-'}`).join(',')}`) },
    releasePartitions: async (ps: readonly { topic: string, partition: number }[], by?: number) => {
      calls.push(`release ${ps.map(p => `${p.topic}-${p.partition}${ownedNow(p) ? ' (still owned)' : ''}`).join(',')}${by === undefined ? '' : ` by ${by}`}`)
      await duringRelease()
      return releaseStored
    },
    loseAll: () => { calls.push('lose') }
  } as unknown as FlowReplicator
  let ownedAtFollow: ((tp: string) => boolean) | null = null
  const history = {
    follow: async (owned: (tp: string) => boolean, o?: { waitForTransactions?: boolean }) => {
      ownedAtFollow = owned
      calls.push(`follow ${owned(partitionKey('orders', 0))}${o?.waitForTransactions === true ? ' (waiting for transactions)' : ''}`)
    }
  } as unknown as OffsetHistoryStore
  const progress = { load: async (o?: { waitForTransactions?: boolean }) => { calls.push(o?.waitForTransactions === true ? 'progress (waiting for transactions)' : 'progress'); return new Map([[partitionKey('orders', 0), 41]]) } }
  const sourceAdmin = {
    describeAllTopics: async () => new Map([
      ['orders', { name: 'orders', id: 'x', partitions: 2 }], ['other', { name: 'other', id: 'y', partitions: 3 }],
      ['orders-eu', { name: 'orders-eu', id: 'z', partitions: 1 }], ['mm2-offsets.A.internal', { name: 'mm2-offsets.A.internal', id: 'w', partitions: 25 }]
    ])
  }
  const scheduler = new Scheduler(memoryLogger().log)
  const job = (name: FlowJob['name'], periodic = true): FlowJob => ({ name, intervalMs: 60_000, firstDelayMs: 60_000, periodic, run: async () => { calls.push(`run ${name}`) } })
  let refreshFailures = options.refresh?.failures ?? 0
  const refresh: FlowJob = {
    ...job('refresh-topics', options.refresh?.periodic ?? true),
    run: async signal => {
      calls.push('run refresh-topics')
      if (refreshFailures-- > 0) throw new Error('cluster B unreachable')
      await options.refresh?.run?.(signal)
    }
  }
  const checkpoints = options.checkpoints === undefined ? job('emit-checkpoints') : { ...job('emit-checkpoints'), firstDelayMs: 0, run: options.checkpoints }
  const assigned = (): void => { calls.push('refresh-topics assigned here'); options.refresh?.assigned?.() }
  const jobs = [{ ...refresh, assigned, stopped: () => { calls.push('refresh-topics stopped here') } }, checkpoints]
  const heartbeats = options.heartbeats === true ? { start: () => { calls.push('heartbeats start') }, stop: async (abort?: string) => { calls.push(abort === undefined ? 'heartbeats stop' : `heartbeats stop, run aborted: ${abort}`) } } : null
  const logger = memoryLogger()
  let endLostFailures = 0
  let whileEndingLost: () => void = () => {}
  const endLostTransaction = async (): Promise<void> => {
    if (endLostFailures-- > 0) throw new KmirrorError(ErrorCodes.PRODUCE, 'InitProducerId: COORDINATOR_NOT_AVAILABLE', { retriable: true })
    whileEndingLost()
    calls.push('end lost transaction')
  }
  const work = new FlowWork({ config, policy: createReplicationPolicy(config.replicationPolicy), sourceAdmin, replicator, progress, history, scheduler, jobs, heartbeats, endLostTransaction, membershipLost: () => { calls.push('membership lost') }, log: logger.log }, options.ownership ?? 'assigned')
  ownedNow = p => work.ownsPartition(partitionKey(p.topic, p.partition))
  return { work, calls, scheduler, logger, owned: () => ownedAtFollow, whileReleasing: (f: () => Promise<void>) => { duringRelease = f }, releaseStores: (stored: boolean) => { releaseStored = stored }, failEndLost: (n: number) => { endLostFailures = n }, whileEndingLost: (f: () => void) => { whileEndingLost = f } }
}

/**
 * The topic refresh job as a flow in a group runs it, over fake clusters whose source has `orders` and `orders-gone`:
 * told when it comes here (`RemoteTopics.acquired`), never when it leaves (the stop's `released` held back), and
 * the deletions each run that was not aborted found.
 */
function realRefresh () {
  const source = new FakeTopicCluster()
  source.addTopic('orders', 1)
  source.addTopic('orders-gone', 1)
  const topics = new RemoteTopics(config, createReplicationPolicy(config.replicationPolicy), source, new FakeTopicCluster(), memoryLogger().log)
  const { run, deleted } = deletionRecordingJob(topics)
  const { work, scheduler } = setup({ refresh: { periodic: true, failures: 0, run, assigned: () => { topics.acquired() } } })
  // A periodic run, as the scheduler makes one an interval after the run at assignment
  const runNow = async (): Promise<void> => { await run(new AbortController().signal) }
  return { source, deleted, work, scheduler, runNow }
}

describe('FlowWork', () => {
  it('lists the partitions of the replicated source topics (the flow\'s filter; internal topics left out) and every job', async () => {
    const { work } = setup({ heartbeats: true })
    assert.deepEqual(await work.listWork(), [
      { kind: 'partition', topic: 'orders', partition: 0 }, { kind: 'partition', topic: 'orders', partition: 1 }, { kind: 'partition', topic: 'orders-eu', partition: 0 },
      { kind: 'job', job: 'refresh-topics' }, { kind: 'job', job: 'emit-checkpoints' }, { kind: 'job', job: 'heartbeats' }
    ])
  })

  it('tells a job that it left this instance, revoked or with the membership lost, so state kept for its runs is dropped', async () => {
    const { work, calls, scheduler } = setup()
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    await work.revoke([{ kind: 'job', job: 'refresh-topics' }])
    assert.deepEqual(calls.filter(c => c.endsWith('stopped here')), ['refresh-topics stopped here'])
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    work.lose()
    await new Promise(resolve => setImmediate(resolve))
    assert.deepEqual(calls.filter(c => c.endsWith('stopped here')), ['refresh-topics stopped here', 'refresh-topics stopped here'])
    await scheduler.stop()
  })

  it('tells the topic refresh that it came here at assignment, at once and before its run, also when the stop of the lost membership has not told it left yet; not when a rebalance keeps it here', async () => {
    const { work, calls, scheduler } = setup()
    const told = (): string[] => calls.filter(c => c.startsWith('refresh-topics') || c === 'run refresh-topics')
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    assert.deepEqual(told(), ['refresh-topics assigned here', 'run refresh-topics'])
    // When a rebalance keeps it here (assigned again while it runs here)
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    // Then it is not told again: what it holds is current
    assert.deepEqual(told(), ['refresh-topics assigned here', 'run refresh-topics', 'run refresh-topics'])
    // When the membership is lost and the job assigned here again at once
    calls.length = 0
    work.lose()
    const again = work.assign([{ kind: 'job', job: 'refresh-topics' }])
    // Then it is told it came here at once, before the stop tells it left (the stop waits for the lost run, lose
    // does not); its run at assignment comes once the lost membership's transaction is ended
    assert.deepEqual(told(), ['refresh-topics assigned here'])
    await again
    await new Promise(resolve => setImmediate(resolve))
    // (the lost stay's end is told when its aborted run ended: before or after the new run, whichever is first)
    assert.deepEqual(told()[0], 'refresh-topics assigned here')
    assert.deepEqual(told().slice(1).sort(), ['refresh-topics stopped here', 'run refresh-topics'])
    await scheduler.stop()
  })

  it('Given a source topic the topic refresh here found absent once, when the membership is lost and the job assigned here again, then its run at assignment counts the absence from zero: one more absent answer deletes nothing', async () => {
    const { source, deleted, work, scheduler, runNow } = realRefresh()
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    source.removeTopic('orders-gone')
    await runNow()
    assert.deepEqual(deleted, [[], []])
    // When the membership is lost, and the job assigned here again (whenever the stop tells it left)
    work.lose()
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    // Then the run at assignment counts orders-gone absent once, and the next run proves its deletion
    assert.deepEqual(deleted, [[], [], []])
    await runNow()
    assert.deepEqual(deleted, [[], [], [], ['orders-gone']])
    await scheduler.stop()
  })

  it('Given a source topic the topic refresh here found absent once, when a rebalance keeps the job here (assigned again), then its count holds: the run at assignment proves the deletion', async () => {
    const { source, deleted, work, scheduler, runNow } = realRefresh()
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    source.removeTopic('orders-gone')
    await runNow()
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    assert.deepEqual(deleted, [[], [], ['orders-gone']])
    await scheduler.stop()
  })

  it('alone, owns every job of the flow from the start (the topic refresh too, periodic or not), so /status shows what they found', async () => {
    const { work } = setup({ ownership: 'all', refresh: { periodic: false, failures: 0 } })
    assert.deepEqual(work.owned().jobs, ['refresh-topics', 'emit-checkpoints'])
  })

  it('on assignment runs the topic refresh first, reads progress and history again, then adds the partitions; jobs start on the scheduler', async () => {
    const { work, calls, scheduler } = setup({ heartbeats: true })
    assert.equal(work.ownsPartition(partitionKey('orders', 0)), false)
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }, { kind: 'job', job: 'refresh-topics' }, { kind: 'job', job: 'emit-checkpoints' }, { kind: 'job', job: 'heartbeats' }])
    // The history is followed while the new partition is not owned yet, so it is rebuilt from what its last owner wrote
    assert.deepEqual(calls, ['refresh-topics assigned here', 'run refresh-topics', 'progress (waiting for transactions)', 'follow false (waiting for transactions)', 'add orders-0>A.orders@41', 'heartbeats start'])
    assert.equal(work.ownsPartition(partitionKey('orders', 0)), true)
    assert.deepEqual(scheduler.status().map(j => j.name), ['refresh-topics', 'emit-checkpoints'])
    assert.deepEqual(work.owned(), { partitions: [partitionKey('orders', 0)], jobs: ['refresh-topics', 'emit-checkpoints', 'heartbeats'] })
    await scheduler.stop()
  })

  it('on revoke stops owning the partitions at once (a refresh adds them back no more), releases them (stored) before it resolves, and cancels the jobs; lose drops everything at once', async () => {
    const { work, calls, scheduler, owned, whileReleasing } = setup({ heartbeats: true })
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }, { kind: 'partition', topic: 'orders', partition: 1 }, { kind: 'job', job: 'emit-checkpoints' }, { kind: 'job', job: 'heartbeats' }])
    calls.length = 0
    // While the release stores its last syncs and history, that history is still this instance's: not read back
    let historyOfRevokedIsOurs: boolean | undefined
    whileReleasing(async () => {
      await work.followHistory()
      historyOfRevokedIsOurs = owned()!(partitionKey('orders', 1))
    })
    await work.revoke([{ kind: 'partition', topic: 'orders', partition: 1 }, { kind: 'job', job: 'emit-checkpoints' }], 1_234)
    whileReleasing(async () => undefined)
    // (a stop's hand-over deadline reaches the release, which bounds its wait for MM2's syncs by it)
    assert.deepEqual(calls.slice(0, 1), ['release orders-1 by 1234'])
    assert.equal(historyOfRevokedIsOurs, true)
    assert.deepEqual(work.owned(), { partitions: [partitionKey('orders', 0)], jobs: ['heartbeats'] })
    assert.equal(scheduler.has('emit-checkpoints'), false)
    // The history of the partition given away is followed from now on
    await work.followHistory()
    assert.deepEqual(calls.slice(-1), ['follow true'])
    assert.equal(owned()!(partitionKey('orders', 1)), false)
    work.lose()
    await scheduler.stop()
    // (the heartbeat run under way, if any, aborted: it writes no heartbeat after the loss)
    assert.deepEqual(calls.slice(-3), ['lose', 'membership lost', `heartbeats stop, run aborted: ${MEMBERSHIP_ENDED}`])
    assert.deepEqual(work.owned(), { partitions: [], jobs: [] })
  })

  it('on a revoke whose progress could not be stored (the membership ended first), does not log it as stored', async () => {
    const { work, logger, releaseStores } = setup()
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }])
    releaseStores(false)
    await work.revoke([{ kind: 'partition', topic: 'orders', partition: 0 }])
    assert.equal(logger.at(LogLevels.info).filter(l => l.msg === 'work revoked: progress stored').length, 0)
    releaseStores(true)
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 1 }])
    await work.revoke([{ kind: 'partition', topic: 'orders', partition: 1 }])
    assert.equal(logger.at(LogLevels.info).filter(l => l.msg === 'work revoked: progress stored').length, 1)
  })

  it('on loss aborts the run of a job under way (its signal), so it writes nothing more, and does not wait for it', async () => {
    // Given the checkpoints job running under this membership
    let running: AbortSignal | null = null
    let finish = (): void => {}
    const { work, scheduler, logger } = setup({ checkpoints: async signal => { running = signal; await new Promise<void>(resolve => { finish = resolve }); signal.throwIfAborted() } })
    await work.assign([{ kind: 'job', job: 'emit-checkpoints' }])
    await waitFor(() => running !== null, { timeoutMs: 2000, intervalMs: 5, message: 'the job running' })
    // When the membership is lost
    work.lose()
    // Then the run's signal is aborted at once, naming why
    const signal = running as unknown as AbortSignal
    assert.equal(signal.aborted, true)
    assert.match(String(signal.reason), /job emit-checkpoints stopped: the group membership that owned it ended/)
    finish()
    await scheduler.stop()
    assert.equal(logger.at(LogLevels.warn).filter(l => l.msg === 'job failed; it will run again').length, 0, 'not a failure')
  })

  it('Given a lost membership, when partitions are assigned again, then its transaction is ended before the progress read, which waits for open transactions', async () => {
    const { work, calls, scheduler } = setup()
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }])
    work.lose()
    // (the data path first, its loss signal firing whatever follows; the internal writer told at once after: it drops
    // what it still retries)
    assert.deepEqual(calls.slice(-2), ['lose', 'membership lost'])
    calls.length = 0
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }])
    assert.deepEqual(calls.filter(c => c.startsWith('end lost') || c.startsWith('progress')), ['end lost transaction', 'progress (waiting for transactions)'])
    // and only once per loss
    calls.length = 0
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 1 }])
    assert.deepEqual(calls.filter(c => c.startsWith('end lost') || c.startsWith('progress')), ['progress (waiting for transactions)'])
    await scheduler.stop()
  })

  it('Given a lost membership, when the topic refresh and partitions are assigned again, then its transaction is ended before the refresh runs (a long refresh would keep it open, and the next owners\' reads waiting)', async () => {
    const { work, calls, scheduler } = setup()
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }])
    work.lose()
    calls.length = 0
    await work.assign([{ kind: 'job', job: 'refresh-topics' }, { kind: 'partition', topic: 'orders', partition: 0 }])
    assert.deepEqual(calls.filter(c => c === 'end lost transaction' || c === 'run refresh-topics' || c.startsWith('progress')), ['end lost transaction', 'run refresh-topics', 'progress (waiting for transactions)'])
    await scheduler.stop()
  })

  it('Given the membership lost again while the last loss\'s transaction is ended at assignment, then the topic refresh does not run under the next membership', async () => {
    const { work, calls, scheduler, whileEndingLost } = setup()
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }])
    work.lose()
    calls.length = 0
    whileEndingLost(() => { work.lose() })
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    assert.deepEqual(calls.filter(c => c === 'end lost transaction' || c === 'run refresh-topics'), ['end lost transaction'])
    work.lose()
    await scheduler.stop()
  })

  it('Given a lost membership, when the next assignment brings nothing (a member back under its name, which the leader does not fence), then its transaction is ended all the same, and nothing else is done', async () => {
    const { work, calls, scheduler } = setup()
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }])
    await work.assign([])
    assert.equal(calls.includes('end lost transaction'), false, 'no loss: nothing to end')
    work.lose()
    calls.length = 0
    await work.assign([])
    assert.deepEqual(calls, ['end lost transaction'])
    await scheduler.stop()
  })

  it('Given a lost membership, when ending its transaction fails at an assignment that brings nothing, then that is told, the assignment stands, and the next assignment tries again', async () => {
    const { work, calls, logger, scheduler, failEndLost } = setup()
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }])
    work.lose()
    failEndLost(1)
    await work.assign([])
    assert.deepEqual(logger.at(LogLevels.warn).map(l => l.msg).filter(m => m.startsWith('could not end')), ['could not end the transaction of the lost group membership on cluster B; tried again at the next assignment (until then, or its transaction timeout, read_committed readers of the partitions it wrote wait for it)'])
    calls.length = 0
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 1 }])
    assert.deepEqual(calls.filter(c => c.startsWith('end lost') || c.startsWith('progress')), ['end lost transaction', 'progress (waiting for transactions)'])
    await scheduler.stop()
  })

  it('on revoke of the heartbeats, aborts their run under way too: the instance the group handed them to writes them now', async () => {
    const { work, calls, scheduler } = setup({ heartbeats: true })
    await work.assign([{ kind: 'job', job: 'heartbeats' }])
    await work.revoke([{ kind: 'job', job: 'heartbeats' }])
    assert.deepEqual(calls.slice(-1), [`heartbeats stop, run aborted: ${JOB_REVOKED}`])
    await scheduler.stop()
  })

  it('on revoke aborts the run of a job under way too: a loss after the revoke could no longer reach it', async () => {
    // Given the checkpoints job running
    let running: AbortSignal | null = null
    let finish = (): void => {}
    const { work, scheduler } = setup({ checkpoints: async signal => { running = signal; await new Promise<void>(resolve => { finish = resolve }); signal.throwIfAborted() } })
    await work.assign([{ kind: 'job', job: 'emit-checkpoints' }])
    await waitFor(() => running !== null, { timeoutMs: 2000, intervalMs: 5, message: 'the job running' })
    // When the group revokes it
    const revoked = work.revoke([{ kind: 'job', job: 'emit-checkpoints' }])
    // Then its run's signal is aborted at once, and the revoke ends with the run
    const signal = running as unknown as AbortSignal
    assert.equal(signal.aborted, true)
    assert.match(String(signal.reason), /job emit-checkpoints stopped: revoked: the group handed it to another instance/)
    finish()
    await revoked
    assert.deepEqual(work.owned().jobs, [])
    await scheduler.stop()
  })

  it('on a stop\'s revoke, a job whose aborted run still ends a request is not waited for past the hand-over\'s deadline (less its reserve): the stored progress is told as stored', async () => {
    // Given the checkpoints job running a request that ends only when the test says so, whatever its signal
    let running = false
    let finish = (): void => {}
    const { work, scheduler, logger } = setup({ checkpoints: async () => { running = true; await new Promise<void>(resolve => { finish = resolve }) } })
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 1 }, { kind: 'job', job: 'emit-checkpoints' }])
    await waitFor(() => running, { timeoutMs: 2000, intervalMs: 5, message: 'the job running' })
    // When a stop revokes it with its partition, the hand-over's deadline 500 ms from now
    const started = Date.now()
    await work.revoke([{ kind: 'partition', topic: 'orders', partition: 1 }, { kind: 'job', job: 'emit-checkpoints' }], started + 500)
    // Then the revoke ends before the deadline less its reserve (200 ms), its progress told as stored
    const tookMs = Date.now() - started
    assert.ok(tookMs >= 250 && tookMs < 500, `revoked in ${tookMs} ms`)
    const infos = logger.at(LogLevels.info).map(l => l.msg)
    assert.ok(infos.includes('revoked jobs: an aborted run still ends a request it sent; the hand-over does not wait for it'), JSON.stringify(infos))
    assert.ok(infos.includes('work revoked: progress stored'), JSON.stringify(infos))
    finish()
    await scheduler.stop()
  })

  it('Given the topic refresh running at assignment, when the membership is lost, then its run is aborted and told at info as stopped, not as a failed job', async () => {
    let work: FlowWork | null = null
    let aborted: unknown = null
    const { work: created, scheduler, logger } = setup({
      refresh: { periodic: true, failures: 0, run: async signal => { work!.lose(); aborted = signal.reason; signal.throwIfAborted() } }
    })
    work = created
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    assert.match(String(aborted), /not running jobs of flow A->B any more: the group membership that owned it ended/)
    assert.deepEqual(logger.at(LogLevels.warn).filter(l => /failed in its run at assignment/.test(l.msg)), [])
    assert.deepEqual(logger.at(LogLevels.info).filter(l => l.msg === 'job run stopped before its end: it writes nothing more').map(l => l['job']), ['refresh-topics'])
    await scheduler.stop()
  })

  it('a topic refresh that fails at assignment runs again about 2 s later, not an interval later, and the partitions are added meanwhile', async () => {
    const { work, calls, scheduler, logger } = setup({ refresh: { periodic: true, failures: 1 } })
    await work.assign([{ kind: 'partition', topic: 'orders', partition: 0 }, { kind: 'job', job: 'refresh-topics' }])
    assert.deepEqual(calls.filter(c => c.startsWith('run') || c.startsWith('add')), ['run refresh-topics', 'add orders-0>A.orders@41'])
    assert.match(logger.at(LogLevels.warn)[0]!.msg, /^job refresh-topics failed in its run at assignment; it runs again in 2 s, then with back-off until it succeeds, then on its schedule$/)
    await waitFor(() => calls.filter(c => c === 'run refresh-topics').length === 2, { timeoutMs: 4000, intervalMs: 20, message: 'the refresh run again' })
    assert.equal(scheduler.has('refresh-topics'), true, 'still periodic after the retry succeeded')
    await scheduler.stop()
  })

  it('with refresh.topics.enabled off, a refresh that fails at assignment is retried until it succeeds once, then never again; one that succeeds is not scheduled at all', async () => {
    const { work, calls, scheduler } = setup({ refresh: { periodic: false, failures: 1 } })
    await work.assign([{ kind: 'job', job: 'refresh-topics' }])
    assert.equal(scheduler.has('refresh-topics'), true)
    await waitFor(() => !scheduler.has('refresh-topics'), { timeoutMs: 4000, intervalMs: 20, message: 'the retry succeeded and left the scheduler' })
    assert.deepEqual(calls.filter(c => c === 'run refresh-topics').length, 2)
    await scheduler.stop()

    const fine = setup({ refresh: { periodic: false, failures: 0 } })
    await fine.work.assign([{ kind: 'job', job: 'refresh-topics' }])
    assert.equal(fine.scheduler.has('refresh-topics'), false)
    await fine.scheduler.stop()
  })
})
