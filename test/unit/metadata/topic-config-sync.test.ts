import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseConfig } from '../../../src/config/load.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { FlowContext } from '../../../src/metadata/flow-context.ts'
import { createTopicConfigSyncJobs, syncTopicConfigs, SYNC_TOPIC_CONFIGS_JOB } from '../../../src/metadata/topic-config-sync.ts'
import type { MetricKey } from '../../../src/metrics/definitions.ts'
import type { Metrics } from '../../../src/metrics/metrics.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { FakeTopicCluster } from './topic-fake-cluster.ts'

function flowWith (...lines: string[]): FlowConfig {
  const config = parseConfig(['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', ...lines].join('\n'), 'mm2.properties')
  return config.flows.find(f => f.name === 'A->B')!
}

function counting (): Metrics & { changed: () => number } {
  let changed = 0
  return {
    inc: (metric: MetricKey, _labels: unknown, value = 1) => { if (metric === 'topicConfigsChanged') changed += value },
    set: () => undefined,
    observe: () => undefined,
    remove: () => undefined,
    changed: () => changed
  }
}

/** MM2's integration-test setup (mm2-spec §10): `delete.retention.ms` excluded; a topic with two configs, replicated. */
function setup (...lines: string[]) {
  const flow = flowWith('config.properties.exclude = delete\\.retention\\..*', ...lines)
  const source = new FakeTopicCluster()
  const target = new FakeTopicCluster()
  source.addTopic('t', 1, { 'delete.retention.ms': '1000', 'retention.bytes': '1000' })
  target.addTopic('A.t', 1, { 'retention.bytes': '1000' })
  const logs = memoryLogger()
  const metrics = counting()
  const context = { flow, policy: createReplicationPolicy(flow.replicationPolicy), sourceAdmin: source, targetAdmin: target, log: logs.log, metrics }
  return { source, target, logs, metrics, context, sync: () => syncTopicConfigs(context) }
}

describe('the sync-topic-configs job', () => {
  it('runs at start, then every sync.topic.configs.interval.seconds', () => {
    const jobs = createTopicConfigSyncJobs({ flow: flowWith('sync.topic.configs.interval.seconds = 7') } as FlowContext)
    assert.deepEqual(jobs.map(j => [j.name, j.intervalMs, j.firstDelayMs]), [[SYNC_TOPIC_CONFIGS_JOB, 7000, 0]])
  })

  it('does not exist with sync.topic.configs.enabled = false or a negative interval', () => {
    assert.deepEqual(createTopicConfigSyncJobs({ flow: flowWith('sync.topic.configs.enabled = false') } as FlowContext), [])
    assert.deepEqual(createTopicConfigSyncJobs({ flow: flowWith('sync.topic.configs.interval.seconds = -1') } as FlowContext), [])
  })
})

