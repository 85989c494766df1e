/**
 * The shapes around the data path (flow-replicator.ts): what it reports per partition, and the narrow ports it
 * uses, so unit tests can drive it with in-memory fakes.
 */
import type { FlowConfig } from '../config/types.ts'
import type { BatchWriter } from '../kafka/batch-writer.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { Codec } from './batch-plan.ts'
import type { OffsetSyncEntry } from './offset-sync-tracker.ts'
import type { FailureBackoff, FailureCluster, FailureReport } from './partition-failures.ts'
import type { ProgressStore } from './progress-store.ts'
import type { ProvenanceFlow } from './provenance.ts'
import { SOURCE_TRANSACTION_OPEN } from './source-waits.ts'
import type { TransactionRounds } from './transaction-rounds.ts'

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
  /** Age in seconds of the oldest record not copied yet; 0 when caught up; null when unknown (record-times.ts). */
  readonly lagSeconds: number | null
  /**
   * Read read_committed, a transaction open on the source holds the partition at this offset (its last stable
   * offset) since `heldSince` (ISO): nothing past it is copied until the transaction ends (source-waits.ts). Absent
   * otherwise. Shown from the first round that finds it, long before it is reported failing.
   */
  readonly heldAt?: number
  readonly heldSince?: string
  /**
   * The source has given nothing of the partition since then (ISO), though it refused nothing (its leader out of
   * reach, none, moving for long; source-waits.ts `staleSince`): its high watermark is stale, its lag unknown until
   * the next answer. Absent otherwise, and during a wait of a round or a few seconds.
   */
  readonly sourceWaitSince?: string
}

/**
 * Records of the partition not copied yet; null when unknown (not read yet, the source refuses it or has given
 * nothing of it for a while: the high watermark is stale).
 */
export function partitionLag (p: Pick<PartitionStatus, 'highWatermark' | 'position' | 'failure' | 'sourceWaitSince'>): number | null {
  return p.highWatermark < 0 || isReadFailure(p.failure) || p.sourceWaitSince !== undefined ? null : Math.max(0, p.highWatermark - p.position)
}

/**
 * Whether the source refuses the partition: its high watermark is stale then (it is not fetched). One the target
 * refuses or cannot take yet is still fetched (every round it is retried), so its lag is known, and grows; so is
 * one an open source transaction holds (its answers carry the high watermark).
 */
export function isReadFailure (failure: FailureReport | null): boolean {
  return failure !== null && failure.side === 'source' && failure.error !== SOURCE_TRANSACTION_OPEN
}

/** The narrow ports the data path uses, so unit tests can drive it with in-memory fakes. */
export type SourceReader = Pick<RecordFetcher, 'fetchBatches' | 'listOffsets' | 'listOffsetsSettled'>
export type TargetWriter = Pick<BatchWriter, 'write'> & Partial<Pick<BatchWriter, 'forgetPartition' | 'recreatedPartitions' | 'cutPoints' | 'endMembership' | 'probeReady' | 'waitReason'>>
export type ProgressSink = Pick<ProgressStore, 'commit'>
export interface OffsetSyncSink {
  /**
   * Writes ENTRIES. UNTIL: the group membership they were taken under; once it ended nothing more of them is written
   * (a late sync of a partition another instance owns by then would land after its own).
   */
  readonly send: (entries: readonly OffsetSyncEntry[], until?: AbortSignal) => Promise<void>
  /** Membership lost: syncs queued to be written beside the data path (sync-outbox.ts) are dropped. */
  readonly dropQueued?: () => void
  /**
   * Partition KEY is copied again into a remote topic created again, or from a source topic created again: what
   * was recorded of it maps into a topic that is gone (the offset history forgets it).
   */
  readonly restarted?: (key: string) => void
  /** What the sink writes, for the log of its failures; "offset syncs" when not given. */
  readonly writesTo?: WriteTarget
  /**
   * Syncs written beside the data path (sync-outbox.ts): waits until those sent to this sink before the call are
   * written, TIMEOUT_MS at most; how many are not (`SyncOutbox.settled`). Where it is wanted: the store of a hand-over.
   */
  readonly settle?: (timeoutMs: number) => Promise<number>
  /** Where `settle` writes, for the warning of a hand-over that could not wait for it. */
  readonly settlesTo?: Pick<WriteTarget, 'topic' | 'cluster'>
}

