import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KafkaErrorKinds } from '../../../src/kafka/errors.ts'
import { PartitionFailures, remedyFor, type PartitionFault } from '../../../src/replication/partition-failures.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

const P = { topic: 'orders', partition: 3, remoteTopic: 'A.orders' }
const fault = (overrides: Partial<PartitionFault> = {}): PartitionFault =>
  ({ side: 'source', error: 'TOPIC_AUTHORIZATION_FAILED', kind: KafkaErrorKinds.AUTHORIZATION, message: 'refused', operation: 'READ', ...overrides })

const A = { alias: 'A', brokers: 'a1:9092,a2:9092', protocol: 'PLAINTEXT', principal: 'User:mirror' }
const B = { alias: 'B', brokers: 'b1:9093', protocol: 'SASL_SSL' }

describe('remedyFor', () => {
  it('names the operation, the topic on the side that refused, the principal and the cluster, with the kafka-acls.sh line', () => {
    assert.equal(remedyFor(P, fault(), A), 'grant READ on topic orders to User:mirror on cluster A (kafka-acls.sh --bootstrap-server a1:9092,a2:9092 --add ' +
      '--allow-principal User:mirror --operation Read --topic orders; see "Least-privilege ACLs" in docs/operations.md)')
    assert.match(remedyFor(P, fault({ operation: 'DESCRIBE' }), A), /^grant DESCRIBE on topic orders to User:mirror on cluster A \(.* --operation Describe --topic orders;/)
    // A principal the config does not name: described, and a placeholder on the tool line
    assert.equal(remedyFor(P, fault({ side: 'target', operation: 'WRITE' }), B), 'grant WRITE on topic A.orders to the principal kmirror uses on cluster B ' +
      '(kafka-acls.sh --bootstrap-server b1:9093 --command-config ADMIN_PROPERTIES_FILE_OF_B --add --allow-principal PRINCIPAL_OF_B --operation Write --topic A.orders; ' +
      'see "Least-privilege ACLs" in docs/operations.md)')
    assert.equal(remedyFor(P, fault({ side: 'target', error: 'MESSAGE_TOO_LARGE', kind: KafkaErrorKinds.TOO_LARGE }), B),
      'raise max.message.bytes of topic A.orders on cluster B (or message.max.bytes of its brokers) above the largest record batch of orders')
  })

  it('names the kafka-topics.sh line that lists a partition without a leader, reaching the cluster', () => {
    assert.equal(remedyFor(P, fault({ error: 'LEADER_NOT_AVAILABLE', kind: KafkaErrorKinds.TRANSIENT }), A),
      'bring back the broker that leads orders-3 on cluster A, or elect a leader among its live replicas ' +
      '(to list it: kafka-topics.sh --bootstrap-server a1:9092,a2:9092 --describe --topic orders --unavailable-partitions)')
    assert.match(remedyFor(P, fault({ side: 'target', error: 'NETWORK_EXCEPTION', kind: KafkaErrorKinds.TRANSIENT }), B),
      /\(to list it: kafka-topics\.sh --bootstrap-server b1:9093 --command-config CLIENT_PROPERTIES_FILE_OF_B --describe --topic A\.orders --unavailable-partitions\)$/)
  })
})

describe('remedyFor a target refusing record timestamps', () => {
  it('names the timestamp bounds of the remote topic, the kafka-configs.sh line that removes them and config.properties.exclude', () => {
    const remedy = remedyFor(P, fault({ side: 'target', error: 'INVALID_TIMESTAMP', kind: KafkaErrorKinds.CORRUPT }), B)
    assert.match(remedy, /^the records of orders keep their source timestamps, which A\.orders on cluster B refuses as too old or too new: remove message\.timestamp\.before\.max\.ms, message\.timestamp\.after\.max\.ms and message\.timestamp\.difference\.max\.ms from A\.orders/)
    assert.match(remedy, /kafka-configs\.sh --bootstrap-server b1:9093 --command-config \S+ --alter --entity-type topics --entity-name A\.orders --delete-config message\.timestamp\.before\.max\.ms,message\.timestamp\.after\.max\.ms,message\.timestamp\.difference\.max\.ms/)
    assert.match(remedy, /keep them in config\.properties\.exclude/)
  })
})

describe('remedyFor a source broker throttling kmirror', () => {
  it('names the fetch quota and the kafka-configs.sh lines that show it, not a broker to bring back', () => {
    assert.equal(remedyFor(P, fault({ error: 'THROTTLING_QUOTA_EXCEEDED', kind: KafkaErrorKinds.TRANSIENT }), A),
      'raise or remove the fetch quota (consumer_byte_rate) that throttles kmirror\'s principal or client id on cluster A ' +
      '(to see them: kafka-configs.sh --bootstrap-server a1:9092,a2:9092 --describe --entity-type users and ' +
      'kafka-configs.sh --bootstrap-server a1:9092,a2:9092 --describe --entity-type clients); until then it is copied at the quota\'s pace')
    assert.match(remedyFor(P, fault({ error: 'THROTTLING_QUOTA_EXCEEDED', kind: KafkaErrorKinds.TRANSIENT }), B), /--command-config ADMIN_PROPERTIES_FILE_OF_B --describe --entity-type users/)
  })
})

describe('PartitionFailures', () => {
  it('backs off per partition, warns once per error, counts it in the gauge and logs the recovery', () => {
    const logs = memoryLogger()
    const metrics = new CountingMetrics()
    const failures = new PartitionFailures('A->B', { source: { alias: 'A' }, target: { alias: 'B' } }, logs.log, metrics, { baseMs: 100, maxMs: 300 })
    // When the same error comes back four times, then another one
    const retries = [0, 1, 2, 3].map(i => failures.fail('k', P, fault(), 1000 + i) - (1000 + i))
    assert.deepEqual(retries, [100, 200, 300, 300])
    assert.equal(failures.report('k')?.attempts, 4)
    assert.equal(failures.report('k')?.since, new Date(1000).toISOString())
    failures.fail('k', P, fault({ error: 'UNKNOWN_SERVER_ERROR', kind: KafkaErrorKinds.FATAL }), 2000)
    // Then one warning per error, and the gauge follows the current error
    assert.equal(logs.at(LogLevels.warn).length, 2)
    assert.equal(metrics.gauges.get('failingPartitions{"flow":"A->B","error":"TOPIC_AUTHORIZATION_FAILED"}'), 0)
    assert.equal(metrics.gauges.get('failingPartitions{"flow":"A->B","error":"UNKNOWN_SERVER_ERROR"}'), 1)
    // When it recovers, then one info line and the gauge is back to 0
    failures.recover('k', P)
    failures.recover('k', P)
    assert.equal(logs.at(LogLevels.info).length, 1)
    assert.equal(failures.report('k'), null)
    assert.equal(metrics.gauges.get('failingPartitions{"flow":"A->B","error":"UNKNOWN_SERVER_ERROR"}'), 0)
  })
})

describe('PartitionFailures for a long wait on the target', () => {
  it('tells the remedy the wait brings (a topic its transaction coordinator does not know), else the one of its error', () => {
    const logs = memoryLogger()
    const failures = new PartitionFailures('A->B', { source: { alias: 'A' }, target: { alias: 'B' } }, logs.log, new CountingMetrics(), { baseMs: 100, maxMs: 300 })
    const wait = { error: 'UNKNOWN_TOPIC_OR_PARTITION', detail: 'the transaction coordinator of t-1 on cluster B does not know its topic', sinceMs: 0, thresholdMs: 50, nextTryAt: 100 }
    failures.waiting('k', P, { ...wait, remedy: 'look for a broker whose metadata lags behind' }, false, 1000)
    assert.equal(failures.report('k')?.remedy, 'look for a broker whose metadata lags behind')
    assert.match(String(logs.at(LogLevels.warn)[0]?.msg), /does not know its topic; look for a broker whose metadata lags behind\. Its records wait/)
    failures.waiting('m', P, wait, false, 1000)
    assert.match(failures.report('m')?.remedy ?? '', /^the topic refresh creates A\.orders on cluster B/)
  })
})
