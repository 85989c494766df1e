import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { TopicDescription } from '../../../src/kafka/admin-client.ts'
import { describeTopicState } from '../../../src/metadata/topic-state.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { FakeTopicCluster } from './topic-fake-cluster.ts'

function flowWith (...lines: string[]): FlowConfig {
  const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', ...lines].join('\n'), 'mm2.properties')
  return config.flows.find(f => f.name === 'A->B')!
}

function clusters (): { source: FakeTopicCluster, target: FakeTopicCluster } {
  const source = new FakeTopicCluster()
  source.addTopic('orders', 3, { 'retention.ms': '1000' })
  source.addTopic('payments', 2)
  source.addTopic('skipped', 1)
  source.addTopic('B.orders', 1) // came from B: a cycle for A->B
  source.addTopic('mm2-offset-syncs.B.internal', 1)
  const target = new FakeTopicCluster()
  target.addTopic('A.orders', 3, { 'retention.ms': '5' })
  target.addTopic('unrelated', 1)
  return { source, target }
}

const flow = flowWith('A->B.topics = orders, payments, B\\.orders, mm2.*')
const policy = createReplicationPolicy(flow.replicationPolicy)

describe('describeTopicState', () => {
  it('keeps the source topics the flow replicates (filters, internal topics, cycles) and their existing remote topics', async () => {
    const { source, target } = clusters()
    const state = await describeTopicState(flow, policy, { source, target }, { configs: 'none' })
    assert.deepEqual([...state.source.keys()], ['orders', 'payments'])
    assert.equal(state.source.get('orders')!.partitions, 3)
    assert.deepEqual([...state.remote.keys()], ['A.orders'])
    assert.equal(state.source.get('orders')!.configs, undefined)
    assert.deepEqual(source.callsOf('describeTopicConfigs').map(c => c.topics), [[]])
  })

  it('reads only the source configs of topics whose remote topic is missing, for creation', async () => {
    const { source, target } = clusters()
    const state = await describeTopicState(flow, policy, { source, target }, { configs: 'creation' })
    assert.deepEqual(source.callsOf('describeTopicConfigs').map(c => c.topics), [['payments']])
    assert.deepEqual(target.callsOf('describeTopicConfigs').map(c => c.topics), [[]])
    assert.ok(state.source.get('payments')!.configs !== undefined)
    assert.equal(state.source.get('orders')!.configs, undefined)
  })

  it('reads the configs of every replicated topic on both sides for config sync', async () => {
    const { source, target } = clusters()
    const state = await describeTopicState(flow, policy, { source, target }, { configs: 'all' })
    assert.deepEqual(source.callsOf('describeTopicConfigs').map(c => c.topics), [['orders', 'payments']])
    assert.deepEqual(target.callsOf('describeTopicConfigs').map(c => c.topics), [['A.orders']])
    assert.equal(state.remote.get('A.orders')!.configs!.find(e => e.name === 'retention.ms')!.value, '5')
  })

  it('describes the remote topics of previously known source topics too, so their deletion can be acted on', async () => {
    const { source, target } = clusters()
    target.addTopic('A.gone', 1)
    const state = await describeTopicState(flow, policy, { source, target }, { configs: 'none', previouslyKnown: ['gone'] })
    assert.deepEqual([...state.remote.keys()].sort(), ['A.gone', 'A.orders'])
  })

  it('uses one metadata request per cluster when the admin client can describe every topic at once', async () => {
    const { source, target } = clusters()
    const all = (c: FakeTopicCluster) => async (): Promise<Map<string, TopicDescription>> =>
      c.describeTopics(await c.listTopics())
    let allCalls = 0
    const withAll = (c: FakeTopicCluster) => Object.assign(c, { describeAllTopics: async () => { allCalls++; return all(c)() } })
    const state = await describeTopicState(flow, policy, { source: withAll(source), target: withAll(target) }, { configs: 'none' })
    assert.equal(allCalls, 2)
    assert.deepEqual([...state.source.keys()], ['orders', 'payments'])
    assert.deepEqual([...state.remote.keys()], ['A.orders'])
  })
})
