/**
 * Stable reads of committed offsets (stable-commits.ts, group-admin.ts stableCommittedOffsetsOf): a decision that
 * compares with a group's current commit asks with require_stable, so Kafka 4's coordinator answers from every
 * commit it wrote rather than from its partition's high watermark (which lags just after it took the partition
 * over: seen as a plan reading no commit and its check before the write reading 5). A group whose commits a
 * transaction holds open is told in use after a few quick answers, not after the library's nested retries.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Admin } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { clusterContext } from '../../../src/kafka/connection-hints.ts'
import { kafkaErrorHint, kafkaErrorInfo } from '../../../src/kafka/errors.ts'
import { GroupAdmin } from '../../../src/kafka/group-admin.ts'
import { readStable, RETRIES, RETRY_BACKOFF_MS, UNSTABLE_BACKOFF_MS, UNSTABLE_TRIES, type StableReads, type StableRequest } from '../../../src/kafka/stable-commits.ts'

type Asked = { groups: unknown, requireStable: unknown }

/** The library's answer to a stable read while a transaction holds commits open: a partition-level error. */
function unstableError (): Error {
  const partition = Object.assign(new Error('There are unstable offsets that need to be cleared.'), { apiId: 'UNSTABLE_OFFSET_COMMIT', canRetry: true })
  return Object.assign(new Error('Received response with error while executing API'), { code: 'PLT_KFK_RESPONSE', errors: [partition] })
}

/** A library Admin recording each OffsetFetch; a stable read touching a group of IN_TRANSACTION fails as Kafka's does. */
function recordingAdmin (asked: Asked[], inTransaction: readonly string[] = []): Admin {
  const fake = {
    listConsumerGroupOffsets: async (options: { groups: (string | { groupId: string })[], requireStable?: boolean }) => {
      asked.push({ groups: options.groups, requireStable: options.requireStable })
      const ids = options.groups.map(g => (typeof g === 'string' ? g : g.groupId))
      if (options.requireStable === true && ids.some(g => inTransaction.includes(g))) throw unstableError()
      return ids.map(groupId => ({ groupId, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, metadata: null }] }] }))
    }
  }
  return fake as unknown as Admin
}

const unusedConnections = { any: async () => { throw new Error('not used') }, broker: async () => { throw new Error('not used') } }

function groupAdmin (inTransaction: readonly string[] = []): { groups: GroupAdmin, plainAsked: Asked[], stableAsked: Asked[] } {
  const plainAsked: Asked[] = []
  const stableAsked: Asked[] = []
  const single = recordingAdmin(stableAsked, inTransaction)
  const groups = new GroupAdmin(recordingAdmin(plainAsked, inTransaction), unusedConnections, clusterContext('B', { 'bootstrap.servers': 'h:9092' }), 5000, 'User:kmirror', () => single)
  return { groups, plainAsked, stableAsked }
}

describe('stable reads of committed offsets (GroupAdmin)', () => {
  it('Given a stable read, then it goes once through the single-attempt Admin with require_stable, naming the partitions given; a plain read goes through the other, without', async () => {
    const { groups, plainAsked, stableAsked } = groupAdmin()
    const read = await groups.stableCommittedOffsetsOf(['g1', 'g2'], 'READ', { partitions: new Map([['g2', [{ topic: 't', partition: 0 }, { topic: 't', partition: 3 }, { topic: 'u', partition: 1 }]]]) })
    assert.deepEqual([...read].map(([g, r]) => [g, r.inTransaction, r.offsets.map(o => o.offset)]), [['g1', false, [5]], ['g2', false, [5]]])
    await groups.listCommittedOffsets('g1')
    assert.deepEqual(stableAsked, [{ groups: ['g1', { groupId: 'g2', topics: [{ name: 't', partitionIndexes: [0, 3] }, { name: 'u', partitionIndexes: [1] }] }], requireStable: true }])
    assert.deepEqual(plainAsked, [{ groups: ['g1'], requireStable: undefined }])
  })

  it('Given one group of three with a transaction holding its commits open, then each is asked alone, and that one is read plainly and told in use', async () => {
    const { groups, plainAsked, stableAsked } = groupAdmin(['busy'])
    const read = await groups.stableCommittedOffsetsOf(['a', 'busy', 'c'])
    assert.deepEqual([...read].map(([g, r]) => [g, r.inTransaction, r.offsets.map(o => o.offset)]), [['a', false, [5]], ['busy', true, [5]], ['c', false, [5]]])
    const busyAlone = Array.from({ length: UNSTABLE_TRIES }, () => [['busy'], true])
    assert.deepEqual(stableAsked.map(a => [a.groups, a.requireStable]), [...Array.from({ length: UNSTABLE_TRIES }, () => [['a', 'busy', 'c'], true]), [['a'], true], ...busyAlone, [['c'], true]])
    assert.deepEqual(plainAsked, [{ groups: ['busy'], requireStable: undefined }])
  })

  it('Given a transaction holding commits (UNSTABLE_OFFSET_COMMIT), then the hint says an application uses the group', () => {
    assert.equal(kafkaErrorInfo('UNSTABLE_OFFSET_COMMIT').retriable, true)
    assert.match(kafkaErrorHint('UNSTABLE_OFFSET_COMMIT') ?? '', /^a transaction holds commits of the group not yet committed or aborted: a transactional application uses the group now; stop it/)
  })
})

