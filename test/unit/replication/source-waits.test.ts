import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FetchOutcomes, type FetchedBatches, type FetchOutcome, type RetryReason } from '../../../src/kafka/record-fetcher.ts'
import type { PartitionState } from '../../../src/replication/partition-set.ts'
import { SourceWaits, STALE_WAIT_MS } from '../../../src/replication/source-waits.ts'
import { partitionKey } from '../../../src/topic-partition.ts'

function stateOf (topic: string, partition: number): PartitionState {
  return {
    key: partitionKey(topic, partition), topic, partition, remoteTopic: `A.${topic}`, position: 0, highWatermark: -1, copiedRecords: 0,
    copiedBytes: 0, lostToRetention: 0, head: null, retryAt: 0, releasing: false, lost: false, fetchAt: null
  }
}

function answer (state: PartitionState, outcome: FetchOutcome, retryReason?: RetryReason): FetchedBatches {
  return {
    topic: state.topic, partition: state.partition, outcome, fromOffset: 0, batches: [], nextOffset: 0, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1,
    ...(retryReason === undefined ? {} : { retryReason })
  }
}

const DOWN: RetryReason = { error: 'NETWORK_EXCEPTION', detail: 'its leader, broker 2 (h:2), cannot be read from: connection refused' }
const NO_LEADER: RetryReason = { error: 'LEADER_NOT_AVAILABLE', detail: 'cluster A names no leader for it' }

