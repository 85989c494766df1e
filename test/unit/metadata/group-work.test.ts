/**
 * The work a flow's group leader lists (RemoteTopics.replicable, metadata/group-work.ts) agrees with what the topic
 * refresh replicates, so that a steady state makes no rebalance (runtime/refresh-baseline.ts decides when a refresh
 * makes one).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { ABSENT_REFRESHES_FOR_MASS_DELETION } from '../../../src/metadata/deletion-proof.ts'
import { estimateGroupWork, WorkEstimateMemory } from '../../../src/metadata/group-work.ts'
import { RemoteTopics } from '../../../src/metadata/remote-topics.ts'
import type { TopicState } from '../../../src/metadata/topic-state.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { RefreshBaseline } from '../../../src/runtime/refresh-baseline.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'
import { FakeTopicCluster } from './topic-fake-cluster.ts'

function setup () {
  const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', 'replication.factor = 1'].join('\n'), 'mm2.properties')
  const flow = config.flows.find(f => f.name === 'A->B')!
  const policy = createReplicationPolicy(flow.replicationPolicy)
  const source = new FakeTopicCluster()
  const target = new FakeTopicCluster()
  // The instance that runs the refresh job, and another member that leads the group without running it
  const refresher = new RemoteTopics(flow, policy, source, target, memoryLogger().log)
  const otherLeader = new RemoteTopics(flow, policy, source, target, memoryLogger().log)
  return { source, target, refresher, otherLeader }
}

const policyViolation = (): KmirrorError => new KmirrorError(ErrorCodes.TOPIC_CREATE, 'create topic A.bad on cluster B: [POLICY_VIOLATION]', { details: { kafkaErrors: ['POLICY_VIOLATION'] } })

/** The leader lists, then refreshes come: true for each that would make the group rebalance. */
async function rebalancesAfterListing (listed: readonly { source: string, partitions: number }[], refresh: () => Promise<{ topics: readonly { source: string, partitions: number }[] }>, refreshes = 3): Promise<boolean[]> {
  const baseline = new RefreshBaseline()
  baseline.listed(listed)
  const out: boolean[] = []
  for (let i = 0; i < refreshes; i++) out.push(baseline.refreshed((await refresh()).topics, null))
  return out
}

