import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { PartitionStatus } from '../../../src/replication/flow-replicator.ts'
import type { FailureReport } from '../../../src/replication/partition-failures.ts'
import { UNKNOWN_RATE } from '../../../src/runtime/flow-rates.ts'
import type { FlowStatus } from '../../../src/runtime/flow-status.ts'
import { FAILING_SHOWN, flowState, HELD_READ_DEGRADED_MS, oldestLagSeconds, summarizeTopics, summaryDocument, summaryOptions, topicPartitions, type FlowContext } from '../../../src/http/status-summary.ts'

const failure: FailureReport = {
  side: 'source', cluster: 'A', code: 'KMIRROR_ERR_NOT_AUTHORIZED', error: 'TOPIC_AUTHORIZATION_FAILED', kind: 'authorization', message: 'refused',
  remedy: 'grant READ on topic t to the principal kmirror uses on cluster A', since: '2026-01-01T00:00:00.000Z', attempts: 2, nextRetry: '2026-01-01T00:00:02.000Z'
}
const partition = (topic: string, p: number, overrides: Partial<PartitionStatus> = {}): PartitionStatus => ({
  topic, partition: p, remoteTopic: `A.${topic}`, position: 10, highWatermark: 10, copiedRecords: 10, copiedBytes: 100, lostToRetention: 0, failure: null, lagSeconds: null, ...overrides
})
const flow = (partitions: PartitionStatus[], overrides: Partial<FlowStatus> = {}): FlowStatus => ({ name: 'A->B', partitions, stepFailure: null, jobs: [], membership: null, ...overrides })
const context: FlowContext = { failed: false, ready: true, stalled: new Set(), rate: () => UNKNOWN_RATE }

describe('flowState', () => {
  it('says the worst that applies: failed, stalled, cannot copy, degraded, starting, copying, caught up', () => {
    const failing = flow([partition('t', 0, { failure })])
    const stepFailing = flow([partition('t', 0)], { stepFailure: { code: 'KMIRROR_ERR_TIMEOUT', message: 'B: no answer', since: '2026-01-01T00:00:00.000Z', attempts: 3 } })
    assert.equal(flowState(failing, { ...context, failed: true }), 'failed')
    assert.equal(flowState(failing, { ...context, stalled: new Set(['A->B']) }), 'stalled')
    assert.equal(flowState(stepFailing, context), 'cannot copy')
    assert.equal(flowState(failing, context), 'degraded')
    // (an assignment held 30 s by an open transaction: its partitions are not copied until it ends; a shorter hold is not)
    const heldFor = (ms: number): FlowStatus['heldReads'] => [{ topic: 'mm2-offsets.A.internal', cluster: 'B', partitions: [{ partition: 0, offset: 4, end: 9 }], since: new Date(Date.now() - ms).toISOString(), timeoutMs: 80_000 }]
    assert.equal(flowState(flow([partition('t', 0)], { heldReads: heldFor(HELD_READ_DEGRADED_MS + 1000) }), context), 'degraded')
    assert.equal(flowState(flow([partition('t', 0)], { heldReads: heldFor(6000) }), context), 'caught up')
    assert.equal(flowState(flow([partition('t', 0, { highWatermark: -1 })]), context), 'starting')
    assert.equal(flowState(flow([]), { ...context, ready: false }), 'starting')
    assert.equal(flowState(flow([partition('t', 0, { highWatermark: 12 })]), context), 'copying')
    assert.equal(flowState(flow([partition('t', 0)]), context), 'caught up')
  })

  it('never says caught up while the flow\'s group lease does not hold (its work lost, rejoining): starting; caught up again once it holds', () => {
    const membership = { group: 'g', generation: 3, leader: 'a', self: 'a', members: [], lease: { valid: false, lastError: 'coordinator not available', invalidSince: '2026-01-01T00:00:00.000Z' } }
    assert.equal(flowState(flow([], { membership }), context), 'starting')
    assert.equal(flowState(flow([partition('t', 0)], { membership }), context), 'starting')
    assert.equal(flowState(flow([], { membership: { ...membership, lease: { valid: true, lastError: null } } }), context), 'caught up')
    assert.equal(flowState(flow([]), context), 'caught up')
  })

  it('says copying, not starting, while a partition\'s lag is unknown because the source has given nothing of it for a while', () => {
    const waiting = partition('t', 0, { sourceWaitSince: '2026-01-01T00:00:00.000Z' })
    assert.equal(flowState(flow([waiting, partition('t', 1)]), context), 'copying')
    assert.equal(flowState(flow([waiting, partition('t', 1, { highWatermark: -1 })]), context), 'starting')
  })
})

describe('oldestLagSeconds', () => {
  it('is the largest age when every partition reports one, null when one does not or fails', () => {
    const aged = (s: number | null | undefined, f: FailureReport | null = null) => ({ ...partition('t', 0, { failure: f }), ...(s === undefined ? {} : { lagSeconds: s }) })
    assert.equal(oldestLagSeconds([aged(1.5), aged(4), aged(0)]), 4)
    assert.equal(oldestLagSeconds([aged(1.5), aged(null)]), null)
    assert.equal(oldestLagSeconds([aged(1.5), aged(undefined)]), null)
    assert.equal(oldestLagSeconds([aged(1.5), aged(2, failure)]), null)
    assert.equal(oldestLagSeconds([]), 0)
  })
})

