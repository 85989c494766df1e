import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { PartitionState } from '../../../src/replication/partition-set.ts'
import { COOL_DOWN_MS, LONG_WAIT_MS, LONG_WAIT_PROBE_INTERVAL_MS, PARK_MAX_MS, PROBE_INTERVAL_MS, TargetWait } from '../../../src/replication/target-wait.ts'
import { partitionKey } from '../../../src/topic-partition.ts'
import { deferred, type Deferred } from '../../fakes/deferred.ts'

function stateOf (topic: string, partition: number): PartitionState {
  return {
    key: partitionKey(topic, partition), topic, partition, remoteTopic: `A.${topic}`, position: 0, highWatermark: -1, copiedRecords: 0,
    copiedBytes: 0, lostToRetention: 0, head: null, retryAt: 0, releasing: false, lost: false, fetchAt: null
  }
}

/** A probe whose answers the test gives, one pending call at a time. */
class ControlledProbe {
  readonly calls: { topic: string, partition: number }[][] = []
  #pending: Deferred<ReadonlySet<string>> | null = null
  readonly probe = async (partitions: readonly { topic: string, partition: number }[]): Promise<ReadonlySet<string>> => {
    this.calls.push([...partitions])
    this.#pending = deferred<ReadonlySet<string>>()
    return await this.#pending.promise
  }

  /** Answers the pending probe: these remote partitions are ready. */
  async answer (...ready: string[]): Promise<void> {
    this.#pending!.resolve(new Set(ready))
    await settle()
  }

  async fail (): Promise<void> {
    this.#pending!.reject(new Error('broker 1 did not answer'))
    await settle()
  }
}

async function settle (): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve()
}

