/**
 * The data path of one flow: fetch from the source, write to the remote topics, record what was copied.
 *
 * Invariants:
 * - A partition's position advances only after the target acknowledged (acks=all) every record before it,
 *   so a crash at any point loses nothing: at worst records after the last stored position are copied again.
 * - Records keep their partition number, key, value, headers (order and repeats) and timestamp.
 * - Offset syncs are fed with acknowledged (source, target) pairs only (see OffsetSyncTracker; round-writer.ts);
 *   at-least-once mode stores positions only after the offset syncs recorded before them (progress-flusher.ts).
 * - A source offset below the log start (retention deleted records before they were copied) is never skipped
 *   silently: it is logged at error level with the number of records lost and counted.
 * - A partition the source or the target refuses (authorization, unknown topic, a batch too large even after
 *   re-encoding, a corrupt batch) is set aside with its error and retried with its own back-off
 *   (partition-failures.ts); it never advances past records it did not copy, and the others keep flowing.
 * - Exactly-once mode (`exactlyOnce`): each round is one target transaction holding its data batches, offset
 *   syncs, history and progress records (exactly-once-round.ts, transaction-rounds.ts); nothing is flushed between rounds. A failed round
 *   is aborted and every partition goes back to its committed progress (read again, read_committed, once the
 *   abort is complete): what the round copied is copied again, and only committed copies are ever visible.
 * - A FENCED failure (another producer initialised this instance's transactional id) stops the flow without
 *   storing anything, unless it follows this instance's own lost membership (exactly-once-round.ts). The group
 *   lease gate's FENCED (the `fence` hook: the lease ran out) is retriable: nothing is sent, and no round runs
 *   while the gate stays closed; the work goes on once the lease holds again, or is lost with the membership.
 * - A partition whose remote topic was deleted and created again (a new topic id at its next write) is copied again
 *   from the source's log start by whichever instance owns it (ARCHITECTURE invariant 37), logged at error level;
 *   one whose source topic was (a new topic id in a fetch answer) restarts at the new topic's log start, that
 *   answer unwritten (source-recreated.ts).
 * - A failure of a whole step (a broker unreachable, a request timed out, credentials or a cluster ACL refused)
 *   is retried with back-off, logged once per change of error. Only errors kmirror cannot classify stop the
 *   flow (programmer errors, INTERNAL, and other errors not marked retriable), because carrying on could lose data.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { FetchOutcomes } from '../kafka/record-fetcher.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import type { ReplicatedTopic } from '../metadata/remote-topics.ts'
import { OffsetSyncTracker } from './offset-sync-tracker.ts'
import { isWorthWaiting, stepBackoffMs, type StepFailure, type StepFailures } from './step-failures.ts'
import type { FlowReplicatorDeps, PartitionStatus } from './replicator-ports.ts'
import { ErrorCodes, errorMessage, isKmirrorError } from '../errors.ts'
import { fetchPosition, PartitionSet, recoverOutOfRange, type PartitionRef, type PartitionState } from './partition-set.ts'
import type { Owns, PendingStarts } from './pending-starts.ts'
import { positionsOf, type ProgressFlusher, type StoredPositions } from './progress-flusher.ts'
import type { RoundWriter } from './round-writer.ts'
import { buildReplicatorParts } from './replicator-parts.ts'
import type { ExactlyOnceRound } from './exactly-once-round.ts'
import type { PartitionFailures } from './partition-failures.ts'
import type { RecreatedRemotes } from './recreated-remotes.ts'
import type { RoundOutcome } from './round-outcome.ts'
import type { SourceWaits } from './source-waits.ts'
import type { SourceRecreated } from './source-recreated.ts'
import type { TargetWait } from './target-wait.ts'
import { statusOf } from './record-times.ts'
import { setHoldGauges, withHold } from './source-holds-view.ts'
import { PartitionOwnership } from './partition-ownership.ts'
import { reportLongWaits } from './wait-reports.ts'
import { TopicSeries } from './topic-series.ts'

export type { StepFailure } from './step-failures.ts'
export type { PartitionRef } from './partition-set.ts'
export { isReadFailure, partitionLag, type BatchingOptions, type ExactlyOnceDeps, type FlowReplicatorDeps, type OffsetSyncSink, type PartitionStatus, type ProgressSink, type SourceReader, type TargetWriter } from './replicator-ports.ts'

/** How often a data path whose lease gate is closed looks whether it opened again. */
const LEASE_POLL_MS = 100

