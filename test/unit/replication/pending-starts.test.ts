import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { PartitionFailures } from '../../../src/replication/partition-failures.ts'
import type { PartitionRef, PartitionState, Resolved } from '../../../src/replication/partition-set.ts'
import { PendingStarts } from '../../../src/replication/pending-starts.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

const ref = (partition: number): PartitionRef => ({ topic: 't', partition, remoteTopic: 'A.t' })
const key = (partition: number): string => partitionKey('t', partition)
const state = (partition: number, position: number): PartitionState => ({
  key: key(partition), topic: 't', partition, remoteTopic: 'A.t', position, highWatermark: -1, copiedRecords: 0, copiedBytes: 0,
  lostToRetention: 0, head: null, retryAt: 0, releasing: false, lost: false, fetchAt: null
})
const leaderless = (...partitions: number[]): Resolved => ({ states: [], unresolved: partitions.map(p => ({ ref: ref(p), error: 'LEADER_NOT_AVAILABLE' })) })

interface Asked { readonly refs: readonly PartitionRef[], readonly fromLogStart: ReadonlySet<string>, readonly answer: (r: Resolved) => void, readonly fail: (e: Error) => void }

/** PendingStarts with a source whose answers the test gives by hand, and a queue of adds applied by hand. */
function fixture () {
  const logs = memoryLogger()
  const failing = new PartitionFailures('A->B', { source: { alias: 'A' }, target: { alias: 'B' } }, logs.log, new CountingMetrics(), { baseMs: 0, maxMs: 0 })
  const taken = new Set<string>()
  const asked: Asked[] = []
  const queued: { states: PartitionState[], admit: (s: PartitionState) => boolean }[] = []
  const pending = new PendingStarts({
    failing,
    sourceAlias: 'A',
    taken: k => taken.has(k),
    resolve: async (refs, fromLogStart) => await new Promise<Resolved>((resolve, reject) => asked.push({ refs, fromLogStart, answer: resolve, fail: reject })),
    enqueue: (states, admit) => queued.push({ states, admit }),
    log: logs.log
  })
  /** The queued adds as the partition set applies them between two rounds: the partitions that joined. */
  const apply = (): number[] => queued.splice(0).flatMap(q => q.states.filter(s => q.admit(s)).map(s => s.partition))
  const settle = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }
  return { logs, failing, taken, asked, pending, apply, settle }
}

