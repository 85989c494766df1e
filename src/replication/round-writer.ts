/**
 * The write half of a data-path round (flow-replicator.ts): plans the fetched batches of each partition
 * (batch-plan.ts: forwarded as they are or re-encoded, loop prevention), writes them, and advances each partition
 * as its batches are acknowledged.
 *
 * Invariants:
 * - A partition advances past a batch only once the target acknowledged it; its offset syncs are recorded from the
 *   acknowledged runs only. A partition lost while its write was in flight records nothing.
 * - The lease gate (`fence`) is asked before the round's write: a member past its group lease writes nothing, and
 *   every partition of the round is returned incomplete and `fenced` (fetched again once the lease holds again, or
 *   by its next owner), never as waiting for the target. A round with a partition
 *   lost since its fetch (the membership lost) writes nothing either, even under a new membership's lease; and a
 *   write under way when the membership is lost sends no request more (BatchWriter `endMembership`).
 * - A partition whose forwarded batch the target refused as it is (too large, invalid) is re-encoded from then on
 *   and tried again at once; refused again, or for another reason, it is set aside (partition-failures.ts).
 */
import type { BatchAck, PartitionFailure } from '../kafka/batch-writer.ts'
import type { FetchedBatches } from '../kafka/record-fetcher.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import { ackedRuns, planPartition, type PlannedBatch } from './batch-plan.ts'
import type { OffsetSyncTracker } from './offset-sync-tracker.ts'
import { FailureSides, type PartitionFailures } from './partition-failures.ts'
import type { PartitionState } from './partition-set.ts'
import type { ProvenanceMarker } from './provenance.ts'
import { headAfterAck, headAfterFetch, observeLatency, observeRecordAge } from './record-times.ts'
import type { BatchingOptions, TargetWriter } from './replicator-ports.ts'
import { sourceTopicIdOf } from './source-topic-ids.ts'

export const DEFAULT_BATCHING: BatchingOptions = { compression: null, maxChunkBytes: 512 * 1024, minForwardBytes: 16 * 1024 }

export interface RoundWriterDeps {
  readonly flowName: string
  readonly writer: TargetWriter
  readonly log: Logger
  readonly metrics: Metrics
  readonly tracker: OffsetSyncTracker
  readonly failing: PartitionFailures
  readonly provenance: ProvenanceMarker | null
  readonly batching: BatchingOptions
  readonly fence: (() => string | null) | undefined
  /** The state of a fetched partition (always in the set during a round). */
  readonly state: (f: { topic: string, partition: number }) => PartitionState
  /**
   * Called after each group of acknowledgements was recorded; `copied` when a partition advanced (at-least-once
   * mode: progress to store, syncs to send, a flush if due).
   */
  readonly afterAcks: (copied: boolean) => Promise<void>
}

export interface RoundWriteResult {
  /** Partitions the target could not take yet (no leader, leadership moving, the lease gate closed). */
  readonly incomplete: FetchedBatches[]
  /** Partitions the target refused. */
  readonly failed: { fetched: FetchedBatches, failure: PartitionFailure }[]
  /** Nothing was written because the lease gate was closed: the partitions are not waiting for the target. */
  readonly fenced: boolean
}

export class RoundWriter {
  readonly #deps: RoundWriterDeps
  /** Partitions whose forwarded batches the target refused: re-encoded from then on. */
  readonly #reencode = new Set<string>()

  constructor (deps: RoundWriterDeps) {
    this.#deps = deps
  }

  /** Drops what is kept about a partition that left the set. */
  forget (key: string): void {
    this.#reencode.delete(key)
  }