describe('readStable', () => {
  const one: StableRequest[] = [{ groupId: 'g' }]
  const commits = new Map([['g', [{ topic: 't', partition: 0, offset: 7, metadata: '' }]]])

  function reads (answers: (Error | 'ok')[]): StableReads & { slept: number[], fetched: number, plainReads: number } {
    const r = {
      slept: [] as number[],
      fetched: 0,
      plainReads: 0,
      fetchOnce: async () => {
        const answer = answers[Math.min(r.fetched++, answers.length - 1)]!
        if (answer !== 'ok') throw answer
        return commits
      },
      plain: async () => { r.plainReads++; return [{ topic: 't', partition: 0, offset: 6, metadata: '' }] },
      sleep: async (ms: number) => { r.slept.push(ms) }
    }
    return r
  }

  it('Given a transaction that ends after one answer, then the group is read stable and not in use', async () => {
    const r = reads([unstableError(), 'ok'])
    const read = await readStable(one, r, Date.now() + 10_000)
    assert.deepEqual(read.get('g'), { offsets: commits.get('g'), inTransaction: false })
    assert.deepEqual(r.slept, [UNSTABLE_BACKOFF_MS])
  })

  it('Given a transaction still open after UNSTABLE_TRIES answers, then a lone group is read plainly once and told in use (not asked alone again)', async () => {
    const r = reads([unstableError()])
    const read = await readStable(one, r, Date.now() + 10_000)
    assert.deepEqual(read.get('g'), { offsets: [{ topic: 't', partition: 0, offset: 6, metadata: '' }], inTransaction: true })
    assert.equal(r.fetched, UNSTABLE_TRIES)
    assert.equal(r.plainReads, 1)
  })

  it('Given the deadline too near for another try after an open transaction, then the group is told in use rather than failing', async () => {
    const r = reads([unstableError()])
    const read = await readStable(one, r, Date.now() + UNSTABLE_BACKOFF_MS / 2)
    assert.equal(read.get('g')?.inTransaction, true)
    assert.equal(r.fetched, 1)
  })

  it('Given a coordinator moving (a retriable error), then it is asked again until it answers; a refusal is thrown at once', async () => {
    const moving = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'read committed offsets: NOT_COORDINATOR', { retriable: true })
    const r = reads([moving, moving, 'ok'])
    assert.equal((await readStable(one, r, Date.now() + 10_000)).get('g')?.inTransaction, false)
    assert.deepEqual(r.slept, [RETRY_BACKOFF_MS, RETRY_BACKOFF_MS])
    const refused = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'cluster B refused DESCRIBE on group g', { retriable: false })
    const denied = reads([refused, 'ok'])
    await assert.rejects(readStable(one, denied, Date.now() + 10_000), refused)
    assert.equal(denied.fetched, 1)
  })

  it('Given a coordinator that stays away, then it is asked RETRIES times more, as the library would, then thrown; a failure part of which the library would not retry is thrown at once', async () => {
    const moving = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'read committed offsets: NOT_COORDINATOR', { retriable: true })
    const away = reads([moving])
    await assert.rejects(readStable(one, away, Date.now() + 60_000), moving)
    assert.equal(away.fetched, RETRIES + 1)
    // (a closed client: the library's own error says it must not be retried, whatever kmirror's wording says)
    const closed = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'read committed offsets: Client is closed.', { retriable: true, cause: Object.assign(new Error('Client is closed.'), { canRetry: false, closed: true }) })
    const gone = reads([closed, 'ok'])
    await assert.rejects(readStable(one, gone, Date.now() + 60_000), closed)
    assert.equal(gone.fetched, 1)
  })

  it('Given a group told in use and no plain read asked for (a check before a write), then its offsets are none', async () => {
    const r = reads([unstableError()])
    const { plain: _unused, ...withoutPlain } = r
    const read = await readStable(one, withoutPlain, Date.now() + 10_000)
    assert.deepEqual(read.get('g'), { offsets: [], inTransaction: true })
    assert.equal(r.plainReads, 0)
  })

  it('Given each attempt, then it gets the time left until the deadline', async () => {
    const budgets: number[] = []
    const moving = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'read committed offsets: NOT_COORDINATOR', { retriable: true })
    let calls = 0
    await readStable(one, {
      fetchOnce: async (_requests, timeoutMs) => { budgets.push(timeoutMs); if (calls++ === 0) throw moving; return commits },
      sleep: async () => await new Promise(resolve => setTimeout(resolve, 30))
    }, Date.now() + 5_000)
    assert.equal(budgets.length, 2)
    assert.ok(budgets[0]! <= 5_000 && budgets[0]! > 4_900, String(budgets[0]))
    assert.ok(budgets[1]! < budgets[0]! - 25, `${budgets[1]} after ${budgets[0]}`)
  })

  it('Given a retriable error past the deadline, then it is thrown', async () => {
    const moving = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'read committed offsets: NOT_COORDINATOR', { retriable: true })
    await assert.rejects(readStable(one, reads([moving]), Date.now() + RETRY_BACKOFF_MS / 2), moving)
  })
})
