/**
 * Exactly-once mode: one fetch-write round of the data path (flow-replicator.ts) as one target transaction
 * (transaction-rounds.ts) holding its data batches, offset syncs, offset history and progress records.
 *
 * Invariants:
 * - Nothing is stored between rounds: the round's offset syncs and positions are written inside its transaction,
 *   after its data, so they are committed (or aborted) with it.
 * - A failed round is aborted; before the next one, once the abort is complete, every partition goes back to its
 *   committed progress (read again, read_committed) or, when none is stored, to where the failed round found it,
 *   and its offset-sync run starts afresh (what the tracker knew may point at aborted offsets). What the round
 *   copied is copied again; only committed copies are ever visible. A round whose commit got no answer (a timeout,
 *   a lost connection) may have gone through: the committed progress, read once the transaction is complete, says
 *   whether (it holds the positions the round stored, or not), and the round is counted committed or aborted then.
 * - Offset syncs located on the source cannot join a target transaction: they are sent after the commit, as MM2
 *   does; kmirror's own offset history (inside the transaction) has them anyway.
 * - A lost group membership ends the transactional producer at once (`membershipLost`). Its fencing is expected
 *   then (the group's leader fences a lost member's id before handing its work out): a FENCED answer to a round
 *   begun before the loss, or while the lease does not hold (the loss about to be noticed), ends that round
 *   quietly (`run` returns false) instead of stopping the flow. A FENCED answer while the membership holds (another
 *   process with this transactional id) still stops it: a fenced producer never writes, and is never initialised
 *   again by the same membership.
 */
import { isTransactionFencing } from '../kafka/writer-transaction.ts'
import type { Logger } from '../logger.ts'
import type { OffsetSyncEntry, OffsetSyncTracker } from './offset-sync-tracker.ts'
import type { PartitionSet } from './partition-set.ts'
import type { StoredPositions } from './progress-flusher.ts'
import type { ExactlyOnceDeps, FlowReplicatorDeps, OffsetSyncSink, ProgressSink } from './replicator-ports.ts'

export interface ExactlyOnceRoundDeps {
  readonly eos: ExactlyOnceDeps
  readonly flow: FlowReplicatorDeps['flow']
  readonly progress: ProgressSink
  /** Offset syncs written inside the transaction (target-located), or null. */
  readonly syncs: OffsetSyncSink | null
  readonly log: Logger
  readonly tracker: OffsetSyncTracker
  readonly partitions: PartitionSet
  /** The positions of every partition still owned. */
  readonly positions: () => StoredPositions
  /** The group lease gate (FlowReplicatorDeps.fence); absent alone. */
  readonly fence: (() => string | null) | undefined
  /** The target cluster's alias, for messages. */
  readonly target: string
}

export class ExactlyOnceRound {
  readonly #deps: ExactlyOnceRoundDeps
  /** When the delayed offset syncs were last promoted (every `offset.flush.interval.ms`, as a flush would). */
  #lastPromote = Date.now()
  /** A round failed: positions before it, to go back to where no progress is committed. */
  #rewindFrom: Map<string, number> | null = null
  /** The positions the running round stored in its transaction (null before `#store`). */
  #stored: StoredPositions | null = null
  /** A round whose commit got no answer: the positions it stored, to tell from the committed progress how it ended. */
  #doubtful: StoredPositions | null = null
  /** The offset syncs for the source of that round: queued if it turns out committed. */
  #doubtfulSyncs: OffsetSyncEntry[] = []
  /**
   * Partitions restarted at a log start since the last commit (a source or remote topic created again), with the
   * offset: a rewind to the committed progress (the old topic's position) must not undo that.
   */
  readonly #restarts = new Map<string, number>()
  /** Memberships lost so far (`membershipLost`). */
  #losses = 0
  /** The loss count at which the expected fencing was last reported: once per lost membership. */
  #reportedLoss = -1

  constructor (deps: ExactlyOnceRoundDeps) {
    this.#deps = deps
  }

  /**
   * Runs `round` (fetch and write) in a transaction with the round's syncs and progress; rethrows a failure, except
   * the expected fencing of a lost membership's producer (then false: nothing was copied).
   */
  async run (round: () => Promise<boolean>): Promise<boolean> {
    const losses = this.#losses
    try {
      return await this.#run(round)
    } catch (err) {
      if (!this.#fencedByLostMembership(err, losses)) throw err
      return false
    }
  }

  /** Partition KEY restarts at offset FROM of a topic created again (kept across rewinds until a commit holds it). */
  restarted (key: string, from: number): void {
    this.#restarts.set(key, from)
  }

  /**
   * The group membership is lost: the transactional producer it wrote under is ended at once; the next is
   * initialised under a new membership's lease, before its first write (batch-writer.ts, `endMembership`).
   */
  membershipLost (): void {
    this.#losses++
    // Its restarts went with its partitions: a rewind under the next membership must not put them back.
    this.#restarts.clear()
    const fenced = this.#deps.eos.rounds.endMembership()
    this.#deps.log.info({ ...this.#where(), fenced: fenced !== null },
      'group membership lost: the transactional producer of that membership is ended (the group\'s leader fences a lost member\'s transactional id ' +
      'before handing its work out); a new producer is initialised when the group assigns this instance work again')
  }