  /**
   * Plans and writes the fetched batches. As each batch is acknowledged its partition advances past it, its
   * offset syncs are recorded, and `afterAcks` runs (progress is stored if a flush is due), so a crash re-copies
   * at most about one flush interval of records, not a whole fetch round.
   */
  async write (fetched: readonly FetchedBatches[]): Promise<RoundWriteResult> {
    // Lease gate: a member past its group lease writes nothing; the batches are fetched again by their next owner.
    const fenced = this.#deps.fence?.() ?? null
    if (fenced !== null) {
      this.#deps.log.debug({ partitions: fetched.length, reason: fenced }, 'not writing this round: the group lease does not hold')
      return { incomplete: [...fetched], failed: [], fenced: true }
    }
    // A membership lost since the round's fetch took its partitions along, whatever the lease says now (a new
    // membership may hold one already): what the round read belongs to whoever owns them now.
    if (fetched.some(f => this.#deps.state(f).lost)) {
      this.#deps.log.debug({ partitions: fetched.length }, 'not writing this round: the group membership it began under was lost')
      return { incomplete: [...fetched], failed: [], fenced: true }
    }
    const plans = fetched.map(f => this.#plan(f))
    const { incomplete, failed } = await this.#deps.writer.write(
      fetched.map((f, i) => ({ topic: this.#deps.state(f).remoteTopic, partition: f.partition, batches: plans[i]! })),
      async acks => {
        let copied = false
        const now = Date.now()
        for (const ack of acks) if (this.#acked(fetched[ack.write]!, plans[ack.write]!, ack, now)) copied = true
        await this.#deps.afterAcks(copied)
      })
    return { incomplete: incomplete.map(i => fetched[i]!), failed: failed.map(r => ({ fetched: fetched[r.write]!, failure: r })), fenced: false }
  }

  #plan (f: FetchedBatches): PlannedBatch[] {
    const { key, remoteTopic } = this.#deps.state(f)
    const marker = this.#deps.provenance
    const plan = planPartition(f, {
      ...this.#deps.batching,
      reencode: this.#reencode.has(key),
      // Batches whose produce request was lost are planned again as they were (kafka/in-doubt.ts).
      cutAfter: this.#deps.writer.cutPoints?.(remoteTopic, f.partition),
      mark: marker === null
        ? null
        : records => {
          const { partition, skipped } = marker.mark({ ...f, records, bytes: 0 })
          return { records: partition.records, skipped }
        }
    })
    const labels = { flow: this.#deps.flowName, topic: f.topic }
    observeRecordAge(this.#deps.metrics, labels, plan.batches, Date.now())
    const state = this.#deps.state(f)
    state.head = headAfterFetch(state.head, plan.batches)
    if (plan.skipped > 0) {
      this.#deps.metrics.inc('loopRecordsSkipped', labels, plan.skipped)
      this.#deps.log.debug({ topic: f.topic, partition: f.partition, skipped: plan.skipped }, 'records that originated on the target were not sent back')
    }
    return plan.batches
  }

  /** Records an acknowledged batch; false when its partition was lost meanwhile (nothing recorded). */
  #acked (f: FetchedBatches, plan: readonly PlannedBatch[], ack: BatchAck, now: number): boolean {
    const state = this.#deps.state(f)
    const batch = plan[ack.batch]!
    const key = state.key
    // Lost while its write was in flight: another instance may own it already; nothing of it is stored.
    if (state.lost) return false
    const sourceTopicId = sourceTopicIdOf(f)
    for (const run of ackedRuns(batch, ack)) this.#deps.tracker.recordRun(key, f.topic, f.partition, run.source, run.target, run.count, sourceTopicId)
    if (batch.lastOffset + 1 >= state.position) state.head = headAfterAck(batch, plan[ack.batch + 1])
    state.position = Math.max(state.position, batch.lastOffset + 1)
    state.copiedRecords += batch.recordCount
    state.copiedBytes += batch.bytes
    const labels = { flow: this.#deps.flowName, topic: f.topic }
    const metrics = this.#deps.metrics
    metrics.inc('recordsCopied', labels, batch.recordCount)
    metrics.inc('bytesCopied', labels, batch.bytes)
    if (batch.forwarded) metrics.inc('batchesForwarded', labels, 1)
    observeLatency(metrics, labels, batch, now)
    return true
  }

  /**
   * The target refused records of this partition. A batch refused as it is (too large, invalid) is re-encoded
   * from now on and tried again at once; refused again, or refused for another reason (authorization, unknown
   * topic), the partition is set aside and retried with back-off.
   */
  refused (f: FetchedBatches, failure: PartitionFailure): void {
    const state = this.#deps.state(f)
    const key = state.key
    if (failure.refusedBatch && !this.#reencode.has(key)) {
      this.#reencode.add(key)
      this.#deps.log.warn({ topic: f.topic, partition: f.partition, error: failure.error },
        'the target refused a record batch forwarded as it is; re-encoding this partition\'s records from now on')
      return
    }
    const message = `${failure.error}${failure.message === null ? '' : ` (${failure.message})`}${failure.refusedBatch ? ', also after re-encoding the records' : ''}`
    state.retryAt = this.#deps.failing.fail(key, state, { side: FailureSides.TARGET, error: failure.error, kind: failure.kind, message, operation: failure.operation ?? 'WRITE' })
  }
}
