import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TranslatedCommit } from '../../../src/checkpoint/checkpoint-emitter.ts'
import { GroupOffsetSync, GroupSyncSkipReasons, planGroupSync } from '../../../src/checkpoint/group-offset-sync.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { CommittedOffset, GroupDescription, GroupState } from '../../../src/kafka/group-admin.ts'
import type { MetricKey } from '../../../src/metrics/definitions.ts'
import type { MetricLabels } from '../../../src/metrics/metrics.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

function commit (partition: number, upstreamOffset: number, offset: number, exact = true): TranslatedCommit {
  return { group: 'app', topic: 'orders', remoteTopic: 'A.orders', partition, upstreamOffset, metadata: '', translation: exact ? { offset, exact } : { offset, exact, reason: 'beyond what has been replicated' } }
}
const onTarget = (partition: number, offset: number): CommittedOffset => ({ topic: 'A.orders', partition, offset, metadata: '' })

describe('planGroupSync', () => {
  it('writes exact translations to an empty or absent target group', () => {
    for (const state of ['Empty', 'Dead'] as const) {
      assert.deepEqual(planGroupSync(state, [commit(0, 120, 100), commit(1, 5, 4)], []), {
        writes: [{ topic: 'A.orders', partition: 0, offset: 100 }, { topic: 'A.orders', partition: 1, offset: 4 }], skipped: []
      })
    }
  })

  it('writes nothing to a target group with active members, whatever the offsets', () => {
    for (const state of ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Assigning', 'Reconciling', 'Unknown'] satisfies GroupState[]) {
      assert.deepEqual(planGroupSync(state, [commit(0, 120, 100)], [onTarget(0, 1)]), { writes: [], skipped: [], groupSkipped: GroupSyncSkipReasons.ACTIVE })
    }
  })

  it('only moves forward: a target commit ahead is never rewound, an equal one needs nothing', () => {
    const plan = planGroupSync('Empty', [commit(0, 120, 100), commit(1, 50, 40), commit(2, 60, 60)], [onTarget(0, 90), onTarget(1, 45), onTarget(2, 60)])
    assert.deepEqual(plan.writes, [{ topic: 'A.orders', partition: 0, offset: 100 }])
    assert.deepEqual(plan.skipped, [{ topic: 'A.orders', partition: 1, reason: 'not-forward', detail: 'target committed 45, translated 40' }])
  })

  it('skips translations that are not exact, even when they would move forward', () => {
    const plan = planGroupSync('Empty', [commit(0, 500, 300, false), commit(1, 10, 10)], [])
    assert.deepEqual(plan.writes, [{ topic: 'A.orders', partition: 1, offset: 10 }])
    assert.deepEqual(plan.skipped, [{ topic: 'A.orders', partition: 0, reason: 'inexact', detail: 'beyond what has been replicated' }])
  })
})

