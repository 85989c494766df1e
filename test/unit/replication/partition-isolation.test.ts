import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { KafkaErrorKinds } from '../../../src/kafka/errors.ts'
import { partitionLag } from '../../../src/replication/flow-replicator.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels } from '../../fakes/memory-logger.ts'
import { assertExactCopy, createHarness, offsetsWithGaps, type Harness } from '../../fakes/replicator-harness.ts'
import { waitFor } from '../../helpers/wait.ts'

/** The remedy of a refused READ: the principal the harness's source config names, and the kafka-acls.sh line reaching A. */
const GRANT_READ = 'grant READ on topic t to User:mirror on cluster A (kafka-acls.sh --bootstrap-server a:9092 --add --allow-principal User:mirror --operation Read --topic t; see "Least-privilege ACLs" in docs/operations.md)'

const TOPICS = [{ source: 't', remote: 'A.t', partitions: 2 }, { source: 'u', remote: 'A.u', partitions: 1 }] as const
const READ_DENIED = {
  error: 'TOPIC_AUTHORIZATION_FAILED',
  kind: KafkaErrorKinds.AUTHORIZATION,
  message: 'cluster A refused a fetch from broker 1 (127.0.0.1:9092) of t-1 (Kafka error TOPIC_AUTHORIZATION_FAILED)',
  hint: undefined,
  operation: 'READ'
}

async function start (h: Harness, t: TestContext): Promise<void> {
  // Like a broker's fetch.max.wait.ms: a fetch of caught-up partitions takes a moment, so the test's timers run.
  const fetchBatches = h.source.fetchBatches.bind(h.source)
  h.source.fetchBatches = async positions => { await delay(1); return await fetchBatches(positions) }
  await h.replicator.addTopics(TOPICS)
  const running = h.replicator.run()
  t.after(async () => { h.replicator.stop(); await running })
}

function statusOf (h: Harness, topic: string, partition: number) {
  return h.replicator.status().find(p => p.topic === topic && p.partition === partition)!
}

function copiedCount (h: Harness, remote: string, partition: number): number {
  return h.target.copied(remote, partition).length
}

describe('FlowReplicator: a partition the source or the target refuses is set aside, the others flow', () => {
  it('Given READ revoked on one source partition, when it runs, then the others are copied, the failing one is reported with unknown lag, and it resumes exactly once READ is back', async t => {
    const metrics = new CountingMetrics()
    const h = createHarness({ metrics })
    for (const [topic, partition] of [['t', 0], ['t', 1], ['u', 0]] as const) h.source.addPartition(topic, partition, offsetsWithGaps(0, 9))
    h.source.refuseReads('t', 1, READ_DENIED)
    await start(h, t)
    // Then every other partition is copied whole
    await waitFor(() => copiedCount(h, 'A.t', 0) === 10 && copiedCount(h, 'A.u', 0) === 10, { timeoutMs: 5000, intervalMs: 10, message: 'other partitions copied' })
    // and the refused one is reported: error, cluster, remedy, attempts, unknown lag, nothing copied
    await waitFor(() => (statusOf(h, 't', 1).failure?.attempts ?? 0) >= 3, { timeoutMs: 5000, intervalMs: 10, message: 'retried with back-off' })
    const failing = statusOf(h, 't', 1)
    assert.equal(failing.failure?.error, 'TOPIC_AUTHORIZATION_FAILED')
    assert.equal(failing.failure?.code, 'KMIRROR_ERR_NOT_AUTHORIZED')
    assert.equal(failing.failure?.cluster, 'A')
    assert.equal(failing.failure?.remedy, GRANT_READ)
    assert.equal(failing.position, 0)
    assert.equal(partitionLag(failing), null)
    assert.equal(copiedCount(h, 'A.t', 1), 0)
    assert.equal(metrics.gauges.get('failingPartitions{"flow":"A->B","error":"TOPIC_AUTHORIZATION_FAILED"}'), 1)
    // and one warning only, however many retries
    const warnings = h.logs.at(LogLevels.warn).map(l => l.msg)
    assert.deepEqual(warnings, ['cannot read t-1 from cluster A: ' + READ_DENIED.message + '; ' + GRANT_READ + '. This partition is set aside and retried with back-off; the others keep flowing'])

    // When READ is granted again
    h.source.refuseReads('t', 1, null)
    await waitFor(() => copiedCount(h, 'A.t', 1) === 10, { timeoutMs: 5000, intervalMs: 10, message: 'refused partition copied after the grant' })
    // Then it is an exact copy, no longer failing, the gauge is back to 0 and the recovery was logged
    assertExactCopy(h, 't', 1, 'A.t')
    assert.equal(statusOf(h, 't', 1).failure, null)
    assert.equal(metrics.gauges.get('failingPartitions{"flow":"A->B","error":"TOPIC_AUTHORIZATION_FAILED"}'), 0)
    assert.ok(h.logs.at(LogLevels.info).some(l => l.msg === 't-1 is replicated again (it failed with TOPIC_AUTHORIZATION_FAILED on cluster A)'))
  })

  it('Given WRITE refused on one remote partition, when it runs, then the others are copied, that partition keeps its position, and it is copied exactly once WRITE is back', async t => {
    const h = createHarness()
    for (const [topic, partition] of [['t', 0], ['t', 1], ['u', 0]] as const) h.source.addPartition(topic, partition, offsetsWithGaps(0, 9))
    h.target.refuseWrites('A.u', 0, 'TOPIC_AUTHORIZATION_FAILED')
    await start(h, t)
    await waitFor(() => copiedCount(h, 'A.t', 0) === 10 && copiedCount(h, 'A.t', 1) === 10, { timeoutMs: 5000, intervalMs: 10, message: 'other partitions copied' })
    await waitFor(() => statusOf(h, 'u', 0).failure !== null, { timeoutMs: 5000, intervalMs: 10, message: 'refused partition reported' })
    const failing = statusOf(h, 'u', 0)
    assert.equal(failing.failure?.side, 'target')
    assert.equal(failing.failure?.cluster, 'B')
    assert.equal(failing.failure?.remedy, 'grant WRITE on topic A.u to the principal kmirror uses on cluster B (kafka-acls.sh --bootstrap-server b:9092 --add --allow-principal PRINCIPAL_OF_B --operation Write --topic A.u; see "Least-privilege ACLs" in docs/operations.md)')
    assert.equal(failing.position, 0)
    assert.equal(copiedCount(h, 'A.u', 0), 0)

    h.target.acceptWrites('A.u', 0)
    await waitFor(() => copiedCount(h, 'A.u', 0) === 10, { timeoutMs: 5000, intervalMs: 10, message: 'copied after the grant' })
    assertExactCopy(h, 'u', 0, 'A.u')
    assert.equal(statusOf(h, 'u', 0).failure, null)
  })
})
