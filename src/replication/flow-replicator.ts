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
 * - A FENCED failure (another instance owns the work now) stops the flow without storing anything.
 * - A failure of a whole step (a broker unreachable, a request timed out, credentials or a cluster ACL refused)
 *   is retried with back-off, logged once per change of error. Only errors kmirror cannot classify stop the
 *   flow (programmer errors, INTERNAL, and other errors not marked retriable), because carrying on could lose data.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { FlowConfig } from '../config/types.ts'
import type { BatchAck, BatchWriter, PartitionFailure } from '../kafka/batch-writer.ts'
import { partitionKey } from '../topic-partition.ts'
import { FetchOutcomes, type FetchedBatches, type RecordFetcher } from '../kafka/record-fetcher.ts'
import type { Logger } from '../logger.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import type { ReplicatedTopic } from '../metadata/remote-topics.ts'
import type { OffsetSyncEmitter } from './offset-sync-emitter.ts'
import { OffsetSyncTracker, type OffsetSyncEntry } from './offset-sync-tracker.ts'
import type { ProgressStore } from './progress-store.ts'
import { ackedRuns, planPartition, type Codec, type PlannedBatch } from './batch-plan.ts'
import { createProvenanceMarker, type ProvenanceFlow, type ProvenanceMarker } from './provenance.ts'
import { FailureSides, PartitionFailures, type FailureBackoff, type FailureReport } from './partition-failures.ts'
import { isWorthWaiting, StepFailures, type StepFailure } from './step-failures.ts'
import type { TransactionRounds } from './transaction-rounds.ts'
import { ErrorCodes, isKmirrorError } from '../errors.ts'

export type { StepFailure } from './step-failures.ts'

export interface PartitionStatus {
  readonly topic: string
  readonly partition: number
  readonly remoteTopic: string
  /** Next source offset to copy. */
  readonly position: number
  /** Source high watermark seen at the last fetch (-1 before the first). */
  readonly highWatermark: number
  readonly copiedRecords: number
  readonly copiedBytes: number
  readonly lostToRetention: number
  /** Why the partition is set aside, or null while it is copied. */
  readonly failure: FailureReport | null
}

/** Records of the partition not copied yet; null when unknown (not read yet, or failing: the high watermark is stale). */
export function partitionLag (p: PartitionStatus): number | null {
  return p.highWatermark < 0 || p.failure !== null ? null : Math.max(0, p.highWatermark - p.position)
}

interface PartitionState {
  topic: string
  partition: number
  remoteTopic: string
  position: number
  highWatermark: number
  copiedRecords: number
  copiedBytes: number
  lostToRetention: number
  /** Not fetched before this time (the target could not take its records: no leader). */
  retryAt: number
}

/** The narrow ports the data path uses, so unit tests can drive it with in-memory fakes. */
export type SourceReader = Pick<RecordFetcher, 'fetchBatches' | 'listOffsets'>
export type TargetWriter = Pick<BatchWriter, 'write'>
export type ProgressSink = Pick<ProgressStore, 'commit'>
export type OffsetSyncSink = Pick<OffsetSyncEmitter, 'send'>

export interface FlowReplicatorDeps {
  /** With IdentityReplicationPolicy, the policy and aliases turn on loop prevention (provenance.ts). */
  readonly flow: Pick<FlowConfig, 'name' | 'offsetLagMax' | 'offsetFlushIntervalMs'> & Partial<ProvenanceFlow>
  readonly fetcher: SourceReader
  readonly writer: TargetWriter
  readonly progress: ProgressSink
  readonly syncs: OffsetSyncSink | null
  readonly log: Logger
  /** Aliases of the source and target clusters, for the messages about failing partitions. */
  readonly aliases?: { readonly source: string, readonly target: string }
  /** Back-off of a failing partition (partition-failures.ts); RETRY_BASE_MS doubling up to RETRY_MAX_MS by default. */
  readonly failureBackoff?: FailureBackoff
  readonly startAt: 'earliest' | 'latest'
  readonly metrics?: Metrics
  /** How batches are written (batch-plan.ts); defaults forward everything the target accepts as it is. */
  readonly batching?: Partial<BatchingOptions>
  /** Exactly-once mode: rounds are transactions; `progress` and `syncs` write inside them. */
  readonly exactlyOnce?: ExactlyOnceDeps
}

export interface ExactlyOnceDeps {
  readonly rounds: Pick<TransactionRounds, 'run' | 'recover'>
  /** The committed progress, read again (read_committed) after a failed round. */
  readonly reloadProgress: () => Promise<Map<string, number>>
  /** Offset syncs on the source cluster cannot join a target transaction: written after each commit, as MM2 does. */
  readonly syncsAfterCommit: OffsetSyncSink | null
}

export interface BatchingOptions {
  /** The target producer's compression.type when the user set it, else null (keep each batch's codec). */
  readonly compression: Codec | null
  readonly maxChunkBytes: number
  readonly minForwardBytes: number
}

