import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { BACKOFF_BASE_MS, BACKOFF_MAX_MS, LeaderOutages, MOVED_AFTER_MS, onLeaderOutage, OutagePhases, PARTITIONS_NAMED, SLOW_FAILURE_MS, SLOW_REST_MAX_MS, type LeaderOutageReport } from '../../../src/kafka/leader-outages.ts'

describe('LeaderOutages', () => {
  let reports: LeaderOutageReport[] = []
  let stop: () => void = () => undefined
  beforeEach(() => {
    reports = []
    stop = onLeaderOutage(r => reports.push(r))
  })
  afterEach(() => { stop() })

  it('rests a broker after a failed fetch, 200 ms doubling to 2 s, and reports the outage once at its start, then each further try', () => {
    const outages = new LeaderOutages('cluster A')
    const partitions = Array.from({ length: 7 }, (_, i) => `t-${i}`)
    let now = 10_000
    const waits: number[] = []
    for (let i = 0; i < 6; i++) {
      outages.failed(2, 'h:9093', `connection refused ${i}`, partitions, now)
      waits.push(reports.at(-1)!.retryInMs)
      assert.ok(outages.resting(2, now + reports.at(-1)!.retryInMs - 1))
      assert.ok(!outages.resting(2, now + reports.at(-1)!.retryInMs))
      now += reports.at(-1)!.retryInMs
    }
    assert.equal(BACKOFF_BASE_MS, 200)
    assert.deepEqual(waits, [200, 400, 800, 1600, BACKOFF_MAX_MS, BACKOFF_MAX_MS])
    assert.deepEqual(reports.map(r => r.phase), [OutagePhases.DOWN, ...Array(5).fill(OutagePhases.AGAIN)])
    const first = reports[0]!
    assert.deepEqual({ ...first, named: [...first.named] }, {
      phase: 'down', broker: 'h:9093', node: 2, cluster: 'cluster A', partitions: 7, named: partitions.slice(0, PARTITIONS_NAMED),
      cause: 'connection refused 0', failures: 1, outageMs: 0, retryInMs: 200
    })
    assert.equal(outages.causeOf(2), 'connection refused 5')
    assert.ok(!outages.resting(1, now), 'another broker is not resting')
  })

  it('rests a broker whose try held the round (a timeout) twice as long as the try took, 30 s at most; a fast try the usual back-off', () => {
    const outages = new LeaderOutages('cluster A')
    outages.failed(2, 'h:9093', 'no answer in time', ['t-0'], 0, SLOW_FAILURE_MS - 1)
    outages.failed(2, 'h:9093', 'no answer in time', ['t-0'], 1_000, 10_000)
    outages.failed(2, 'h:9093', 'no answer in time', ['t-0'], 40_000, 30_000)
    assert.deepEqual(reports.map(r => r.retryInMs), [BACKOFF_BASE_MS, 20_000, SLOW_REST_MAX_MS])
    assert.ok(outages.resting(2, 40_000 + SLOW_REST_MAX_MS - 1))
  })

  it('ends an outage when the broker answers again, with how long and how many tries', () => {
    const outages = new LeaderOutages('cluster A')
    outages.failed(2, 'h:9093', 'refused', ['t-0'], 1_000)
    outages.failed(2, 'h:9093', 'refused', ['t-0'], 1_200)
    outages.answered(2, 4_500)
    outages.answered(2, 4_600)
    assert.deepEqual(reports.map(r => [r.phase, r.failures, r.outageMs]), [['down', 1, 0], ['again', 2, 200], ['back', 2, 3_500]])
    assert.equal(outages.size, 0)
    assert.ok(!outages.resting(2, 1_300))
    outages.failed(2, 'h:9093', 'refused', ['t-0'], 5_000)
    assert.equal(reports.at(-1)!.phase, 'down', 'a new outage starts afresh')
  })

  it('ends an outage once the broker has led none of the partitions read for MOVED_AFTER_MS (the cluster moved them)', () => {
    const outages = new LeaderOutages('cluster A')
    outages.failed(2, 'h:9093', 'refused', ['t-0'], 1_000)
    outages.leading(new Set([1, 2]), 1_500)
    assert.equal(outages.size, 1)
    outages.leading(new Set([1, 3]), 2_000)
    outages.leading(new Set([1, 3]), 2_000 + MOVED_AFTER_MS - 1)
    assert.deepEqual(reports.map(r => r.phase), ['down'], 'not yet')
    outages.leading(new Set([1, 3]), 2_000 + MOVED_AFTER_MS)
    assert.deepEqual(reports.map(r => r.phase), ['down', 'moved'])
    assert.equal(outages.size, 0)
  })

  it('a broker whose partitions leave a round or two and come back (a rebalance, an election) stays in one outage: no "moved", no new "down"', () => {
    const outages = new LeaderOutages('cluster A')
    outages.failed(2, 'h:9093', 'timed out', ['t-0'], 1_000, SLOW_FAILURE_MS)
    outages.leading(new Set([1]), 1_500)
    outages.leading(new Set([1]), 1_500 + MOVED_AFTER_MS - 1)
    outages.leading(new Set([1, 2]), 1_500 + MOVED_AFTER_MS)
    assert.ok(!outages.resting(2, 1_500 + MOVED_AFTER_MS), 'partitions given back to it are tried at once')
    outages.leading(new Set([1]), 1_600 + MOVED_AFTER_MS)
    outages.leading(new Set([1]), 1_600 + 2 * MOVED_AFTER_MS - 1)
    outages.failed(2, 'h:9093', 'refused', ['t-0'], 1_600 + 2 * MOVED_AFTER_MS)
    assert.deepEqual(reports.map(r => r.phase), ['down', 'again'])
  })

  it('never fails a fetch because a listener throws', () => {
    const unsubscribe = onLeaderOutage(() => { throw new Error('listener bug') })
    try {
      const outages = new LeaderOutages('cluster A')
      outages.failed(2, 'h:9093', 'refused', ['t-0'], 0)
      assert.equal(reports.length, 1, 'the other listeners are still told')
    } finally {
      unsubscribe()
    }
  })
})