describe('the work a group leader lists agrees with the topic refresh', () => {
  it('leaves out a topic whose remote topic cannot be created: no rebalance at every refresh, no partition without a remote topic', async () => {
    // Given the target refuses to create A.bad (a create policy), and `ok` replicates
    const { source, target, refresher, otherLeader } = setup()
    source.addTopic('bad', 2)
    source.addTopic('ok', 1)
    target.failAlways('createTopic', 'A.bad', policyViolation())
    const refreshed = await refresher.refresh()
    assert.deepEqual(refreshed.topics.map(t => t.source), ['ok'])
    // When the refreshing instance lists the work as leader, or another member does
    const fromRefresh = await refresher.replicable({ fromLastRefresh: true })
    const estimated = await otherLeader.replicable()
    // Then neither lists `bad`, and the refreshes that follow find the work they were given
    assert.deepEqual(fromRefresh, refreshed.topics)
    assert.deepEqual(estimated, refreshed.topics)
    assert.deepEqual(await rebalancesAfterListing(fromRefresh, () => refresher.refresh()), [false, false, false])
    // When the policy allows it: the refresh creates it, the work changes once, and the next listing has it
    target.failAlways('createTopic', 'A.bad', null)
    assert.deepEqual(await rebalancesAfterListing(fromRefresh, () => refresher.refresh(), 1), [true])
    assert.deepEqual((await refresher.replicable({ fromLastRefresh: true })).map(t => [t.source, t.partitions]), [['bad', 2], ['ok', 1]])
    assert.deepEqual((await otherLeader.replicable()).map(t => [t.source, t.partitions]), [['bad', 2], ['ok', 1]])
  })

  it('lists the partitions a refused growth left: those both sides have', async () => {
    // Given `grow` replicated with 3 partitions, grown to 6 on the source, its growth on the target refused
    const { source, target, refresher, otherLeader } = setup()
    source.addTopic('grow', 3)
    await refresher.refresh()
    source.growTopic('grow', 6)
    target.failAlways('createPartitions', 'A.grow', new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'growing topic A.grow was refused (TOPIC_AUTHORIZATION_FAILED): grant ALTER on topic A.grow'))
    const refreshed = await refresher.refresh()
    assert.deepEqual(refreshed.topics, [{ source: 'grow', remote: 'A.grow', partitions: 3 }])
    // Then both ways of listing say 3, and no refresh after it makes a rebalance
    const fromRefresh = await refresher.replicable({ fromLastRefresh: true })
    assert.deepEqual(fromRefresh, refreshed.topics)
    assert.deepEqual(await otherLeader.replicable(), refreshed.topics)
    assert.deepEqual(await rebalancesAfterListing(fromRefresh, () => refresher.refresh()), [false, false, false])
  })

  it('keeps listing a source topic kmirror may no longer DESCRIBE, as the refresh keeps it (invariant 23), and drops it once it is gone', async () => {
    // Given `t` replicated and listed by both instances
    const { source, refresher, otherLeader } = setup()
    source.addTopic('t', 2)
    source.addTopic('u', 1)
    await refresher.refresh()
    await otherLeader.replicable()
    // When DESCRIBE on `t` is revoked
    source.denyDescribe('t')
    const refreshed = await refresher.refresh()
    assert.deepEqual(refreshed.topics.map(t => t.source), ['t', 'u'])
    // Then each leader still lists `t` with its 2 partitions, and no refresh makes a rebalance
    const fromRefresh = await refresher.replicable({ fromLastRefresh: true })
    assert.deepEqual(fromRefresh, refreshed.topics)
    assert.deepEqual(await otherLeader.replicable(), refreshed.topics)
    assert.deepEqual(await rebalancesAfterListing(fromRefresh, () => refresher.refresh()), [false, false, false])
    // When it is deleted: a leader that does not refresh drops it once the source said it does not exist at two
    // estimates in a row, as the refresh counts, and lists it no more
    source.denyDescribe('t', false)
    source.removeTopic('t')
    assert.deepEqual((await otherLeader.replicable()).map(t => t.source), ['t', 'u'])
    assert.deepEqual((await otherLeader.replicable()).map(t => t.source), ['u'])
    assert.deepEqual((await otherLeader.replicable()).map(t => t.source), ['u'])
  })

  it('Given one source broker answering from an empty cache at a rebalance, then the leader still lists every topic (nothing released), as the refresh keeps them: no second rebalance', async () => {
    // Given `a`, `b` and `c` replicated and listed by a leader that does not run the refresh
    const { source, refresher, otherLeader } = setup()
    for (const name of ['a', 'b', 'c']) source.addTopic(name, 2)
    await refresher.refresh()
    const listed = await otherLeader.replicable()
    assert.deepEqual(listed.map(t => t.source), ['a', 'b', 'c'])
    // When the source answers that none of them exists, at several rebalances in a row
    const restores = ['a', 'b', 'c'].map(name => source.hideTopic(name))
    for (let i = 0; i < 3; i++) assert.deepEqual(await otherLeader.replicable(), listed, `estimate ${i + 1}`)
    // Then the refreshes find the work the group was given
    assert.deepEqual(await rebalancesAfterListing(listed, () => refresher.refresh()), [false, false, false])
    // When the broker answers again, nothing changed
    for (const restore of restores) restore()
    assert.deepEqual(await otherLeader.replicable(), listed)
  })

  it('keeps listing a topic whose remote topic a lagging target broker leaves out of its metadata, as the refresh keeps it (invariant 37)', async () => {
    // Given `t` and `u` replicated and listed by a leader that does not run the refresh
    const { source, target, refresher, otherLeader } = setup()
    source.addTopic('t', 3)
    source.addTopic('u', 1)
    await refresher.refresh()
    const listed = await otherLeader.replicable()
    // When a target broker's metadata leaves out A.t, which exists
    target.lagMetadata('A.t')
    // Then the leader still lists it as before, and so does the refresh: no rebalance
    assert.deepEqual(await otherLeader.replicable(), listed)
    assert.deepEqual(listed, [{ source: 't', remote: 'A.t', partitions: 3 }, { source: 'u', remote: 'A.u', partitions: 1 }])
    assert.deepEqual(await rebalancesAfterListing(listed, () => refresher.refresh()), [false, false, false])
  })

  it('holds the partitions listed before when a broker behind a growth reads the source topic smaller', async () => {
    const { source, refresher, otherLeader } = setup()
    source.addTopic('t', 6)
    await refresher.refresh()
    assert.equal((await otherLeader.replicable())[0]!.partitions, 6)
    source.lagPartitions('t', 3)
    assert.equal((await otherLeader.replicable())[0]!.partitions, 6)
    assert.equal((await refresher.refresh()).topics[0]!.partitions, 6)
  })
})

