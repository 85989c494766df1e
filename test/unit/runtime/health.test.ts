import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeStalled, evaluateHealth, type FlowProgress } from '../../../src/runtime/health.ts'

const flow = (name: string, lastRoundAt: number | null, started = lastRoundAt !== null): FlowProgress => ({ name, started, lastRoundAt, stallThresholdMs: 30_000 })

describe('evaluateHealth', () => {
  it('Given flows completing rounds within the threshold, then it is healthy', () => {
    const report = evaluateHealth([flow('A->B', 100_000), flow('B->A', 75_000)], { ready: true, since: 0, now: 105_000 })
    assert.deepEqual(report, { ready: true, healthy: true, stalled: [] })
  })

  it('Given a flow whose last round is older than its threshold, then that flow is stalled and the report not healthy', () => {
    const report = evaluateHealth([flow('A->B', 100_000), flow('B->A', 60_000)], { ready: true, since: 0, now: 100_500 })
    assert.equal(report.healthy, false)
    assert.deepEqual(report.stalled, [{ flow: 'B->A', sinceMs: 40_500, thresholdMs: 30_000, started: true }])
    assert.equal(describeStalled(report), 'stalled: flow B->A has completed no fetch-and-write round for 41 s (health.stall.threshold.ms = 30000); see /status and the log for the cause\n')
  })

  it('Given a flow still starting, then it is not ready, and stalled once the start took longer than the threshold', () => {
    const early = evaluateHealth([flow('A->B', null)], { ready: false, since: 1000, now: 20_000 })
    assert.deepEqual(early, { ready: false, healthy: true, stalled: [] })
    const late = evaluateHealth([flow('A->B', null)], { ready: false, since: 1000, now: 41_000 })
    assert.deepEqual(late.stalled, [{ flow: 'A->B', sinceMs: 40_000, thresholdMs: 30_000, started: false }])
    assert.match(describeStalled(late), /flow A->B has not started for 40 s/)
  })
})
