/**
 * The data path of one flow: fetch from the source, write to the remote topics, record what was copied.
 *
 * Invariants:
 * - A partition's position advances only after the target acknowledged (acks=all) every record before it,
 *   so a crash at any point loses nothing: at worst records after the last stored position are copied again.
 * - Records keep their partition number, key, value, headers (order and repeats) and timestamp.
 * - Offset syncs are fed with acknowledged (source, target) pairs only (see OffsetSyncTracker).
 * - A source offset below the log start (retention deleted records before they were copied) is never skipped
 *   silently: it is logged at error level with the number of records lost and counted.
 * - A partition the source or the target refuses (authorization, unknown topic, a batch too large even after
 *   re-encoding, a corrupt batch) is set aside with its error and retried with its own back-off
 *   (partition-failures.ts); it never advances past records it did not copy, and the others keep flowing.
 * - Exactly-once mode (`exactlyOnce`): each round is one target transaction holding its data batches, offset
 *   syncs, history and progress records (transaction-rounds.ts); nothing is flushed between rounds. A failed round
 *   is aborted and every partition goes back to its committed progress (read again, read_committed, once the
 *   abort is complete): what the round copied is copied again, and only committed copies are ever visible.
 * - A FENCED failure (another producer initialised this instance's transactional id) stops the flow without
 *   storing anything. The group lease gate's FENCED (the `fence` hook: the lease ran out) is retriable: nothing is
 *   sent, and the membership loses and regains its work.
 * - A failure of a whole step (a broker unreachable, a request timed out, credentials or a cluster ACL refused)
 *   is retried with back-off, logged once per change of error. Only errors kmirror cannot classify stop the
 *   flow (programmer errors, INTERNAL, and other errors not marked retriable), because carrying on could lose data.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { BatchAck, PartitionFailure } from '../kafka/batch-writer.ts'
import { partitionKey } from '../topic-partition.ts'
import { FetchOutcomes, type FetchedBatches } from '../kafka/record-fetcher.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import type { ReplicatedTopic } from '../metadata/remote-topics.ts'
import { OffsetSyncTracker, type OffsetSyncEntry } from './offset-sync-tracker.ts'
import { ackedRuns, planPartition, type PlannedBatch } from './batch-plan.ts'
import { createProvenanceMarker, type ProvenanceMarker } from './provenance.ts'
import { FailureSides, PartitionFailures } from './partition-failures.ts'
import { isWorthWaiting, StepFailures, type StepFailure } from './step-failures.ts'
import type { BatchingOptions, ExactlyOnceDeps, FlowReplicatorDeps, PartitionStatus } from './replicator-ports.ts'
import { ErrorCodes, isKmirrorError } from '../errors.ts'
import { PartitionSet, recoverOutOfRange, type PartitionRef, type PartitionState } from './partition-set.ts'
import { headAfterAck, headAfterFetch, lagSeconds, observeLatency, observeRecordAge } from './record-times.ts'

export type { StepFailure } from './step-failures.ts'
export type { PartitionRef } from './partition-set.ts'
export { partitionLag, type BatchingOptions, type ExactlyOnceDeps, type FlowReplicatorDeps, type OffsetSyncSink, type PartitionStatus, type ProgressSink, type SourceReader, type TargetWriter } from './replicator-ports.ts'

/** Bytes per partition of the first fetch round (a larger first batch is still returned whole). */
const FIRST_ROUND_PARTITION_BYTES = 64 * 1024

/** How long a partition the target could not take is left out of the fetch rounds. */
const INCOMPLETE_COOL_DOWN_MS = 500

/** With `flushWhenCaughtUp`, how often at most progress is stored because every partition caught up. */
const CAUGHT_UP_FLUSH_MS = 1000

const DEFAULT_BATCHING: BatchingOptions = { compression: null, maxChunkBytes: 512 * 1024, minForwardBytes: 16 * 1024 }