/** A topic written in the background, as its failure lines name it. */
export interface WriteTarget {
  /** "offset syncs", "the offset history": the words of the warning `cannot write <noun>; will retry`. */
  readonly noun: string
  readonly topic: string
  /** The cluster alias. */
  readonly cluster: string
}

export interface FlowReplicatorDeps {
  /** With IdentityReplicationPolicy, the policy and aliases turn on loop prevention (provenance.ts). */
  readonly flow: Pick<FlowConfig, 'name' | 'offsetLagMax' | 'offsetFlushIntervalMs'> & Partial<ProvenanceFlow> & Partial<Pick<FlowConfig, 'groupId' | 'healthStallThresholdMs' | 'transactionHangThresholdMs'>>
  readonly fetcher: SourceReader
  readonly writer: TargetWriter
  readonly progress: ProgressSink
  readonly syncs: OffsetSyncSink | null
  readonly log: Logger
  /**
   * Each side's alias (the messages about failing partitions name it) with its brokers, security protocol and
   * principal (for the Kafka tool lines remedies print); `source` and `target` with nothing else when not given.
   */
  readonly clusters?: { readonly source: FailureCluster, readonly target: FailureCluster }
  /** Back-off of a failing partition (partition-failures.ts); RETRY_BASE_MS doubling up to RETRY_MAX_MS by default. */
  readonly failureBackoff?: FailureBackoff
  readonly startAt: 'earliest' | 'latest'
  /**
   * The source topic id the last copy of a partition (by `partitionKey`) came from, as the offset history tells
   * (`OffsetHistoryStore.copiedFrom`): a partition resumed from its stored position checks its first answer against it.
   */
  readonly copiedFrom?: (key: string) => string | undefined
  /** How the fetcher reads the source (read_committed by default): only read_committed reads are held by open transactions. */
  readonly isolation?: 'read_committed' | 'read_uncommitted'
  readonly metrics?: Metrics
  /** How long a topic's counters and histograms stay after its last partition left (topic-series.ts; 10 min by default). */
  readonly countedSeriesKeptMs?: number
  /**
   * The group lease gate (flow-membership.ts), asked right before each write round: a reason writes nothing this
   * round. Absent when the flow runs alone.
   */
  readonly fence?: () => string | null
  /**
   * Also store progress (at-least-once mode) as soon as every partition has caught up, at most once a second: a
   * flow in a group, whose lost membership stores nothing, then re-copies nothing copied before the copy went quiet.
   */
  readonly flushWhenCaughtUp?: boolean
  /** How batches are written (batch-plan.ts); defaults forward everything the target accepts as it is. */
  readonly batching?: Partial<BatchingOptions>
  /** Exactly-once mode: rounds are transactions; `progress` and `syncs` write inside them. */
  readonly exactlyOnce?: ExactlyOnceDeps
}

export interface ExactlyOnceDeps {
  readonly rounds: Pick<TransactionRounds, 'run' | 'recover' | 'endMembership' | 'transactionalId' | 'commitInDoubt' | 'settleDoubt' | 'lastCommitted'>
  /** The committed progress, read again (read_committed) after a failed round. */
  readonly reloadProgress: () => Promise<Map<string, number>>
  /**
   * Offset syncs on the source cluster cannot join a target transaction: queued after each commit, as MM2 writes
   * them then, and sent in order, retried and bounded by the outbox (sync-outbox.ts), drained at stop.
   */
  readonly syncsAfterCommit: { enqueue: (entries: readonly OffsetSyncEntry[]) => void } | null
}

export interface BatchingOptions {
  /** The target producer's compression.type when the user set it, else null (keep each batch's codec). */
  readonly compression: Codec | null
  readonly maxChunkBytes: number
  readonly minForwardBytes: number
}
