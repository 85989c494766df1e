import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { clusterProps, connectorConfig, workerConfig } from '../../../src/config/resolve.ts'
import { flowOf, parse, twoClusters, warningsFor } from './fixtures.ts'

describe('resolution of one flow follows MM2 (mm2-spec §1.1)', () => {
  it('uses a top-level connector key for every flow and lets A->B.<key> override it for one flow', () => {
    const config = parse(twoClusters('B->A.enabled = true', 'replication.factor = 3', 'A->B.replication.factor = 1'))
    assert.equal(flowOf(config, 'A->B').replicationFactor, 1)
    assert.equal(flowOf(config, 'B->A').replicationFactor, 3)
  })

  it('uses MM2\'s defaults when nothing is set, except where kmirror documents a shorter interval', () => {
    const flow = flowOf(parse(twoClusters()), 'A->B')
    assert.deepEqual(flow.topics, ['.*'])
    assert.deepEqual(flow.topicsExclude, ['.*[\\-\\.]internal', '.*\\.replica', '__.*'])
    assert.deepEqual(flow.configPropertiesExclude, [
      'follower\\.replication\\.throttled\\.replicas', 'leader\\.replication\\.throttled\\.replicas',
      'message\\.timestamp\\.difference\\.max\\.ms', 'message\\.timestamp\\.type',
      'unclean\\.leader\\.election\\.enable', 'min\\.insync\\.replicas',
      // kmirror adds KIP-937's successors of message.timestamp.difference.max.ms
      'message\\.timestamp\\.before\\.max\\.ms', 'message\\.timestamp\\.after\\.max\\.ms'
    ])
    assert.equal(flow.replicationFactor, 2)
    assert.equal(flow.offsetLagMax, 100)
    assert.equal(flow.refreshTopicsEnabled, true)
    assert.equal(flow.refreshTopicsIntervalSeconds, 5)
    assert.equal(flow.syncTopicConfigsIntervalSeconds, 30)
    assert.equal(flow.syncTopicAclsIntervalSeconds, 30)
    assert.equal(flow.useDefaultsFrom, 'target')
    assert.equal(flow.syncGroupAclsEnabled, true)
    assert.equal(flow.syncTopicDeletionsEnabled, false)
    assert.equal(flow.emitHeartbeatsIntervalSeconds, 1)
    assert.equal(flow.heartbeatsTopicReplicationFactor, 3)
    assert.deepEqual(flow.groupsExclude, ['console-consumer-.*', 'connect-.*', '__.*'])
    assert.equal(flow.emitOffsetSyncsEnabled, true)
    assert.equal(flow.offsetSyncsTopicLocation, 'source')
    assert.equal(flow.offsetSyncsTopicReplicationFactor, 3)
    assert.equal(flow.heartbeatsReplicationEnabled, true)
    assert.deepEqual(flow.replicationPolicy, {
      className: 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy', separator: '.', internalTopicSeparatorEnabled: true, sourceClusterAlias: 'A'
    })
  })

  it('drops a top-level key that is not in the connectors\' ConfigDefs (use.defaults.from), but keeps it per flow', () => {
    const config = parse(twoClusters('B->A.enabled = true', 'use.defaults.from = source', 'A->B.use.defaults.from = source'))
    assert.equal(flowOf(config, 'A->B').properties['use.defaults.from'], 'source')
    assert.equal(flowOf(config, 'B->A').properties['use.defaults.from'], undefined)
  })

  it('copies per-flow keys unfiltered into the connector config, with the prefix removed', () => {
    const flow = flowOf(parse(twoClusters('A->B.my.custom.key = 1')), 'A->B')
    assert.equal(flow.properties['my.custom.key'], '1')
  })

  it('builds the connector config in MM2\'s order, with name, class and aliases filled in', () => {
    const props = connectorConfig({ clusters: 'A, B', 'A.bootstrap.servers': 'a:1', 'A.consumer.max.poll.records': '7', 'A.x': 'y', 'replication.policy.separator': '_' }, 'A', 'B')
    assert.deepEqual({ ...props }, {
      'replication.policy.separator': '_',
      'source.cluster.bootstrap.servers': 'a:1',
      'source.consumer.max.poll.records': '7',
      'source.cluster.x': 'y',
      'source.producer.bootstrap.servers': 'a:1',
      'source.consumer.bootstrap.servers': 'a:1',
      'source.admin.bootstrap.servers': 'a:1',
      name: 'MirrorSourceConnector',
      'connector.class': 'org.apache.kafka.connect.mirror.MirrorSourceConnector',
      'source.cluster.alias': 'A',
      'target.cluster.alias': 'B',
      enabled: 'false'
    })
  })
})