export class FlowReplicator {
  readonly #deps: FlowReplicatorDeps
  readonly #partitions: PartitionSet
  readonly #tracker: OffsetSyncTracker
  readonly #metrics: Metrics
  readonly #provenance: ProvenanceMarker | null
  readonly #batching: BatchingOptions
  /** Partitions whose forwarded batches the target refused: re-encoded from then on. */
  readonly #reencode = new Set<string>()
  #stopping = false
  #lastFlush = Date.now()
  /** Records acknowledged since the last flush. */
  #dirty = false
  #caughtUpFlushAt = 0
  #syncInFlight: Promise<void> | null = null
  #failures = 0
  readonly #steps: StepFailures
  readonly #failing: PartitionFailures
  /** How many times the membership was lost: a release under way when it is stops retrying. */
  #losses = 0
  #looping = false
  #rounds = 0
  /** When the last fetch-and-write round completed with an answer (health: a flow that stops completing them is stalled). */
  #lastRoundAt = Date.now()
  /** Exactly-once mode: a round failed; positions go back to the committed progress before the next one. */
  #rewindFrom: Map<string, number> | null = null

  constructor (deps: FlowReplicatorDeps) {
    this.#deps = deps
    this.#metrics = deps.metrics ?? noMetrics
    this.#tracker = new OffsetSyncTracker(deps.flow.offsetLagMax)
    this.#provenance = createProvenanceMarker(deps.flow)
    this.#batching = { ...DEFAULT_BATCHING, ...deps.batching }
    this.#partitions = new PartitionSet(deps.fetcher, deps.startAt, deps.log)
    this.#steps = new StepFailures(deps.log)
    this.#failing = new PartitionFailures(deps.flow.name, deps.aliases ?? { source: 'source', target: 'target' }, deps.log, this.#metrics, deps.failureBackoff)
  }

  /** Positions previously stored (by kmirror or MM2), keyed by `partitionKey`. */
  setStoredProgress (stored: Map<string, number>): void {
    this.#partitions.setStored(stored)
  }

  /**
   * Adds partitions not replicated yet; existing ones keep their position. Those of `fromLogStart` topics start at
   * the source's log start whatever `startAt` says (their remote topic was created again).
   */
  async addTopics (topics: readonly ReplicatedTopic[], fromLogStart: ReadonlySet<string> = new Set(), owns: (key: string) => boolean = () => true): Promise<void> {
    const refs: PartitionRef[] = []
    for (const t of topics) {
      for (let partition = 0; partition < t.partitions; partition++) {
        if (owns(partitionKey(t.source, partition))) refs.push({ topic: t.source, partition, remoteTopic: t.remote })
      }
    }
    const states = await this.#partitions.resolve(refs, fromLogStart)
    if (states.length > 0) await this.#change(done => ({ kind: 'add', states, done }))
  }

  /**
   * Starts copying these partitions (assigned to this instance), each from `stored` (the stored progress read again
   * just now: another instance may have copied it since) + 1, else from `startAt`. Partitions already copied keep
   * their position. Resolves once they are in the fetch rounds.
   */
  async addPartitions (partitions: readonly PartitionRef[], stored: ReadonlyMap<string, number>): Promise<void> {
    this.#partitions.mergeStored(stored, partitions.map(p => partitionKey(p.topic, p.partition)))
    const states = await this.#partitions.resolve(partitions)
    if (states.length > 0) await this.#change(done => ({ kind: 'add', states, done }))
  }

  /**
   * Stops copying these partitions (revoked from this instance): they are fetched no more at once, the writes of
   * the round in flight finish, then their offset syncs and their positions are stored, and only then does this
   * resolve; another instance may then take them. Other partitions keep copying throughout. This instance never
   * writes them again (unless they are added again). Unknown partitions are ignored.
   */
  async releasePartitions (partitions: readonly { topic: string, partition: number }[]): Promise<void> {
    const keys = new Set<string>()
    for (const p of partitions) {
      const state = this.#partitions.get(partitionKey(p.topic, p.partition))
      if (state === undefined || state.lost) continue
      state.releasing = true
      keys.add(partitionKey(p.topic, p.partition))
    }
    if (keys.size === 0) return
    let released: PartitionState[] = []
    await this.#change<PartitionState[]>(done => ({ kind: 'release', keys, done }), r => { released = r })
    await this.#storeReleased(released)
  }

  /**
   * Membership lost: every partition is fetched no more at once and leaves at the end of the round in flight;
   * nothing of it is stored any more (positions, offset syncs): another instance may own it already.
   */
  loseAll (): void {
    this.#losses++
    for (const state of this.#partitions.values()) {
      state.lost = true
      this.#tracker.reset(partitionKey(state.topic, state.partition))
    }
    void this.#change(done => ({ kind: 'drop-lost', done }))
  }

