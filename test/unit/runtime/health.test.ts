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

  it('Given a started flow whose group lease has not held for longer than the threshold, then it is stalled, naming the group and since when, though its rounds (over no partition) complete', () => {
    const lease = { group: 'kmirror-A-B', cluster: 'B', invalidSince: 70_000 }
    const early = evaluateHealth([{ ...flow('A->B', 100_000), lease }], { ready: true, since: 0, now: 100_000 })
    assert.deepEqual(early, { ready: true, healthy: true, stalled: [] })
    const late = evaluateHealth([{ ...flow('A->B', 100_500), lease }, { ...flow('B->A', 100_500), lease: { ...lease, group: 'kmirror-B-A', invalidSince: null } }], { ready: true, since: 0, now: 100_500 })
    assert.deepEqual(late, {
      ready: true, healthy: false,
      stalled: [{ flow: 'A->B', sinceMs: 30_500, thresholdMs: 30_000, started: true, lease: { group: 'kmirror-A-B', cluster: 'B', invalidSince: '1970-01-01T00:01:10.000Z' } }]
    })
    assert.equal(describeStalled(late), 'stalled: flow A->B has had no valid lease in group kmirror-A-B on cluster B since 1970-01-01T00:01:10.000Z for 31 s ' +
      '(health.stall.threshold.ms = 30000): it is not a member of the group now (evicted, or its coordinator does not answer) and copies nothing until it joins again; ' +
      'see membership.lease in /status and the log for the cause\n')
  })

  it('Given a flow with no group (no lease) completing rounds, then it is healthy as before; a flow not started is judged by its start, not its lease', () => {
    assert.deepEqual(evaluateHealth([flow('A->B', 100_000)], { ready: true, since: 0, now: 100_500 }).stalled, [])
    const starting = evaluateHealth([{ ...flow('A->B', null), lease: { group: 'g', cluster: 'B', invalidSince: 0 } }], { ready: false, since: 1000, now: 41_000 })
    assert.deepEqual(starting.stalled, [{ flow: 'A->B', sinceMs: 40_000, thresholdMs: 30_000, started: false }])
  })

  it('Given a flow still starting, then it is not ready, and stalled once the start took longer than the threshold', () => {
    const early = evaluateHealth([flow('A->B', null)], { ready: false, since: 1000, now: 20_000 })
    assert.deepEqual(early, { ready: false, healthy: true, stalled: [] })
    const late = evaluateHealth([flow('A->B', null)], { ready: false, since: 1000, now: 41_000 })
    assert.deepEqual(late.stalled, [{ flow: 'A->B', sinceMs: 40_000, thresholdMs: 30_000, started: false }])
    assert.match(describeStalled(late), /flow A->B has not started for 40 s/)
  })
})