/** Bytes per partition of the first fetch round (a larger first batch is still returned whole). */
const FIRST_ROUND_PARTITION_BYTES = 64 * 1024

/** How long a partition the target could not take is left out of the fetch rounds. */
const INCOMPLETE_COOL_DOWN_MS = 500

const DEFAULT_BATCHING: BatchingOptions = { compression: null, maxChunkBytes: 512 * 1024, minForwardBytes: 16 * 1024 }

export class FlowReplicator {
  readonly #deps: FlowReplicatorDeps
  readonly #partitions = new Map<string, PartitionState>()
  readonly #tracker: OffsetSyncTracker
  readonly #metrics: Metrics
  readonly #provenance: ProvenanceMarker | null
  readonly #batching: BatchingOptions
  /** Partitions whose forwarded batches the target refused: re-encoded from then on. */
  readonly #reencode = new Set<string>()
  #stored = new Map<string, number>()
  #stopping = false
  #lastFlush = Date.now()
  #syncInFlight: Promise<void> | null = null
  #failures = 0
  readonly #steps: StepFailures
  readonly #failing: PartitionFailures
  /** removeTopics requests waiting for the end of the current fetch round. */
  readonly #removals: { topics: Set<string>, done: () => void }[] = []
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
    this.#steps = new StepFailures(deps.log)
    this.#failing = new PartitionFailures(deps.flow.name, deps.aliases ?? { source: 'source', target: 'target' }, deps.log, this.#metrics, deps.failureBackoff)
  }

  /** Positions previously stored (by kmirror or MM2), keyed by `partitionKey`. */
  setStoredProgress (stored: Map<string, number>): void {
    this.#stored = stored
  }

  /**
   * Adds partitions not replicated yet; existing ones keep their position. Those of `fromLogStart` topics start at
   * the source's log start whatever `startAt` says (their remote topic was created again).
   */
  async addTopics (topics: readonly ReplicatedTopic[], fromLogStart: ReadonlySet<string> = new Set()): Promise<void> {
    const fresh: { topic: string, partition: number, remoteTopic: string }[] = []
    for (const t of topics) {
      for (let partition = 0; partition < t.partitions; partition++) {
        if (!this.#partitions.has(partitionKey(t.source, partition))) fresh.push({ topic: t.source, partition, remoteTopic: t.remote })
      }
    }
    if (fresh.length === 0) return
    const unstored = fresh.filter(p => !this.#stored.has(partitionKey(p.topic, p.partition)))
    const earliest = unstored.filter(p => fromLogStart.has(p.topic))
    const usual = unstored.filter(p => !fromLogStart.has(p.topic))
    const starts = new Map<string, number>([
      ...(usual.length === 0 ? [] : await this.#deps.fetcher.listOffsets(usual, this.#deps.startAt)),
      ...(earliest.length === 0 ? [] : await this.#deps.fetcher.listOffsets(earliest, 'earliest'))
    ])
    for (const p of fresh) {
      const key = partitionKey(p.topic, p.partition)
      const stored = this.#stored.get(key)
      const position = stored === undefined ? (starts.get(key) ?? 0) : stored + 1
      this.#partitions.set(key, { ...p, position, highWatermark: -1, copiedRecords: 0, copiedBytes: 0, lostToRetention: 0, retryAt: 0 })
      this.#deps.log.debug({ topic: p.topic, partition: p.partition, position, resumed: stored !== undefined }, 'partition added')
    }
  }

  /**
   * Stops replicating the named source topics (deleted or re-created on the source, or whose remote topic became
   * unusable) and forgets their positions, so a topic added again later starts afresh. Takes effect between two
   * fetch rounds, never during one; resolves once it has.
   */
  removeTopics (topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return Promise.resolve()
    const applied = new Promise<void>(resolve => this.#removals.push({ topics: new Set(topics), done: resolve }))
    if (!this.#looping) this.#applyRemovals()
    return applied
  }

  #applyRemovals (): void {
    for (const { topics, done } of this.#removals.splice(0)) {
      for (const [key, p] of this.#partitions) {
        if (!topics.has(p.topic)) continue
        this.#partitions.delete(key)
        this.#stored.delete(key)
        this.#tracker.reset(key)
        this.#failing.forget(key)
      }
      this.#deps.log.debug({ topics: [...topics] }, 'topics removed from replication')
      done()
    }
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
      this.#applyRemovals()
    })
  }

  async #loop (): Promise<void> {
    while (!this.#stopping) {
      this.#applyRemovals()
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
    const before = new Map([...this.#partitions].map(([key, p]) => [key, p.position]))
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
    for (const [key, p] of this.#partitions) {
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
    const active = [...this.#partitions.values()].filter(p => p.retryAt <= now)
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
    for (const f of fetched) if (f.outcome === FetchOutcomes.OUT_OF_RANGE) await this.#recoverOutOfRange(this.#state(f), f)
    if (this.#deps.exactlyOnce === undefined) {
      this.#sendSyncs()
      if (Date.now() - this.#lastFlush >= this.#deps.flow.offsetFlushIntervalMs) await this.flush()
    }
    if (incomplete.length > 0) {
      this.#deps.log.debug({ partitions: incomplete.map(f => `${f.topic}-${f.partition}`).slice(0, 20), count: incomplete.length }, 'the target cannot take records for these remote partitions yet (no leader, leadership moving); trying again')
    }
    return fetched.some(f => f.outcome !== FetchOutcomes.RETRY)
  }

  #state (f: { topic: string, partition: number }): PartitionState {
    return this.#partitions.get(partitionKey(f.topic, f.partition))!
  }

  /**
   * Plans and writes the fetched batches. As each batch is acknowledged its partition advances past it, its
   * offset syncs are recorded, and progress is stored if a flush is due, so a crash re-copies at most about
   * one flush interval of records, not a whole fetch round.
   */
  async #write (fetched: readonly FetchedBatches[]): Promise<{ incomplete: FetchedBatches[], failed: { fetched: FetchedBatches, failure: PartitionFailure }[] }> {
    const plans = fetched.map(f => this.#plan(f))
    const { incomplete, failed } = await this.#deps.writer.write(
      fetched.map((f, i) => ({ topic: this.#state(f).remoteTopic, partition: f.partition, batches: plans[i]! })),
      async acks => {
        for (const ack of acks) this.#acked(fetched[ack.write]!, plans[ack.write]![ack.batch]!, ack)
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
    if (plan.skipped > 0) {
      this.#metrics.inc('loopRecordsSkipped', { flow: this.#deps.flow.name, topic: f.topic }, plan.skipped)
      this.#deps.log.debug({ topic: f.topic, partition: f.partition, skipped: plan.skipped }, 'records that originated on the target were not sent back')
    }
    return plan.batches
  }

  #acked (f: FetchedBatches, batch: PlannedBatch, ack: BatchAck): void {
    const key = partitionKey(f.topic, f.partition)
    for (const run of ackedRuns(batch, ack)) this.#tracker.recordRun(key, f.topic, f.partition, run.source, run.target, run.count)
    const state = this.#state(f)
    state.position = Math.max(state.position, batch.lastOffset + 1)
    state.copiedRecords += batch.recordCount
    state.copiedBytes += batch.bytes
    const labels = { flow: this.#deps.flow.name, topic: f.topic }
    this.#metrics.inc('recordsCopied', labels, batch.recordCount)
    this.#metrics.inc('bytesCopied', labels, batch.bytes)
    if (batch.forwarded) this.#metrics.inc('batchesForwarded', labels, 1)
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

  async #recoverOutOfRange (state: PartitionState, f: FetchedBatches): Promise<void> {
    const tp = [{ topic: state.topic, partition: state.partition }]
    const key = partitionKey(state.topic, state.partition)
    const earliest = (await this.#deps.fetcher.listOffsets(tp, 'earliest')).get(key) ?? 0
    const latest = (await this.#deps.fetcher.listOffsets(tp, 'latest')).get(key) ?? 0
    this.#tracker.reset(key)
    if (state.position < earliest) {
      const lost = earliest - state.position
      state.lostToRetention += lost
      this.#metrics.inc('recordsLostToRetention', { flow: this.#deps.flow.name, topic: state.topic }, lost)
      this.#deps.log.error({ topic: state.topic, partition: state.partition, from: state.position, to: earliest, lost },
        'records were deleted by retention on the source before kmirror copied them; resuming at the log start. Raise retention on the source or fix the replication lag')
      state.position = earliest
    } else if (state.position > latest) {
      this.#deps.log.warn({ topic: state.topic, partition: state.partition, position: state.position, logEnd: latest, logStart: f.logStartOffset },
        'stored position is beyond the end of the source partition (topic re-created or truncated?); restarting at its log start')
      state.position = earliest
    }
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
    if (this.#syncInFlight !== null) await this.#syncInFlight
    this.#tracker.promoteDelayed()
    this.#sendSyncs()
    if (this.#syncInFlight !== null) await this.#syncInFlight
    const written = await this.#deps.progress.commit(this.#positions())
    if (written > 0) this.#deps.log.debug({ partitions: written }, 'progress stored')
  }

  #positions (): Map<string, { topic: string, partition: number, lastOffset: number }> {
    const positions = new Map<string, { topic: string, partition: number, lastOffset: number }>()
    for (const [key, p] of this.#partitions) positions.set(key, { topic: p.topic, partition: p.partition, lastOffset: p.position - 1 })
    return positions
  }

  /** The failure of the whole replication step while it lasts (every partition waits), else null. */
  stepFailure (): StepFailure | null {
    return this.#steps.current()
  }

  status (): PartitionStatus[] {
    return [...this.#partitions].map(([key, { retryAt: _, ...p }]) => ({ ...p, failure: this.#failing.report(key) }))
  }
}
