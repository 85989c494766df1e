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
 * - Errors marked retriable (network, leadership, timeouts) are retried with back-off; any other error stops
 *   the flow, because carrying on could lose data.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { FlowConfig } from '../config/types.ts'
import { isRetriable } from '../errors.ts'
import { FetchOutcomes, partitionKey, type FetchedPartition, type RecordFetcher } from '../kafka/record-fetcher.ts'
import type { RecordWriter } from '../kafka/record-writer.ts'
import type { Logger } from '../logger.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import type { ReplicatedTopic } from '../metadata/remote-topics.ts'
import type { OffsetSyncEmitter } from './offset-sync-emitter.ts'
import { OffsetSyncTracker } from './offset-sync-tracker.ts'
import type { ProgressStore } from './progress-store.ts'
import { createProvenanceMarker, type ProvenanceFlow, type ProvenanceMarker } from './provenance.ts'

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
}

/** The narrow ports the data path uses, so unit tests can drive it with in-memory fakes. */
export type SourceReader = Pick<RecordFetcher, 'fetch' | 'listOffsets'>
export type TargetWriter = Pick<RecordWriter, 'write'>
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
  readonly startAt: 'earliest' | 'latest'
  readonly metrics?: Metrics
}

export class FlowReplicator {
  readonly #deps: FlowReplicatorDeps
  readonly #partitions = new Map<string, PartitionState>()
  readonly #tracker: OffsetSyncTracker
  readonly #metrics: Metrics
  readonly #provenance: ProvenanceMarker | null
  #stored = new Map<string, number>()
  #stopping = false
  #lastFlush = Date.now()
  #syncInFlight: Promise<void> | null = null
  #failures = 0
  /** removeTopics requests waiting for the end of the current fetch round. */
  readonly #removals: { topics: Set<string>, done: () => void }[] = []
  #looping = false

  constructor (deps: FlowReplicatorDeps) {
    this.#deps = deps
    this.#metrics = deps.metrics ?? noMetrics
    this.#tracker = new OffsetSyncTracker(deps.flow.offsetLagMax)
    this.#provenance = createProvenanceMarker(deps.flow)
  }

  /** Positions previously stored (by kmirror or MM2), keyed by `partitionKey`. */
  setStoredProgress (stored: Map<string, number>): void {
    this.#stored = stored
  }

