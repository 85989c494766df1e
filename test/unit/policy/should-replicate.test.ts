import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { ReplicationPolicyClasses } from '../../../src/config/types.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { isCycle, shouldReplicateTopic } from '../../../src/policy/should-replicate.ts'
import { createTopicFilter } from '../../../src/policy/topic-filter.ts'

interface GoldenCase { policy: 'default' | 'identity', separator: string, internalTopicSeparatorEnabled: boolean, heartbeatsReplicationEnabled: boolean, topic: string, filter: boolean, isCycle: boolean, shouldReplicateTopic: boolean }
/** From Kafka 4.1.1's MirrorSourceConnector for flow source->target; see the fixture's "comment". */
const golden = JSON.parse(readFileSync(new URL('../../fixtures/policy-golden.json', import.meta.url), 'utf8')) as { cases: GoldenCase[] }

const DEFAULT_EXCLUDE = ['.*[\\-\\.]internal', '.*\\.replica', '__.*']
const filter = createTopicFilter({ topics: ['.*'], topicsExclude: DEFAULT_EXCLUDE })

function policy (kind: 'default' | 'identity', separator = '.', internalTopicSeparatorEnabled = true) {
  const className = kind === 'default' ? ReplicationPolicyClasses.DEFAULT : ReplicationPolicyClasses.IDENTITY
  return createReplicationPolicy({ className, separator, internalTopicSeparatorEnabled, sourceClusterAlias: 'source' })
}

function context (kind: 'default' | 'identity', heartbeatsReplicationEnabled = true) {
  return { filter, policy: policy(kind), targetAlias: 'target', heartbeatsReplicationEnabled }
}

describe('isCycle and shouldReplicateTopic', () => {
  it('rejects the spec §3.4 examples that have passed through the target', () => {
    for (const topic of ['target.topic1', 'target.source.topic1', 'source.target.topic1']) {
      assert.equal(isCycle(policy('default'), 'target', topic), true, topic)
      assert.equal(shouldReplicateTopic(topic, context('default')), false, topic)
    }
  })

  it('accepts the spec §3.4 examples that have not, so source.topic1 becomes source.source.topic1', () => {
    for (const topic of ['topic1', 'source.topic1']) assert.equal(shouldReplicateTopic(topic, context('default')), true, topic)
    assert.equal(policy('default').formatRemoteTopic('source', 'source.topic1'), 'source.source.topic1')
  })

  it('accepts every plain topic with the identity policy but still rejects heartbeats that came from the target', () => {
    assert.equal(shouldReplicateTopic('topic1', context('identity')), true)
    assert.equal(shouldReplicateTopic('target.topic1', context('identity')), true)
    assert.equal(shouldReplicateTopic('target.heartbeats', context('identity')), false)
    assert.equal(shouldReplicateTopic('source.target.heartbeats', context('identity')), false)
  })

  it('replicates heartbeats topics the filter excludes unless heartbeats replication is disabled', () => {
    const excludeHeartbeats = createTopicFilter({ topics: ['orders'], topicsExclude: [] })
    const base = { filter: excludeHeartbeats, policy: policy('default'), targetAlias: 'target' }
    assert.equal(shouldReplicateTopic('source.heartbeats', { ...base, heartbeatsReplicationEnabled: true }), true)
    assert.equal(shouldReplicateTopic('heartbeats', { ...base, heartbeatsReplicationEnabled: true }), true)
    assert.equal(shouldReplicateTopic('source.heartbeats', { ...base, heartbeatsReplicationEnabled: false }), false)
  })

  it('never replicates internal topics, even when the filter includes them', () => {
    const everything = { filter: () => true, policy: policy('default'), targetAlias: 'target', heartbeatsReplicationEnabled: true }
    for (const topic of ['__consumer_offsets', '.hidden', 'mm2-offsets.source.internal', 'source.checkpoints.internal']) {
      assert.equal(shouldReplicateTopic(topic, everything), false, topic)
    }
    // Not internal to the policy; only the default topics.exclude keeps Connect-style names out (Kafka 4.1.1 behaviour).
    assert.equal(shouldReplicateTopic('x-internal', everything), true)
    assert.equal(shouldReplicateTopic('x-internal', { ...everything, filter }), false)
  })

  it('matches Kafka 4.1.1\'s MirrorSourceConnector for every golden topic, policy, separator and heartbeat setting', () => {
    assert.ok(golden.cases.length > 700)
    for (const c of golden.cases) {
      const p = policy(c.policy, c.separator, c.internalTopicSeparatorEnabled)
      const ctx = { filter, policy: p, targetAlias: 'target', heartbeatsReplicationEnabled: c.heartbeatsReplicationEnabled }
      const label = `${c.policy} ${JSON.stringify(c.separator)} isep=${c.internalTopicSeparatorEnabled} hb=${c.heartbeatsReplicationEnabled} ${JSON.stringify(c.topic)}`
      assert.equal(filter(c.topic), c.filter, `filter ${label}`)
      assert.equal(isCycle(p, 'target', c.topic), c.isCycle, `isCycle ${label}`)
      assert.equal(shouldReplicateTopic(c.topic, ctx), c.shouldReplicateTopic, `shouldReplicateTopic ${label}`)
    }
  })
})