describe('TargetWait: partitions the target cannot take yet wait out of the fetch rounds for a probe', () => {
  it('Given two parked partitions, when a probe finds one ready, then only that one is fetched again, at once; the other waits for a later probe', async () => {
    let now = 1_000
    const probe = new ControlledProbe()
    const wait = new TargetWait(probe.probe, () => now)
    const [a, b] = [stateOf('t', 0), stateOf('t', 1)]
    wait.park([a, b])
    assert.equal(a.retryAt, 1_000 + PARK_MAX_MS)
    assert.equal(wait.count(), 2)

    // When the probe (of the remote partitions, no data) finds A.t-0 ready
    wait.poll()
    assert.deepEqual(probe.calls, [[{ topic: 'A.t', partition: 0 }, { topic: 'A.t', partition: 1 }]])
    await probe.answer(partitionKey('A.t', 0))

    // Then t-0 is due now, t-1 still parked
    assert.equal(a.retryAt, 0)
    assert.equal(b.retryAt, 1_000 + PARK_MAX_MS)
    assert.equal(wait.count(), 1)

    // And the next probe, no sooner than the interval, asks only for t-1
    now += PROBE_INTERVAL_MS - 1
    wait.poll()
    assert.equal(probe.calls.length, 1)
    now += 1
    wait.poll()
    assert.deepEqual(probe.calls[1], [{ topic: 'A.t', partition: 1 }])
  })

  it('Given a probe under way, when polled again, then no second probe starts until it answered', async () => {
    let now = 0
    const probe = new ControlledProbe()
    const wait = new TargetWait(probe.probe, () => now)
    wait.park([stateOf('t', 0)])
    wait.poll()
    now += 10 * PROBE_INTERVAL_MS
    wait.poll()
    assert.equal(probe.calls.length, 1)
    await probe.answer()
    wait.poll()
    assert.equal(probe.calls.length, 2)
  })

  it('Given probes that keep failing, then a parked partition is fetched again at the latest PARK_MAX_MS after it was parked, and probed no more', async () => {
    let now = 0
    const probe = new ControlledProbe()
    const wait = new TargetWait(probe.probe, () => now)
    const a = stateOf('t', 0)
    wait.park([a])
    wait.poll()
    await probe.fail()
    assert.equal(a.retryAt, PARK_MAX_MS)

    // When its longest wait is over, it is due (the data path fetches it; its write says what is wrong) and left
    // out of the probes
    now = PARK_MAX_MS
    wait.poll()
    assert.equal(probe.calls.length, 1)
    assert.equal(wait.count(), 0)
    assert.ok(a.retryAt <= now)
  })

  it('Given a probe under way, when its partition leaves (released, lost) or is parked again as a new state, then the late answer moves nothing', async () => {
    let now = 0
    const probe = new ControlledProbe()
    const wait = new TargetWait(probe.probe, () => now)
    const [gone, lost, replaced] = [stateOf('t', 0), stateOf('t', 1), stateOf('t', 2)]
    wait.park([gone, lost, replaced])
    wait.poll()

    // When, before the answer, t-0 leaves the set, t-1 is lost, and t-2 is added again (a new state) and parked
    wait.forget(gone)
    lost.lost = true
    const again = stateOf('t', 2)
    now = 50
    wait.park([again])
    await probe.answer(partitionKey('A.t', 0), partitionKey('A.t', 1), partitionKey('A.t', 2))

    // Then none of the old states is made due by the late answer, and the new t-2 waits for its own probe
    assert.equal(gone.retryAt, PARK_MAX_MS)
    assert.equal(lost.retryAt, PARK_MAX_MS)
    assert.equal(replaced.retryAt, PARK_MAX_MS)
    assert.equal(again.retryAt, 50 + PARK_MAX_MS)

    // And the next probe asks for the new t-2 only (t-1 is leaving: not probed)
    now = 50 + PROBE_INTERVAL_MS
    wait.poll()
    assert.deepEqual(probe.calls[1], [{ topic: 'A.t', partition: 2 }])
  })

  it('Given a parked partition set aside with a back-off or held for a re-created remote topic meanwhile, then no probe answer wakes it, and it is probed no more', async () => {
    let now = 0
    const probe = new ControlledProbe()
    const wait = new TargetWait(probe.probe, () => now)
    const [failing, held] = [stateOf('t', 0), stateOf('t', 1)]
    wait.park([failing, held])
    wait.poll()

    // When, before the answer, t-0 gets a failure's back-off (partition-failures.ts) and t-1 is held
    // (recreated-remotes.ts)
    failing.retryAt = 2_000
    held.retryAt = Number.POSITIVE_INFINITY
    await probe.answer(partitionKey('A.t', 0), partitionKey('A.t', 1))

    // Then both keep what was set: the back-off and the hold decide, not the probe
    assert.equal(failing.retryAt, 2_000)
    assert.equal(held.retryAt, Number.POSITIVE_INFINITY)
    // and the next poll leaves them out of the probes
    now = PROBE_INTERVAL_MS
    wait.poll()
    assert.equal(probe.calls.length, 1)
    assert.equal(wait.count(), 0)
  })

  it('Given a loop waiting idle, when a probe finds a parked partition ready, then the wait ends at once', async () => {
    // (probes a minute apart: only the wake can end the wait before its minute is over)
    const probe = new ControlledProbe()
    const wait = new TargetWait(probe.probe, Date.now, 60_000)
    const a = stateOf('t', 0)
    wait.park([a])
    const started = Date.now()
    const idle = wait.idle(60_000)
    await settle()
    assert.equal(probe.calls.length, 1)
    await probe.answer(partitionKey('A.t', 0))
    await idle
    assert.ok(Date.now() - started < 30_000)
    assert.equal(a.retryAt, 0)
  })

  it('Given no probe (a writer without one), then a partition is only left out for COOL_DOWN_MS and nothing is parked', () => {
    const wait = new TargetWait(undefined, () => 7)
    const a = stateOf('t', 0)
    wait.park([a])
    assert.equal(a.retryAt, 7 + COOL_DOWN_MS)
    assert.equal(wait.count(), 0)
  })
})