describe('PendingStarts', () => {
  it('holds a partition without a start, reports it failing on the source, and lets it join once its start is known', async () => {
    const f = fixture()
    // Given t-1 without a source leader when it was given to the data path
    const added = f.pending.admit({ states: [state(0, 5)], unresolved: leaderless(1).unresolved }, new Set(), () => true)
    assert.deepEqual(added.map(s => s.partition), [0])
    assert.deepEqual(f.pending.statuses().map(s => [s.partition, s.position, s.failure?.side, s.failure?.error]), [[1, -1, 'source', 'LEADER_NOT_AVAILABLE']])
    // When a retry finds its start
    f.pending.retry(Date.now() + 1)
    assert.deepEqual(f.asked.map(a => a.refs.map(r => r.partition)), [[1]])
    f.asked[0]!.answer({ states: [state(1, 0)], unresolved: [] })
    await f.settle()
    // Then it is still pending until the add is applied between two rounds, and joins then, with a recovery line
    assert.equal(f.pending.size, 1)
    assert.deepEqual(f.apply(), [1])
    assert.equal(f.pending.size, 0)
    assert.equal(f.failing.report(key(1)), null)
    assert.ok(f.logs.at(LogLevels.info).some(l => l.msg === 't-1 is replicated again (it failed with LEADER_NOT_AVAILABLE on cluster A)'))
  })

  it('never lets a partition join that was released, or is no longer owned, between the answer and the change', async () => {
    const f = fixture()
    const owned = new Set([key(1), key(2)])
    f.pending.admit(leaderless(1, 2), new Set(), k => owned.has(k))
    f.pending.retry(Date.now() + 1)
    f.asked[0]!.answer({ states: [state(1, 0), state(2, 0)], unresolved: [] })
    await f.settle()
    // When t-1 is released and t-2 stops being owned before the change is applied
    f.pending.drop([key(1)])
    owned.delete(key(2))
    // Then neither joins
    assert.deepEqual(f.apply(), [])
    assert.equal(f.failing.report(key(1)), null)
  })

  it('never holds a partition already copied or queued to be, and forgets one another add took meanwhile', async () => {
    const f = fixture()
    // Given t-1 copied already: a refresh that raced with its add finds it leaderless
    f.taken.add(key(1))
    f.pending.admit(leaderless(1, 2), new Set(), () => true)
    // Then it is not held: only t-2 waits
    assert.deepEqual(f.pending.statuses().map(s => s.partition), [2])
    // When t-2 is added by another path before its own retry answers (resolve leaves out what the set has)
    f.pending.retry(Date.now() + 1)
    f.taken.add(key(2))
    f.asked[0]!.answer({ states: [], unresolved: [] })
    await f.settle()
    // Then it waits no more, and is not failing
    assert.equal(f.pending.size, 0)
    assert.equal(f.failing.report(key(2)), null)
  })

  it('keeps a partition asked from the log start so, whatever later refreshes ask', async () => {
    const f = fixture()
    // Given t-1 held from the log start (its remote topic was created again), then held again by a plain refresh
    f.pending.admit(leaderless(1), new Set(['t']), () => true)
    f.pending.admit(leaderless(1), new Set(), () => true)
    // When it is tried again
    f.pending.retry(Date.now() + 1)
    // Then it is asked from the log start
    assert.deepEqual([...f.asked[0]!.fromLogStart], ['t'])
  })

  it('runs one try at a time, each asking once, and tries again after a failed request', async () => {
    const f = fixture()
    f.pending.admit(leaderless(1), new Set(), () => true)
    const later = Date.now() + 10_000
    f.pending.retry(later)
    f.pending.retry(later + 5_000)
    assert.equal(f.asked.length, 1, 'a second try while one is under way')
    f.asked[0]!.fail(new Error('broker gone'))
    await f.settle()
    // Still pending, failing with that cause, and due again after the floor
    assert.equal(f.pending.size, 1)
    assert.equal(f.failing.report(key(1))?.message, 'where to start copying it is not known yet: broker gone')
    f.pending.retry(later + 500)
    assert.equal(f.asked.length, 1, 'tried again before the floor')
    f.pending.retry(later + 1000)
    assert.equal(f.asked.length, 2)
    f.asked[1]!.answer(leaderless(1))
    await f.settle()
    assert.equal(f.failing.report(key(1))?.error, 'LEADER_NOT_AVAILABLE')
  })

  it('holds a partition released and given back while the add of its earlier hold waits, and that add never joins', async () => {
    const f = fixture()
    f.pending.admit(leaderless(1), new Set(), () => true)
    f.pending.retry(Date.now() + 1)
    f.asked[0]!.answer({ states: [state(1, 7)], unresolved: [] })
    await f.settle()
    // When it is revoked, then assigned again with its leader down again, before the add is applied
    f.pending.drop([key(1)])
    f.pending.admit(leaderless(1), new Set(), () => true)
    // Then the add asked for the earlier hold does not join; the partition waits, reported
    assert.deepEqual(f.apply(), [])
    assert.equal(f.pending.size, 1)
    assert.equal(f.failing.report(key(1))?.error, 'LEADER_NOT_AVAILABLE')
  })

  it('never lets an answer asked for an earlier hold join a later one: removed and added back, or now from the log start', async () => {
    for (const again of ['removed and added back', 'now from the log start'] as const) {
      const f = fixture()
      f.pending.admit(leaderless(1), new Set(), () => true)
      f.pending.retry(Date.now() + 1)
      // When, while its try (from the latest offset) is under way, it is to start from the log start instead
      if (again === 'removed and added back') f.pending.dropTopics(new Set(['t']))
      f.pending.admit(leaderless(1), new Set(['t']), () => true)
      f.asked[0]!.answer({ states: [state(1, 500)], unresolved: [] })
      await f.settle()
      // Then the latest offset the try found is not where it starts
      assert.deepEqual(f.apply(), [], again)
      assert.equal(f.pending.size, 1, again)
      f.pending.retry(Date.now() + 60_000)
      assert.deepEqual([...f.asked[1]!.fromLogStart], ['t'], again)
    }
  })

  it('drops a pending partition no longer owned, without asking the source for it', async () => {
    const f = fixture()
    const owned = new Set([key(1), key(2)])
    f.pending.admit(leaderless(1, 2), new Set(), k => owned.has(k))
    owned.delete(key(1))
    f.pending.retry(Date.now() + 1)
    assert.deepEqual(f.asked.map(a => a.refs.map(r => r.partition)), [[2]])
    assert.deepEqual(f.pending.statuses().map(s => s.partition), [2])
    assert.equal(f.failing.report(key(1)), null)
  })

  it('asks topic by topic when a request for several fails with a refusal: one refused topic holds up no other', async () => {
    const f = fixture()
    const u = { topic: 'u', partition: 0, remoteTopic: 'A.u' }
    f.pending.admit({ states: [], unresolved: [{ ref: ref(1), error: 'LEADER_NOT_AVAILABLE' }, { ref: u, error: 'LEADER_NOT_AVAILABLE' }] }, new Set(), () => true)
    f.pending.retry(Date.now() + 1)
    // When the request for both fails: topic u may no longer be described
    const refused = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'read metadata of topic u on cluster A: Kafka error TOPIC_AUTHORIZATION_FAILED', { details: { kafkaErrors: ['TOPIC_AUTHORIZATION_FAILED'] } })
    f.asked[0]!.fail(refused)
    await f.settle()
    // Then each topic is asked alone, at once: u is refused again (and its answer comes first), t answers
    assert.deepEqual(f.asked.slice(1).map(a => a.refs.map(r => r.topic)), [['t'], ['u']])
    f.asked[2]!.fail(refused)
    await f.settle()
    f.asked[1]!.answer({ states: [state(1, 3)], unresolved: [] })
    await f.settle()
    assert.deepEqual(f.apply(), [1])
    assert.deepEqual([f.failing.report(partitionKey('u', 0))?.error, f.failing.report(partitionKey('u', 0))?.kind], ['TOPIC_AUTHORIZATION_FAILED', 'authorization'])
  })

  it('asks the whole set once more, not topic by topic, when the source does not answer at all', async () => {
    const f = fixture()
    const u = { topic: 'u', partition: 0, remoteTopic: 'A.u' }
    f.pending.admit({ states: [], unresolved: [{ ref: ref(1), error: 'LEADER_NOT_AVAILABLE' }, { ref: u, error: 'LEADER_NOT_AVAILABLE' }] }, new Set(), () => true)
    f.pending.retry(Date.now() + 1)
    f.asked[0]!.fail(new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'connect to cluster A: ECONNREFUSED', { retriable: true }))
    await f.settle()
    assert.equal(f.asked.length, 1)
    assert.equal(f.failing.report(partitionKey('u', 0))?.error, 'NETWORK_EXCEPTION')
  })
})
