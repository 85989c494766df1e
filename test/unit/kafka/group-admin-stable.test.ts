/**
 * Stable reads of committed offsets (group-admin.ts CommittedReadOptions): a decision that compares with a group's
 * current commit asks the coordinator with require_stable, so Kafka 4's coordinator answers from every commit it
 * wrote rather than from its partition's high watermark (which lags just after it took the partition over: seen as
 * a plan reading no commit and its check before the write reading 5). Other reads keep the plain answer.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Admin } from '@platformatic/kafka'
import { GroupAdmin } from '../../../src/kafka/group-admin.ts'
import { clusterContext } from '../../../src/kafka/connection-hints.ts'
import { kafkaErrorHint, kafkaErrorInfo } from '../../../src/kafka/errors.ts'

/** A library Admin recording each OffsetFetch; a stable read touching a group of IN_TRANSACTION fails as Kafka's does. */
function recordingAdmin (inTransaction: readonly string[] = []): { admin: Admin, asked: { groups: unknown, requireStable: unknown }[] } {
  const asked: { groups: unknown, requireStable: unknown }[] = []
  const fake = {
    listConsumerGroupOffsets: async (options: { groups: string[], requireStable?: boolean }) => {
      asked.push({ groups: options.groups, requireStable: options.requireStable })
      if (options.requireStable === true && options.groups.some(g => inTransaction.includes(g))) {
        throw Object.assign(new Error('Received response with error while executing API'), { apiId: 'UNSTABLE_OFFSET_COMMIT' })
      }
      return options.groups.map(groupId => ({ groupId, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, metadata: null }] }] }))
    }
  }
  return { admin: fake as unknown as Admin, asked }
}

const unusedConnections = { any: async () => { throw new Error('not used') }, broker: async () => { throw new Error('not used') } }

describe('stable reads of committed offsets', () => {
  it('Given a stable read, then OffsetFetch asks with require_stable; a plain read does not', async () => {
    const { admin, asked } = recordingAdmin()
    const groups = new GroupAdmin(admin, unusedConnections, clusterContext('B', { 'bootstrap.servers': 'h:9092' }), 5000, 'User:kmirror')
    assert.deepEqual(await groups.listCommittedOffsets('g', 'DESCRIBE', { stable: true }), [{ topic: 't', partition: 0, offset: 5, metadata: '' }])
    await groups.listCommittedOffsets('g')
    await groups.listCommittedOffsetsOf(['g1', 'g2'], 'READ', { stable: true })
    assert.deepEqual(asked, [
      { groups: ['g'], requireStable: true },
      { groups: ['g'], requireStable: false },
      { groups: ['g1', 'g2'], requireStable: true }
    ])
  })

  it('Given one group of three with a transaction holding its commits open, then each is asked alone, and that one is read plainly and told in use', async () => {
    const { admin, asked } = recordingAdmin(['busy'])
    const groups = new GroupAdmin(admin, unusedConnections, clusterContext('B', { 'bootstrap.servers': 'h:9092' }), 5000, 'User:kmirror')
    const read = await groups.stableCommittedOffsetsOf(['a', 'busy', 'c'])
    assert.deepEqual([...read].map(([g, r]) => [g, r.inTransaction, r.offsets.map(o => o.offset)]), [['a', false, [5]], ['busy', true, [5]], ['c', false, [5]]])
    assert.deepEqual(asked.map(a => [a.groups, a.requireStable]), [
      [['a', 'busy', 'c'], true], [['a'], true], [['busy'], true], [['busy'], false], [['c'], true]
    ])
  })

  it('Given a transaction holding commits of the group (UNSTABLE_OFFSET_COMMIT), then it is asked again and the hint says an application uses the group', () => {
    assert.equal(kafkaErrorInfo('UNSTABLE_OFFSET_COMMIT').retriable, true)
    assert.match(kafkaErrorHint('UNSTABLE_OFFSET_COMMIT') ?? '', /^a transaction holds commits of the group not yet committed or aborted: a transactional application uses the group now; stop it/)
  })
})
