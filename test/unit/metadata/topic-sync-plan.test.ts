import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { ConfigSourceKind, TopicConfigEntry } from '../../../src/kafka/admin-client.ts'
import { isTopicSyncPlanEmpty, planTopicSync } from '../../../src/metadata/topic-sync-plan.ts'
import type { RemoteTopicState, SourceTopicState, TopicState } from '../../../src/metadata/topic-state.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'

function flowWith (...lines: string[]): FlowConfig {
  const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', ...lines].join('\n'), 'mm2.properties')
  return config.flows.find(f => f.name === 'A->B')!
}

function entry (name: string, value: string | null, source: ConfigSourceKind = 'topic'): TopicConfigEntry {
  return { name, value, source, readOnly: false, sensitive: false }
}

function state (source: Record<string, SourceTopicState>, remote: Record<string, RemoteTopicState> = {}): TopicState {
  return { source: new Map(Object.entries(source)), remote: new Map(Object.entries(remote)), configsRefused: { source: new Map(), remote: new Map() } }
}

function plan (s: TopicState, flow = flowWith(), previouslyKnown?: ReadonlyMap<string, string>) {
  return planTopicSync({ state: s, flow, policy: createReplicationPolicy(flow.replicationPolicy), previouslyKnown })
}

describe('planTopicSync: remote topic creation', () => {
  it('creates a missing remote topic with the source partition count, replication.factor and the selected source configs', () => {
    const p = plan(state({ orders: { partitions: 4, id: 'x', configs: [entry('retention.ms', '3600000'), entry('min.insync.replicas', '2'), entry('cleanup.policy', 'delete', 'default')] } }),
      flowWith('replication.factor = 3'))
    assert.deepEqual(p.create, [{ topic: 'orders', remoteTopic: 'A.orders', partitions: 4, replicationFactor: 3, configs: { 'retention.ms': '3600000' } }])
    assert.deepEqual(p.topics, [{ source: 'orders', remote: 'A.orders', partitions: 4 }])
    assert.equal(isTopicSyncPlanEmpty(p), false)
  })

  it('with use.defaults.from = source, creates the remote topic with the source\'s default values too, excluded, sensitive and read-only ones left out (MM2: targetConfig with incremental=false)', () => {
    // Given a source topic with one value of its own, defaults, an excluded default, a secret and a read-only entry
    const configs = [
      entry('retention.ms', '3600000'),
      entry('cleanup.policy', 'delete', 'default'),
      entry('retention.bytes', '-1', 'default'),
      entry('min.insync.replicas', '1', 'default'),
      { ...entry('some.secret', 'x', 'default'), sensitive: true },
      { ...entry('some.read.only', 'y', 'default'), readOnly: true },
      entry('segment.bytes', '1048576', 'static-broker')
    ]
    const source = { orders: { partitions: 2, id: 'x', configs } }
    // When its creation is planned with use.defaults.from = source, and with the default (target)
    const fromSource = plan(state(source), flowWith('A->B.use.defaults.from = source'))
    const fromTarget = plan(state(source), flowWith())
    // Then the source's defaults are copied only with source; min.insync.replicas stays out (MM2's default exclude)
    assert.deepEqual(fromSource.create[0]!.configs, { 'retention.ms': '3600000', 'cleanup.policy': 'delete', 'retention.bytes': '-1' })
    assert.deepEqual(fromTarget.create[0]!.configs, { 'retention.ms': '3600000' })
  })

  it('passes replication.factor = -1 through, for the broker default', () => {
    const p = plan(state({ t: { partitions: 1, id: 'x', configs: [] } }), flowWith('replication.factor = -1'))
    assert.equal(p.create[0]!.replicationFactor, -1)
  })

  it('names remote topics with the flow\'s policy (identity keeps the name)', () => {
    const flow = flowWith('replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy')
    const p = plan(state({ orders: { partitions: 1, id: 'x', configs: [] } }), flow)
    assert.equal(p.create[0]!.remoteTopic, 'orders')
  })

  it('refuses to plan a creation without the source configs, rather than create a topic without them', () => {
    assert.throws(() => plan(state({ t: { partitions: 1, id: 'x' } })), { code: 'KMIRROR_ERR_INTERNAL' })
  })
})

