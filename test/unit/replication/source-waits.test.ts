import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FetchOutcomes, type FetchedBatches, type FetchOutcome, type RetryReason } from '../../../src/kafka/record-fetcher.ts'
import type { PartitionState } from '../../../src/replication/partition-set.ts'
import { SourceWaits } from '../../../src/replication/source-waits.ts'
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
})
