/**
 * At-least-once mode: MM2's offset syncs written beside the data path, in the order recorded, never awaited by it.
 * The syncs live on the source cluster by default; when the broker leading their partition was down, every progress
 * store of the flow waited for (and then gave up) a sync send until the cluster moved that leader, so one source
 * broker held up every round's store. What progress must never run ahead of is the exact offset history (on the
 * target, written by the progress flusher before positions); MM2's syncs may trail progress, as they do in MM2
 * (its producer sends them on its own, and drops them under pressure).
 *
 * Invariants:
 * - Every sync enqueued is sent, once acknowledged never again, in the order enqueued: one send at a time; a send
 *   the writer splits into several produce requests removes each acknowledged part at once (`onAcked`), so what a
 *   failed send leaves at the front is exactly what was not acknowledged (invariant 4 of ARCHITECTURE.md: never
 *   coalesced). Except after `dropQueued` (membership lost): nothing queued before it is sent again.
 * - Bounded: past MAX_PENDING queued (the syncs' topic unwritable for long while copying goes on), the queue not in
 *   flight is thinned (sync-thinning.ts) to about half, told once per stretch and counted. A dropped sync only makes
 *   MM2's translation from the topic coarser (it uses an older sync: consumers re-read, never skip; a sync that goes
 *   back is never dropped); the order of what is kept does not change, and kmirror's exact history is written apart
 *   (before the enqueue). Between two tries nothing is in flight: the failed send's syncs are thinned like any.
 * - A failed send is retried after RETRY_BASE_MS doubling to RETRY_MAX_MS; the failures are told once
 *   (failure-streak.ts), the recovery too.
 * - `settled` (a hand-over: a revoke, the revoke of a stop) waits for what was queued before it, without closing,
 *   while the member's lease still holds: from its LeaveGroup on its writes are refused (invariant 26), so syncs
 *   left for the drain after that are lost with the process.
 * - `drain` (the flow's stop) waits until everything enqueued before it is written or its deadline passes (once the
 *   writes are refused, a member that left its group, only for the send under way); what is left is logged,
 *   counted, and lost with the process: MM2 reading the syncs then translates the newest offsets of those
 *   partitions from an older sync (further back: consumers re-read, never skip), and kmirror's own
 *   translation (the history) is exact regardless.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { Logger } from '../logger.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import { FailureStreak, writeStreakMessages } from './failure-streak.ts'
import type { OffsetSyncEntry } from './offset-sync-tracker.ts'
import type { OffsetSyncEmitter } from './offset-sync-emitter.ts'
import type { WriteTarget } from './replicator-ports.ts'
import { thinSyncs } from './sync-thinning.ts'

export const RETRY_BASE_MS = 200
export const RETRY_MAX_MS = 5_000
/** Syncs per send at most (a produce request or two of small records: each part acknowledged is removed at once). */
export const MAX_BATCH = 5_000
/**
 * Syncs queued at most before thinning: about 10 MiB. At 10,000 syncs a second (a million records a second at
 * offset.lag.max 100) that is 10 s of an outage before the first thinning; older stretches are thinned again at each
 * pass, so what is kept gets sparser with age, as MM2's own sync store keeps it.
 */
export const MAX_PENDING = 100_000

/** What `/status` shows of the outbox (a flow's `offsetSyncs`). */
export interface OffsetSyncsStatus {
  /** Syncs queued, not written yet. */
  readonly pending: number
  /** Syncs dropped unwritten by thinning since the start. */
  readonly thinned: number
  /** While sends fail: since when (ISO time), how many attempts, the last error. */
  readonly failure: { readonly since: string, readonly attempts: number, readonly error: string } | null
}

export interface SyncOutboxOptions {
  readonly flow: string
  /** Where the syncs go, for the log: `mm2-offset-syncs.B.internal` on cluster `A`. */
  readonly writesTo?: Pick<WriteTarget, 'topic' | 'cluster'>
  readonly metrics?: Metrics
  readonly retryBaseMs?: number
  readonly maxPending?: number
}

export class SyncOutbox {
  readonly #sink: Pick<OffsetSyncEmitter, 'send'>
  readonly #log: Logger
  readonly #failures: FailureStreak
  readonly #retryBaseMs: number
  readonly #maxPending: number
  readonly #metrics: Metrics
  readonly #labels: { flow: string }
  readonly #where: string
  /** Where the syncs go (as given), for the warnings of others. */
  readonly writesTo: Pick<WriteTarget, 'topic' | 'cluster'> | undefined
  #queue: OffsetSyncEntry[] = []
  /** The first this many of the queue are being sent: thinning leaves them alone. */
  #inFlight = 0
  #thinned = 0
  /** Set once thinning was told; cleared when the queue empties (the next stretch is told again). */
  #thinningTold = false
  /**
   * The queue length that makes the next thinning: MAX_PENDING, or twice what the last one kept when it could not go
   * lower (more partitions than room), so that thinning never runs at every enqueue.
   */
  #thinAt: number
  #pump: Promise<void> | null = null
  /** The send under way (or the last one): a gated drain waits for it only. */
  #sending: Promise<void> | null = null
  /**
   * The pump's loop runs. Cleared in the loop's own synchronous exit, not in a `finally` callback of its promise: an
   * enqueue in the microtasks between the two would see a pump about to end, start none, and its syncs would wait
   * for the next enqueue (at a stop, for ever: the drain found no pump and left them unwritten).
   */
  #pumping = false
  #closed = false
  /** Bumped by `dropQueued`: a send of the queue before it neither removes nor puts back anything. */
  #epoch = 0
  /** Ends the pause between two failed sends under way early (a drain's deadline, a hand-over's wait). */
  #pause: AbortController | null = null
  /** The order each queued sync was queued in (1, 2, ...): the queue keeps that order whatever thinning drops. */
  readonly #seqOf = new WeakMap<OffsetSyncEntry, number>()
  #seq = 0
  /** `settled` calls waiting until no sync queued at or before their mark is left (written, or dropped). */
  readonly #settling: { readonly mark: number, readonly resolve: () => void }[] = []

