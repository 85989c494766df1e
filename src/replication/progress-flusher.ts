/**
 * At-least-once mode: when the data path (flow-replicator.ts) stores what it copied. Offset syncs go out as soon
 * as they are recorded, one send at a time; positions are stored every `offset.flush.interval.ms`, at stop, and
 * (`flushWhenCaughtUp`) once every partition has caught up.
 *
 * Invariants:
 * - Positions are stored only after every offset sync recorded before them was sent (`flush` awaits the send in
 *   flight, promotes the delayed syncs and sends them first). In `kmirror run` the sink is the exact offset history
 *   on the target (its failures say so: `cannot write the offset history`); MM2's syncs are queued from it and
 *   written beside (sync-outbox.ts), never awaited here.
 * - A failed send puts its entries back in the tracker, in order; they go out with the next send. A flush whose
 *   last send failed fails too, storing nothing: a run start or a run's end not in the history while positions past
 *   it were stored would, after a crash, translate the rest of that run as a gap: forward, past copied records.
 * - A partition copied again from a log start (a source or remote topic created again) has its rewound position
 *   stored before the syncs of its new copy are sent (`restarted`): the history's newest run names the copy a stored
 *   position belongs to (ARCHITECTURE invariant 46).
 * - What a store or sync send writes belongs to the group membership it began under (`untilLost`, taken at its start):
 *   once that membership is lost no request of it starts (record-writer.ts), a flush ends quietly, a failed sync send
 *   puts nothing back (the tracker dropped that membership's syncs) and is no write failure, and a release's store
 *   is told as not stored. Its next owner resumes from what was stored before (ARCHITECTURE invariant 31).
 * - Exactly-once mode does not use this: each committed round stores its own syncs and progress
 *   (exactly-once-round.ts).
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { Logger } from '../logger.ts'
import { FailureStreak, writeStreakMessages } from './failure-streak.ts'
import type { OffsetSyncEntry, OffsetSyncTracker } from './offset-sync-tracker.ts'
import type { PartitionState } from './partition-set.ts'
import type { FlowReplicatorDeps, OffsetSyncSink, ProgressSink } from './replicator-ports.ts'

/** How many partitions a warning about unstored progress names (it counts the rest). */
const NAMED_AT_MOST = 20

/**
 * How long a hand-over waits for MM2's syncs queued beside the data path (`settleSyncs`): short, as a stop's
 * hand-over must end about 7 s after the signal, with the round in flight and the progress store before it.
 */
export const SETTLE_MS = 2_000

/**
 * What the wait for MM2's syncs leaves before the hand-over's own deadline (`settleSyncs` BY): the rest of the revoke
 * (forgetting the partitions, its log line) runs within it, so a slow wait never gets a stored hand-over cut and told
 * as not stored.
 */
export const SETTLE_RESERVE_MS = 200

/** With `flushWhenCaughtUp`, how often at most progress is stored because every partition caught up. */
const CAUGHT_UP_FLUSH_MS = 1000

/** The positions to store, keyed by `partitionKey`: the last offset copied of each partition. */
export type StoredPositions = Map<string, { topic: string, partition: number, lastOffset: number }>

/** The last copied offset of each partition not lost (one lost is no longer this instance's to store). */
export function positionsOf (partitions: Iterable<PartitionState>): StoredPositions {
  const positions: StoredPositions = new Map()
  for (const p of partitions) if (!p.lost) positions.set(p.key, { topic: p.topic, partition: p.partition, lastOffset: p.position - 1 })
  return positions
}

export interface ProgressFlusherDeps {
  readonly flow: FlowReplicatorDeps['flow']
  readonly progress: ProgressSink
  readonly syncs: OffsetSyncSink | null
  readonly log: Logger
  readonly tracker: OffsetSyncTracker
  readonly flushWhenCaughtUp: boolean
  /**
   * Aborted when the group membership held now is lost (ownership-grants.ts): what a store began under it writes
   * nothing once it fired, even through the next membership's producer (record-writer.ts). Never, without it.
   */
  readonly untilLost?: () => AbortSignal
}

