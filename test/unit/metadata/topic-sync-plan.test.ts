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

  it('reports a remote topic with more partitions as a problem naming both counts and the fix, and does not replicate it; the others are', () => {
    const p = plan(state({ big: { partitions: 2, id: 'x' }, ok: { partitions: 3, id: 'y' } }, { 'A.big': { partitions: 5 }, 'A.ok': { partitions: 3 } }))
    assert.deepEqual(p.topics, [{ source: 'ok', remote: 'A.ok', partitions: 3 }])
    assert.equal(p.problems.length, 1)
    const { topic, remoteTopic, message } = p.problems[0]!
    assert.deepEqual([topic, remoteTopic], ['big', 'A.big'])
    assert.match(message, /remote topic A\.big on B has 5 partitions but source topic big on A has 2/)
    assert.match(message, /Fix: delete A\.big on B/)
    assert.match(message, /A->B\.topics\.exclude/)
    assert.deepEqual(p.addPartitions, [])
    assert.equal(isTopicSyncPlanEmpty(p), false)
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

  it('never changes the configs of a remote topic it does not replicate (more partitions)', () => {
    const p = plan(state({ t: { partitions: 1, id: 'x', configs: [entry('retention.bytes', '1000')] } }, { 'A.t': { partitions: 2, configs: [entry('retention.bytes', '5')] } }))
    assert.deepEqual(p.alterConfigs, [])
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