  /** Adds partitions not replicated yet; existing ones keep their position. */
  async addTopics (topics: readonly ReplicatedTopic[]): Promise<void> {
    const fresh: { topic: string, partition: number, remoteTopic: string }[] = []
    for (const t of topics) {
      for (let partition = 0; partition < t.partitions; partition++) {
        if (!this.#partitions.has(partitionKey(t.source, partition))) fresh.push({ topic: t.source, partition, remoteTopic: t.remote })
      }
    }
    if (fresh.length === 0) return
    const unstored = fresh.filter(p => !this.#stored.has(partitionKey(p.topic, p.partition)))
    const starts = unstored.length === 0 ? new Map<string, number>() : await this.#deps.fetcher.listOffsets(unstored, this.#deps.startAt)
    for (const p of fresh) {
      const key = partitionKey(p.topic, p.partition)
      const stored = this.#stored.get(key)
      const position = stored === undefined ? (starts.get(key) ?? 0) : stored + 1
      this.#partitions.set(key, { ...p, position, highWatermark: -1, copiedRecords: 0, copiedBytes: 0, lostToRetention: 0 })
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
        if (progressed) {
          this.#failures = 0
        } else {
          // Every partition answered RETRY (leader moving, metadata stale): back off instead of spinning.
          this.#failures++
          await delay(this.#backoffMs())
        }
      } catch (err) {
        if (!isRetriable(err)) {
          // Records acknowledged before the error must not be copied again after a restart.
          await this.flush().catch(flushErr => this.#deps.log.warn({ err: flushErr }, 'cannot store progress after a fatal error'))
          throw err
        }
        this.#failures++
        const backoffMs = this.#backoffMs()
        this.#deps.log.warn({ err, attempt: this.#failures, backoffMs }, 'replication step failed; retrying')
        await delay(backoffMs)
      }
    }
    await this.flush()
  }

  #backoffMs (): number {
    return Math.min(5000, 100 * 2 ** Math.min(this.#failures, 6))
  }

  /** One fetch-write round. Returns false when no partition could be read (all answered RETRY). */
  async #iterate (): Promise<boolean> {
    const active = [...this.#partitions.values()]
    if (active.length === 0) {
      await delay(200)
      return true
    }
    const fetched = this.#markProvenance(await this.#deps.fetcher.fetch(active.map(p => ({ topic: p.topic, partition: p.partition, offset: p.position }))))
    const withRecords = fetched.filter(f => f.outcome === FetchOutcomes.OK && f.records.length > 0)
    if (withRecords.length > 0) await this.#write(withRecords)
    // Advance every partition that was written before any recovery that may throw: a partition whose
    // records are acknowledged must never be left at its old position, or they would be written twice.
    for (const f of fetched) this.#advance(f)
    for (const f of fetched) if (f.outcome === FetchOutcomes.OUT_OF_RANGE) await this.#recoverOutOfRange(this.#state(f), f)
    this.#sendSyncs()
    if (Date.now() - this.#lastFlush >= this.#deps.flow.offsetFlushIntervalMs) await this.flush()
    return fetched.some(f => f.outcome !== FetchOutcomes.RETRY)
  }

  /** Identity policy only: drops records that came from the target, marks the others with their origin. */
  #markProvenance (fetched: FetchedPartition[]): FetchedPartition[] {
    const marker = this.#provenance
    if (marker === null) return fetched
    return fetched.map(f => {
      if (f.outcome !== FetchOutcomes.OK) return f
      const { partition, skipped } = marker.mark(f)
      if (skipped > 0) {
        this.#metrics.inc('loopRecordsSkipped', { flow: this.#deps.flow.name, topic: f.topic }, skipped)
        this.#deps.log.debug({ topic: f.topic, partition: f.partition, skipped }, 'records that originated on the target were not sent back')
      }
      return partition
    })
  }

  #state (f: { topic: string, partition: number }): PartitionState {
    return this.#partitions.get(partitionKey(f.topic, f.partition))!
  }

  /** Feeds runs of consecutive source offsets that landed in one target segment to the tracker. */
  /**
   * Writes the fetched records. After each acknowledged produce round the partitions advance to what was
   * acknowledged and progress is stored if a flush is due, so a crash re-copies at most about one flush
   * interval of records, not a whole fetch round. Rounds a writer did not report are tracked at the end.
   */
  async #write (fetched: readonly FetchedPartition[]): Promise<void> {
    const trackedTo = fetched.map(() => 0)
    const segments = await this.#deps.writer.write(
      fetched.map(f => ({ topic: this.#state(f).remoteTopic, partition: f.partition, records: f.records })),
      async chunks => {
        for (const c of chunks) {
          const f = fetched[c.batch]!
          this.#trackSegment(f, c.start, c.end, c.baseOffset)
          trackedTo[c.batch] = c.end
          const state = this.#state(f)
          state.position = Math.max(state.position, f.records[c.end - 1]!.offset + 1)
        }
        this.#sendSyncs()
        if (Date.now() - this.#lastFlush >= this.#deps.flow.offsetFlushIntervalMs) await this.flush()
      })
    fetched.forEach((f, i) => {
      const all = segments[i] ?? []
      for (let s = 0; s < all.length; s++) {
        const end = all[s + 1]?.start ?? f.records.length
        if (all[s]!.start >= trackedTo[i]!) this.#trackSegment(f, all[s]!.start, end, all[s]!.baseOffset)
      }
    })
  }

  /** Feeds records `start` to `end - 1`, written from `baseOffset` on, to the tracker as runs of consecutive source offsets. */
  #trackSegment (f: FetchedPartition, start: number, end: number, baseOffset: number): void {
    const key = partitionKey(f.topic, f.partition)
    const records = f.records
    let runStart = start
    for (let j = start + 1; j <= end; j++) {
      if (j < end && records[j]!.offset === records[j - 1]!.offset + 1) continue
      this.#tracker.recordRun(key, f.topic, f.partition, records[runStart]!.offset, baseOffset + (runStart - start), j - runStart)
      runStart = j
    }
  }

  #advance (f: FetchedPartition): void {
    const state = this.#state(f)
    if (f.highWatermark >= 0) state.highWatermark = f.highWatermark
    if (f.outcome !== FetchOutcomes.OK) return
    if (f.records.length > 0) {
      const labels = { flow: this.#deps.flow.name, topic: f.topic }
      this.#metrics.inc('recordsCopied', labels, f.records.length)
      this.#metrics.inc('bytesCopied', labels, f.bytes)
    }
    state.copiedRecords += f.records.length
    state.copiedBytes += f.bytes
    state.position = f.nextOffset
  }

  async #recoverOutOfRange (state: PartitionState, f: FetchedPartition): Promise<void> {
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
    this.#lastFlush = Date.now()
    if (this.#syncInFlight !== null) await this.#syncInFlight
    this.#tracker.promoteDelayed()
    this.#sendSyncs()
    if (this.#syncInFlight !== null) await this.#syncInFlight
    const positions = new Map<string, { topic: string, partition: number, lastOffset: number }>()
    for (const [key, p] of this.#partitions) positions.set(key, { topic: p.topic, partition: p.partition, lastOffset: p.position - 1 })
    const written = await this.#deps.progress.commit(positions)
    if (written > 0) this.#deps.log.debug({ partitions: written }, 'progress stored')
  }

  status (): PartitionStatus[] {
    return [...this.#partitions.values()].map(p => ({ ...p }))
  }
}
