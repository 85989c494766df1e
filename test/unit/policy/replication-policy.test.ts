import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { ReplicationPolicyClasses, type ReplicationPolicyConfig } from '../../../src/config/types.ts'
import { createReplicationPolicy, internalTopicHeads, javaSplit, type ReplicationPolicy } from '../../../src/policy/replication-policy.ts'

/** Outputs of Kafka 4.1.1's own policies for many names and separators; see the fixture's "comment" for how it was made. */
interface GoldenPolicy { policy: 'default' | 'identity', separator: string, internalTopicSeparatorEnabled: boolean, formatRemoteTopic: string, formatRemoteHeartbeats: string, heartbeatsTopic: string, offsetSyncsTopic: string, checkpointsTopic: string }
interface GoldenCase { policy: 'default' | 'identity', separator: string, internalTopicSeparatorEnabled: boolean, heartbeatsReplicationEnabled: boolean, topic: string, topicSource: string | null, upstreamTopic: string | null, originalTopic: string, isHeartbeatsTopic: boolean, isCheckpointsTopic: boolean, isMM2InternalTopic: boolean, isInternalTopic: boolean }
const golden = JSON.parse(readFileSync(new URL('../../fixtures/policy-golden.json', import.meta.url), 'utf8')) as { policies: GoldenPolicy[], cases: GoldenCase[] }

function policyFor (g: { policy: 'default' | 'identity', separator: string, internalTopicSeparatorEnabled: boolean }): ReplicationPolicy {
  return createReplicationPolicy(config(g.policy, g.separator, g.internalTopicSeparatorEnabled))
}

function config (policy: 'default' | 'identity', separator = '.', internalTopicSeparatorEnabled = true): ReplicationPolicyConfig {
  const className = policy === 'default' ? ReplicationPolicyClasses.DEFAULT : ReplicationPolicyClasses.IDENTITY
  return { className, separator, internalTopicSeparatorEnabled, sourceClusterAlias: 'source' }
}

describe('replication policies match Kafka 4.1.1', () => {
  for (const g of golden.policies) {
    const name = `${g.policy} policy, separator ${JSON.stringify(g.separator)}, internal separator ${g.internalTopicSeparatorEnabled ? 'on' : 'off'}`
    it(`names remote and internal topics like Kafka for the ${name}`, () => {
      const policy = policyFor(g)
      assert.equal(policy.formatRemoteTopic('source', 'topic1'), g.formatRemoteTopic)
      assert.equal(policy.formatRemoteTopic('source', 'heartbeats'), g.formatRemoteHeartbeats)
      assert.equal(policy.heartbeatsTopic(), g.heartbeatsTopic)
      assert.equal(policy.offsetSyncsTopic('target'), g.offsetSyncsTopic)
      assert.equal(policy.checkpointsTopic('source'), g.checkpointsTopic)
    })

    it(`traces and classifies every golden topic like Kafka for the ${name}`, () => {
      const policy = policyFor(g)
      const cases = golden.cases.filter(c => c.policy === g.policy && c.separator === g.separator && c.internalTopicSeparatorEnabled === g.internalTopicSeparatorEnabled && c.heartbeatsReplicationEnabled)
      assert.ok(cases.length > 40)
      for (const c of cases) {
        const actual = {
          topicSource: policy.topicSource(c.topic),
          upstreamTopic: policy.upstreamTopic(c.topic),
          originalTopic: policy.originalTopic(c.topic),
          isHeartbeatsTopic: policy.isHeartbeatsTopic(c.topic),
          isCheckpointsTopic: policy.isCheckpointsTopic(c.topic),
          isMM2InternalTopic: policy.isMM2InternalTopic(c.topic),
          isInternalTopic: policy.isInternalTopic(c.topic)
        }
        const { topicSource, upstreamTopic, originalTopic, isHeartbeatsTopic, isCheckpointsTopic, isMM2InternalTopic, isInternalTopic } = c
        assert.deepEqual(actual, { topicSource, upstreamTopic, originalTopic, isHeartbeatsTopic, isCheckpointsTopic, isMM2InternalTopic, isInternalTopic }, `topic ${JSON.stringify(c.topic)}`)
      }
    })
  }
})