describe('planTopicSync: partitions', () => {
  it('grows a remote topic with fewer partitions to the source count', () => {
    const p = plan(state({ t: { partitions: 6, id: 'x' } }, { 'A.t': { partitions: 2 } }))
    assert.deepEqual(p.addPartitions, [{ topic: 't', remoteTopic: 'A.t', from: 2, to: 6 }])
    assert.deepEqual(p.topics, [{ source: 't', remote: 'A.t', partitions: 6 }])
    assert.deepEqual(p.create, [])
  })

  it('replicates the source partitions of a remote topic with more partitions (as MM2 does), with a warning naming both counts and the partitions that receive nothing', () => {
    // Given a source topic created again with 2 partitions while its remote topic has 5
    const p = plan(state({ big: { partitions: 2, id: 'x' }, ok: { partitions: 3, id: 'y' } }, { 'A.big': { partitions: 5 }, 'A.ok': { partitions: 3 } }))
    // Then partitions 0-1 are replicated, nothing is a problem, and the warning says what the extra ones get
    assert.deepEqual(p.topics, [{ source: 'big', remote: 'A.big', partitions: 2 }, { source: 'ok', remote: 'A.ok', partitions: 3 }])
    assert.deepEqual(p.problems, [])
    assert.deepEqual(p.warnings, [{
      topic: 'big',
      remoteTopic: 'A.big',
      message: 'remote topic A.big on B has 5 partitions but source topic big on A has 2: partitions 0-1 are replicated, each record to the partition of its number ' +
        '(as MirrorMaker 2 does), and partitions 2-4 of A.big receive nothing (the source topic was created again with fewer partitions, or the remote topic was created with more)'
    }])
    assert.deepEqual(p.addPartitions, [])
    assert.equal(isTopicSyncPlanEmpty(p), true, 'nothing to change on the target')
  })

  it('words one replicated and one idle partition in the singular', () => {
    const p = plan(state({ t: { partitions: 1, id: 'x' } }, { 'A.t': { partitions: 2 } }))
    assert.match(p.warnings[0]!.message, /: partition 0 is replicated, .* and partition 1 of A\.t receives nothing/)
  })

  it('plans a topic read with fewer partitions than it holds with the held count: no warning, no growth, nothing released', () => {
    // Given `t` replicated with 6 partitions, read with 3 from a broker behind its growth
    const flow = flowWith()
    const p = planTopicSync({ state: state({ t: { partitions: 3, id: 'x' } }, { 'A.t': { partitions: 6 } }), flow, policy: createReplicationPolicy(flow.replicationPolicy), heldPartitions: new Map([['t', 6]]) })
    assert.deepEqual(p.topics, [{ source: 't', remote: 'A.t', partitions: 6 }])
    assert.deepEqual([p.warnings, p.problems, p.addPartitions], [[], [], []])
  })

  it('plans nothing when every remote topic matches its source', () => {
    const p = plan(state({ t: { partitions: 2, id: 'x' } }, { 'A.t': { partitions: 2 } }))
    assert.deepEqual(p.topics, [{ source: 't', remote: 'A.t', partitions: 2 }])
    assert.equal(isTopicSyncPlanEmpty(p), true)
  })
})

describe('planTopicSync: config sync', () => {
  const drifted = (): TopicState => state(
    { t: { partitions: 1, id: 'x', configs: [entry('retention.bytes', '1000'), entry('delete.retention.ms', '1000'), entry('cleanup.policy', 'delete', 'default')] } },
    { 'A.t': { partitions: 1, configs: [entry('retention.bytes', '2000'), entry('delete.retention.ms', '2000'), entry('cleanup.policy', 'compact')] } })

  it('plans the config changes of every replicated topic whose configs were read on both sides', () => {
    const p = plan(drifted(), flowWith('config.properties.exclude = delete\\.retention\\..*'))
    assert.deepEqual(p.alterConfigs, [{
      topic: 't',
      remoteTopic: 'A.t',
      changes: [
        { name: 'cleanup.policy', op: 'delete', oldValue: 'compact', newValue: null },
        { name: 'retention.bytes', op: 'set', oldValue: '2000', newValue: '1000' }
      ]
    }])
  })

  it('plans no config change with sync.topic.configs.enabled = false', () => {
    assert.deepEqual(plan(drifted(), flowWith('sync.topic.configs.enabled = false')).alterConfigs, [])
  })

  it('plans no config change when the configs were not read (the periodic refresh reads them only for creation)', () => {
    const p = plan(state({ t: { partitions: 1, id: 'x', configs: [entry('retention.bytes', '1000')] } }, { 'A.t': { partitions: 1 } }))
    assert.deepEqual(p.alterConfigs, [])
  })

  it('syncs the configs of a remote topic with more partitions than its source too: it is replicated', () => {
    const p = plan(state({ t: { partitions: 1, id: 'x', configs: [entry('retention.bytes', '1000')] } }, { 'A.t': { partitions: 2, configs: [entry('retention.bytes', '5')] } }))
    assert.deepEqual(p.alterConfigs, [{ topic: 't', remoteTopic: 'A.t', changes: [{ name: 'retention.bytes', op: 'set', oldValue: '5', newValue: '1000' }] }])
  })
})

