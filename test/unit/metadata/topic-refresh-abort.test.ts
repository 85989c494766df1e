/**
 * A topic refresh whose run is aborted (its group membership ended, or the job was revoked: runtime/scheduler.ts)
 * writes nothing more on the target: no deletion, creation or growth after the abort, even one the plan holds. What
 * it wrote before is recorded as by a refresh that ended there: the next refresh neither does nor reports it again.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { RemoteTopics, type ReplicatedTopic } from '../../../src/metadata/remote-topics.ts'
import type { MetricKey } from '../../../src/metrics/definitions.ts'
import { noMetrics, type Metrics } from '../../../src/metrics/metrics.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { FakeTopicCluster } from './topic-fake-cluster.ts'

const WRITES = ['deleteTopics', 'createTopic', 'createPartitions', 'alterTopicConfigs']

const flow = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true',
  'replication.factor = 1', 'sync.topic.deletions.enabled = true'].join('\n'), 'mm2.properties').flows.find(f => f.name === 'A->B')!

/**
 * A refresh with every kind of write due: `gone` deleted on the source (absent at two refreshes: its remote topic
 * is deleted), `new1` and `new2` to create, `grown` to grow from 2 to 4 partitions. Its writes, in order:
 * deleteTopics A.gone, createTopic A.new1, createTopic A.new2, createPartitions A.grown.
 */
async function refreshWithEveryWrite () {
  const source = new FakeTopicCluster()
  const target = new FakeTopicCluster()
  const topics = new RemoteTopics(flow, createReplicationPolicy(flow.replicationPolicy), source, target, memoryLogger().log)
  for (const name of ['gone', 'grown', 'kept']) source.addTopic(name, 2)
  await topics.refresh()
  source.removeTopic('gone')
  await topics.refresh()
  source.addTopic('new1', 1)
  source.addTopic('new2', 1)
  source.growTopic('grown', 4)
  target.calls.length = 0
  return { source, target, topics }
}

/** The writes the target received, as `op topic`. */
function writesOf (target: FakeTopicCluster): string[] {
  return target.calls.filter(c => WRITES.includes(c.op)).map(c => `${c.op} ${c.topics.join(',')}`)
}

/** Aborts CONTROLLER with REASON right after the target's first OP (the write went out; the next must not). */
function abortAfter (target: FakeTopicCluster, op: 'deleteTopics' | 'createTopic', controller: AbortController, reason: unknown): void {
  const write = target[op].bind(target) as (...args: unknown[]) => Promise<unknown>
  Object.assign(target, {
    [op]: async (...args: unknown[]) => {
      const out = await write(...args)
      controller.abort(reason)
      return out
    }
  })
}

/** RemoteTopics over fake clusters, counting its metrics' increments and recording what its data path was told. */
function refresher () {
  const source = new FakeTopicCluster()
  const target = new FakeTopicCluster()
  const logs = memoryLogger()
  const counters = new Map<MetricKey, number>()
  const metrics: Metrics = { ...noMetrics, inc: (metric: MetricKey, _labels: unknown, value = 1) => { counters.set(metric, (counters.get(metric) ?? 0) + value) } }
  const topics = new RemoteTopics(flow, createReplicationPolicy(flow.replicationPolicy), source, target, logs.log, metrics)
  const dataPath: string[] = []
  let whileStopping = (_names: readonly string[]): void => {}
  const options = {
    stopReplicating: async (names: readonly string[]) => { dataPath.push(`stop ${names.join(',')}`); whileStopping(names) },
    copyAgain: async (again: readonly ReplicatedTopic[]) => { dataPath.push(`copy again ${again.map(t => `${t.source}x${t.partitions}`).join(',')}`) }
  }
  const onStop = (f: (names: readonly string[]) => void): void => { whileStopping = f }
  return { source, target, logs, counters, topics, dataPath, onStop, refresh: async (signal?: AbortSignal) => await topics.refresh({ ...options, ...(signal === undefined ? {} : { signal }) }) }
}

