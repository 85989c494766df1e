/**
 * Partitions the target could not take yet (no leader, remote partition still loading: the writer's "not now"),
 * parked out of the fetch rounds until a probe of the target finds them ready, instead of fetched again from the
 * source every cool-down. A cold target creating 5,000 partitions makes them writable over tens of seconds; fetching
 * each again every 500 ms read the source's data about five times over (200 MB fetched for 38 MB copied, measured
 * in the `partitions` bench) and took CPU from the target broker doing the creating.
 *
 * Invariants:
 * - A parked partition is fetched again as soon as a probe (the writer's `probeReady`: a ListOffsets to its leader,
 *   never data) finds it ready, and at the latest PARK_MAX_MS after it was parked, whatever the probes said: a probe
 *   that keeps failing (no DESCRIBE on the remote topic, a broker not answering) costs a partition time, never
 *   progress, and its next write says why.
 * - Probes run in the background, one at a time, at most every PROBE_INTERVAL_MS while anything is parked; a round
 *   never waits on one. A probe only moves `retryAt` of a partition still parked in the same state object: one
 *   released, lost or parked again meanwhile is left as it is.
 * - Without a probe (a writer that has none, in unit tests) a partition is left out for COOL_DOWN_MS, as before.
 */
import { partitionKey } from '../topic-partition.ts'
import type { PartitionState } from './partition-set.ts'

/** The longest a parked partition waits for a probe to find it ready. */
export const PARK_MAX_MS = 10_000
/** How often parked partitions are probed while any is parked. */
export const PROBE_INTERVAL_MS = 100
/** How long a partition is left out when there is no probe. */
export const COOL_DOWN_MS = 500

/** Which of these remote partitions the target's leaders answer for now, by `partitionKey(remoteTopic, partition)`. */
export type ReadyProbe = (partitions: readonly { topic: string, partition: number }[]) => Promise<ReadonlySet<string>>

export class TargetWait {
  readonly #probe: ReadyProbe | undefined
  readonly #now: () => number
  /** Parked partitions by their (source) key. */
  readonly #parked = new Map<string, PartitionState>()
  #probing = false
  #lastProbeAt = Number.NEGATIVE_INFINITY
  /** Resolves the idle wait of the replicator's loop (`idle`) when a probe woke partitions. */
  #wake: (() => void) | null = null

  constructor (probe: ReadyProbe | undefined, now: () => number = Date.now) {
    this.#probe = probe
    this.#now = now
  }

  /** How many partitions are parked (waiting for the target). */
  get size (): number {
    return this.#parked.size
  }

  /** Leaves these partitions out of the fetch rounds until the target is ready for them (see the invariants). */
  park (states: Iterable<PartitionState>): void {
    const now = this.#now()
    for (const state of states) {
      if (this.#probe === undefined) {
        state.retryAt = now + COOL_DOWN_MS
        continue
      }
      state.retryAt = now + PARK_MAX_MS
      this.#parked.set(state.key, state)
    }
  }

  /** A partition that left the set (released, lost, its topic removed): it is probed no more. */
  forget (state: PartitionState): void {
    if (this.#parked.get(state.key) === state) this.#parked.delete(state.key)
  }

  /** Starts a probe of the parked partitions when one is due and none is under way; never waits for it. */
  poll (): void {
    const probe = this.#probe
    const now = this.#now()
    if (probe === undefined || this.#probing || this.#parked.size === 0 || now - this.#lastProbeAt < PROBE_INTERVAL_MS) return
    const waiting: PartitionState[] = []
    for (const [key, state] of this.#parked) {
      // Past its longest wait, or leaving: it is fetched again (or not at all) without the probe.
      if (state.retryAt <= now || state.lost || state.releasing) this.#parked.delete(key)
      else waiting.push(state)
    }
    if (waiting.length === 0) return
    this.#probing = true
    this.#lastProbeAt = now
    probe(waiting.map(s => ({ topic: s.remoteTopic, partition: s.partition })))
      .then(ready => { this.#wakeReady(waiting, ready) }, () => undefined)
      .finally(() => { this.#probing = false })
  }

  /** Waits up to `ms`, or until a probe finds parked partitions ready. */
  async idle (ms: number): Promise<void> {
    this.poll()
    await new Promise<void>(resolve => {
      const timer = setTimeout(done, this.#parked.size > 0 ? Math.min(ms, PROBE_INTERVAL_MS) : ms)
      const wake = (): void => { done() }
      this.#wake = wake
      function done (): void {
        clearTimeout(timer)
        resolve()
      }
    })
    this.#wake = null
  }

  #wakeReady (probed: readonly PartitionState[], ready: ReadonlySet<string>): void {
    let woke = false
    for (const state of probed) {
      if (!ready.has(partitionKey(state.remoteTopic, state.partition)) || this.#parked.get(state.key) !== state) continue
      this.#parked.delete(state.key)
      state.retryAt = 0
      woke = true
    }
    if (woke) this.#wake?.()
  }
}