describe('planTopicSync: deleted and re-created source topics', () => {
  it('reports previously replicated topics that are gone, keeping their remote topic by default', () => {
    const p = plan(state({ kept: { partitions: 1, id: 'k' } }, { 'A.kept': { partitions: 1 }, 'A.gone': { partitions: 1 } }), flowWith(), new Map([['kept', 'k'], ['gone', 'g']]))
    assert.deepEqual(p.deletedOnSource, [{ topic: 'gone', remoteTopic: 'A.gone', deleteRemote: false }])
    assert.equal(isTopicSyncPlanEmpty(p), true)
  })

  it('marks the remote topic for deletion with sync.topic.deletions.enabled = true, when it exists', () => {
    const p = plan(state({}, { 'A.gone': { partitions: 1 } }), flowWith('sync.topic.deletions.enabled = true'), new Map([['gone', 'g'], ['never-created', 'n']]))
    assert.deepEqual(p.deletedOnSource, [
      { topic: 'gone', remoteTopic: 'A.gone', deleteRemote: true },
      { topic: 'never-created', remoteTopic: 'A.never-created', deleteRemote: false }
    ])
    assert.equal(isTopicSyncPlanEmpty(p), false)
  })

  it('Given deletions proven over a mass absence, then their remote topics are kept on purpose even with sync.topic.deletions.enabled = true', () => {
    const flow = flowWith('sync.topic.deletions.enabled = true')
    const p = planTopicSync({
      state: state({}, { 'A.a': { partitions: 1 }, 'A.b': { partitions: 1 } }),
      flow,
      policy: createReplicationPolicy(flow.replicationPolicy),
      previouslyKnown: new Map([['a', 'ida'], ['b', 'idb']]),
      deletedInMassAbsence: new Set(['a'])
    })
    assert.deepEqual(p.deletedOnSource, [
      { topic: 'a', remoteTopic: 'A.a', deleteRemote: false, remoteKeptOnPurpose: true },
      { topic: 'b', remoteTopic: 'A.b', deleteRemote: true }
    ])
  })

  it('reports no deletion without a previous state (kmirror plan, first refresh)', () => {
    assert.deepEqual(plan(state({}, { 'A.gone': { partitions: 1 } }), flowWith('sync.topic.deletions.enabled = true')).deletedOnSource, [])
  })

  it('finds a topic deleted and created again by its new topic id, and keeps replicating it', () => {
    const p = plan(state({ t: { partitions: 2, id: 'new' } }, { 'A.t': { partitions: 2 } }), flowWith(), new Map([['t', 'old']]))
    assert.deepEqual(p.recreatedOnSource, [{ source: 't', remote: 'A.t', partitions: 2 }])
    assert.deepEqual(p.topics, [{ source: 't', remote: 'A.t', partitions: 2 }])
    assert.deepEqual(p.deletedOnSource, [])
  })

  it('does not compare the all-zero id older brokers report', () => {
    const zero = '00000000-0000-0000-0000-000000000000'
    const p = plan(state({ t: { partitions: 1, id: zero } }, { 'A.t': { partitions: 1 } }), flowWith(), new Map([['t', 'old']]))
    assert.deepEqual(p.recreatedOnSource, [])
  })
})
