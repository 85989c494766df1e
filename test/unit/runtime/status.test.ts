import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { renderStatus } from '../../../src/cli/status-command.ts'
import { FetchOutcomes, type FetchedPartition, type FetchOutcome, type PartitionPosition } from '../../../src/kafka/record-fetcher.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { findOldestPending, lagInRecords, lagInSeconds, lastTargetOffset, partitionLagSeconds, readFlowStatus, type StatusReaders, type TargetView } from '../../../src/runtime/status.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { flowOf, parse, twoClusters } from '../config/fixtures.ts'

describe('status arithmetic', () => {
  it('counts the records from the next offset to read up to the log end, never below 0', () => {
    assert.equal(lagInRecords(99, 100), 0)
    assert.equal(lagInRecords(49, 100), 50)
    assert.equal(lagInRecords(120, 100), 0)
  })

  it('measures lag in seconds from the oldest record not yet copied; 0 when it is in the future', () => {
    assert.equal(lagInSeconds(7_500, 10_000), 2.5)
    assert.equal(lagInSeconds(12_000, 10_000), 0)
  })

  it('gives a partition with records behind and no record read an unknown lag in seconds, never 0', () => {
    const none = { oldestMs: undefined, reachedEnd: false }
    assert.equal(partitionLagSeconds(40, none, 10_000), null)
    assert.equal(partitionLagSeconds(40, { oldestMs: 7_500, reachedEnd: false }, 10_000), 2.5)
    // Caught up: nothing behind, or only markers and aborted records up to the end.
    assert.equal(partitionLagSeconds(0, none, 10_000), 0)
    assert.equal(partitionLagSeconds(3, { oldestMs: undefined, reachedEnd: true }, 10_000), 0)
    assert.equal(partitionLagSeconds(null, none, 10_000), null)
  })

  it('takes the target offset of the last copied record from the exact translation of the next one', () => {
    // Source 0..4 → target 0..4, a marker at 5, last replicated 5: the next source offset 6 translates to 5.
    assert.deepEqual(lastTargetOffset({ offset: 5, exact: true }), { offset: 4 })
    assert.deepEqual(lastTargetOffset({ offset: 5, exact: false, reason: 'beyond' }), { offset: null, reason: 'beyond' })
    assert.deepEqual(lastTargetOffset(undefined), { offset: null, reason: 'no offset history for this partition' })
  })
})

/** A fetcher answering each partition (by name) with the outcome its script gives, in turn. */
function scriptedFetcher (script: Record<string, (offset: number) => Partial<FetchedPartition> & { outcome: FetchOutcome }>) {
  const asked: string[] = []
  return {
    asked,
    fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => positions.map(p => {
      asked.push(`${p.topic}-${p.partition}@${p.offset}`)
      const answer = script[`${p.topic}-${p.partition}`]!(p.offset)
      return { topic: p.topic, partition: p.partition, records: [], nextOffset: p.offset, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, bytes: 0, ...answer }
    })
  }
}

describe('findOldestPending', () => {
  it('finds the first record past markers, marks a partition read to its end, and leaves out of range and unanswered ones unknown', async () => {
    const record = { offset: 12, timestamp: 7_500n, key: null, value: null, headers: [] }
    const fetcher = scriptedFetcher({
      // A marker at 10, then a record at 12.
      'a-0': offset => offset === 10 ? { outcome: FetchOutcomes.OK, nextOffset: 12 } : { outcome: FetchOutcomes.OK, records: [record], nextOffset: 13 },
      // Only an abort marker left up to the end (11).
      'b-0': () => ({ outcome: FetchOutcomes.OK, nextOffset: 11 }),
      // Retention deleted offsets 10..499 before they were copied.
      'c-0': () => ({ outcome: FetchOutcomes.OUT_OF_RANGE, logStartOffset: 500 }),
      // Its leader never answers.
      'd-0': () => ({ outcome: FetchOutcomes.RETRY })
    })
    const found = { oldest: new Map<string, number>(), reachedEnd: new Set<string>() }
    const positions = ['a', 'b', 'c', 'd'].map(topic => ({ topic, partition: 0, offset: 10 }))
    const ends = new Map([[partitionKey('a', 0), 20], [partitionKey('b', 0), 11], [partitionKey('c', 0), 900], [partitionKey('d', 0), 20]])
    await findOldestPending(fetcher, positions, ends, found)
    assert.deepEqual([...found.oldest], [[partitionKey('a', 0), 7_500]])
    assert.deepEqual([...found.reachedEnd], [partitionKey('b', 0)])
    // An out-of-range read is not asked again (no read at that offset can answer); an unanswered one, every round.
    assert.equal(fetcher.asked.filter(a => a === 'c-0@10').length, 1)
    assert.equal(fetcher.asked.filter(a => a === 'd-0@10').length, 20)
  })
})