  /** A fencing that follows this instance's own lost membership (see the invariants); reported once per loss. */
  #fencedByLostMembership (err: unknown, losses: number): boolean {
    const reason = this.#deps.fence?.() ?? null
    if (!isTransactionFencing(err) || (losses === this.#losses && reason === null)) return false
    if (this.#reportedLoss !== this.#losses) {
      this.#reportedLoss = this.#losses
      this.#deps.log.info({ ...this.#where(), kafkaErrors: err.details['kafkaErrors'], lease: reason },
        'the round\'s transaction was fenced because this instance lost its group membership (frozen or cut off past session.timeout.ms): nothing of it ' +
        'becomes visible, the instance that owns its partitions now copies them; this one writes again with a new producer once its group assigns it work')
    }
    return true
  }

  #where (): Record<string, string | undefined> {
    return { group: this.#deps.flow.groupId, cluster: this.#deps.target, transactionalId: this.#deps.eos.rounds.transactionalId }
  }

  async #run (round: () => Promise<boolean>): Promise<boolean> {
    const { eos, partitions } = this.#deps
    if (this.#rewindFrom !== null) await this.#rewind(this.#rewindFrom)
    const before = new Map<string, number>()
    for (const [key, p] of partitions.entries()) before.set(key, p.position)
    let committedSyncs: OffsetSyncEntry[] = []
    this.#stored = null
    try {
      const progressed = await eos.rounds.run(async () => {
        const result = await round()
        committedSyncs = await this.#store()
        return result
      })
      this.#restarts.clear()
      // Only for a round that committed: one whose transaction a lost membership dropped wrote records that are aborted.
      if (committedSyncs.length > 0 && eos.syncsAfterCommit !== null && eos.rounds.lastCommitted) eos.syncsAfterCommit.enqueue(committedSyncs)
      return progressed
    } catch (err) {
      this.#rewindFrom = before
      this.#doubtful = eos.rounds.commitInDoubt ? this.#stored : null
      this.#doubtfulSyncs = eos.rounds.commitInDoubt ? committedSyncs : []
      throw err
    }
  }

  /** Inside the round's transaction: its offset syncs and history, then its progress. */
  async #store (): Promise<OffsetSyncEntry[]> {
    const { tracker, syncs, progress, flow } = this.#deps
    if (Date.now() - this.#lastPromote >= flow.offsetFlushIntervalMs) {
      this.#lastPromote = Date.now()
      tracker.promoteDelayed()
    }
    const entries = tracker.takePending()
    if (entries.length > 0 && syncs !== null) await syncs.send(entries)
    this.#stored = this.#deps.positions()
    await progress.commit(this.#stored)
    return entries
  }

  /** After a failed round, once its transaction is complete: every partition back to its committed progress. */
  async #rewind (before: ReadonlyMap<string, number>): Promise<void> {
    const { eos, tracker, partitions, log } = this.#deps
    await eos.rounds.recover()
    // Nothing to rewind after a lost membership dropped every partition: no read (it could wait for that
    // membership's own transaction, which only its next producer ends).
    const stored = partitions.size === 0 ? new Map<string, number>() : await eos.reloadProgress()
    const wentThrough = this.#settleDoubt(stored, before)
    tracker.takePending()
    for (const [key, p] of partitions.entries()) {
      const committed = stored.get(key)
      p.position = committed === undefined ? (before.get(key) ?? p.position) : committed + 1
      tracker.reset(key)
    }
    tracker.dropDelayed()
    // A restart the failed round made (or an earlier failed one) stands: the committed position is the old topic's.
    if (wentThrough) this.#restarts.clear()
    for (const [key, from] of this.#restarts) {
      const p = partitions.get(key)
      if (p !== undefined) p.position = from
    }
    this.#rewindFrom = null
    if (!wentThrough) log.info({ partitions: partitions.size }, 'round aborted; every partition resumes at its committed progress')
  }

  /**
   * A round whose commit got no answer: committed if the committed progress (final now: `recover` completed its
   * transaction) holds the positions it moved, aborted if not. One that moved no position cannot be told: not counted.
   * Returns whether it went through.
   */
  #settleDoubt (committed: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>): boolean {
    const doubtful = this.#doubtful
    const syncs = this.#doubtfulSyncs
    this.#doubtful = null
    this.#doubtfulSyncs = []
    if (doubtful === null) return false
    const moved = [...doubtful].filter(([key, p]) => before.get(key) !== p.lastOffset + 1)
    if (moved.length === 0) return false
    // (-1, stored when a partition restarted at offset 0, reads back as no position)
    const wentThrough = moved.every(([key, p]) => (committed.get(key) ?? -1) === p.lastOffset)
    this.#deps.eos.rounds.settleDoubt(wentThrough)
    if (wentThrough && syncs.length > 0) this.#deps.eos.syncsAfterCommit?.enqueue(syncs)
    this.#deps.log.info({ ...this.#where(), partitions: moved.length, committed: wentThrough },
      wentThrough
        ? 'the commit of the last round got no answer, and it went through: its records are visible once, nothing is copied again'
        : 'the commit of the last round got no answer, and it did not go through: nothing of it is visible, its records are copied again')
    return wentThrough
  }
}
