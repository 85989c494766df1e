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
 *   copied is copied again; only committed copies are ever visible.
 * - Offset syncs located on the source cannot join a target transaction: they are sent after the commit, as MM2
 *   does; kmirror's own offset history (inside the transaction) has them anyway.
 */
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
}

export class ExactlyOnceRound {
  readonly #deps: ExactlyOnceRoundDeps
  /** When the delayed offset syncs were last promoted (every `offset.flush.interval.ms`, as a flush would). */
  #lastPromote = Date.now()
  /** A round failed: positions before it, to go back to where no progress is committed. */
  #rewindFrom: Map<string, number> | null = null

  constructor (deps: ExactlyOnceRoundDeps) {
    this.#deps = deps
  }

  /** Runs `round` (fetch and write) in a transaction with the round's syncs and progress; rethrows a failure. */
  async run (round: () => Promise<boolean>): Promise<boolean> {
    const { eos, partitions, log } = this.#deps
    if (this.#rewindFrom !== null) await this.#rewind(this.#rewindFrom)
    const before = new Map<string, number>()
    for (const [key, p] of partitions.entries()) before.set(key, p.position)
    let committedSyncs: OffsetSyncEntry[] = []
    try {
      const progressed = await eos.rounds.run(async () => {
        const result = await round()
        committedSyncs = await this.#store()
        return result
      })
      if (committedSyncs.length > 0 && eos.syncsAfterCommit !== null) {
        eos.syncsAfterCommit.send(committedSyncs).catch(err => log.warn({ err, count: committedSyncs.length }, 'cannot write offset syncs to the source cluster (outside the transaction, as MM2); kmirror\'s own offset history has them'))
      }
      return progressed
    } catch (err) {
      this.#rewindFrom = before
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
    await progress.commit(this.#deps.positions())
    return entries
  }

  /** After a failed round, once its transaction is complete: every partition back to its committed progress. */
  async #rewind (before: ReadonlyMap<string, number>): Promise<void> {
    const { eos, tracker, partitions, log } = this.#deps
    await eos.rounds.recover()
    const stored = await eos.reloadProgress()
    tracker.takePending()
    for (const [key, p] of partitions.entries()) {
      const committed = stored.get(key)
      p.position = committed === undefined ? (before.get(key) ?? p.position) : committed + 1
      tracker.reset(key)
    }
    tracker.dropDelayed()
    this.#rewindFrom = null
    log.info({ partitions: partitions.size }, 'round aborted; every partition resumes at its committed progress')
  }
}