describe('DefaultReplicationPolicy', () => {
  const policy = createReplicationPolicy(config('default'))

  it('prefixes the source alias and separator to form the remote name', () => {
    assert.equal(policy.formatRemoteTopic('us-west', 'orders'), 'us-west.orders')
  })

  it('takes the text before the first separator as the source, even for an ordinary dotted name', () => {
    assert.equal(policy.topicSource('B.A.t1'), 'B')
    assert.equal(policy.upstreamTopic('B.A.t1'), 'A.t1')
    assert.equal(policy.originalTopic('B.A.t1'), 't1')
    assert.equal(policy.topicSource('my.topic'), 'my')
  })

  it('follows Java split semantics: a trailing separator gives no source, a leading one gives the empty alias', () => {
    assert.equal(policy.topicSource('a.'), null)
    assert.equal(policy.upstreamTopic('a.'), null)
    assert.equal(policy.topicSource('.x'), '')
    assert.equal(policy.upstreamTopic('.x'), 'x')
    assert.equal(policy.topicSource('.'), null)
    assert.equal(policy.topicSource('plain'), null)
  })

  it('counts heartbeats topics at any depth as heartbeats topics', () => {
    assert.equal(policy.isHeartbeatsTopic('heartbeats'), true)
    assert.equal(policy.isHeartbeatsTopic('A.heartbeats'), true)
    assert.equal(policy.isHeartbeatsTopic('B.A.heartbeats'), true)
    assert.equal(policy.isHeartbeatsTopic('A.xheartbeats'), false)
  })

  it('classifies MM2 and Kafka internal topics as internal', () => {
    assert.equal(policy.isInternalTopic('mm2-offsets.A.internal'), true)
    assert.equal(policy.isInternalTopic('mm2-offset-syncs.B.internal'), true)
    assert.equal(policy.isInternalTopic('A.checkpoints.internal'), true)
    assert.equal(policy.isInternalTopic('__consumer_offsets'), true)
    assert.equal(policy.isInternalTopic('.hidden'), true)
    assert.equal(policy.isInternalTopic('orders'), false)
    assert.equal(policy.isCheckpointsTopic('A.checkpoints.internal'), true)
  })

  it('does not count other .internal / -internal names as internal, as Kafka 4.1.1 does not (mm2-spec §3.1 says it does)', () => {
    // Regression: the spec's formula also matched Connect-style names; the 4.1.1 jar only checks "mm2" + suffix, checkpoints, "__" and ".".
    assert.equal(policy.isMM2InternalTopic('foo.internal'), false)
    assert.equal(policy.isInternalTopic('foo.internal'), false)
    assert.equal(policy.isInternalTopic('connect-offsets-internal'), false)
    assert.equal(policy.isMM2InternalTopic('mm2.internal'), true)
  })
})

