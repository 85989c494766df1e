import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CheckpointEmitter, createGroupFilter } from '../../../src/checkpoint/checkpoint-emitter.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import { decodeCheckpoint, encodeCheckpointKey, encodeCheckpointValue } from '../../../src/formats/checkpoint.ts'
import { FetchOutcomes, type FetchedPartition, type FetchedRecord, type PartitionPosition } from '../../../src/kafka/record-fetcher.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import type { CommittedOffset } from '../../../src/kafka/group-admin.ts'
import type { PartitionBatch } from '../../../src/kafka/record-writer.ts'
import { silentLogger } from '../../../src/logger.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

const flow = {
  source: { alias: 'A' },
  target: { alias: 'B' },
  topics: ['.*'],
  topicsExclude: ['excluded'],
  groups: ['.*'],
  groupsExclude: ['console-consumer-.*', 'connect-.*', '__.*'],
  checkpointsTopicReplicationFactor: 1
} as unknown as FlowConfig
const policy = createReplicationPolicy({ className: 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy', separator: '.', internalTopicSeparatorEnabled: true, sourceClusterAlias: 'A' })

/** `protocolTypes`: a group's protocol type when not 'consumer'. */
function emitterWith (commits: Map<string, CommittedOffset[]>, protocolTypes: ReadonlyMap<string, string> = new Map()) {
  const written: PartitionBatch[] = []
  const until: (AbortSignal | undefined)[] = []
  const emitter = new CheckpointEmitter({
    flow,
    policy,
    sourceAdmin: { groups: { listGroups: async () => [...commits.keys()].map(groupId => ({ groupId, state: 'Empty' as const, protocolType: protocolTypes.get(groupId) ?? 'consumer' })), listCommittedOffsets: async (g: string) => commits.get(g) ?? [] } } as never,
    targetAdmin: { createTopic: async () => 'created' as const },
    writer: { write: async (batches, options = {}) => { written.push(...batches); until.push(options.until); return batches.map(() => [{ start: 0, baseOffset: 0 }]) } },
    // A partition of `orders` is replicated with its offsets shifted by -3; `other` is not replicated.
    translator: { translate: (topic, _p, c) => topic === 'orders' ? { offset: c - 3, exact: c <= 100, reason: c > 100 ? 'beyond' : undefined } as never : undefined },
    log: silentLogger()
  })
  return { emitter, written, until }
}

describe('CheckpointEmitter', () => {
  it('selects groups as MM2\'s default group filter does', () => {
    const keep = createGroupFilter(flow)
    assert.deepEqual(['app', 'console-consumer-1', 'connect-x', '__g', 'billing'].filter(keep), ['app', 'billing'])
    assert.equal(createGroupFilter({ groups: [], groupsExclude: [] })('app'), false)
  })

  it('checkpoints consumer groups only, as MM2\'s listConsumerGroups: a group of another protocol is left out', async () => {
    const commits = new Map([['app', [{ topic: 'orders', partition: 0, offset: 50, metadata: '' }]], ['workers', [{ topic: 'orders', partition: 0, offset: 9, metadata: '' }]], ['committed-only', []]])
    const { emitter } = emitterWith(commits, new Map([['workers', 'connect'], ['committed-only', '']]))
    assert.deepEqual(await emitter.groups(), ['app', 'committed-only'])
  })

  it('writes with its run\'s signal: a membership lost while the write is under way sends nothing more (RecordWriter)', async () => {
    const { emitter, until } = emitterWith(new Map([['app', [{ topic: 'orders', partition: 0, offset: 50, metadata: '' }]]]))
    const run = new AbortController()
    assert.equal(await emitter.emit(run.signal), 1)
    assert.deepEqual(until, [run.signal])
  })

  it('writes nothing once its run is aborted (the job\'s membership ended), throwing the reason; the checkpoints stay due for the next run', async () => {
    const { emitter, written } = emitterWith(new Map([['app', [{ topic: 'orders', partition: 0, offset: 50, metadata: '' }]]]))
    const ended = new AbortController()
    ended.abort(new Error('membership lost'))
    await assert.rejects(emitter.emit(ended.signal), /membership lost/)
    assert.deepEqual(written, [])
    assert.equal(await emitter.emit(), 1)
  })

  it('writes a checkpoint per replicated partition with the remote topic name, then only the ones that changed', async () => {
    // Given a group with commits on a replicated and on an unreplicated topic
    const commits = new Map([['app', [
      { topic: 'orders', partition: 0, offset: 50, metadata: 'm' },
      { topic: 'orders', partition: 1, offset: 10, metadata: '' },
      { topic: 'other', partition: 0, offset: 7, metadata: '' }
    ]], ['console-consumer-9', [{ topic: 'orders', partition: 0, offset: 1, metadata: '' }]]])
    const { emitter, written } = emitterWith(commits)
    // When checkpoints are emitted
    assert.equal(await emitter.emit(), 2)
    const first = written[0]!.records.map(r => decodeCheckpoint(r.key!, r.value!))
    assert.equal(written[0]!.topic, 'A.checkpoints.internal')
    assert.deepEqual(first, [
      { group: 'app', topic: 'A.orders', partition: 0, upstreamOffset: 50, downstreamOffset: 47, metadata: 'm' },
      { group: 'app', topic: 'A.orders', partition: 1, upstreamOffset: 10, downstreamOffset: 7, metadata: '' }
    ])
    // Then nothing is written again until a commit moves
    assert.equal(await emitter.emit(), 0)
    commits.get('app')![1] = { topic: 'orders', partition: 1, offset: 12, metadata: '' }
    assert.equal(await emitter.emit(), 1)
    assert.equal(decodeCheckpoint(written[1]!.records[0]!.key!, written[1]!.records[0]!.value!).downstreamOffset, 9)
  })

  it('notes when each group\'s checkpoints were last brought up to date, also when none changed, and forgets groups gone', async t => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_800_000_000_000 })
    // Given two groups, one with commits on a replicated topic, one without any
    const commits = new Map([['app', [{ topic: 'orders', partition: 0, offset: 50, metadata: '' }]], ['idle', []]])
    const { emitter, written } = emitterWith(commits)
    assert.deepEqual(emitter.currentSince(), [])
    // When a pass writes app's checkpoint, Then both groups are current as of that pass
    assert.equal(await emitter.emit(), 1)
    assert.deepEqual(emitter.currentSince(), [{ group: 'app', at: 1_800_000_000_000 }, { group: 'idle', at: 1_800_000_000_000 }])
    // When a pass 5 s later finds nothing changed, Then it writes nothing and still brings the group up to date;
    // a group gone is forgotten
    commits.delete('idle')
    t.mock.timers.tick(5000)
    assert.equal(await emitter.emit(), 0)
    assert.equal(written.length, 1)
    assert.deepEqual(emitter.currentSince(), [{ group: 'app', at: 1_800_000_005_000 }])
  })

  it('does not note a pass whose write failed', async () => {
    const commits = new Map([['app', [{ topic: 'orders', partition: 0, offset: 50, metadata: '' }]]])
    const failing = new CheckpointEmitter({
      flow,
      policy, sourceAdmin: { groups: { listGroups: async () => [{ groupId: 'app', state: 'Empty' as const, protocolType: 'consumer' }], listCommittedOffsets: async () => commits.get('app')! } } as never,
      targetAdmin: { createTopic: async () => 'created' as const },
      writer: { write: async () => { throw new Error('NOT_LEADER_OR_FOLLOWER') } },
      translator: { translate: () => ({ offset: 1, exact: true }) as never },
      log: silentLogger()
    })
    await assert.rejects(failing.emit(), /NOT_LEADER_OR_FOLLOWER/)
    assert.deepEqual(failing.currentSince(), [])
  })

  it('skips a group whose commits cannot be read, with a warning naming it, and writes the other groups\' checkpoints', async () => {
    // Given two groups, one of which the source refuses to describe
    const logs = memoryLogger()
    const written: PartitionBatch[] = []
    const emitter = new CheckpointEmitter({
      flow,
      policy,
      sourceAdmin: {
        groups: {
          listGroups: async () => ['app', 'other-team'].map(groupId => ({ groupId, state: 'Empty' as const, protocolType: 'consumer' })),
          listCommittedOffsets: async (g: string) => {
            if (g === 'other-team') throw new Error('GROUP_AUTHORIZATION_FAILED')
            return [{ topic: 'orders', partition: 0, offset: 50, metadata: '' }]
          }
        }
      } as never,
      targetAdmin: { createTopic: async () => 'created' as const },
      writer: { write: async batches => { written.push(...batches); return batches.map(() => [{ start: 0, baseOffset: 0 }]) } },
      translator: { translate: (_t, _p, c) => ({ offset: c - 3, exact: true }) },
      log: logs.log
    })
    // When checkpoints are emitted, then app's is written and other-team is named in a warning
    assert.equal(await emitter.emit(), 1)
    assert.deepEqual(written[0]!.records.map(r => decodeCheckpoint(r.key!, r.value!).group), ['app'])
    assert.deepEqual(logs.at(LogLevels.warn).map(l => l.msg), [
      'cannot read the committed offsets of group other-team on cluster A (GROUP_AUTHORIZATION_FAILED): its checkpoints are not brought up to date; the other groups\' are'
    ])
    assert.deepEqual(emitter.currentSince().map(c => c.group), ['app'])
  })

  it('writes no checkpoint for a commit before the first offset the history maps: it could skip records', async () => {
    const { emitter, written } = emitterWith(new Map([['app', [{ topic: 'orders', partition: 0, offset: 50, metadata: '' }]]]))
    const skipping = new CheckpointEmitter({
      flow, policy,
      sourceAdmin: { groups: { listGroups: async () => [{ groupId: 'app', state: 'Empty' as const, protocolType: 'consumer' }], listCommittedOffsets: async () => [{ topic: 'orders', partition: 0, offset: 5, metadata: '' }] } } as never,
      targetAdmin: { createTopic: async () => 'created' as const },
      writer: { write: async batches => { written.push(...batches); return batches.map(() => [{ start: 0, baseOffset: 0 }]) } },
      translator: { translate: () => ({ offset: 980, exact: false, reason: 'before the first replicated offset', maySkip: true }) },
      log: silentLogger()
    })
    assert.equal(await skipping.emit(), 0)
    assert.equal(await emitter.emit(), 1)
  })

  it('moves on from the checkpoints stored (by another instance, or MM2) as MM2 does: never back for the same or a later commit', async () => {
    // Given a checkpoint stored by another instance: group app, A.orders-0, upstream 50 -> downstream 47
    const stored: FetchedRecord[] = [{ offset: 0, timestamp: 0n, headers: [], key: encodeCheckpointKey({ group: 'app', topic: 'A.orders', partition: 0 }), value: encodeCheckpointValue({ upstreamOffset: 50, downstreamOffset: 47, metadata: '' }) }]
    const reader = {
      fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => positions.map(p => ({
        topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records: stored.slice(p.offset), nextOffset: stored.length, highWatermark: stored.length, lastStableOffset: stored.length, logStartOffset: 0, bytes: 0
      })),
      listOffsets: async (partitions: readonly { topic: string, partition: number }[], which: 'earliest' | 'latest') => new Map(partitions.map(tp => [
        partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : tp.topic === 'A.checkpoints.internal' ? stored.length : remoteEnd
      ]))
    }
    let remoteEnd = 1000
    let commit = 50
    let translated = 40
    const written: PartitionBatch[] = []
    const emitter = new CheckpointEmitter({
      flow, policy, reader,
      sourceAdmin: { groups: { listGroups: async () => [{ groupId: 'app', state: 'Empty' as const, protocolType: 'consumer' }], listCommittedOffsets: async () => [{ topic: 'orders', partition: 0, offset: commit, metadata: '' }] } } as never,
      targetAdmin: { createTopic: async () => 'created' as const },
      writer: { write: async batches => { written.push(...batches); return batches.map(() => [{ start: 0, baseOffset: 0 }]) } },
      translator: { translate: () => ({ offset: translated, exact: false, reason: 'beyond what this instance\'s history knows' }) },
      log: silentLogger()
    })
    const downstreams = (): number[] => written.flatMap(b => b.records.map(r => decodeCheckpoint(r.key!, r.value!).downstreamOffset))
    // When this instance translates the same commit lower, or a later commit lower, then nothing is written
    assert.equal(await emitter.emit(), 0)
    commit = 60
    translated = 45
    assert.equal(await emitter.emit(), 0)
    // When the translation passes the stored one, it is written; and when the group was reset back on the source, too
    translated = 52
    assert.equal(await emitter.emit(), 1)
    commit = 10
    translated = 7
    assert.equal(await emitter.emit(), 1)
    assert.deepEqual(downstreams(), [52, 7])
    // When the remote topic is created again and copied again (its end now 20, the stored checkpoint at 60 past it),
    // then a lower checkpoint replaces the one that points past the end
    commit = 60
    translated = 60
    assert.equal(await emitter.emit(), 1)
    remoteEnd = 20
    translated = 15
    assert.equal(await emitter.emit(), 1)
    assert.deepEqual(downstreams(), [52, 7, 60, 15])
  })

  it('checkpoints only commits on topics the flow\'s topic filter passes, as MM2 (a topic excluded since keeps its history)', async () => {
    const written: PartitionBatch[] = []
    const emitter = new CheckpointEmitter({
      flow, policy,
      sourceAdmin: { groups: { listGroups: async () => [{ groupId: 'app', state: 'Empty' as const, protocolType: 'consumer' }], listCommittedOffsets: async () => [{ topic: 'orders', partition: 0, offset: 5, metadata: '' }, { topic: 'excluded', partition: 0, offset: 9, metadata: '' }] } } as never,
      targetAdmin: { createTopic: async () => 'created' as const },
      writer: { write: async batches => { written.push(...batches); return batches.map(() => [{ start: 0, baseOffset: 0 }]) } },
      translator: { translate: (_t, _p, c) => ({ offset: c, exact: true }) },
      log: silentLogger()
    })
    assert.equal(await emitter.emit(), 1)
    assert.deepEqual(written[0]!.records.map(r => decodeCheckpoint(r.key!, r.value!).topic), ['A.orders'])
  })

  it('replaces a stored checkpoint its own source offset now maps below, exactly (the remote topic copied again past it), and writes on when the stored ones cannot be read', async () => {
    // Given a checkpoint stored before the remote topic was created again: upstream 50 -> downstream 47
    const stored: FetchedRecord[] = [{ offset: 0, timestamp: 0n, headers: [], key: encodeCheckpointKey({ group: 'app', topic: 'A.orders', partition: 0 }), value: encodeCheckpointValue({ upstreamOffset: 50, downstreamOffset: 47, metadata: '' }) }]
    let refused = false
    const reader = {
      fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => positions.map(p => ({
        topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records: stored.slice(p.offset), nextOffset: stored.length, highWatermark: stored.length, lastStableOffset: stored.length, logStartOffset: 0, bytes: 0
      })),
      listOffsets: async (partitions: readonly { topic: string, partition: number }[], which: 'earliest' | 'latest') => {
        if (refused) throw new Error('TOPIC_AUTHORIZATION_FAILED')
        return new Map(partitions.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : tp.topic === 'A.checkpoints.internal' ? stored.length : 1000]))
      }
    }
    const written: PartitionBatch[] = []
    const logs = memoryLogger()
    const emitter = new CheckpointEmitter({
      flow, policy, reader,
      sourceAdmin: { groups: { listGroups: async () => [{ groupId: 'app', state: 'Empty' as const, protocolType: 'consumer' }], listCommittedOffsets: async () => [{ topic: 'orders', partition: 0, offset: 60, metadata: '' }] } } as never,
      targetAdmin: { createTopic: async () => 'created' as const },
      writer: { write: async batches => { written.push(...batches); return batches.map(() => [{ start: 0, baseOffset: 0 }]) } },
      // The new copy: source offset c at target c - 40, exactly (the new topic's end, 1000, is past the stored 47)
      translator: { translate: (_t, _p, c) => ({ offset: c - 40, exact: true }) },
      log: logs.log
    })
    // When the group has committed 60, then its checkpoint 60 -> 20 replaces 50 -> 47: 50 maps to 10 now
    assert.equal(await emitter.emit(), 1)
    assert.deepEqual(written.flatMap(b => b.records.map(r => decodeCheckpoint(r.key!, r.value!).downstreamOffset)), [20])
    // When the checkpoints topic can no longer be read, then the pass goes on, with one warning naming the grant
    refused = true
    assert.equal(await emitter.emit(), 0)
    assert.equal(await emitter.emit(), 0)
    assert.equal(logs.at(LogLevels.warn).filter(l => String(l.msg).startsWith('cannot read A.checkpoints.internal on cluster')).length, 1)
  })
})
