import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FlowRates, UNKNOWN_RATE } from '../../../src/runtime/flow-rates.ts'
import type { PartitionStatus } from '../../../src/replication/flow-replicator.ts'

const partition = (p: number, copiedRecords: number, copiedBytes: number): PartitionStatus => ({
  topic: 't', partition: p, remoteTopic: 'A.t', position: copiedRecords, highWatermark: copiedRecords, copiedRecords, copiedBytes, lostToRetention: 0, failure: null, lagSeconds: null
})
const flow = (name: string, records: number[], bytesPerRecord = 10) => ({ name, partitions: records.map((r, p) => partition(p, r, r * bytesPerRecord)) })

describe('FlowRates', () => {
  it('Given one sample, then the rate is unknown (null), never 0', () => {
    const rates = new FlowRates()
    rates.sample([flow('A->B', [100])], 0)
    assert.deepEqual(rates.rate('A->B'), UNKNOWN_RATE)
    assert.deepEqual(rates.rate('nope'), UNKNOWN_RATE)
  })

  it('Given samples 2 s apart, then records/s and bytes/s are the counters\' growth over the span, summed over partitions', () => {
    const rates = new FlowRates()
    rates.sample([flow('A->B', [400, 600])], 0)
    rates.sample([flow('A->B', [700, 900])], 2000)
    assert.deepEqual(rates.rate('A->B'), { recordsPerSecond: 300, bytesPerSecond: 3000 })
  })

  it('averages over the last 5 s only: older samples are dropped but one', () => {
    const rates = new FlowRates()
    rates.sample([flow('A->B', [0])], 0)
    rates.sample([flow('A->B', [10_000])], 1000)
    for (let s = 2; s <= 10; s++) rates.sample([flow('A->B', [10_000 + (s - 1) * 100])], s * 1000)
    // Window from t=5 s (10,400 records) to t=10 s (10,900): 100 records/s, not the burst of the first second
    assert.deepEqual(rates.rate('A->B'), { recordsPerSecond: 100, bytesPerSecond: 1000 })
  })

  it('Given a counter that went down (a partition handed to another member), then the flow\'s window restarts', () => {
    const rates = new FlowRates()
    rates.sample([flow('A->B', [100, 100])], 0)
    rates.sample([flow('A->B', [150])], 1000)
    assert.deepEqual(rates.rate('A->B'), UNKNOWN_RATE)
    rates.sample([flow('A->B', [250])], 2000)
    assert.deepEqual(rates.rate('A->B'), { recordsPerSecond: 100, bytesPerSecond: 1000 })
  })

  it('forgets a flow no longer running', () => {
    const rates = new FlowRates()
    rates.sample([flow('A->B', [0]), flow('B->A', [0])], 0)
    rates.sample([flow('A->B', [10]), flow('B->A', [20])], 1000)
    rates.sample([flow('A->B', [20])], 2000)
    assert.deepEqual(rates.rate('B->A'), UNKNOWN_RATE)
    assert.deepEqual(rates.rate('A->B'), { recordsPerSecond: 10, bytesPerSecond: 100 })
  })
})
