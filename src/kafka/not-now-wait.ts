/**
 * The "not now" partitions of one write of batch-writer.ts (no leader yet, leader moving: `notNow` in errors.ts):
 * which writes are sent at once and which are probed first, and the probing between two send attempts.
 *
 * Invariants:
 * - A partition whose last answer was "not now" (in this write or an earlier one: the writer's `unready` keys) has
 *   its data sent again only once a probe (target-leaders.ts `ready`, a ListOffsets) finds its leader ready:
 *   resending megabytes to a broker that is still loading hundreds of new partitions slows that loading down
 *   (measured: 3x for 500 new topics). A partition found ready leaves `unready`.
 * - Waiting partitions are probed for up to NOT_NOW_PATIENCE_MS while nothing else of the write was acknowledged
 *   (typically new remote topics at start), NOT_NOW_SHORT_PATIENCE_MS once something was (they would otherwise hold
 *   up the others' next round); one probe right after the sends whatever the patience left (the sends may have
 *   outlasted it). Probes every 20 ms for the first 500 ms of the write (a new topic's leader is usually ready
 *   within a few hundred ms), then every 100 ms. Nothing is probed once a partition of the write failed.
 * - What is still waiting when the patience runs out is the write's `incomplete`: the caller tries it again later.
 */
import { setTimeout as delay } from 'node:timers/promises'

/**
 * How long "not now" partitions are tried again within one write before they are returned incomplete: while
 * nothing else of the write was acknowledged, and once something was.
 */
const NOT_NOW_PATIENCE_MS = 3_000
const NOT_NOW_SHORT_PATIENCE_MS = 300

export interface NotNowWaitDeps<W> {
  /** Partition keys (`partitionKey`) whose last answer was "not now", kept by the writer across its writes. */
  readonly unready: Set<string>
  /** The partition key of write `i`. */
  readonly keyOf: (i: number) => string
  /** Write `i` itself (compared by identity with what `ready` returns). */
  readonly item: (i: number) => W
  /** Which of these writes' partitions their leader answers for now. */
  readonly ready: (items: W[]) => Promise<readonly W[]>
  /** Whether anything of the write was acknowledged yet (the patience is short from then on). */
  readonly acked: () => boolean
}

/** One write's "not now" bookkeeping: create it when the write starts. */
export class NotNowWait<W> {
  readonly #deps: NotNowWaitDeps<W>
  readonly #started = Date.now()
  #pause = 20
  #promptProbe = true
  #waiting: number[]
  /** The writes to send first: every one but those whose partition answered "not now" at its last write. */
  readonly first: number[]

  constructor (deps: NotNowWaitDeps<W>, writes: readonly number[]) {
    this.#deps = deps
    this.first = writes.filter(i => !deps.unready.has(deps.keyOf(i)))
    this.#waiting = writes.filter(i => deps.unready.has(deps.keyOf(i)))
  }

  /** The writes still waiting for their leader: the write's `incomplete` once `next` returned nothing. */
  get waiting (): number[] {
    return this.#waiting
  }

  /**
   * After a send attempt whose "not now" writes are `notNow`: probes the waiting writes until some are ready (they
   * are returned, to be sent now), the patience runs out or `failed` (a partition of the write failed): then [].
   */
  async next (notNow: readonly number[], failed: boolean): Promise<number[]> {
    const { unready, keyOf, item } = this.#deps
    for (const i of notNow) unready.add(keyOf(i))
    this.#waiting = [...this.#waiting, ...notNow]
    while (this.#waiting.length > 0 && !failed) {
      if (this.#promptProbe) this.#promptProbe = false
      else if (Date.now() + this.#pause <= this.#deadline()) await delay(this.#pause)
      else break
      this.#pause = Date.now() - this.#started < 500 ? 20 : 100
      const ready = new Set(await this.#deps.ready(this.#waiting.map(item)))
      if (ready.size === 0) continue
      const toSend = this.#waiting.filter(i => ready.has(item(i)))
      this.#waiting = this.#waiting.filter(i => !ready.has(item(i)))
      for (const i of toSend) unready.delete(keyOf(i))
      return toSend
    }
    return []
  }

  #deadline (): number {
    return this.#started + (this.#deps.acked() ? NOT_NOW_SHORT_PATIENCE_MS : NOT_NOW_PATIENCE_MS)
  }
}