describe('syncTopicConfigs', () => {
  it('puts back a synced key changed on the target and leaves an excluded key changed there (MM2 testSyncTopicConfigs)', async () => {
    const { target, metrics, sync } = setup()
    target.setOverride('A.t', 'delete.retention.ms', '2000')
    target.setOverride('A.t', 'retention.bytes', '2000')
    assert.equal(await sync(), 1)
    assert.deepEqual(target.overrides('A.t'), { 'delete.retention.ms': '2000', 'retention.bytes': '1000' })
    assert.equal(metrics.changed(), 1)
    // Only the drifted key was sent, incrementally
    assert.deepEqual(target.callsOf('alterTopicConfigs').map(c => c.detail), [[{ op: 'set', name: 'retention.bytes', value: '1000' }]])
  })

  it('sends nothing at all when the target already follows the source', async () => {
    const { target, sync } = setup()
    assert.equal(await sync(), 0)
    assert.deepEqual(target.callsOf('alterTopicConfigs'), [])
  })

  it('with use.defaults.from=source, resets a changed key to the source default and leaves the excluded one (MM2 testReplicateSourceDefault)', async () => {
    const { source, target, sync } = setup('A->B.use.defaults.from = source')
    source.setOverride('t', 'retention.bytes', null)
    target.setOverride('A.t', 'delete.retention.ms', '2000')
    target.setOverride('A.t', 'retention.bytes', '2000')
    await sync()
    assert.equal(target.overrides('A.t')['retention.bytes'], '-1')
    assert.equal(target.overrides('A.t')['delete.retention.ms'], '2000')
  })

  it('with use.defaults.from=target, a key deleted on the source goes back to the target default (MM2 testReplicateTargetDefault)', async () => {
    const { source, target, sync } = setup()
    target.dynamicBroker.set('compression.type', 'lz4')
    source.setOverride('t', 'retention.bytes', null)
    await sync()
    assert.equal(target.overrides('A.t')['retention.bytes'], undefined)
    assert.deepEqual(target.callsOf('alterTopicConfigs').map(c => c.detail), [[{ op: 'delete', name: 'retention.bytes' }]])
  })

  it('syncs the other topics when one is refused, then fails the run so it is counted and retried', async () => {
    const { source, target, logs, sync } = setup()
    source.addTopic('u', 1, { 'retention.ms': '5' })
    target.addTopic('A.u', 1)
    target.setOverride('A.t', 'retention.bytes', '7')
    target.failNext('alterTopicConfigs', 'A.t', new Error('POLICY_VIOLATION'))
    await assert.rejects(sync(), { code: 'KMIRROR_ERR_TOPIC_SYNC', message: /A\.t/ })
    assert.equal(target.overrides('A.u')['retention.ms'], '5')
    assert.ok(logs.at(LogLevels.warn).some(l => l.remoteTopic === 'A.t' && /POLICY_VIOLATION/.test(l.msg)))
  })

  it('Given two remote topics whose configs drifted, when the job\'s run is aborted after the first change, then the second is never sent and the run rejects with the abort\'s reason', async () => {
    const { source, target, context } = setup()
    source.addTopic('u', 1, { 'retention.ms': '5' })
    target.addTopic('A.u', 1)
    target.setOverride('A.t', 'retention.bytes', '7')
    const run = new AbortController()
    const reason = new Error('job sync-topic-configs stopped: the group membership that owned it ended')
    const alter = target.alterTopicConfigs.bind(target)
    target.alterTopicConfigs = async (name, changes) => { await alter(name, changes); run.abort(reason) }
    const job = createTopicConfigSyncJobs(context as unknown as FlowContext)[0]!
    await assert.rejects(job.run(run.signal), err => err === reason)
    assert.deepEqual(target.callsOf('alterTopicConfigs').map(c => c.topics[0]), ['A.t'])
    assert.equal(target.overrides('A.u')['retention.ms'], undefined)
  })

  it('never creates a missing remote topic: that is the refresh\'s job', async () => {
    const { source, target, sync } = setup()
    source.addTopic('new', 2, { 'retention.ms': '9' })
    await sync()
    assert.equal(target.has('A.new'), false)
  })
})

describe('syncTopicConfigs with configs refused', () => {
  it('syncs every other topic and rejects once, naming the topic whose configs are refused and the grant', async () => {
    // Given two replicated topics, and DESCRIBE_CONFIGS on `t` refused on the source
    const { source, target, logs, sync } = setup()
    source.addTopic('u', 1, { 'retention.bytes': '2000' })
    target.addTopic('A.u', 1)
    source.setOverride('t', 'retention.bytes', '3000')
    source.denyDescribeConfigs('t')

    // When configs are synced
    const err = await sync().then(() => undefined, (e: unknown) => e)

    // Then `u` follows its source, `t` is left alone, a warning names t and the grant, and the run fails naming t
    assert.deepEqual(target.overrides('A.u'), { 'retention.bytes': '2000' })
    assert.deepEqual(target.overrides('A.t'), { 'retention.bytes': '1000' })
    assert.ok(err instanceof Error)
    assert.equal(err.message, 'cannot sync the configs of 1 remote topic(s): A.t')
    assert.equal((err as { code?: string }).code, 'KMIRROR_ERR_NOT_AUTHORIZED')
    const warnings = logs.lines.filter(e => e.level >= LogLevels.warn).map(e => e.msg)
    assert.equal(warnings.length, 1)
    assert.match(warnings[0]!, /^the configs of remote topic A\.t on B are not synced from t on A: .*grant DESCRIBE_CONFIGS on topic t/)
  })
})