describe('renderStatus', () => {
  it('shows unknown values when the source is unreachable and the reason of an unknown target offset', () => {
    const text = renderStatus({
      flow: 'A->B', targetReachable: true, sourceReachable: false, error: 'down',
      partitions: [{ topic: 'orders', partition: 0, remoteTopic: 'A.orders', lastReplicatedOffset: 9, targetOffset: null, targetOffsetUnknown: 'no offset history for this partition', sourceLogEnd: null, lagRecords: null, lagSeconds: null }]
    })
    assert.match(text, /^flow A->B: source unreachable/)
    assert.match(text, /orders\s+0\s+9\s+A\.orders\s+unknown: no offset history for this partition\s+\?\s+\?\s+\?$/m)
  })

  it('names under the table each partition an open source transaction holds, with the offset it holds it at; none otherwise', () => {
    const row = { topic: 'orders', remoteTopic: 'A.orders', lastReplicatedOffset: 9, targetOffset: 9, sourceLogEnd: 25, lagRecords: 15, lagSeconds: 40 }
    const text = renderStatus({ flow: 'A->B', targetReachable: true, sourceReachable: true, partitions: [{ ...row, partition: 0, heldAt: 10 }, { ...row, partition: 1 }] })
    assert.match(text, /orders\s+0\s+9\s+A\.orders\s+9\s+25\s+15\s+40\n/)
    assert.deepEqual(text.split('\n').filter(l => l.includes('held at')), [
      '  orders-0: held at offset 10 by a transaction open on the source for 40 s (read read_committed; short holds are normal with transactional producers): ' +
      'nothing past it is copied until it commits or aborts; ' +
      'see "A source partition held by a transaction left open" in docs/operations.md'
    ])
  })

  it('shows the members of the flow\'s group and what each owns when it has one, and nothing of it otherwise', () => {
    const base = { flow: 'A->B', targetReachable: true, sourceReachable: true, partitions: [] }
    assert.equal(renderStatus(base), 'flow A->B\n  nothing replicated yet\n')
    const text = renderStatus({
      ...base,
      membership: {
        group: 'kmirror-A-B', generation: 7, leader: 'h1:10:1', self: '',
        members: [{ name: 'h1:10:1', partitions: 5, jobs: ['refresh-topics', 'emit-checkpoints'] }, { name: 'h2:20:2', partitions: 4, jobs: [] }]
      }
    })
    assert.match(text, /^flow A->B\n {2}group kmirror-A-B, generation 7, 2 member\(s\)\n/)
    assert.match(text, /^ {2}h1:10:1 \(leader\)\s+5\s+refresh-topics,emit-checkpoints$/m)
    assert.match(text, /^ {2}h2:20:2\s+4\s+-$/m)
  })
})

describe('readFlowStatus', () => {
  const flow = flowOf(parse(twoClusters()), 'A->B')
  const bug = new TypeError('Cannot read properties of undefined (reading \'offset\')')
  const unreachable = new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, 'cluster B: connect ECONNREFUSED 127.0.0.1:1')
  const target: TargetView = { positions: new Map([[partitionKey('t', 0), { topic: 't', partition: 0, last: 9 }]]), translate: () => undefined, transactions: undefined }
  const readers = (overrides: Partial<StatusReaders>): StatusReaders => ({ target: async () => target, source: async () => { throw unreachable }, ...overrides })

  it('reports a cluster that cannot be read in its result, target or source', async () => {
    const noTarget = await readFlowStatus(flow, Date.now, undefined, readers({ target: async () => { throw unreachable } }))
    assert.deepEqual(noTarget, { flow: 'A->B', targetReachable: false, sourceReachable: false, error: 'cannot read the stored progress on B: cluster B: connect ECONNREFUSED 127.0.0.1:1', partitions: [] })
    const noSource = await readFlowStatus(flow, Date.now, async () => { throw unreachable }, readers({}))
    assert.deepEqual([noSource.targetReachable, noSource.sourceReachable, noSource.error, noSource.membership],
      [true, false, 'cannot read the source A: cluster B: connect ECONNREFUSED 127.0.0.1:1; showing what the target knows', undefined])
  })

  it('throws a bug (a TypeError, KMIRROR_ERR_INTERNAL) wherever it happens, never showing it as a cluster that cannot be read', async () => {
    const internal = new KmirrorError(ErrorCodes.INTERNAL, 'an invariant broke')
    await assert.rejects(readFlowStatus(flow, Date.now, undefined, readers({ target: async () => { throw bug } })), bug)
    await assert.rejects(readFlowStatus(flow, Date.now, undefined, readers({ source: async () => { throw internal } })), internal)
    await assert.rejects(readFlowStatus(flow, Date.now, async () => { throw bug }, readers({})), bug)
  })
})
