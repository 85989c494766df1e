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
 * - Probes run in the background, one at a time, at most every PROBE_INTERVAL_MS while anything is parked (every
 *   LONG_WAIT_PROBE_INTERVAL_MS once all have waited LONG_WAIT_MS); a round never waits on one. A probe only moves a `retryAt` that parking set and nothing changed since, of the parking it
 *   probed: a partition released, lost, added again (a new state object), parked again, set aside with a back-off
 *   (partition-failures.ts) or held for a re-created remote topic (recreated-remotes.ts) meanwhile is left as it is.
 * - Without a probe (a writer that has none, in unit tests) a partition is left out for COOL_DOWN_MS, as before.
 * - A partition's wait lasts from its first parking until a round fetches it and does not park it again (written,
 *   refused, nothing to write), it leaves, or it is parked again at another position (part of a write taken): `waits` lists those waiting longer than a threshold, each once, so the
 *   data path reports them (flow-replicator.ts): a partition the target never takes is never a silent stall.
 */
import { partitionKey } from '../topic-partition.ts'
import type { PartitionState } from './partition-set.ts'

/** The longest a parked partition waits for a probe to find it ready. */
export const PARK_MAX_MS = 10_000
/** How often parked partitions are probed while any is parked. */
export const PROBE_INTERVAL_MS = 100
/**
 * Probes slow down to LONG_WAIT_PROBE_INTERVAL_MS once every parked partition has waited LONG_WAIT_MS: a new
 * remote topic is ready within a few hundred ms, an offline one (its broker down) can wait for hours, and each
 * probe of a partition without a leader reads its topics' metadata again.
 */
export const LONG_WAIT_MS = 5_000
export const LONG_WAIT_PROBE_INTERVAL_MS = 1_000
/** How long a partition is left out when there is no probe. */
export const COOL_DOWN_MS = 500

/** Which of these remote partitions the target's leaders answer for now, by `partitionKey(remoteTopic, partition)`. */
export type ReadyProbe = (partitions: readonly { topic: string, partition: number }[]) => Promise<ReadonlySet<string>>

/** A partition waiting for the target since `since` (epoch ms), across its parkings. */
export interface LongWait {
  readonly state: PartitionState
  readonly since: number
}

interface Wait extends LongWait {
  reported: boolean
  /** Its position when the wait began: a partition that moved on since (part of a write taken) waits afresh. */
  readonly position: number
}

interface Parked {
  readonly state: PartitionState
  /** The `retryAt` parking set: a different one means something else decides since. */
  readonly until: number
}

export class TargetWait {
  readonly #probe: ReadyProbe | undefined
  readonly #now: () => number
  /** Parked partitions by their (source) key, with the `retryAt` parking gave them. */
  readonly #parked = new Map<string, Parked>()
  /** Every partition waiting, from its first parking until it is settled or forgotten, by its (source) key. */
  readonly #waits = new Map<string, Wait>()
  #probing = false
  #lastProbeAt = Number.NEGATIVE_INFINITY
  /** Resolves the idle wait of the replicator's loop (`idle`) when a probe woke partitions. */
  #wake: (() => void) | null = null

  readonly #probeIntervalMs: number

  constructor (probe: ReadyProbe | undefined, now: () => number = Date.now, probeIntervalMs = PROBE_INTERVAL_MS) {
    this.#probe = probe
    this.#now = now
    this.#probeIntervalMs = probeIntervalMs
  }

