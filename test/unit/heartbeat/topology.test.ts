import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatTopologyTable } from '../../../src/cli/topology-command.ts'
import { ReplicationPolicyClasses } from '../../../src/config/types.ts'
import { countHops, describeUpstream, heartbeatTopics, replicationHops, upstreamClusters } from '../../../src/heartbeat/topology.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'

const policy = createReplicationPolicy({ className: ReplicationPolicyClasses.DEFAULT, separator: '.', internalTopicSeparatorEnabled: true, sourceClusterAlias: '' })
const identity = createReplicationPolicy({ className: ReplicationPolicyClasses.IDENTITY, separator: '.', internalTopicSeparatorEnabled: true, sourceClusterAlias: 'X' })

describe('topology from heartbeat topic names (MirrorClient)', () => {
  it('finds the heartbeat topics among all topics, whatever their depth', () => {
    const topics = ['orders', 'A.orders', 'heartbeats', 'A.heartbeats', 'B.A.heartbeats', 'mm2-offsets.A.internal', 'A.checkpoints.internal']
    assert.deepEqual(heartbeatTopics(policy, topics), ['A.heartbeats', 'B.A.heartbeats', 'heartbeats'])
  })

  it('collects every source along a heartbeat topic: source3.source4.source5.heartbeats gives all three', () => {
    assert.deepEqual(upstreamClusters(policy, ['source3.source4.source5.heartbeats', 'heartbeats', 'x.orders']), ['source3', 'source4', 'source5'])
  })

  it('counts hops as MM2\'s examples: source1.heartbeats is 1 for source1, source1.source2.heartbeats is 2 for source2, unknown is -1', () => {
    assert.equal(replicationHops(policy, ['source1.heartbeats'], 'source1'), 1)
    assert.equal(replicationHops(policy, ['source1.source2.heartbeats'], 'source2'), 2)
    assert.equal(replicationHops(policy, ['source1.source2.heartbeats'], 'source1'), 1)
    assert.equal(replicationHops(policy, ['source1.heartbeats'], 'nowhere'), -1)
    assert.equal(replicationHops(policy, [], 'source1'), -1)
  })

  it('takes the fewest hops over every heartbeat topic naming the cluster', () => {
    const topics = ['B.A.heartbeats', 'A.heartbeats', 'C.B.A.heartbeats']
    assert.equal(replicationHops(policy, topics, 'A'), 1)
    assert.equal(countHops(policy, 'C.B.A.heartbeats', 'A'), 3)
  })

  it('shows the chain A->B->C from C: B at 1 hop, A at 2, nearest first', () => {
    const onC = ['heartbeats', 'B.heartbeats', 'B.A.heartbeats', 'B.A.orders']
    assert.deepEqual(describeUpstream(policy, onC), [
      { alias: 'B', hops: 1, via: 'B.heartbeats' },
      { alias: 'A', hops: 2, via: 'B.A.heartbeats' }
    ])
  })

  it('ignores data topics, also those that look remote', () => {
    assert.deepEqual(describeUpstream(policy, ['heartbeats', 'A.orders', 'my.topic']), [])
  })

  it('stops at a source seen before, so a cyclic name neither loops nor counts a cluster twice', () => {
    const topics = ['A.B.A.heartbeats']
    assert.deepEqual(upstreamClusters(policy, topics), ['A', 'B'])
    assert.equal(countHops(policy, 'A.B.A.heartbeats', 'A'), 1)
    assert.equal(countHops(policy, 'A.B.A.heartbeats', 'B'), 2)
    assert.equal(countHops(policy, 'A.B.A.heartbeats', 'C'), -1)
  })

  it('uses a custom separator', () => {
    const dash = createReplicationPolicy({ className: ReplicationPolicyClasses.DEFAULT, separator: '__', internalTopicSeparatorEnabled: true, sourceClusterAlias: '' })
    assert.deepEqual(describeUpstream(dash, ['B__A__heartbeats', 'B.orders']), [{ alias: 'B', hops: 1, via: 'B__A__heartbeats' }, { alias: 'A', hops: 2, via: 'B__A__heartbeats' }])
  })

  it('works with IdentityReplicationPolicy, which names heartbeat topics as the default policy does', () => {
    const onC = ['heartbeats', 'B.heartbeats', 'B.A.heartbeats', 'orders']
    assert.deepEqual(describeUpstream(identity, onC).map(u => [u.alias, u.hops]), [['B', 1], ['A', 2]])
  })
})

describe('kmirror topology table', () => {
  it('prints one row per cluster and upstream cluster, a dash for none, and unreachable clusters', () => {
    const text = formatTopologyTable([
      { alias: 'A', reachable: true, upstream: [], heartbeatTopics: ['heartbeats'] },
      { alias: 'C', reachable: true, upstream: [{ alias: 'B', hops: 1, via: 'B.heartbeats' }, { alias: 'A', hops: 2, via: 'B.A.heartbeats' }], heartbeatTopics: [] },
      { alias: 'D', reachable: false, error: 'connection refused' }
    ])
    assert.equal(text, [
      'CLUSTER  UPSTREAM       HOPS  VIA',
      'A        -',
      'C        B              1     B.heartbeats',
      'C        A              2     B.A.heartbeats',
      'D        (unreachable)',
      ''
    ].join('\n'))
  })
})