describe('clusterProps copies connection and security keys into every client role, only where absent', () => {
  it('copies a cluster\'s own security keys to consumer, producer and admin unless the role sets its own', () => {
    const props = clusterProps({ 'A.security.protocol': 'SSL', 'A.admin.security.protocol': 'PLAINTEXT' }, 'A')
    assert.equal(props['consumer.security.protocol'], 'SSL')
    assert.equal(props['producer.security.protocol'], 'SSL')
    assert.equal(props['admin.security.protocol'], 'PLAINTEXT')
  })

  it('fills in top-level security keys for the cluster and its roles, after the cluster\'s own', () => {
    const props = clusterProps({ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'PLAIN', 'A.sasl.mechanism': 'SCRAM-SHA-256' }, 'A')
    assert.equal(props['security.protocol'], 'SASL_SSL')
    assert.equal(props['consumer.security.protocol'], 'SASL_SSL')
    assert.equal(props['sasl.mechanism'], 'SCRAM-SHA-256')
    assert.equal(props['producer.sasl.mechanism'], 'SCRAM-SHA-256')
  })

  it('does not copy ordinary client settings between roles', () => {
    const props = clusterProps({ 'A.consumer.max.poll.records': '5', 'A.client.id': 'x' }, 'A')
    assert.equal(props['producer.max.poll.records'], undefined)
    assert.equal(props['consumer.client.id'], undefined)
  })
})

describe('client settings per role (mm2-spec §1.8)', () => {
  it('layers cluster connection keys, then role keys of the cluster, then per-flow role keys', () => {
    const config = parse(twoClusters(
      'A.security.protocol = SASL_SSL', 'A.sasl.mechanism = PLAIN', 'A.ssl.truststore.type = PEM',
      'A.consumer.max.poll.records = 100', 'A->B.consumer.fetch.min.bytes = 10', 'A->B.source.consumer.max.poll.records = 200'
    ))
    const consumer = flowOf(config, 'A->B').source.consumer
    assert.deepEqual({ ...consumer }, {
      'bootstrap.servers': 'a1:9092, a2:9092',
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': 'PLAIN',
      'ssl.truststore.type': 'PEM',
      'fetch.min.bytes': '10',
      'max.poll.records': '200',
      'enable.auto.commit': 'false',
      'auto.offset.reset': 'earliest',
      'isolation.level': 'read_committed'
    })
  })

  it('lets a flow\'s source.cluster.* connection keys reach the clients only where the cluster has none, as in MM2', () => {
    const config = parse(twoClusters('A->B.source.cluster.bootstrap.servers = a-dr:9092', 'A->B.target.cluster.security.protocol = SSL'))
    const flow = flowOf(config, 'A->B')
    assert.equal(flow.source.consumer['bootstrap.servers'], 'a1:9092, a2:9092')
    assert.equal(flow.target.producer['security.protocol'], 'SSL')
    assert.match(warningsFor(config, 'A->B.source.cluster.bootstrap.servers')[0] ?? '', /does not reach the clients.*set A->B\.source\.consumer\.bootstrap\.servers, A->B\.source\.producer\.bootstrap\.servers, A->B\.source\.admin\.bootstrap\.servers instead/)
    assert.deepEqual(warningsFor(config, 'A->B.target.cluster.security.protocol'), [])
  })

  it('ignores top-level consumer.* settings, as MM2 does', () => {
    const config = parse(twoClusters('consumer.max.poll.records = 5'))
    assert.equal(flowOf(config, 'A->B').source.consumer['max.poll.records'], undefined)
  })

  it('forces enable.auto.commit=false but keeps a configured auto.offset.reset', () => {
    const config = parse(twoClusters('A.consumer.enable.auto.commit = true', 'A.consumer.auto.offset.reset = latest'))
    const consumer = flowOf(config, 'A->B').source.consumer
    assert.equal(consumer['enable.auto.commit'], 'false')
    assert.equal(consumer['auto.offset.reset'], 'latest')
  })

  it('applies the flow\'s producer.override.* last to the target producer, which writes the replicated data', () => {
    const config = parse(twoClusters('B.producer.linger.ms = 5', 'A->B.producer.override.linger.ms = 50', 'A->B.producer.override.acks = all'))
    const producer = flowOf(config, 'A->B').target.producer
    assert.equal(producer['linger.ms'], '50')
    assert.equal(producer.acks, 'all')
    assert.equal(producer['override.acks'], undefined)
    assert.equal(flowOf(config, 'A->B').source.producer['linger.ms'], undefined)
  })

  it('splits bootstrap.servers into trimmed host:port entries', () => {
    const flow = flowOf(parse(twoClusters()), 'A->B')
    assert.deepEqual(flow.source.bootstrapServers, ['a1:9092', 'a2:9092'])
    assert.deepEqual(flow.target.bootstrapServers, ['b1:9092'])
    assert.equal(flow.source.alias, 'A')
    assert.equal(flow.target.alias, 'B')
  })

  it('uses top-level bootstrap.servers for a cluster that has none', () => {
    const flow = flowOf(parse(['clusters = A, B', 'bootstrap.servers = shared:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true'].join('\n')), 'A->B')
    assert.deepEqual(flow.source.bootstrapServers, ['shared:9092'])
    assert.deepEqual(flow.target.bootstrapServers, ['b:9092'])
  })
})