describe('summarizeTopics', () => {
  it('aggregates per topic and puts failing topics first, then unknown lag, then the most lag, then by name', () => {
    const topics = summarizeTopics([
      partition('b-quiet', 0), partition('a-quiet', 0),
      partition('lagging', 0, { highWatermark: 15 }), partition('lagging', 1, { highWatermark: 30 }),
      partition('unknown', 0, { highWatermark: -1 }),
      partition('failing', 0), partition('failing', 1, { failure })
    ])
    assert.deepEqual(topics.map(t => t.topic), ['failing', 'unknown', 'lagging', 'a-quiet', 'b-quiet'])
    assert.deepEqual(topics[2], { topic: 'lagging', remoteTopic: 'A.lagging', partitions: 2, failingPartitions: 0, lagRecords: 25, lagUnknownPartitions: 0, lagSeconds: null, copiedRecords: 20, copiedBytes: 200 })
    assert.deepEqual([topics[0]!.failingPartitions, topics[0]!.lagRecords, topics[0]!.lagUnknownPartitions], [1, null, 1])
  })
})

describe('summaryDocument', () => {
  it('Given 5,000 partitions, then it lists the worst topics up to the limit, the failing partitions, and the totals', () => {
    const partitions: PartitionStatus[] = []
    for (let t = 0; t < 500; t++) for (let p = 0; p < 10; p++) partitions.push(partition(`topic-${String(t).padStart(3, '0')}`, p, t === 250 && p === 7 ? { failure } : {}))
    const [doc] = summaryDocument([flow(partitions)], { ...context, rate: () => ({ recordsPerSecond: 12.5, bytesPerSecond: 125 }) }, { filter: '', limit: 20 })
    assert.equal(doc!['state'], 'degraded')
    assert.equal(doc!['partitionCount'], 5000)
    assert.equal(doc!['failingPartitions'], 1)
    assert.equal(doc!['lagRecords'], null)
    assert.equal(doc!['copiedRecords'], 50_000)
    assert.equal(doc!['recordsPerSecond'], 12.5)
    assert.equal(doc!['topicCount'], 500)
    const topics = doc!['topics'] as { topic: string }[]
    assert.equal(topics.length, 20)
    assert.equal(topics[0]!.topic, 'topic-250')
    assert.deepEqual((doc!['failing'] as { topic: string, partition: number, lagRecords: number | null }[]).map(p => [p.topic, p.partition, p.lagRecords]), [['topic-250', 7, null]])
    assert.ok(JSON.stringify(doc).length < 20_000)
    // With the default limits (100 topics, 100 failing partitions): under 25 kB, and under 75 kB when every partition fails
    const [usual] = summaryDocument([flow(partitions)], context, summaryOptions(new URLSearchParams('summary')))
    const [worst] = summaryDocument([flow(partitions.map(p => ({ ...p, failure })))], context, summaryOptions(new URLSearchParams('summary')))
    assert.ok(JSON.stringify(usual).length < 25_000, `${JSON.stringify(usual).length} bytes`)
    assert.ok(JSON.stringify(worst).length < 75_000, `${JSON.stringify(worst).length} bytes`)
  })

  it('filters topics by a case-insensitive part of their name and says how many match', () => {
    const [doc] = summaryDocument([flow([partition('Orders', 0), partition('payments', 0), partition('orders-eu', 0)])], context, { filter: 'ORDERS', limit: 100 })
    assert.deepEqual((doc!['topics'] as { topic: string }[]).map(t => t.topic), ['Orders', 'orders-eu'])
    assert.deepEqual([doc!['topicCount'], doc!['topicsMatching']], [3, 2])
  })

  it(`lists at most ${FAILING_SHOWN} failing partitions`, () => {
    const partitions = Array.from({ length: FAILING_SHOWN + 5 }, (_, p) => partition('t', p, { failure }))
    const [doc] = summaryDocument([flow(partitions)], context, { filter: '', limit: 100 })
    assert.equal((doc!['failing'] as unknown[]).length, FAILING_SHOWN)
    assert.equal(doc!['failingPartitions'], FAILING_SHOWN + 5)
  })
})

describe('topicPartitions and summaryOptions', () => {
  it('gives one topic\'s partitions by number with their lag, null for a topic the flow does not copy', () => {
    const flows = [flow([partition('t', 1, { highWatermark: 12 }), partition('u', 0), partition('t', 0)])]
    assert.deepEqual(topicPartitions(flows, 'A->B', 't')?.map(p => [p.partition, p.lagRecords]), [[0, 0], [1, 2]])
    assert.equal(topicPartitions(flows, 'A->B', 'nope'), null)
    assert.equal(topicPartitions(flows, 'B->A', 't'), null)
  })

  it('reads ?filter and ?limit, the limit clamped, 100 by default', () => {
    assert.deepEqual(summaryOptions(new URLSearchParams('summary')), { filter: '', limit: 100 })
    assert.deepEqual(summaryOptions(new URLSearchParams('summary&filter=ord&limit=5')), { filter: 'ord', limit: 5 })
    assert.deepEqual(summaryOptions(new URLSearchParams('limit=0')), { filter: '', limit: 1 })
    assert.deepEqual(summaryOptions(new URLSearchParams('limit=99999999')), { filter: '', limit: 10_000 })
    assert.deepEqual(summaryOptions(new URLSearchParams('limit=abc')), { filter: '', limit: 100 })
  })
})