describe('estimateGroupWork', () => {
  const remoteName = (topic: string): string => `A.${topic}`
  const state = (source: Record<string, number>, remote: Record<string, number>): TopicState => ({
    source: new Map(Object.entries(source).map(([name, partitions]) => [name, { partitions, id: `id-${name}` }])),
    remote: new Map(Object.entries(remote).map(([name, partitions]) => [name, { partitions }])),
    configsRefused: { source: new Map(), remote: new Map() }
  })
  const noProbe = async (): Promise<never> => { throw new Error('not asked') }

  it('lists topics whose remote topic exists, each with the partitions both sides have', async () => {
    const work = await estimateGroupWork(state({ a: 3, b: 2, c: 4 }, { 'A.a': 3, 'A.b': 5 }), remoteName, new Map(), noProbe)
    assert.deepEqual(work, [{ source: 'a', remote: 'A.a', partitions: 3, id: 'id-a' }, { source: 'b', remote: 'A.b', partitions: 2, id: 'id-b' }])
  })

  it('drops a topic listed before only when the source answered that it does not exist at two estimates in a row; one answer that it exists in between starts again', async () => {
    const previous = new Map([['gone', { source: 'gone', remote: 'A.gone', partitions: 2, id: 'id-gone' }], ['a', { source: 'a', remote: 'A.a', partitions: 1, id: 'id-a' }], ['b', { source: 'b', remote: 'A.b', partitions: 1, id: 'id-b' }]])
    const absent = async (names: readonly string[]) => new Map(names.map(n => [n, { presence: 'absent' as const, error: 'UNKNOWN_TOPIC_OR_PARTITION' }]))
    const memory = new WorkEstimateMemory()
    const listedNow = { a: 1, b: 1 }
    const estimate = async (source: Record<string, number>) => (await estimateGroupWork(state(source, { 'A.a': 1, 'A.b': 1, 'A.gone': 2 }), remoteName, previous, absent, memory)).map(t => t.source)
    assert.deepEqual(await estimate(listedNow), ['a', 'b', 'gone'])
    assert.deepEqual(await estimate({ ...listedNow, gone: 2 }), ['a', 'b', 'gone'])
    assert.deepEqual(await estimate(listedNow), ['a', 'b', 'gone'])
    assert.deepEqual(await estimate(listedNow), ['a', 'b'])
    assert.deepEqual(await estimate(listedNow), ['a', 'b'], 'found deleted, it stays out while the source does not list it')
  })

  it('Given most topics listed before absent at once (a broker with an empty cache, another cluster), then none is dropped for 12 estimates, as the refresh counts', async () => {
    const previous = new Map(['a', 'b', 'c'].map(n => [n, { source: n, remote: `A.${n}`, partitions: 1, id: `id-${n}` }]))
    const absent = async (names: readonly string[]) => new Map(names.map(n => [n, { presence: 'absent' as const, error: 'UNKNOWN_TOPIC_OR_PARTITION' }]))
    const memory = new WorkEstimateMemory()
    for (let i = 1; i < ABSENT_REFRESHES_FOR_MASS_DELETION; i++) {
      assert.deepEqual((await estimateGroupWork(state({}, {}), remoteName, previous, absent, memory)).map(t => t.source), ['a', 'b', 'c'], `estimate ${i}`)
    }
    assert.deepEqual(await estimateGroupWork(state({}, {}), remoteName, previous, absent, memory), [])
  })

  it('keeps a topic listed before whose remote topic is missing from the target\'s metadata, with the partitions listed; a topic never listed waits for its remote topic', async () => {
    const previous = new Map([['t', { source: 't', remote: 'A.t', partitions: 4, id: 'id-t' }]])
    const work = await estimateGroupWork(state({ t: 4, fresh: 2 }, {}), remoteName, previous, noProbe)
    assert.deepEqual(work, [{ source: 't', remote: 'A.t', partitions: 4, id: 'id-t' }])
  })

  it('keeps a topic listed before and missing from the listing when the source cannot be asked, and asks only when one is missing', async () => {
    const previous = new Map([['gone', { source: 'gone', remote: 'A.gone', partitions: 2, id: 'id-gone' }]])
    const failing = async (): Promise<never> => { throw new KmirrorError(ErrorCodes.TIMEOUT, 'no answer') }
    assert.deepEqual((await estimateGroupWork(state({}, {}), remoteName, previous, failing)).map(t => t.source), ['gone'])
    assert.deepEqual(await estimateGroupWork(state({ a: 1 }, { 'A.a': 1 }), remoteName, new Map(), noProbe), [{ source: 'a', remote: 'A.a', partitions: 1, id: 'id-a' }])
  })
})
