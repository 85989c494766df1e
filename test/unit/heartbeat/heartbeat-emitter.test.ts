import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ReplicationPolicyClasses } from '../../../src/config/types.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { decodeHeartbeat } from '../../../src/formats/heartbeat.ts'
import { HeartbeatEmitter, heartbeatIntervalMs, heartbeatRecord, type HeartbeatPair } from '../../../src/heartbeat/heartbeat-emitter.ts'
import type { NewTopic } from '../../../src/kafka/admin-client.ts'
import type { OffsetSegment, PartitionBatch, WriteOptions } from '../../../src/kafka/record-writer.ts'
import { noMetrics } from '../../../src/metrics/metrics.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'
import { hex } from '../formats/hex.ts'

function pairOf (overrides: Partial<HeartbeatPair> = {}): HeartbeatPair {
  const cluster = (alias: string) => ({ alias, bootstrapServers: [], consumer: {}, producer: {}, admin: {} })
  return {
    name: 'A->B', source: cluster('A'), target: cluster('B'),
    replicationPolicy: { className: ReplicationPolicyClasses.DEFAULT, separator: '.', internalTopicSeparatorEnabled: true, sourceClusterAlias: 'A' },
    emitHeartbeatsEnabled: true, emitHeartbeatsIntervalSeconds: 1, heartbeatsTopicReplicationFactor: 3,
    ...overrides
  }
}

class FakeTarget {
  readonly created: NewTopic[] = []
  readonly written: PartitionBatch[] = []
  createError: unknown = null
  async createTopic (topic: NewTopic): Promise<'created'> {
    if (this.createError !== null) throw this.createError
    this.created.push(topic)
    return 'created'
  }

  readonly until: (AbortSignal | undefined)[] = []
  async write (batches: readonly PartitionBatch[], options: WriteOptions = {}): Promise<OffsetSegment[][]> {
    this.until.push(options.until)
    this.written.push(...batches)
    return batches.map(() => [{ start: 0, baseOffset: 0 }])
  }
}

function emitterWith (target: FakeTarget, pair = pairOf()): HeartbeatEmitter {
  return new HeartbeatEmitter({ pair, admin: target, writer: target, log: memoryLogger().log, metrics: noMetrics, now: () => 1_700_000_000_000 })
}

describe('heartbeats', () => {
  it('writes MM2\'s exact Heartbeat bytes: key (A, B), value v0 + timestamp, record timestamp = timestamp, no headers', () => {
    const r = heartbeatRecord('A', 'B', 1_700_000_000_000)
    assert.deepEqual(r.key, hex('00 01 41 00 01 42'))
    assert.deepEqual(r.value, hex('00 00 | 00 00 01 8b cf e5 68 00'))
    assert.equal(r.timestamp, 1_700_000_000_000n)
    assert.deepEqual(r.headers, [])
  })

  it('creates the compacted one-partition heartbeats topic on the target, then writes to partition 0', async () => {
    const target = new FakeTarget()
    const emitter = emitterWith(target)
    await emitter.runOnce()
    await emitter.runOnce()
    assert.deepEqual(target.created, [{ name: 'heartbeats', partitions: 1, replicationFactor: 3, replicationFactorKey: 'heartbeats.topic.replication.factor', configs: { 'cleanup.policy': 'compact' } }])
    assert.equal(target.written.length, 2)
    for (const batch of target.written) {
      assert.equal(batch.topic, 'heartbeats')
      assert.equal(batch.partition, 0)
      assert.deepEqual(decodeHeartbeat(batch.records[0]!.key!, batch.records[0]!.value!), { sourceClusterAlias: 'A', targetClusterAlias: 'B', timestamp: 1_700_000_000_000 })
    }
  })

  it('with emit.heartbeats.enabled = false creates the topic but writes nothing, as MM2\'s connector does', async () => {
    const target = new FakeTarget()
    const emitter = emitterWith(target, pairOf({ emitHeartbeatsEnabled: false }))
    await emitter.runOnce()
    assert.equal(target.created.length, 1)
    assert.equal(target.written.length, 0)
    assert.equal(emitter.job().intervalMs, 60_000)
  })

  it('carries on when the topic cannot be created for lack of authorization, as MM2 does', async () => {
    const target = new FakeTarget()
    target.createError = new KmirrorError(ErrorCodes.TOPIC_CREATE, 'denied', { details: { kafkaErrors: ['TOPIC_AUTHORIZATION_FAILED'] } })
    await emitterWith(target).runOnce()
    assert.equal(target.written.length, 1)
  })

  it('fails the run on any other creation error, so the job retries it before writing', async () => {
    const target = new FakeTarget()
    target.createError = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'down', { retriable: true })
    const emitter = emitterWith(target)
    await assert.rejects(emitter.runOnce(), /down/)
    assert.equal(target.written.length, 0)
    target.createError = null
    await emitter.runOnce()
    assert.equal(target.created.length, 1)
    assert.equal(target.written.length, 1)
  })

  it('Given a job run aborted while it creates the topic (its membership ended), then no heartbeat is written after it and the run rejects with the abort\'s reason', async () => {
    const target = new FakeTarget()
    const run = new AbortController()
    const reason = new Error('job heartbeats stopped: the group membership that owned it ended')
    const create = target.createTopic.bind(target)
    target.createTopic = async topic => { const out = await create(topic); run.abort(reason); return out }
    await assert.rejects(emitterWith(target).job().run(run.signal), err => err === reason)
    assert.equal(target.created.length, 1)
    assert.deepEqual(target.written, [])
  })

  it('Given a job run, then its signal goes with the heartbeat\'s write: a membership lost while it is under way sends nothing more (RecordWriter)', async () => {
    const target = new FakeTarget()
    const run = new AbortController()
    await emitterWith(target).job().run(run.signal)
    assert.deepEqual(target.until, [run.signal])
  })

  it('Given a job run already aborted, then it sends nothing at all, not even the topic\'s creation', async () => {
    const target = new FakeTarget()
    const run = new AbortController()
    run.abort(new Error('revoked'))
    await assert.rejects(emitterWith(target).job().run(run.signal), /revoked/)
    assert.deepEqual([target.created, target.written], [[], []])
  })

  it('runs every emit.heartbeats.interval.seconds, the first time at once', () => {
    const job = emitterWith(new FakeTarget(), pairOf({ emitHeartbeatsIntervalSeconds: 5 })).job()
    assert.deepEqual([job.name, job.intervalMs, job.firstDelayMs], ['heartbeats', 5000, 0])
    assert.equal(heartbeatIntervalMs({ emitHeartbeatsEnabled: true, emitHeartbeatsIntervalSeconds: -1 }), null)
    assert.equal(heartbeatIntervalMs({ emitHeartbeatsEnabled: true, emitHeartbeatsIntervalSeconds: 0 }), 100)
  })
})