  constructor (sink: Pick<OffsetSyncEmitter, 'send'>, log: Logger, options: SyncOutboxOptions) {
    this.#sink = sink
    this.#log = log
    this.#retryBaseMs = options.retryBaseMs ?? RETRY_BASE_MS
    this.#maxPending = options.maxPending ?? MAX_PENDING
    this.#metrics = options.metrics ?? noMetrics
    this.#labels = { flow: options.flow }
    const to = options.writesTo
    this.writesTo = to
    this.#where = to === undefined ? 'the offset-syncs topic' : `${to.topic} on cluster ${to.cluster}`
    this.#thinAt = this.#maxPending
    // The counters exist from the start at 0: Prometheus' increase() does not count a series' first sample.
    this.#metrics.inc('offsetSyncsThinned', this.#labels, 0)
    this.#metrics.inc('offsetSyncWriteFailures', this.#labels, 0)
    this.#metrics.set('offsetSyncsFailingSince', this.#labels, 0)
    this.#failures = new FailureStreak(log, writeStreakMessages('offset syncs', to === undefined ? {} : { ...to }))
  }

  /** Queues ENTRIES after every sync queued before; they go out at once unless a send is in flight. */
  enqueue (entries: readonly OffsetSyncEntry[]): void {
    if (entries.length === 0) return
    for (const e of entries) {
      this.#seqOf.set(e, ++this.#seq)
      this.#queue.push(e)
    }
    if (this.#queue.length > this.#thinAt) this.#thin()
    this.#pending()
    if (!this.#pumping) {
      this.#pumping = true
      this.#pump = this.#run()
    }
  }

  /**
   * Membership lost: every sync queued is dropped (its partition has other owners now); a send under way is not
   * sent again if it fails.
   */
  dropQueued (): void {
    this.#queue = []
    this.#inFlight = 0
    this.#epoch++
    // Nothing of the lost membership is written any more: its failure is no longer this instance's to show.
    this.#failures.clear()
    this.#metrics.set('offsetSyncsFailingSince', this.#labels, 0)
    this.#pending()
  }

  /**
   * Waits until every sync queued before this call is written (or dropped: thinning, a lost membership), or
   * TIMEOUT_MS passed, without closing anything; returns how many of them are still queued. A hand-over waits so
   * (progress-flusher.ts `storeReleased`): the syncs of the partitions it gives up go out while its lease holds,
   * before their next owner's, not after the member left its group (its writes are refused from then on).
   */
  async settled (timeoutMs: number): Promise<number> {
    const mark = this.#seq
    if (this.#closed || this.#leftUpTo(mark) === 0) return this.#leftUpTo(mark)
    const done = new AbortController()
    // (no time left: what is queued is told, without waking a send that has no time to end)
    if (timeoutMs <= 0) return this.#leftUpTo(mark)
    const waiter = { mark, resolve: () => { done.abort() } }
    this.#settling.push(waiter)
    // (a send waiting out its back-off is tried again now: the wait is short, and the lease may not hold for long)
    this.#pause?.abort()
    try {
      await delay(timeoutMs, undefined, { signal: done.signal }).catch(() => undefined)
    } finally {
      const i = this.#settling.indexOf(waiter)
      if (i >= 0) this.#settling.splice(i, 1)
    }
    return this.#leftUpTo(mark)
  }

  /** How many syncs queued at or before MARK are still queued: the queue's head, in the order queued. */
  #leftUpTo (mark: number): number {
    let n = 0
    while (n < this.#queue.length && (this.#seqOf.get(this.#queue[n]!) ?? 0) <= mark) n++
    return n
  }

  status (): OffsetSyncsStatus {
    const streak = this.#failures.current()
    return {
      pending: this.#queue.length,
      thinned: this.#thinned,
      failure: streak === null ? null : { since: new Date(streak.since).toISOString(), attempts: streak.attempts, error: streak.message }
    }
  }

  /**
   * Waits until every sync queued is written, or TIMEOUT_MS passed; then sends nothing more. Returns how many
   * were left unwritten (logged at warn when any). GATED: the writes are refused from now on (a member that left its
   * group): nothing more is sent, only the send under way (its request went out before) is waited for, TIMEOUT_MS
   * at most, and the warning says why the rest is not written.
   */
  async drain (timeoutMs: number, gated = false): Promise<number> {
    const first = !this.#closed
    const deadline = delay(timeoutMs, undefined, { ref: false })
    let done: Promise<void>
    if (gated) {
      // (closed first: the pump starts no further send, which the gate would refuse, once this one ends)
      this.#closed = true
      done = this.#inFlight > 0 && this.#sending !== null ? this.#sending.catch(() => undefined) : Promise.resolve()
    } else done = this.#pumping && this.#pump !== null ? this.#pump : Promise.resolve()
    await Promise.race([done, deadline])
    this.#closed = true
    this.#pause?.abort()
    this.#pending()
    const left = this.#queue.length
    if (left > 0 && first) {
      const why = gated ? 'its group membership had ended (its writes are refused from then on)' : `${timeoutMs} ms`
      this.#log.warn({ count: left, timeoutMs }, `${left} offset sync(s) could not be written before the stop (${why}): MM2 reading ${this.#where} translates the newest ` +
        'offsets of their partitions from an older sync (consumers re-read a little, never skip); kmirror\'s own translation is exact regardless')
    }
    return left
  }

  /** Sends until the queue is empty or the outbox closed; `#pumping` is cleared in the same step the loop ends. */
  async #run (): Promise<void> {
    try {
      for (let failures = 0; this.#queue.length > 0 && !this.#closed;) failures = await this.#sendHead(failures)
    } finally {
      this.#pumping = false
    }
  }

  /** Sends the head of the queue once; the failures in a row after it (a failure waits its back-off first). */
  async #sendHead (failures: number): Promise<number> {
    const batch = this.#queue.slice(0, MAX_BATCH)
    const epoch = this.#epoch
    this.#inFlight = batch.length
    // The acknowledged head of the batch leaves the queue at once: a later part failing sends only the rest again.
    const acked = (count: number): void => {
      if (epoch !== this.#epoch || count <= 0) return
      const n = Math.min(count, this.#inFlight)
      this.#queue.splice(0, n)
      this.#inFlight -= n
      this.#pending()
    }
    try {
      const sending = this.#sending = this.#sink.send(batch, acked)
      await sending
      acked(this.#inFlight)
      if (this.#failures.current() !== null) this.#metrics.set('offsetSyncsFailingSince', this.#labels, 0)
      this.#failures.succeeded()
      return 0
    } catch (err) {
      if (epoch !== this.#epoch) return failures
      this.#inFlight = 0
      this.#metrics.inc('offsetSyncWriteFailures', this.#labels)
      this.#failures.failed(err, { count: batch.length, pending: this.#queue.length })
      this.#metrics.set('offsetSyncsFailingSince', this.#labels, Math.floor(this.#failures.current()!.since / 1000))
      const pause = this.#pause = new AbortController()
      // (while a hand-over waits, tried again at the shortest back-off: the wait is short, the lease may end with it)
      const backOff = this.#settling.length > 0 ? Math.min(RETRY_BASE_MS, this.#retryBaseMs) : Math.min(RETRY_MAX_MS, this.#retryBaseMs * 2 ** failures)
      await delay(backOff, undefined, { signal: pause.signal }).catch(() => undefined)
      this.#pause = null
      return failures + 1
    }
  }

  /** Thins what is not in flight to about half of MAX_PENDING; the first time in a stretch, says so. */
  #thin (): void {
    const kept = thinSyncs(this.#queue.slice(this.#inFlight), Math.floor(this.#maxPending / 2))
    const dropped = this.#queue.length - this.#inFlight - kept.length
    this.#thinAt = Math.max(this.#maxPending, 2 * this.#queue.length - 2 * dropped)
    if (dropped === 0) return
    this.#queue = [...this.#queue.slice(0, this.#inFlight), ...kept]
    this.#thinned += dropped
    this.#metrics.inc('offsetSyncsThinned', this.#labels, dropped)
    if (this.#thinningTold) {
      this.#log.debug({ dropped, pending: this.#queue.length }, 'offset syncs queued thinned again')
      return
    }
    this.#thinningTold = true
    this.#log.warn({ dropped, pending: this.#queue.length, maxPending: this.#maxPending },
      `more than ${this.#maxPending} offset syncs wait to be written to ${this.#where} (unwritable for long while copying went on): ` +
      `${dropped} of them dropped, keeping for each partition its newest and, as far as room allows, the starts of runs; ` +
      'MM2 translating from the offset-syncs topic uses an older sync for the offsets in between (consumers re-read more after a failover, never skip); ' +
      'kmirror\'s own translation is exact regardless. Fix what the warning "cannot write offset syncs" names')
  }

  #pending (): void {
    const head = this.#queue.length === 0 ? Infinity : this.#seqOf.get(this.#queue[0]!) ?? 0
    for (const w of this.#settling) if (this.#closed || head > w.mark) w.resolve()
    if (this.#queue.length === 0) {
      this.#thinningTold = false
      this.#thinAt = this.#maxPending
    }
    this.#metrics.set('offsetSyncsPending', this.#labels, this.#queue.length)
  }
}