const flow = { name: 'A->B', source: { alias: 'A' }, topics: ['.*'], topicsExclude: ['excluded'], groups: ['.*'], groupsExclude: ['console-consumer-.*'] } as unknown as FlowConfig
const policy = createReplicationPolicy({ className: 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy', separator: '.', internalTopicSeparatorEnabled: true, sourceClusterAlias: 'A' })

function syncWith (source: Map<string, CommittedOffset[]>, target: Map<string, CommittedOffset[]>, states: Map<string, GroupState>, options: { refuseWrite?: (g: string) => boolean, joinOnWrite?: boolean, onDescribe?: (g: string) => void, inTransaction?: readonly string[] } = {}) {
  const logger = memoryLogger()
  const counted: [MetricKey, MetricLabels, number][] = []
  const writes: [string, unknown][] = []
  const describes: string[] = []
  const asked: [string, unknown, boolean | undefined][] = []
  const sync = new GroupOffsetSync({
    flow,
    policy,
    sourceAdmin: { groups: { listGroups: async () => [...source.keys()].map(groupId => ({ groupId, state: 'Stable' as const, protocolType: 'consumer' })), listCommittedOffsets: async (g: string) => source.get(g) ?? [] } } as never,
    targetAdmin: {
      groups: {
        stableCommittedOffsetsOf: async (ids: readonly string[], _grant: string, read?: { partitions?: ReadonlyMap<string, unknown>, busyOffsets?: boolean }) => {
          for (const g of ids) asked.push([g, read?.partitions?.get(g), read?.busyOffsets])
          return new Map(ids.map(g => [g, { offsets: target.get(g) ?? [], inTransaction: options.inTransaction?.includes(g) === true }]))
        },
        describeGroups: async (ids: readonly string[]) => {
          describes.push(...ids)
          for (const g of ids) options.onDescribe?.(g)
          return new Map(ids.filter(g => states.has(g)).map(g => [g, { groupId: g, state: states.get(g)!, members: 0, protocolType: 'consumer' } satisfies GroupDescription]))
        },
        alterCommittedOffsets: async (g: string, offsets: unknown) => {
          if (options.refuseWrite?.(g) === true) {
            if (options.joinOnWrite === true) states.set(g, 'Stable')
            throw new Error('refused')
          }
          writes.push([g, offsets])
        }
      }
    } as never,
    // `orders` is replicated 1:1 up to source offset 100 and not exactly beyond; `other` is not replicated.
    translator: { translate: (topic, _p, c) => topic === 'orders' ? (c <= 100 ? { offset: c, exact: true } : { offset: 100, exact: false, reason: 'beyond' }) : undefined },
    log: logger.log,
    metrics: { inc: (m, labels, v = 1) => { counted.push([m, labels, v]) }, set: () => undefined, observe: () => undefined, remove: () => undefined }
  })
  return { sync, logger, counted, writes, describes, asked }
}

describe('GroupOffsetSync', () => {
  it('given groups on the source, when a pass runs, then only inactive target groups get their exact offsets', async () => {
    const source = new Map([
      ['absent', [{ topic: 'orders', partition: 0, offset: 40, metadata: '' }, { topic: 'other', partition: 0, offset: 3, metadata: '' }]],
      ['busy', [{ topic: 'orders', partition: 0, offset: 50, metadata: '' }]],
      ['ahead', [{ topic: 'orders', partition: 0, offset: 30, metadata: '' }, { topic: 'orders', partition: 1, offset: 200, metadata: '' }]],
      ['console-consumer-1', [{ topic: 'orders', partition: 0, offset: 10, metadata: '' }]],
      ['unrelated', [{ topic: 'other', partition: 0, offset: 9, metadata: '' }]]
    ])
    const target = new Map([['ahead', [onTarget(0, 35)]], ['busy', [onTarget(0, 1)]]])
    const { sync, logger, counted, writes, describes } = syncWith(source, target, new Map([['busy', 'Stable'], ['ahead', 'Empty']]))

    const results = await sync.sync()

    assert.deepEqual(writes, [['absent', [{ topic: 'A.orders', partition: 0, offset: 40 }]]])
    assert.deepEqual(results.map(r => [r.group, r.groupSkipped ?? null, r.skipped.map(s => s.reason)]), [
      ['absent', null, []], ['ahead', null, ['not-forward', 'inexact']], ['busy', 'active', []]
    ])
    // The group filter and groups without replicated partitions cost no describe on the target
    assert.deepEqual(describes, ['absent', 'ahead', 'busy'])
    assert.deepEqual(counted, [
      ['groupOffsetsSynced', { flow: 'A->B' }, 1],
      ['groupOffsetSyncSkippedNotForward', { flow: 'A->B' }, 1],
      ['groupOffsetSyncSkippedInexact', { flow: 'A->B' }, 1],
      ['groupOffsetSyncSkippedActive', { flow: 'A->B' }, 1]
    ])
    const why = logger.at(LogLevels.debug).filter(l => l.reason !== undefined).map(l => [l['group'], l['reason']])
    assert.deepEqual(why, [['ahead', 'not-forward'], ['ahead', 'inexact'], ['busy', 'active']])
  })

  it('given a consumer joined between the check and the write, when the broker refuses the commit, then the group counts as active', async () => {
    const { sync, counted } = syncWith(new Map([['late', [{ topic: 'orders', partition: 0, offset: 5, metadata: '' }]]]), new Map(), new Map([['late', 'Empty']]), { refuseWrite: () => true, joinOnWrite: true })
    const [result] = await sync.sync()
    assert.equal(result?.groupSkipped, 'active')
    assert.deepEqual(result?.written, [])
    assert.deepEqual(counted, [['groupOffsetSyncSkippedActive', { flow: 'A->B' }, 1]])
  })

  it('given an application committing for the target group in a transaction (no member), then the group is skipped as in use, counted as active, and nothing is written', async () => {
    // (the target's stable read of its commits answered UNSTABLE_OFFSET_COMMIT: stable-commits.ts)
    const { sync, writes, counted, logger, asked } = syncWith(new Map([['txn', [{ topic: 'orders', partition: 0, offset: 5, metadata: '' }]]]), new Map(), new Map([['txn', 'Empty']]), { inTransaction: ['txn'] })
    const [result] = await sync.sync()
    assert.equal(result?.groupSkipped, 'in-transaction')
    // (the partitions it would write asked by name: Kafka sees an open transaction only on those asked, or committed)
    // and no plain read of its last commits for it (nothing is written whatever they are)
    assert.deepEqual(asked, [['txn', [{ topic: 'A.orders', partition: 0 }], false]])
    assert.deepEqual(writes, [])
    assert.deepEqual(counted, [['groupOffsetSyncSkippedActive', { flow: 'A->B' }, 1]])
    assert.deepEqual(logger.at(LogLevels.debug).filter(l => l['group'] === 'txn').map(l => l.msg),
      ['group offsets not synced: a transaction holds commits of the target group open (an application commits offsets for it there)'])
  })

  it('given a write failing for another reason, when a pass runs, then the other groups are still synced and the pass fails', async () => {
    const source = new Map([['a', [{ topic: 'orders', partition: 0, offset: 5, metadata: '' }]], ['b', [{ topic: 'orders', partition: 0, offset: 6, metadata: '' }]]])
    const { sync, writes, logger } = syncWith(source, new Map(), new Map(), { refuseWrite: g => g === 'a' })
    await assert.rejects(sync.sync(), /refused/)
    assert.deepEqual(writes, [['b', [{ topic: 'A.orders', partition: 0, offset: 6 }]]])
    assert.deepEqual(logger.at(LogLevels.warn).map(l => [l['group'], l.msg]), [['a', 'group offsets not synced']])
  })

  it('given two groups refused, when a pass runs, then each refusal is logged once and the pass fails naming the groups without repeating them', async () => {
    const source = new Map([['a', [{ topic: 'orders', partition: 0, offset: 5, metadata: '' }]], ['b', [{ topic: 'orders', partition: 0, offset: 6, metadata: '' }]]])
    const { sync, logger } = syncWith(source, new Map(), new Map(), { refuseWrite: () => true })
    const err = await sync.sync().then(() => undefined, (e: unknown) => e)
    assert.ok(err instanceof Error)
    assert.equal(err.message, 'offsets of 2 group(s) not synced, each refused or failed as its warning "group offsets not synced" says: a, b')
    assert.equal(err.cause, undefined)
    assert.deepEqual(logger.at(LogLevels.warn).map(l => [l['group'], (l['err'] as { message: string }).message]), [['a', 'refused'], ['b', 'refused']])
  })

  it('given the run aborted during a pass (the job\'s membership ended), then no commit is written after it, no other group is tried, and the pass ends with the reason', async () => {
    const source = new Map([['a', [{ topic: 'orders', partition: 0, offset: 5, metadata: '' }]], ['b', [{ topic: 'orders', partition: 0, offset: 6, metadata: '' }]], ['c', [{ topic: 'orders', partition: 0, offset: 7, metadata: '' }]]])
    const ended = new AbortController()
    // The membership ends while b's target state is read, right before its write
    const { sync, writes, logger, describes } = syncWith(source, new Map(), new Map(), { onDescribe: g => { if (g === 'b') ended.abort(new Error('membership lost')) } })
    await assert.rejects(sync.sync(ended.signal), /membership lost/)
    assert.deepEqual(writes, [['a', [{ topic: 'A.orders', partition: 0, offset: 5 }]]])
    assert.deepEqual(describes, ['a', 'b'])
    assert.deepEqual(logger.at(LogLevels.warn), [])
  })
})