describe('SourceWaits', () => {
  it('lists a partition answered RETRY round after round once it has waited the threshold, once, with the last reason and the first time', () => {
    const waits = new SourceWaits()
    const s = stateOf('t', 0)
    waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 1_000)
    assert.deepEqual(waits.due(500, 1_400), [])
    waits.note(answer(s, FetchOutcomes.RETRY, NO_LEADER), s, 1_450)
    assert.deepEqual(waits.due(500, 1_500), [{ state: s, since: 1_000, reason: NO_LEADER }])
    waits.note(answer(s, FetchOutcomes.RETRY, NO_LEADER), s, 1_600)
    assert.deepEqual(waits.due(500, 5_000), [])
  })

  it('ends a wait at any other answer (records or none, a refusal, out of range): the next RETRY waits afresh', () => {
    for (const outcome of [FetchOutcomes.OK, FetchOutcomes.FAILED, FetchOutcomes.OUT_OF_RANGE]) {
      const waits = new SourceWaits()
      const s = stateOf('t', 0)
      waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 0)
      waits.note(answer(s, outcome), s, 100)
      assert.equal(waits.count, 0, outcome)
      waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 200)
      assert.deepEqual(waits.due(500, 600), [], outcome)
      assert.deepEqual(waits.due(500, 700).map(w => w.since), [200], outcome)
    }
  })

  it('never counts a partition whose topic the source does not have any more: the topic refresh tells of a deletion', () => {
    const waits = new SourceWaits()
    const s = stateOf('t', 0)
    waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 0)
    waits.note(answer(s, FetchOutcomes.RETRY, { error: 'UNKNOWN_TOPIC_OR_PARTITION', detail: 'its topic is not in the metadata of cluster A' }), s, 100)
    assert.equal(waits.count, 0)
    assert.deepEqual(waits.due(10, 1_000), [])
  })

  it('names an unknown reason as no leader when the fetcher gave none', () => {
    const waits = new SourceWaits()
    const s = stateOf('t', 0)
    waits.note(answer(s, FetchOutcomes.RETRY), s, 0)
    assert.equal(waits.due(10, 10)[0]?.reason.error, 'LEADER_NOT_AVAILABLE')
  })

  it('makes a partition\'s high watermark stale once its wait lasted two rounds and STALE_WAIT_MS, until an answer ends it', () => {
    const waits = new SourceWaits()
    const s = stateOf('t', 0)
    assert.equal(STALE_WAIT_MS, 3_000)
    waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 1_000)
    // One RETRY round, however long ago (a broker late once: its answer is used at the next round), is no wait yet
    assert.equal(waits.staleSince(s, 60_000), undefined)
    waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 1_200)
    assert.equal(waits.staleSince(s, 3_999), undefined)
    assert.equal(waits.staleSince(s, 4_000), 1_000)
    waits.note(answer(s, FetchOutcomes.OK), s, 4_100)
    assert.equal(waits.staleSince(s, 9_000), undefined)
    // A newer state of the same partition does not inherit the old one's wait
    const other = stateOf('t', 0)
    waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 10_000)
    waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 10_100)
    assert.equal(waits.staleSince(other, 20_000), undefined)
  })

  it('drops a partition that left the flow (forgotten, lost, released), and keeps a newer state of the same partition', () => {
    const waits = new SourceWaits()
    const [gone, lost, released] = [stateOf('t', 0), stateOf('t', 1), stateOf('t', 2)]
    for (const s of [gone, lost, released]) waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 0)
    waits.forget(gone)
    lost.lost = true
    released.releasing = true
    assert.deepEqual(waits.due(10, 100), [])
    assert.equal(waits.count, 0)
    // A partition added again (a new state object) is not forgotten by its old state
    const again = stateOf('t', 0)
    waits.note(answer(again, FetchOutcomes.RETRY, DOWN), again, 200)
    waits.forget(gone)
    assert.deepEqual(waits.due(10, 300).map(w => w.state), [again])
  })

  describe('a partition an open source transaction holds (read_committed)', () => {
    /** An OK answer with no records, at position `s.position`, with these offsets (left out of a session's answer: -1). */
    const offsets = (s: PartitionState, lastStableOffset: number, highWatermark: number, records = false): FetchedBatches => ({
      ...answer(s, FetchOutcomes.OK), fromOffset: s.position, nextOffset: s.position, lastStableOffset, highWatermark,
      batches: records ? [{ baseOffset: s.position } as never] : []
    })
    const held = (position: number): PartitionState => {
      const s = stateOf('t', 0)
      s.position = position
      return s
    }

    it('holds from the first empty answer whose last stable offset is the position and whose high watermark is above it, through answers a fetch session leaves out, and is listed once past its own threshold', () => {
      const waits = new SourceWaits()
      const s = held(40)
      waits.note(offsets(s, 40, 45), s, 1_000)
      assert.equal(waits.holdOf(s)?.at, 40)
      waits.note(offsets(s, -1, -1), s, 2_000)
      waits.note(offsets(s, 40, 48), s, 3_000)
      assert.deepEqual(waits.due(500, 3_000), [], 'not a wait')
      assert.deepEqual(waits.holdsDue(10_000, 10_999), [])
      assert.deepEqual(waits.holdsDue(10_000, 11_000), [{ state: s, since: 1_000, at: 40, highWatermark: 48 }])
      assert.deepEqual(waits.holdsDue(10_000, 20_000), [], 'listed once')
    })

    it('holds from the answer with records that brings the position up to the last stable offset: a fetch session leaves the partition out from then on', () => {
      const waits = new SourceWaits()
      const s = held(35)
      // (records 35-39 written: the position moved to 40 before the answer is noted)
      s.position = 40
      waits.note({ ...offsets(s, 40, 45, true), fromOffset: 35 }, s, 1_000)
      assert.equal(waits.holdOf(s)?.at, 40)
      for (let t = 2_000; t <= 11_000; t += 1_000) waits.note(offsets(s, -1, -1), s, t)
      assert.deepEqual(waits.holdsDue(10_000, 11_000).map(h => [h.since, h.at]), [[1_000, 40]])
    })

    it('an answer with records that stops short of the last stable offset (the position below it) is no hold', () => {
      const waits = new SourceWaits()
      const s = held(38)
      waits.note({ ...offsets(s, 40, 45, true), fromOffset: 35 }, s, 0)
      assert.equal(waits.holdOf(s)?.at, undefined)
    })

    it('ends at another last stable offset (with records or without), when nothing lies past the position, or out of range', () => {
      const ends: ((s: PartitionState) => FetchedBatches)[] = [
        s => offsets(s, 45, 45, true), s => offsets(s, 45, 45), s => offsets(s, 40, 40), s => answer(s, FetchOutcomes.OUT_OF_RANGE),
        s => answer(s, FetchOutcomes.RETRY, { error: 'UNKNOWN_TOPIC_OR_PARTITION', detail: 'gone' })
      ]
      for (const end of ends) {
        const waits = new SourceWaits()
        const s = held(40)
        waits.note(offsets(s, 40, 45), s, 0)
        waits.note(end(s), s, 100)
        assert.equal(waits.holdOf(s)?.at, undefined)
        assert.equal(waits.count, 0)
      }
    })

    it('holds at the last stable offset below the position too (progress stored by a read_uncommitted reader past an open transaction)', () => {
      const waits = new SourceWaits()
      const s = held(44)
      waits.note(offsets(s, 40, 45), s, 0)
      assert.equal(waits.holdOf(s)?.at, 40)
    })

    it('is never a partition read up to its last stable offset with more committed records to come, nor one read read_uncommitted', () => {
      const waits = new SourceWaits()
      const s = held(40)
      waits.note(offsets(s, 44, 45), s, 0)
      assert.equal(waits.count, 0, 'records up to 44 are readable: a full answer left them for the next round')
      const uncommitted = new SourceWaits('read_uncommitted')
      uncommitted.note(offsets(s, 40, 45), s, 0)
      assert.equal(uncommitted.holdOf(s)?.at, undefined, 'read_uncommitted reads past the last stable offset: an empty answer is a full response, not a hold')
    })

    it('keeps its clock through RETRY answers (throttled, late, leadership moving), tracked as waits beside it, but is listed only once an OK answer confirms it again', () => {
      const waits = new SourceWaits()
      const s = held(40)
      waits.note(offsets(s, 40, 45), s, 0)
      for (let t = 1_000; t < 20_000; t += 1_000) waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, t)
      assert.deepEqual(waits.holdsDue(10_000, 20_000), [], 'due, but nothing says the transaction is still open')
      assert.deepEqual(waits.due(10_000, 20_000).map(w => w.since), [1_000], 'the wait is listed on its own')
      waits.note(offsets(s, 40, 46), s, 20_000)
      assert.deepEqual(waits.holdsDue(10_000, 20_000).map(h => [h.since, h.at]), [[0, 40]], 'confirmed: listed, with its clock')
      waits.note(answer(s, FetchOutcomes.RETRY, DOWN), s, 21_000)
      waits.note(offsets(s, 40, 46), s, 22_000)
      assert.deepEqual(waits.holdsDue(10_000, 30_000), [], 'no second listing after a RETRY')
      assert.equal(waits.holdOf(s)?.at, 40)
    })

    it('keeps its clock through a refusal, and is not listed while the partition backs off after it', () => {
      const waits = new SourceWaits()
      const s = held(40)
      waits.note(offsets(s, 40, 45), s, 0)
      s.retryAt = 30_000
      waits.note(answer(s, FetchOutcomes.FAILED), s, 5_000)
      assert.equal(waits.holdOf(s)?.at, 40)
      assert.deepEqual(waits.holdsDue(10_000, 20_000), [], 'backing off: nothing confirms the transaction')
      waits.note(offsets(s, 40, 45), s, 30_000)
      assert.deepEqual(waits.holdsDue(10_000, 30_000).map(h => h.since), [0])
    })

    it('is overdue once past the hold threshold and not listed yet, until it is listed', () => {
      const waits = new SourceWaits('read_committed', 10_000)
      const s = held(40)
      waits.note(offsets(s, 40, 45), s, 0)
      assert.equal(waits.overdue(s, 9_999), false)
      assert.equal(waits.overdue(s, 10_000), true)
      waits.holdsDue(10_000, 10_000)
      assert.equal(waits.overdue(s, 10_001), false, 'listed')
    })

    it('a hold at another offset is a new hold from then', () => {
      const waits = new SourceWaits()
      const s = held(40)
      waits.note(offsets(s, 40, 45), s, 0)
      s.position = 46
      waits.note(offsets(s, 46, 50), s, 5_000)
      assert.equal(waits.holdOf(s)?.at, 46)
      assert.deepEqual(waits.holdsDue(1_000, 5_500), [])
      assert.deepEqual(waits.holdsDue(1_000, 6_000).map(h => [h.since, h.at]), [[5_000, 46]])
    })
  })
})