const lost = (): KmirrorError => new KmirrorError(ErrorCodes.FENCED, 'job refresh-topics stopped: the group membership that owned it ended', { retriable: true })

describe('RemoteTopics.refresh with its run aborted', () => {
  it('Given a refresh that deletes, creates and grows, when its run is not aborted, then every write goes out in that order (the baseline of the cases below)', async () => {
    const { target, topics } = await refreshWithEveryWrite()
    await topics.refresh({ signal: new AbortController().signal })
    assert.deepEqual(writesOf(target), ['deleteTopics A.gone', 'createTopic A.new1', 'createTopic A.new2', 'createPartitions A.grown'])
  })

  it('Given a refresh that deletes, creates and grows, when its run is aborted right after the deletion, then nothing is created or grown and the refresh rejects with the abort\'s reason', async () => {
    const { target, topics } = await refreshWithEveryWrite()
    const run = new AbortController()
    const reason = lost()
    abortAfter(target, 'deleteTopics', run, reason)
    await assert.rejects(topics.refresh({ signal: run.signal }), err => err === reason)
    assert.deepEqual(writesOf(target), ['deleteTopics A.gone'])
    assert.equal(target.has('A.new1'), false)
    assert.equal(target.partitions('A.grown'), 2)
  })

  it('Given a refresh that creates two remote topics, when its run is aborted after the first creation, then the second is never created and nothing is grown', async () => {
    const { target, topics } = await refreshWithEveryWrite()
    const run = new AbortController()
    const reason = lost()
    abortAfter(target, 'createTopic', run, reason)
    await assert.rejects(topics.refresh({ signal: run.signal }), err => err === reason)
    assert.deepEqual(writesOf(target), ['deleteTopics A.gone', 'createTopic A.new1'])
    assert.equal(target.has('A.new2'), false)
    assert.equal(target.partitions('A.grown'), 2)
  })

  it('Given a refresh that creates topics together (CreateTopics), when its run is aborted after that request, then nothing is grown', async () => {
    const { target, topics } = await refreshWithEveryWrite()
    const run = new AbortController()
    const reason = lost()
    // The target creates the two new topics in one request (they share partitions, replication factor and configs)
    Object.assign(target, {
      createTopics: async (list: readonly { name: string, partitions: number, configs: Record<string, string> }[]) => {
        for (const t of list) await target.createTopic({ ...t, replicationFactor: 1, replicationFactorKey: 'replication.factor' })
        run.abort(reason)
        return { created: list.map(t => t.name), exists: [], failed: new Map(), throttleMs: 0 }
      }
    })
    await assert.rejects(topics.refresh({ signal: run.signal }), err => err === reason)
    assert.deepEqual(writesOf(target), ['deleteTopics A.gone', 'createTopic A.new1', 'createTopic A.new2'])
    assert.equal(target.partitions('A.grown'), 2)
  })

  it('Given a run aborted while the refresh reads (before any write), then its reads finish and nothing at all is written, nor any topic released', async () => {
    const { source, target, topics } = await refreshWithEveryWrite()
    const run = new AbortController()
    const reason = lost()
    const describe = source.describeTopics.bind(source)
    source.describeTopics = async names => { run.abort(reason); return await describe(names) }
    const released: string[] = []
    await assert.rejects(topics.refresh({ signal: run.signal, stopReplicating: async names => { released.push(...names) } }), err => err === reason)
    assert.deepEqual(writesOf(target), [])
    assert.deepEqual(released, [])
  })

  it('Given sync.topic.deletions.enabled, when a run is aborted right after it deleted the remote topic of a deleted source topic, then later refreshes neither count nor report that deletion again, and the source topic back with its id is copied again from its log start', async () => {
    // Given `flaky` hidden by stale metadata long enough to count as deleted, and a new topic to create after the deletion
    const { source, target, logs, counters, topics, refresh } = refresher()
    source.addTopic('flaky', 2)
    source.addTopic('kept', 1)
    await refresh()
    const restore = source.hideTopic('flaky')
    await refresh()
    source.addTopic('new1', 1)
    // When the run is aborted right after A.flaky is deleted
    const run = new AbortController()
    const reason = lost()
    abortAfter(target, 'deleteTopics', run, reason)
    await assert.rejects(refresh(run.signal), err => err === reason)
    assert.deepEqual([target.has('A.flaky'), target.has('A.new1')], [false, false])
    // Then the next refreshes create what the run did not, and say nothing more of the deletion
    const next = await refresh()
    const after = await refresh()
    assert.deepEqual([next.deleted, next.created, after.deleted, after.created], [[], ['A.new1'], [], []])
    assert.deepEqual(next.topics.map(t => t.source), ['kept', 'new1'])
    assert.equal(counters.get('sourceTopicsDeleted'), 1)
    assert.deepEqual(logs.at(LogLevels.warn).filter(l => l.topic === 'flaky').map(l => l.msg), ['source topic flaky was deleted; deleted its remote topic A.flaky (sync.topic.deletions.enabled)'])
    // When it is back with the topic id it had
    restore()
    const back = await refresh()
    // Then it is returned: copied again from its log start into the remote topic created again empty, never on from its stored positions
    assert.deepEqual(back.created, ['A.flaky'])
    assert.deepEqual(back.returned, [{ source: 'flaky', remote: 'A.flaky', partitions: 2 }])
    assert.deepEqual((await topics.replicable({ fromLastRefresh: true })).map(t => t.source), ['kept', 'new1'])
  })

  it('Given two deletions, when a run is aborted after the first and taking the second back into the data path fails, then the first is recorded all the same: counted once, and back with its id it is copied again from its log start', async () => {
    const { source, target, counters, topics } = refresher()
    // (five topics: two absent at once is no mass absence)
    for (const name of ['flaky', 'other', 'kept', 'kept2', 'kept3']) source.addTopic(name, 1)
    await topics.refresh()
    const restore = source.hideTopic('flaky')
    source.hideTopic('other')
    await topics.refresh()
    const run = new AbortController()
    const reason = lost()
    abortAfter(target, 'deleteTopics', run, reason)
    const unreadable = new KmirrorError(ErrorCodes.TIMEOUT, 'reading mm2-offsets.A.internal on cluster B timed out', { retriable: true })
    const kept: string[] = []
    await assert.rejects(topics.refresh({ stopReplicating: async () => {}, keepReplicating: async t => { kept.push(...t.map(x => x.source)); throw unreadable }, signal: run.signal }), err => err === unreadable)
    // (the deletions go in name order: A.flaky deleted, other's not carried out and handed back)
    assert.deepEqual([target.has('A.flaky'), target.has('A.other')], [false, true])
    assert.deepEqual(kept, ['other'])
    assert.equal(counters.get('sourceTopicsDeleted'), 1)
    restore()
    assert.deepEqual((await topics.refresh()).returned.map(t => t.source), ['flaky'])
  })

  it('Given a remote topic deleted by hand on a target without topic ids, when a run is aborted right after creating it again, then the error line is told, the data path copies it again, and the next refresh does neither again', async () => {
    // Given `a` replicated into A.a on a target without topic ids (before Kafka 2.8), A.a deleted by hand, and `b` new
    const { source, target, logs, dataPath, refresh } = refresher()
    target.withoutTopicIds = true
    source.addTopic('a', 2)
    await refresh()
    await target.deleteTopics(['A.a'])
    source.addTopic('b', 1)
    // When the run is aborted right after A.a is created again
    const run = new AbortController()
    const reason = lost()
    abortAfter(target, 'createTopic', run, reason)
    await assert.rejects(refresh(run.signal), err => err === reason)
    // Then A.b is not created, A.a's deletion is told, and its partitions are copied again from the log start
    assert.deepEqual([target.has('A.a'), target.has('A.b')], [true, false])
    const deleted = /^remote topic A\.a was deleted on cluster B while kmirror replicated a: created it again; copying a again from the log start of cluster A/
    assert.equal(logs.at(LogLevels.error).filter(l => deleted.test(l.msg)).length, 1)
    assert.deepEqual(dataPath, ['stop a', 'copy again ax2'])
    // And the next refresh creates A.b only: no second error line, no copy again, nothing found missing
    const next = await refresh()
    assert.deepEqual([next.created, next.recopy], [['A.b'], []])
    assert.deepEqual(next.topics.map(t => t.source), ['a', 'b'])
    assert.equal(logs.at(LogLevels.error).filter(l => deleted.test(l.msg)).length, 1)
    assert.deepEqual(dataPath, ['stop a', 'copy again ax2'])
    assert.equal(logs.lines.some(l => /was missing from the metadata/.test(l.msg)), false)
  })

  it('Given a remote topic deleted by hand, when a run is aborted before creating it again, then it is still suspected deleted: the next refresh creates it, tells it, and copies it again', async () => {
    const { source, target, logs, dataPath, refresh } = refresher()
    target.withoutTopicIds = true
    source.addTopic('a', 1)
    source.addTopic('b', 1)
    await refresh()
    await target.deleteTopics(['A.b'])
    source.addTopic('a2', 1)
    // When the run is aborted right after creating A.a2, before A.b
    const run = new AbortController()
    abortAfter(target, 'createTopic', run, lost())
    await assert.rejects(refresh(run.signal))
    assert.equal(target.has('A.b'), false)
    // Then the next refresh creates A.b, and knows why it was missing
    const next = await refresh()
    assert.deepEqual([next.created, next.recopy], [['A.b'], ['b']])
    assert.equal(logs.at(LogLevels.error).filter(l => /^remote topic A\.b was deleted on cluster B/.test(l.msg)).length, 1)
    assert.deepEqual(dataPath, ['stop b', 'copy again bx1'])
  })

  it('Given a source topic proven deleted, when the run is aborted while the data path lets go of it (before any write), then nothing is written or reported, and the next refresh deletes its remote topic and counts the deletion once', async () => {
    const { source, target, logs, counters, onStop, refresh } = refresher()
    source.addTopic('gone', 1)
    source.addTopic('kept', 1)
    await refresh()
    source.removeTopic('gone')
    await refresh()
    const run = new AbortController()
    const reason = lost()
    onStop(() => { run.abort(reason) })
    await assert.rejects(refresh(run.signal), err => err === reason)
    onStop(() => {})
    assert.equal(target.has('A.gone'), true)
    assert.equal(counters.get('sourceTopicsDeleted'), undefined)
    assert.equal(logs.at(LogLevels.warn).some(l => l.topic === 'gone'), false)
    // The next refresh acts on the proof the aborted run did not act on
    const next = await refresh()
    assert.deepEqual([next.deleted, next.deletedRemotes], [['gone'], ['A.gone']])
    assert.deepEqual(next.topics.map(t => t.source), ['kept'])
    assert.equal(counters.get('sourceTopicsDeleted'), 1)
  })

  it('Given a growth that failed, when a later run is aborted before growing it again, then its problem stays (no "solved" line) and the next refresh grows it', async () => {
    const { source, target, logs, topics, refresh } = refresher()
    source.addTopic('a', 1)
    source.addTopic('t', 2)
    await refresh()
    source.growTopic('t', 4)
    target.failNext('createPartitions', 'A.t', new Error('timed out'))
    await refresh()
    assert.deepEqual(topics.problems.map(p => p.topic), ['t'])
    source.addTopic('a2', 1)
    const run = new AbortController()
    abortAfter(target, 'createTopic', run, lost())
    await assert.rejects(refresh(run.signal))
    assert.deepEqual(topics.problems.map(p => p.topic), ['t'])
    assert.equal(topics.replicated.find(t => t.source === 't')?.partitions, 2)
    assert.equal(logs.lines.some(l => l.msg === 'remote topic problem solved'), false)
    const next = await refresh()
    assert.deepEqual([next.grown, topics.problems], [['A.t'], []])
  })
})