describe('TargetWait: how long partitions have waited for the target', () => {
  it('Given a partition parked again and again, then its wait counts from the first parking and is listed once past the threshold', () => {
    let now = 1_000
    const wait = new TargetWait(new ControlledProbe().probe, () => now)
    const a = stateOf('t', 0)
    wait.park([a])
    now += PARK_MAX_MS
    wait.park([a])
    assert.deepEqual(wait.waits(30_000), [])

    // When it has waited 30 s, parked a third time meanwhile
    now = 21_000
    wait.park([a])
    now = 31_000

    // Then it is listed once, with the time of its first parking
    assert.deepEqual(wait.waits(30_000), [{ state: a, since: 1_000 }])
    assert.deepEqual(wait.waits(30_000), [])
    assert.equal(wait.anyWaiting, true)
  })

  it('Given a waiting partition fetched and not parked again (written, refused, nothing to write), then its wait is over and a later one counts afresh', () => {
    let now = 1_000
    const wait = new TargetWait(new ControlledProbe().probe, () => now)
    const [a, b] = [stateOf('t', 0), stateOf('t', 1)]
    wait.park([a, b])
    now = 5_000
    wait.settled(a)
    wait.park([a])
    now = 32_000

    assert.deepEqual(wait.waits(30_000), [{ state: b, since: 1_000 }])
    now = 35_000
    assert.deepEqual(wait.waits(30_000), [{ state: a, since: 5_000 }])
  })

  it('Given partitions that have all waited LONG_WAIT_MS, then they are probed every LONG_WAIT_PROBE_INTERVAL_MS; a newly parked one brings back quick probes', async () => {
    let now = 1_000
    const probe = new ControlledProbe()
    const wait = new TargetWait(probe.probe, () => now)
    const a = stateOf('t', 0)
    wait.park([a])
    // Waited long (parked again after its longest wait, as the data path does)
    now += LONG_WAIT_MS
    wait.park([a])
    wait.poll()
    await probe.answer()
    assert.equal(probe.calls.length, 1)
    now += PROBE_INTERVAL_MS
    wait.poll()
    assert.equal(probe.calls.length, 1, 'no quick probe for a long wait')
    now += LONG_WAIT_PROBE_INTERVAL_MS - PROBE_INTERVAL_MS
    wait.poll()
    assert.equal(probe.calls.length, 2)
    await probe.answer()

    // When a new partition is parked, quick probes again, of both
    const b = stateOf('t', 1)
    wait.park([b])
    now += PROBE_INTERVAL_MS
    wait.poll()
    assert.equal(probe.calls.length, 3)
    assert.equal(probe.calls[2]!.length, 2)
  })

  it('Given a waiting partition parked again at another position (part of a write was taken), then its wait starts again there', () => {
    let now = 1_000
    const wait = new TargetWait(undefined, () => now)
    const a = stateOf('t', 0)
    wait.park([a])
    now = 20_000
    a.position = 5
    wait.park([a])
    now = 35_000
    assert.deepEqual(wait.waits(30_000), [])
    now = 50_000
    assert.deepEqual(wait.waits(30_000), [{ state: a, since: 20_000 }])
  })

  it('Given waiting partitions that leave (forgotten, released, lost, or added again as a new state), then they are never listed', () => {
    let now = 1_000
    const wait = new TargetWait(undefined, () => now)
    const [a, b, c] = [stateOf('t', 0), stateOf('t', 1), stateOf('t', 2)]
    wait.park([a, b, c])
    wait.forget(a)
    b.releasing = true
    c.lost = true
    now = 100_000
    assert.deepEqual(wait.waits(30_000), [])
    assert.equal(wait.anyWaiting, false)

    // A partition added again is a new state: its wait starts at its own first parking
    const again = stateOf('t', 0)
    wait.park([again])
    wait.settled(a)
    assert.equal(wait.anyWaiting, true)
  })
})