/** Bytes per partition of the first fetch round (a larger first batch is still returned whole). */
const FIRST_ROUND_PARTITION_BYTES = 64 * 1024

export class FlowReplicator {
  readonly #deps: FlowReplicatorDeps
  readonly #partitions: PartitionSet
  readonly #tracker: OffsetSyncTracker
  readonly #metrics: Metrics
  readonly #flusher: ProgressFlusher
  readonly #writer: RoundWriter
  /** Exactly-once mode: how a round runs as a transaction; null in at-least-once mode. */
  readonly #eos: ExactlyOnceRound | null
  #stopping = false
  #failures = 0
  readonly #steps: StepFailures
  readonly #failing: PartitionFailures
  /** Partitions added, released, lost and removed between two rounds (partition-ownership.ts). */
  readonly #ownership: PartitionOwnership
  #looping = false
  #rounds = 0
  /** When the last fetch-and-write round completed with an answer (health: a flow that stops completing them is stalled). */
  #lastRoundAt = Date.now()
  /** Partitions whose remote topic was created again, waiting to start again from the source's log start. */
  readonly #recreated: RecreatedRemotes
  /** Settles each partition after a round (round-outcome.ts). */
  readonly #outcome: RoundOutcome
  /** Partitions the target cannot take yet, out of the fetch rounds until it can (target-wait.ts). */
  readonly #waiting: TargetWait
  /** Partitions the source gives nothing of though it refused nothing (no leader, a leader out of reach, an open transaction). */
  readonly #unread: SourceWaits
  readonly #pendingStarts: PendingStarts
  /** Partitions whose source topic was deleted and created again: restarted at its log start (source-recreated.ts). */
  readonly #sourceRecreated: SourceRecreated
  /** The metric series of the topics and partitions it copies, removed as they leave (topic-series.ts). */
  readonly #series: TopicSeries