export class ProgressFlusher {
  readonly #deps: ProgressFlusherDeps
  #lastFlush = Date.now()
  /** Records acknowledged since the last flush. */
  #dirty = false
  #caughtUpFlushAt = 0
  #syncInFlight: Promise<void> | null = null
  /** The last flush failed; none succeeded since. */
  #failed = false
  /** Offset-sync sends failing in a row (their leader down, for one): logged at warn once, at debug after. */
  readonly #syncFailures: FailureStreak
  /** The error of the last send when it failed (its entries wait in the tracker), else null. */
  #syncError: unknown = null
  /** Partitions restarted at a log start (`restarted`): their rewound positions, stored before the next syncs go. */
  readonly #rewound: StoredPositions = new Map()
  /** Partitions that left (`forgetRewound`) since the send in flight took the rewound positions: none is put back. */
  readonly #leftDuringSend = new Set<string>()

  constructor (deps: ProgressFlusherDeps) {
    this.#deps = deps
    const to = deps.syncs?.writesTo
    this.#syncFailures = new FailureStreak(deps.log, writeStreakMessages(to?.noun ?? 'offset syncs', to === undefined ? {} : { topic: to.topic, cluster: to.cluster }))
  }

  /** Records were acknowledged since the last flush. */
  markDirty (): void {
    this.#dirty = true
  }

  /** `offset.flush.interval.ms` has passed since the last flush. */
  isDue (): boolean {
    return Date.now() - this.#lastFlush >= this.#deps.flow.offsetFlushIntervalMs
  }