  /** How many partitions are parked (waiting for the target); entries no longer parked are dropped first. */
  count (): number {
    const now = this.#now()
    for (const [key, parked] of this.#parked) if (!this.#stillParked(parked, now)) this.#parked.delete(key)
    return this.#parked.size
  }

  /** Leaves these partitions out of the fetch rounds until the target is ready for them (see the invariants). */
  park (states: Iterable<PartitionState>): void {
    const now = this.#now()
    for (const state of states) {
      const wait = this.#waits.get(state.key)
      if (wait?.state !== state || wait.position !== state.position) this.#waits.set(state.key, { state, since: now, reported: false, position: state.position })
      if (this.#probe === undefined) {
        state.retryAt = now + COOL_DOWN_MS
        continue
      }
      state.retryAt = now + PARK_MAX_MS
      this.#parked.set(state.key, { state, until: state.retryAt })
    }
  }

  /** Whether any partition waits (parked now, or fetched again since without being settled). */
  get anyWaiting (): boolean {
    return this.#waits.size > 0
  }

  /** A round fetched this partition and the target took it, refused it or had nothing to take: its wait is over. */
  settled (state: PartitionState): void {
    if (this.#waits.get(state.key)?.state === state) this.#waits.delete(state.key)
  }

  /** The waits longer than `thresholdMs` not listed before: each wait is listed once. */
  waits (thresholdMs: number): LongWait[] {
    if (this.#waits.size === 0) return []
    const now = this.#now()
    const found: LongWait[] = []
    for (const [key, wait] of this.#waits) {
      if (wait.state.lost || wait.state.releasing) this.#waits.delete(key)
      if (wait.reported || wait.state.lost || wait.state.releasing || now - wait.since < thresholdMs) continue
      wait.reported = true
      found.push({ state: wait.state, since: wait.since })
    }
    return found
  }

  /** A partition that left the set (released, lost, its topic removed): it is probed no more. */
  forget (state: PartitionState): void {
    if (this.#parked.get(state.key)?.state === state) this.#parked.delete(state.key)
    if (this.#waits.get(state.key)?.state === state) this.#waits.delete(state.key)
  }

  /** Starts a probe of the parked partitions when one is due and none is under way; never waits for it. */
  poll (): void {
    const probe = this.#probe
    const now = this.#now()
    if (probe === undefined || this.#probing || this.#parked.size === 0 || now - this.#lastProbeAt < this.#probeIntervalMs) return
    const waiting: Parked[] = []
    for (const [key, parked] of this.#parked) {
      if (this.#stillParked(parked, now)) waiting.push(parked)
      else this.#parked.delete(key)
    }
    if (waiting.length === 0 || (now - this.#lastProbeAt < LONG_WAIT_PROBE_INTERVAL_MS && !this.#anyRecent(waiting, now))) return
    this.#probing = true
    this.#lastProbeAt = now
    probe(waiting.map(({ state }) => ({ topic: state.remoteTopic, partition: state.partition })))
      .then(ready => { this.#wakeReady(waiting, ready) }, () => undefined)
      .finally(() => { this.#probing = false })
  }

  /** Whether one of these parked partitions has waited less than LONG_WAIT_MS. */
  #anyRecent (parked: readonly Parked[], now: number): boolean {
    return parked.some(({ state }) => now - (this.#waits.get(state.key)?.since ?? now) < LONG_WAIT_MS)
  }

  /** Waits up to `ms`, or until a probe finds parked partitions ready. */
  async idle (ms: number): Promise<void> {
    this.poll()
    await new Promise<void>(resolve => {
      const timer = setTimeout(done, this.#parked.size > 0 ? Math.min(ms, this.#probeIntervalMs) : ms)
      this.#wake = done
      function done (): void {
        clearTimeout(timer)
        resolve()
      }
    })
    this.#wake = null
  }

  /**
   * Whether a parked partition still waits for a probe: not past its longest wait (it is fetched again without the
   * probe), not leaving, and its `retryAt` still the one parking gave it. Anything else that set it since (a
   * failure's back-off, a hold for a re-created remote topic, a fetch after its longest wait that parked it again)
   * decides when it is fetched, never a probe.
   */
  #stillParked (parked: Parked, now: number): boolean {
    const { state, until } = parked
    return state.retryAt === until && until > now && !state.lost && !state.releasing
  }

  #wakeReady (probed: readonly Parked[], ready: ReadonlySet<string>): void {
    let woke = false
    const now = this.#now()
    for (const parked of probed) {
      const { state } = parked
      if (!ready.has(partitionKey(state.remoteTopic, state.partition)) || this.#parked.get(state.key) !== parked || !this.#stillParked(parked, now)) continue
      this.#parked.delete(state.key)
      state.retryAt = 0
      woke = true
    }
    if (woke) this.#wake?.()
  }
}