describe('DefaultReplicationPolicy with a custom separator', () => {
  it('uses the separator for remote names and, with the flag on, for internal topic names', () => {
    const policy = createReplicationPolicy(config('default', '__'))
    assert.equal(policy.formatRemoteTopic('A', 't1'), 'A__t1')
    assert.equal(policy.topicSource('A__t1'), 'A')
    assert.equal(policy.topicSource('A.t1'), null)
    assert.equal(policy.offsetSyncsTopic('B'), 'mm2-offset-syncs__B__internal')
    assert.equal(policy.checkpointsTopic('A'), 'A__checkpoints__internal')
    assert.equal(policy.isMM2InternalTopic('mm2-x__internal'), true)
    assert.equal(policy.isMM2InternalTopic('x__internal'), false)
    assert.equal(policy.isMM2InternalTopic('mm2-offsets.A.internal'), false)
  })

  it('keeps "." in internal topic names when the internal separator flag is off', () => {
    const policy = createReplicationPolicy(config('default', '-', false))
    assert.equal(policy.formatRemoteTopic('A', 't1'), 'A-t1')
    assert.equal(policy.offsetSyncsTopic('B'), 'mm2-offset-syncs.B.internal')
    assert.equal(policy.checkpointsTopic('A'), 'A.checkpoints.internal')
    assert.equal(policy.isCheckpointsTopic('A-checkpoints-internal'), false)
    assert.equal(policy.isMM2InternalTopic('A-checkpoints-internal'), false)
    assert.equal(policy.isInternalTopic('A.checkpoints.internal'), true)
    assert.equal(policy.isInternalTopic('mm2-offsets.A.internal'), true)
  })

  it('splits "-" names on the first dash only', () => {
    const policy = createReplicationPolicy(config('default', '-'))
    assert.equal(policy.topicSource('a-b-c'), 'a')
    assert.equal(policy.upstreamTopic('a-b-c'), 'b-c')
    assert.equal(policy.originalTopic('a-b-c'), 'c')
    assert.equal(policy.topicSource('a-'), null)
    assert.equal(policy.topicSource('-x'), '')
  })
})

describe('IdentityReplicationPolicy', () => {
  const policy = createReplicationPolicy(config('identity'))

  it('keeps topic names and says they come from the configured source alias', () => {
    assert.equal(policy.formatRemoteTopic('source', 'orders'), 'orders')
    assert.equal(policy.topicSource('orders'), 'source')
    assert.equal(policy.upstreamTopic('orders'), 'orders')
  })

  it('stops originalTopic when the upstream name equals the name itself', () => {
    assert.equal(policy.originalTopic('orders'), 'orders')
    assert.equal(policy.originalTopic('a.b.c'), 'a.b.c')
  })

  it('renames heartbeats topics like the default policy', () => {
    assert.equal(policy.formatRemoteTopic('source', 'heartbeats'), 'source.heartbeats')
    assert.equal(policy.topicSource('target.heartbeats'), 'target')
    assert.equal(policy.upstreamTopic('B.A.heartbeats'), 'A.heartbeats')
    assert.equal(policy.originalTopic('B.A.heartbeats'), 'heartbeats')
    assert.equal(policy.isHeartbeatsTopic('B.A.heartbeats'), true)
    assert.equal(policy.topicSource('xheartbeats'), null)
  })
})

describe('internalTopicHeads', () => {
  it('lists how every MM2 and kmirror internal topic begins, the offset syncs\' head with the policy\'s internal separator too', () => {
    const heads = ['mm2-offsets.', 'mm2-configs.', 'mm2-status.', 'mm2-offset-syncs.', 'mm2-offset-history.', 'mm2-acls.']
    assert.deepEqual(internalTopicHeads(createReplicationPolicy(config('default'))), heads)
    assert.deepEqual(internalTopicHeads(createReplicationPolicy(config('identity', '_'))), [...heads, 'mm2-offset-syncs_'])
    assert.deepEqual(internalTopicHeads(createReplicationPolicy(config('default', '_', false))), heads)
  })
})

describe('javaSplit', () => {
  it('reproduces String.split with a quoted separator', () => {
    assert.deepEqual(javaSplit('a.b.c', '.'), ['a', 'b', 'c'])
    assert.deepEqual(javaSplit('a..b', '.'), ['a', '', 'b'])
    assert.deepEqual(javaSplit('..x', '.'), ['', '', 'x'])
    assert.deepEqual(javaSplit('a..', '.'), ['a'])
    assert.deepEqual(javaSplit('..', '.'), [])
    assert.deepEqual(javaSplit('', '.'), [''])
    assert.deepEqual(javaSplit('abc', ''), ['a', 'b', 'c'])
    assert.deepEqual(javaSplit('a|b', '|'), ['a', 'b'])
  })
})