  /**
   * `flushWhenCaughtUp`: records were copied since the last flush and every partition has caught up (at most every
   * CAUGHT_UP_FLUSH_MS). A copy at rest then has its progress stored at once, so a lost group membership (which
   * stores nothing) re-copies nothing that was copied before the partitions went quiet.
   */
  isCaughtUpAndDirty (partitions: Iterable<PartitionState>): boolean {
    if (!this.#deps.flushWhenCaughtUp || !this.#dirty || Date.now() - this.#caughtUpFlushAt < CAUGHT_UP_FLUSH_MS) return false
    for (const p of partitions) if (!p.lost && p.position < p.highWatermark) return false
    this.#caughtUpFlushAt = Date.now()
    return true
  }

  /**
   * Partition KEY starts its copy again at FROM (a source or remote topic created again): its position from before
   * must not outlive the new copy's first run in the offset history, or a restart (or its next owner, after a lost
   * membership, which stores nothing) would find that run's topic id with the old position and resume there, past
   * records never copied. So FROM - 1 is stored before the next sync send, which carries that run's start.
   */
  restarted (key: string, topic: string, partition: number, from: number): void {
    this.#rewound.set(key, { topic, partition, lastOffset: from - 1 })
  }

  /** The membership was lost: nothing of it is stored any more, rewound positions neither. */
  dropRewound (): void {
    this.#rewound.clear()
    // What failed to be written was the lost membership's: the next one's writes start a streak of their own.
    this.#syncFailures.clear()
    this.#syncError = null
  }

  /**
   * These partitions left this instance (released with their positions stored, or removed): a rewound position
   * stored later would overwrite their next owner's, or bring back a position forgotten for good.
   */
  forgetRewound (keys: Iterable<string>): void {
    for (const key of keys) {
      this.#rewound.delete(key)
      if (this.#syncInFlight !== null) this.#leftDuringSend.add(key)
    }
  }

  /** Sends the pending offset syncs unless a send is in flight (they go with the next one then). */
  sendSyncs (): void {
    const syncs = this.#deps.syncs
    const tracker = this.#deps.tracker
    if (syncs === null || this.#syncInFlight !== null || tracker.pendingCount === 0) return
    const takenAt = tracker.epoch
    const entries = tracker.takePending()
    const rewound = new Map(this.#rewound)
    this.#rewound.clear()
    this.#leftDuringSend.clear()
    this.#syncInFlight = this.#send(syncs, entries, rewound, this.#deps.untilLost?.())
      .then(() => {
        this.#syncError = null
        this.#syncFailures.succeeded()
      }, err => {
        if (tracker.epoch !== takenAt) {
          // Taken under a membership lost since (`dropAll`): nothing of it is to be written any more, so its failure
          // (the loss cut the send) is no write failure to warn of, and ends any streak.
          this.#deps.log.debug({ err, count: entries.length }, 'offset syncs of a lost group membership not written')
          this.#syncFailures.clear()
          return
        }
        tracker.requeue(entries, takenAt)
        // Put back unless restarted again since (the newer rewind is the one to store), nor for a partition that left
        // meanwhile (stored later, it would overwrite its next owner's position).
        for (const [key, position] of rewound) if (!this.#rewound.has(key) && !this.#leftDuringSend.has(key)) this.#rewound.set(key, position)
        this.#syncError = err
        this.#syncFailures.failed(err, { count: entries.length })
      })
      .finally(() => { this.#syncInFlight = null })
  }

  async #send (syncs: OffsetSyncSink, entries: readonly OffsetSyncEntry[], rewound: StoredPositions, until: AbortSignal | undefined): Promise<void> {
    if (rewound.size > 0) await this.#deps.progress.commit(rewound, until)
    await syncs.send(entries, until)
  }

  /** Stores pending offset syncs (delayed ones too): what a flush writes before the positions. */
  async flushSyncs (): Promise<void> {
    if (this.#syncInFlight !== null) await this.#syncInFlight
    this.#deps.tracker.promoteDelayed()
    this.sendSyncs()
    if (this.#syncInFlight !== null) await this.#syncInFlight
    // Not written (they wait in the tracker): the positions must not be stored past them.
    if (this.#syncError !== null && this.#deps.tracker.pendingCount > 0) throw this.#syncError
  }

  /** A flush failed and none succeeded since: the round's end tries again rather than waiting for the interval. */
  hasFailed (): boolean {
    return this.#failed
  }

  /**
   * Writes pending offset syncs, then these positions. A failure keeps what it did not store dirty. STATES are the
   * partitions the positions were taken of. The positions belong to the group membership held when the flush began:
   * once it is lost (a freeze past the session timeout, a lost heartbeat) they may be another instance's, so the
   * partitions lost are left out, and the store under way sends nothing more (`untilLost`), even through the next
   * membership's producer once its lease holds. Stored anyway, a position would land after its next owner's, which
   * would resume from it and copy again (instance-failure.test.ts, SIGSTOP). Such a flush ends quietly: nothing of
   * that membership is this instance's to store any more.
   */
  async flush (positions: StoredPositions, states: Iterable<PartitionState> = []): Promise<void> {
    const until = this.#deps.untilLost?.()
    this.#lastFlush = Date.now()
    const dirty = this.#dirty
    this.#dirty = false
    try {
      await this.flushSyncs()
      for (const state of states) if (state.lost) positions.delete(state.key)
      const written = await this.#deps.progress.commit(positions, until)
      this.#failed = false
      if (written > 0) this.#deps.log.debug({ partitions: written }, 'progress stored')
    } catch (err) {
      if (until?.aborted === true) {
        this.#deps.log.debug({ err, partitions: positions.size }, 'the progress of a lost group membership is not stored')
        return
      }
      this.#failed = true
      this.#dirty ||= dirty
      throw err
    }
  }

  /**
   * Stores the offset syncs and the positions of released partitions, retrying until stored (true), or throwing the
   * failure once `stopping()`, or giving up once LOST is aborted (false, with a warning naming what is not stored):
   * the membership was lost, or the member's stop could wait no longer and dropped its work as lost, so the
   * partitions may be another instance's by then. LOST is looked at before each attempt (a loss during the back-off
   * sends nothing more, even once a new membership's lease holds) and ends the wait for the store under way. BY (epoch
   * ms): the hand-over's own deadline, which bounds the wait for MM2's syncs once the positions are stored.
   */
  async storeReleased (positions: StoredPositions, stopping: () => boolean, lost: AbortSignal, by?: number): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      if (lost.aborted) return this.#notStored(positions)
      try {
        await unlessAborted(this.#storeReleasedOnce(positions, lost), lost)
        await this.settleSyncs(positions, lost, by)
        return true
      } catch (err) {
        if (lost.aborted) return this.#notStored(positions)
        // Stopping: the revoke fails (the flow's stop stores what it still owns).
        if (stopping()) throw err
        this.#deps.log.warn({ err, partitions: positions.size, attempt }, 'cannot store the progress of revoked partitions; retrying')
        await delay(Math.min(5000, 100 * 2 ** Math.min(attempt, 6)), undefined, { signal: lost }).catch(() => undefined)
      }
    }
  }

  /** LOST also ends the store under way: `unlessAborted` stops the wait for it, not its write. */
  async #storeReleasedOnce (positions: StoredPositions, lost: AbortSignal): Promise<void> {
    await this.flushSyncs()
    await this.#deps.progress.commit(positions, lost)
  }

  /**
   * MM2's syncs of a hand-over, queued beside the data path: waited for (SETTLE_MS at most) while the lease holds, so
   * they land before the next owner's, and before a stopping member leaves its group (from then on its writes are
   * refused, and they would be lost with the process). Not waited for longer: MM2's syncs may trail (sync-outbox.ts).
   * Exactly-once mode calls it alone (its committed rounds stored the positions; their syncs are queued after each).
   * With BY (the hand-over's deadline, epoch ms), it ends SETTLE_RESERVE_MS before BY if that comes first.
   */
  async settleSyncs (positions: StoredPositions, lost: AbortSignal, by?: number): Promise<void> {
    const settle = this.#deps.syncs?.settle
    if (settle === undefined || positions.size === 0 || lost.aborted) return
    const waitMs = settleWaitMs(by)
    const left = await unlessAborted(settle(waitMs), lost).catch(() => 0)
    if (left === 0) return
    const to = this.#deps.syncs?.settlesTo
    const where = to === undefined ? 'the offset-syncs topic' : `${to.topic} on cluster ${to.cluster}`
    const within = waitMs === SETTLE_MS ? `within ${SETTLE_MS / 1000} s` : waitMs === 0 ? 'as the hand-over\'s deadline left no time to wait' : `in the ${waitMs} ms the hand-over's deadline left`
    this.#deps.log.warn({ count: left, partitions: positions.size, waitedMs: waitMs }, `${left} offset sync(s) queued for MM2 before the hand-over of ${positions.size} ` +
      `partition(s) (of those and of the partitions kept) were not written to ${where} ${within}: the hand-over goes on without them. ` +
      'In a rebalance they are written after it, possibly after the next owner\'s; at a stop they are lost (the member leaves its group, and its writes ' +
      'are refused from then on). MM2 translating from that topic then uses an older sync (consumers re-read, never skip); kmirror\'s own translation ' +
      'is exact regardless. Fix what the warning "cannot write offset syncs" names')
  }

  #notStored (positions: StoredPositions): false {
    if (positions.size === 0) return false
    const named = [...positions.values()].slice(0, NAMED_AT_MOST).map(p => `${p.topic}-${p.partition} (copied to offset ${p.lastOffset})`)
    const more = positions.size > NAMED_AT_MOST ? ` and ${positions.size - NAMED_AT_MOST} more` : ''
    this.#deps.log.warn({ partitions: [...positions.keys()] }, `the progress of ${positions.size} released partition(s) is not stored: ${named.join(', ')}${more}. ` +
      'This instance\'s membership ended first (lost, or a stop that could not wait longer), so they may be another instance\'s now: ' +
      'their next owner resumes from the progress stored before and copies what was copied since again')
    return false
  }
}

/** How long a hand-over waits for MM2's syncs: SETTLE_MS, or less when its deadline BY (epoch ms) comes first. */
export function settleWaitMs (by: number | undefined, now = Date.now()): number {
  if (by === undefined) return SETTLE_MS
  return Math.max(0, Math.min(SETTLE_MS, by - SETTLE_RESERVE_MS - now))
}

/** WORK's outcome, or SIGNAL's abort first (WORK goes on unawaited; its failure is not reported twice). */
async function unlessAborted<T> (work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => undefined)
  // (aborted already: an 'abort' listener added now would never be called)
  signal.throwIfAborted()
  let onAbort = (): void => {}
  const aborted = new Promise<never>((_resolve, reject) => { onAbort = () => { reject(signal.reason) } })
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    return await Promise.race([work, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}