  /**
   * Stops replicating the named source topics (deleted or re-created on the source, or whose remote topic became
   * unusable) and forgets their positions, so a topic added again later starts afresh. Takes effect between two
   * fetch rounds, never during one; resolves once it has.
   */
  removeTopics (topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return Promise.resolve()
    return this.#change(done => ({ kind: 'remove-topics', topics: new Set(topics), done }))
  }

  /** Queues a change of the partition set for the end of the round (at once when no round runs). */
  #change<T = void> (make: (done: (value: T) => void) => Parameters<PartitionSet['enqueue']>[0], onDone?: (value: T) => void): Promise<void> {
    const applied = new Promise<void>(resolve => {
      this.#partitions.enqueue(make(value => { onDone?.(value); resolve() }))
    })
    if (!this.#looping) this.#applyChanges()
    return applied
  }

  #applyChanges (): void {
    this.#partitions.applyChanges(key => {
      this.#tracker.reset(key)
      this.#failing.forget(key)
      this.#reencode.delete(key)
    })
  }

  /**
   * Stores the offset syncs (pending and delayed) and the positions of released partitions, retrying until stored
   * or until the membership is lost or the flow stops; then forgets them.
   */
  /** Stores the positions of released partitions, retrying; false when the membership was lost meanwhile. */
  async #storePositions (positions: Map<string, { topic: string, partition: number, lastOffset: number }>): Promise<boolean> {
    const losses = this.#losses
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#flushSyncs()
        await this.#deps.progress.commit(positions)
        return true
      } catch (err) {
        // Stopping: the revoke fails (the flow's stop stores what it still owns); lost: nothing is stored any more.
        if (this.#stopping) throw err
        if (this.#losses !== losses) return false
        this.#deps.log.warn({ err, partitions: positions.size, attempt }, 'cannot store the progress of revoked partitions; retrying')
        await delay(Math.min(5000, 100 * 2 ** Math.min(attempt, 6)))
      }
    }
  }

  async #storeReleased (released: readonly PartitionState[]): Promise<void> {
    if (released.length === 0) return
    const positions = new Map(released.map(p => [partitionKey(p.topic, p.partition), { topic: p.topic, partition: p.partition, lastOffset: p.position - 1 }]))
    // Exactly-once mode: the last committed round stored these positions with their data.
    if (this.#deps.exactlyOnce === undefined && !await this.#storePositions(positions)) return
    for (const key of positions.keys()) {
      this.#tracker.reset(key)
      this.#failing.forget(key)
      this.#reencode.delete(key)
    }
    this.#deps.log.debug({ partitions: [...positions.keys()] }, 'revoked partitions released with their progress stored')
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
      this.#applyChanges()
    })
  }

  async #loop (): Promise<void> {
    while (!this.#stopping) {
      this.#applyChanges()
      try {
        const progressed = await this.#iterate()
        this.#steps.succeeded()
        if (progressed) {
          this.#lastRoundAt = Date.now()
          this.#failures = 0
        } else {
          // Every partition answered RETRY (leader moving, metadata stale): back off instead of spinning.
          this.#failures++
          await delay(this.#backoffMs())
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
        const backoffMs = this.#backoffMs()
        this.#steps.failed(err, this.#failures, backoffMs)
        await delay(backoffMs)
      }
    }
    await this.flush()
  }

  #backoffMs (): number {
    return Math.min(5000, 100 * 2 ** Math.min(this.#failures, 6))
  }

  /** One fetch-write round (one transaction in exactly-once mode). Returns false when no partition could be read. */
  async #iterate (): Promise<boolean> {
    const eos = this.#deps.exactlyOnce
    if (eos === undefined) return await this.#round()
    if (this.#rewindFrom !== null) await this.#rewind(eos, this.#rewindFrom)
    const before = new Map([...this.#partitions.entries()].map(([key, p]) => [key, p.position]))
    let committedSyncs: OffsetSyncEntry[] = []
    try {
      const progressed = await eos.rounds.run(async () => {
        const result = await this.#round()
        committedSyncs = await this.#storeRound()
        return result
      })
      if (committedSyncs.length > 0 && eos.syncsAfterCommit !== null) {
        eos.syncsAfterCommit.send(committedSyncs).catch(err => this.#deps.log.warn({ err, count: committedSyncs.length }, 'cannot write offset syncs to the source cluster (outside the transaction, as MM2); kmirror\'s own offset history has them'))
      }
      return progressed
    } catch (err) {
      this.#rewindFrom = before
      throw err
    }
  }

  /** Exactly-once mode, inside the round's transaction: its offset syncs and history, then its progress. */
  async #storeRound (): Promise<OffsetSyncEntry[]> {
    if (Date.now() - this.#lastFlush >= this.#deps.flow.offsetFlushIntervalMs) {
      this.#lastFlush = Date.now()
      this.#tracker.promoteDelayed()
    }
    const entries = this.#tracker.takePending()
    if (entries.length > 0 && this.#deps.syncs !== null) await this.#deps.syncs.send(entries)
    await this.#deps.progress.commit(this.#positions())
    return entries
  }

  /**
   * Exactly-once mode, after a failed round: once the transaction is complete, every partition goes back to its
   * committed progress (or where the failed round found it, when none is stored), and its offset-sync run starts
   * afresh (what the tracker knew may point at aborted offsets).
   */
  async #rewind (eos: ExactlyOnceDeps, before: ReadonlyMap<string, number>): Promise<void> {
    await eos.rounds.recover()
    const stored = await eos.reloadProgress()
    this.#tracker.takePending()
    for (const [key, p] of this.#partitions.entries()) {
      const committed = stored.get(key)
      p.position = committed === undefined ? (before.get(key) ?? p.position) : committed + 1
      this.#tracker.reset(key)
    }
    this.#tracker.dropDelayed()
    this.#rewindFrom = null
    this.#deps.log.info({ partitions: this.#partitions.size }, 'round aborted; every partition resumes at its committed progress')
  }

  async #round (): Promise<boolean> {
    const now = Date.now()
    const active = this.#partitions.active(now)
    if (active.length === 0) {
      await delay(200)
      return true
    }
    // The first round after start reads little per partition, so the first records reach the target sooner
    // (a full first round is megabytes to fetch and write before anything is acknowledged).
    const first = this.#rounds++ === 0
    const fetched = await this.#deps.fetcher.fetchBatches(active.map(p => ({ topic: p.topic, partition: p.partition, offset: p.position })),
      first ? { maxPartitionBytes: FIRST_ROUND_PARTITION_BYTES } : {})
    const withBatches = fetched.filter(f => f.outcome === FetchOutcomes.OK && f.batches.length > 0)
    const { incomplete, failed } = withBatches.length > 0 ? await this.#write(withBatches) : { incomplete: [], failed: [] }
    // Advance every partition that was written before any recovery that may throw: a partition whose
    // records are acknowledged must never be left at its old position, or they would be written twice.
    // A partition the target could not take yet (no leader, remote topic still loading) or refused stays
    // where its acknowledged batches took it.
    const waiting = new Set([...incomplete, ...failed.map(r => r.fetched)])
    for (const f of fetched) if (!waiting.has(f)) this.#advance(f)
    // ... and is left out of the next rounds for a moment, so it does not hold up the others.
    for (const f of incomplete) this.#state(f).retryAt = Date.now() + INCOMPLETE_COOL_DOWN_MS
    for (const r of failed) this.#writeRefused(r.fetched, r.failure)
    for (const f of fetched) this.#noteFetchOutcome(f, waiting)
    for (const f of fetched) if (f.outcome === FetchOutcomes.OUT_OF_RANGE) {
      this.#tracker.reset(partitionKey(f.topic, f.partition))
      await recoverOutOfRange(this.#state(f), f, { fetcher: this.#deps.fetcher, log: this.#deps.log, metrics: this.#metrics, flow: this.#deps.flow.name })
    }
    if (this.#deps.exactlyOnce === undefined) {
      this.#sendSyncs()
      if (Date.now() - this.#lastFlush >= this.#deps.flow.offsetFlushIntervalMs || this.#caughtUpAndDirty()) await this.flush()
    }
    if (incomplete.length > 0) {
      this.#deps.log.debug({ partitions: incomplete.map(f => `${f.topic}-${f.partition}`).slice(0, 20), count: incomplete.length }, 'the target cannot take records for these remote partitions yet (no leader, leadership moving); trying again')
    }
    return fetched.some(f => f.outcome !== FetchOutcomes.RETRY)
  }

  /**
   * `flushWhenCaughtUp`: records were copied since the last flush and every partition has caught up (at most every
   * CAUGHT_UP_FLUSH_MS). A copy at rest then has its progress stored at once, so a lost group membership (which
   * stores nothing) re-copies nothing that was copied before the partitions went quiet.
   */
  #caughtUpAndDirty (): boolean {
    if (this.#deps.flushWhenCaughtUp !== true || !this.#dirty || Date.now() - this.#caughtUpFlushAt < CAUGHT_UP_FLUSH_MS) return false
    for (const p of this.#partitions.values()) if (!p.lost && p.position < p.highWatermark) return false
    this.#caughtUpFlushAt = Date.now()
    return true
  }

  #state (f: { topic: string, partition: number }): PartitionState {
    return this.#partitions.get(partitionKey(f.topic, f.partition))!
  }

  /** Stores pending offset syncs (delayed ones too): what a flush writes before the positions. */
  async #flushSyncs (): Promise<void> {
    if (this.#syncInFlight !== null) await this.#syncInFlight
    this.#tracker.promoteDelayed()
    this.#sendSyncs()
    if (this.#syncInFlight !== null) await this.#syncInFlight
  }

  /**
   * Plans and writes the fetched batches. As each batch is acknowledged its partition advances past it, its
   * offset syncs are recorded, and progress is stored if a flush is due, so a crash re-copies at most about
   * one flush interval of records, not a whole fetch round.
   */
  async #write (fetched: readonly FetchedBatches[]): Promise<{ incomplete: FetchedBatches[], failed: { fetched: FetchedBatches, failure: PartitionFailure }[] }> {
    // Lease gate: a member past its group lease writes nothing; the batches are fetched again by their next owner.
    const fenced = this.#deps.fence?.() ?? null
    if (fenced !== null) {
      this.#deps.log.debug({ partitions: fetched.length, reason: fenced }, 'not writing this round: the group lease does not hold')
      return { incomplete: [...fetched], failed: [] }
    }
    const plans = fetched.map(f => this.#plan(f))
    const { incomplete, failed } = await this.#deps.writer.write(
      fetched.map((f, i) => ({ topic: this.#state(f).remoteTopic, partition: f.partition, batches: plans[i]! })),
      async acks => {
        const now = Date.now()
        for (const ack of acks) this.#acked(fetched[ack.write]!, plans[ack.write]!, ack, now)
        if (this.#deps.exactlyOnce !== undefined) return
        this.#sendSyncs()
        if (Date.now() - this.#lastFlush >= this.#deps.flow.offsetFlushIntervalMs) await this.flush()
      })
    return { incomplete: incomplete.map(i => fetched[i]!), failed: failed.map(r => ({ fetched: fetched[r.write]!, failure: r })) }
  }

  #plan (f: FetchedBatches): PlannedBatch[] {
    const key = partitionKey(f.topic, f.partition)
    const marker = this.#provenance
    const plan = planPartition(f, {
      ...this.#batching,
      reencode: this.#reencode.has(key),
      mark: marker === null
        ? null
        : records => {
          const { partition, skipped } = marker.mark({ ...f, records, bytes: 0 })
          return { records: partition.records, skipped }
        }
    })
    const labels = { flow: this.#deps.flow.name, topic: f.topic }
    observeRecordAge(this.#metrics, labels, plan.batches, Date.now())
    const state = this.#state(f)
    state.head = headAfterFetch(state.head, plan.batches)
    if (plan.skipped > 0) {
      this.#metrics.inc('loopRecordsSkipped', labels, plan.skipped)
      this.#deps.log.debug({ topic: f.topic, partition: f.partition, skipped: plan.skipped }, 'records that originated on the target were not sent back')
    }
    return plan.batches
  }

  #acked (f: FetchedBatches, plan: readonly PlannedBatch[], ack: BatchAck, now: number): void {
    const key = partitionKey(f.topic, f.partition)
    const state = this.#state(f)
    const batch = plan[ack.batch]!
    // Lost while its write was in flight: another instance may own it already; nothing of it is stored.
    if (state.lost) return
    for (const run of ackedRuns(batch, ack)) this.#tracker.recordRun(key, f.topic, f.partition, run.source, run.target, run.count)
    if (batch.lastOffset + 1 >= state.position) state.head = headAfterAck(batch, plan[ack.batch + 1])
    state.position = Math.max(state.position, batch.lastOffset + 1)
    this.#dirty = true
    state.copiedRecords += batch.recordCount
    state.copiedBytes += batch.bytes
    const labels = { flow: this.#deps.flow.name, topic: f.topic }
    this.#metrics.inc('recordsCopied', labels, batch.recordCount)
    this.#metrics.inc('bytesCopied', labels, batch.bytes)
    if (batch.forwarded) this.#metrics.inc('batchesForwarded', labels, 1)
    observeLatency(this.#metrics, labels, batch, now)
  }

  /**
   * The target refused records of this partition. A batch refused as it is (too large, invalid) is re-encoded
   * from now on and tried again at once; refused again, or refused for another reason (authorization, unknown
   * topic), the partition is set aside and retried with back-off.
   */
  #writeRefused (f: FetchedBatches, failure: PartitionFailure): void {
    const state = this.#state(f)
    const key = partitionKey(f.topic, f.partition)
    if (failure.refusedBatch && !this.#reencode.has(key)) {
      this.#reencode.add(key)
      this.#deps.log.warn({ topic: f.topic, partition: f.partition, error: failure.error },
        'the target refused a record batch forwarded as it is; re-encoding this partition\'s records from now on')
      return
    }
    const message = `${failure.error}${failure.message === null ? '' : ` (${failure.message})`}${failure.refusedBatch ? ', also after re-encoding the records' : ''}`
    state.retryAt = this.#failing.fail(key, state, { side: FailureSides.TARGET, error: failure.error, kind: failure.kind, message, operation: failure.operation ?? 'WRITE' })
  }

  /** Sets aside a partition the source refused; logs the recovery of one that was read and written again. */
  #noteFetchOutcome (f: FetchedBatches, notWritten: ReadonlySet<FetchedBatches>): void {
    const key = partitionKey(f.topic, f.partition)
    const state = this.#state(f)
    if (f.outcome === FetchOutcomes.FAILED && f.failure !== undefined) {
      state.retryAt = this.#failing.fail(key, state, { side: FailureSides.SOURCE, ...f.failure })
    } else if (f.outcome === FetchOutcomes.OK && !notWritten.has(f)) {
      this.#failing.recover(key, state)
    }
  }

  #advance (f: FetchedBatches): void {
    const state = this.#state(f)
    if (f.highWatermark >= 0) state.highWatermark = f.highWatermark
    if (f.outcome !== FetchOutcomes.OK) return
    state.position = Math.max(state.position, f.nextOffset)
  }

  #sendSyncs (): void {
    const syncs = this.#deps.syncs
    if (syncs === null || this.#syncInFlight !== null || this.#tracker.pendingCount === 0) return
    const entries = this.#tracker.takePending()
    this.#syncInFlight = syncs.send(entries)
      .catch(err => {
        this.#tracker.requeue(entries)
        this.#deps.log.warn({ err, count: entries.length }, 'cannot write offset syncs; will retry')
      })
      .finally(() => { this.#syncInFlight = null })
  }

  /** Writes pending offset syncs and the current positions. Called periodically and at stop. */
  async flush (): Promise<void> {
    // Exactly-once mode: each committed round stored its own progress and syncs.
    if (this.#deps.exactlyOnce !== undefined) return
    this.#lastFlush = Date.now()
    this.#dirty = false
    await this.#flushSyncs()
    const written = await this.#deps.progress.commit(this.#positions())
    if (written > 0) this.#deps.log.debug({ partitions: written }, 'progress stored')
  }

  #positions (): Map<string, { topic: string, partition: number, lastOffset: number }> {
    const positions = new Map<string, { topic: string, partition: number, lastOffset: number }>()
    for (const [key, p] of this.#partitions.entries()) if (!p.lost) positions.set(key, { topic: p.topic, partition: p.partition, lastOffset: p.position - 1 })
    return positions
  }

  /** The failure of the whole replication step while it lasts (every partition waits), else null. */
  stepFailure (): StepFailure | null {
    return this.#steps.current()
  }

  status (): PartitionStatus[] {
    const now = Date.now()
    return [...this.#partitions.entries()].filter(([, p]) => !p.lost)
      .map(([key, { retryAt: _, releasing: _r, lost: _l, head, ...p }]) => {
        const reported = { ...p, failure: this.#failing.report(key) }
        return { ...reported, lagSeconds: lagSeconds(reported, head, now) }
      })
  }
}