  constructor (deps: FlowReplicatorDeps) {
    this.#deps = deps
    this.#metrics = deps.metrics ?? noMetrics
    this.#tracker = new OffsetSyncTracker(deps.flow.offsetLagMax)
    this.#series = new TopicSeries(this.#metrics, deps.flow.name, deps.countedSeriesKeptMs)
    this.#partitions = new PartitionSet(deps.fetcher, deps.startAt, deps.log, this.#series, deps.copiedFrom)
    const parts = buildReplicatorParts(deps, {
      partitions: this.#partitions, tracker: this.#tracker, metrics: this.#metrics, state: f => this.#state(f), positions: () => this.#positions(), afterAcks: copied => this.#afterAcks(copied)
    })
    this.#steps = parts.steps
    this.#failing = parts.failing
    this.#unread = parts.unread
    this.#pendingStarts = parts.pendingStarts
    this.#flusher = parts.flusher
    this.#eos = parts.eos
    this.#writer = parts.writer
    this.#recreated = parts.recreated
    this.#sourceRecreated = parts.sourceRecreated
    this.#waiting = parts.waiting
    this.#outcome = parts.outcome
    this.#ownership = new PartitionOwnership({
      partitions: this.#partitions, tracker: this.#tracker, parts, target: deps.writer, syncs: deps.syncs, log: deps.log, looping: () => this.#looping, stopping: () => this.#stopping
    })
  }

  /** Positions previously stored (by kmirror or MM2), keyed by `partitionKey`. */
  setStoredProgress (stored: Map<string, number>): void {
    this.#partitions.setStored(stored)
  }

  /** Adds the partitions of these topics not replicated yet (partition-ownership.ts). */
  addTopics (topics: readonly ReplicatedTopic[], fromLogStart: ReadonlySet<string> = new Set(), owns: Owns = () => true): Promise<void> {
    return this.#ownership.addTopics(topics, fromLogStart, owns)
  }

  /** Starts copying these partitions, assigned to this instance (partition-ownership.ts). */
  addPartitions (partitions: readonly PartitionRef[], stored: ReadonlyMap<string, number>, owns: Owns = () => true): Promise<void> {
    return this.#ownership.addPartitions(partitions, stored, owns)
  }

  /** Stops copying these partitions, revoked from this instance, once their progress is stored (partition-ownership.ts). */
  releasePartitions (partitions: readonly { topic: string, partition: number }[], by?: number): Promise<boolean> {
    return this.#ownership.releasePartitions(partitions, by)
  }

  /** Membership lost: nothing of any partition is written or stored any more (partition-ownership.ts). */
  loseAll (): void {
    this.#ownership.loseAll()
  }

  /** Stops replicating the named source topics and forgets their positions (partition-ownership.ts). */
  removeTopics (topics: readonly string[]): Promise<void> {
    return this.#ownership.removeTopics(topics)
  }

  stop (): void {
    this.#stopping = true
  }

  get stopping (): boolean {
    return this.#stopping
  }

  /** When the last round completed (Date.now() time); the creation time before the first. */
  get lastRoundAt (): number {
    return this.#lastRoundAt
  }

  /** Runs until `stop()`, then writes the final progress and offset syncs. */
  async run (): Promise<void> {
    this.#looping = true
    return this.#loop().finally(() => {
      this.#looping = false
      this.#ownership.applyChanges()
      // Stopped (asked to, or on an error): it copies nothing more, so no series of a topic it copied stays.
      this.#series.removeAll(this.#partitions.values())
    })
  }

  async #loop (): Promise<void> {
    while (!this.#stopping) {
      // Beside the rounds: what a try finds joins at a later change (pending-starts.ts).
      this.#pendingStarts.retry()
      this.#ownership.applyChanges()
      this.#series.sweep(Date.now(), this.#partitions)
      // The lease gate closed with work held (group-member.ts): nothing may be written, so nothing is fetched
      // until it opens again; no round completes meanwhile, so health sees the pause.
      if (this.#partitions.size > 0 && (this.#deps.fence?.() ?? null) !== null) {
        await delay(LEASE_POLL_MS)
        continue
      }
      try {
        const progressed = await this.#iterate()
        this.#steps.succeeded()
        if (progressed) {
          this.#lastRoundAt = Date.now()
          this.#failures = 0
        } else {
          // Every partition answered RETRY (leader moving, metadata stale): back off instead of spinning.
          this.#failures++
          await delay(stepBackoffMs(this.#failures))
        }
      } catch (err) {
        if (!isWorthWaiting(err)) {
          // Fenced: another instance owns the work now; this one must not write anything more.
          if (isKmirrorError(err) && err.code === ErrorCodes.FENCED) throw err
          // Records acknowledged before the error must not be copied again after a restart.
          await this.flush().catch(flushErr => this.#deps.log.warn({ err: flushErr }, 'cannot store progress after a fatal error'))
          throw err
        }
        this.#failures++
        const backoffMs = stepBackoffMs(this.#failures)
        this.#steps.failed(err, this.#failures, backoffMs)
        await delay(backoffMs)
      }
    }
    await this.flush()
  }

  /** One fetch-write round (one transaction in exactly-once mode). Returns false when no partition could be read. */
  async #iterate (): Promise<boolean> {
    return this.#eos === null ? await this.#round() : await this.#eos.run(() => this.#round())
  }

  async #round (): Promise<boolean> {
    await this.#recreated.checkIdle(this.#partitions.values())
    await this.#recreated.copyAgainFromLogStart()
    this.#metrics.set('partitionsWaitingForTarget', { flow: this.#deps.flow.name }, this.#waiting.count())
    setHoldGauges(this.#metrics, this.#deps.flow.name, this.#unread.holding())
    this.#waiting.poll()
    reportLongWaits({ flow: this.#deps.flow, waiting: this.#waiting, unread: this.#unread, failing: this.#failing, writer: this.#deps.writer, log: this.#deps.log })
    const active = this.#partitions.active(Date.now())
    // Nothing to read counts as a round: a member of a group with more members than partitions is idle, not
    // stalled. One whose lease does not hold (its work lost) is told stalled by its lease (runtime/health.ts).
    if (active.length === 0) {
      await this.#waiting.idle(200)
      return true
    }
    // The first round after start reads little per partition, so the first records reach the target sooner
    // (a full first round is megabytes to fetch and write before anything is acknowledged).
    const first = this.#rounds++ === 0
    const fetchStart = Date.now()
    const fetched = this.#sourceRecreated.sift(await this.#deps.fetcher.fetchBatches(active.map(fetchPosition),
      first ? { maxPartitionBytes: FIRST_ROUND_PARTITION_BYTES } : {}))
    const withBatches = fetched.filter(f => f.outcome === FetchOutcomes.OK && f.batches.length > 0)
    const writeStart = Date.now()
    const { incomplete, failed, fenced } = withBatches.length > 0 ? await this.#writer.write(withBatches) : { incomplete: [], failed: [], fenced: false }
    const writeMs = Date.now() - writeStart
    const outOfRange = this.#outcome.settle(fetched, incomplete, failed, fenced)
    for (const f of outOfRange) {
      this.#tracker.reset(this.#state(f).key)
      await recoverOutOfRange(this.#state(f), f, { fetcher: this.#deps.fetcher, log: this.#deps.log, metrics: this.#metrics, flow: this.#deps.flow.name })
    }
    if (this.#eos === null) {
      this.#flusher.sendSyncs()
      if (this.#flusher.isDue() || this.#flusher.hasFailed() || this.#flusher.isCaughtUpAndDirty(this.#partitions.values())) await this.flush()
    }
    if (incomplete.length > 0 && !fenced) {
      // With the round's timing: where the time goes while a target loads many new partitions.
      this.#deps.log.debug({ partitions: incomplete.map(f => `${f.topic}-${f.partition}`).slice(0, 20), count: incomplete.length, written: withBatches.length - incomplete.length, fetchMs: writeStart - fetchStart, writeMs }, 'the target cannot take records for these remote partitions yet (no leader, leadership moving); trying again')
    }
    return fetched.some(f => f.outcome !== FetchOutcomes.RETRY)
  }

  /** The state of a partition fetched this round (it leaves the set only between rounds). */
  #state (f: { topic: string, partition: number }): PartitionState {
    return this.#partitions.find(f.topic, f.partition)!
  }

  /**
   * At-least-once mode, after acknowledgements: offset syncs out at once, progress stored if a flush is due.
   * A failed store (the progress topic's leader down) must not fail the write whose acknowledgements are being
   * recorded: the write's other partitions would be left unsettled and copied again. The round's end tries the
   * flush again and, failing, fails the round as a whole (a step failure, visible in /status and /healthz).
   */
  async #afterAcks (copied: boolean): Promise<void> {
    if (this.#eos !== null) return
    if (copied) this.#flusher.markDirty()
    this.#flusher.sendSyncs()
    if (!this.#flusher.isDue()) return
    await this.flush().catch(err => {
      this.#deps.log.warn({ err }, `cannot store the progress of flow ${this.#deps.flow.name} while writing (${errorMessage(err)}); trying again at the end of the round`)
    })
  }

  /** Writes pending offset syncs and the current positions. Called periodically and at stop. */
  async flush (): Promise<void> {
    // Exactly-once mode: each committed round stored its own progress and syncs.
    if (this.#eos !== null) return
    const states = [...this.#partitions.values()]
    await this.#flusher.flush(positionsOf(states), states)
  }

  #positions (): StoredPositions {
    return positionsOf(this.#partitions.values())
  }

  /** The failure of the whole replication step while it lasts (every partition waits), else null. */
  stepFailure (): StepFailure | null {
    return this.#steps.current()
  }

  status (): PartitionStatus[] {
    const now = Date.now()
    return [...this.#partitions.values()].filter(p => !p.lost)
      .map(p => withHold(statusOf(p, this.#failing.report(p.key), now, this.#unread.staleSince(p, now)), this.#unread.holdOf(p))).concat(this.#pendingStarts.statuses())
  }
}