describe('worker settings of the flow come from its target cluster', () => {
  it('defaults offset storage to mm2-offsets.<source>.internal with 25 partitions, replication factor 3, flush every 5 s', () => {
    const flow = flowOf(parse(twoClusters()), 'A->B')
    assert.equal(flow.offsetStorageTopic, 'mm2-offsets.A.internal')
    assert.equal(flow.offsetStoragePartitions, 25)
    assert.equal(flow.offsetStorageReplicationFactor, 3)
    assert.equal(flow.offsetFlushIntervalMs, 5000)
  })

  it('reads worker keys of the target cluster, not of the source', () => {
    const config = parse(twoClusters('B->A.enabled = true', 'B.offset.flush.interval.ms = 1000', 'B.offset.storage.topic = progress'))
    assert.equal(flowOf(config, 'A->B').offsetFlushIntervalMs, 1000)
    assert.equal(flowOf(config, 'A->B').offsetStorageTopic, 'progress')
    assert.equal(flowOf(config, 'B->A').offsetFlushIntervalMs, 5000)
    assert.equal(flowOf(config, 'B->A').offsetStorageTopic, 'mm2-offsets.B.internal')
  })

  it('lets top-level offset.storage.* win over the target cluster\'s, as MM2 applies them after clusterProps', () => {
    const config = parse(twoClusters('offset.storage.partitions = 5', 'B.offset.storage.partitions = 50'))
    assert.equal(flowOf(config, 'A->B').offsetStoragePartitions, 5)
  })

  it('accepts top-level offset.flush.interval.ms as a kmirror extension that a cluster value overrides', () => {
    const config = parse(twoClusters('B->A.enabled = true', 'offset.flush.interval.ms = 2000', 'A.offset.flush.interval.ms = 300'))
    assert.equal(flowOf(config, 'A->B').offsetFlushIntervalMs, 2000)
    assert.equal(flowOf(config, 'B->A').offsetFlushIntervalMs, 300)
  })

  it('fills in MM2\'s worker defaults', () => {
    const worker = workerConfig({ 'B.bootstrap.servers': 'b:1' }, 'A', 'B')
    assert.equal(worker['group.id'], 'A-mm2')
    assert.equal(worker['client.id'], 'A->B')
    assert.equal(worker['status.storage.topic'], 'mm2-status.A.internal')
    assert.equal(worker['config.storage.topic'], 'mm2-configs.A.internal')
  })
})
