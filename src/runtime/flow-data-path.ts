/**
 * The data path's clients of one flow (flow.ts is their composition root): the fetcher of the source records,
 * the batch writer that forwards them, the record writer of the internal records, and in exactly-once mode the
 * round transactions that hold a round's data, progress and offset syncs together.
 *
 * Invariants:
 * - Replicated batches go through the batch writer, which forwards them as they are; internal records (progress,
 *   history, offset syncs) through the record writer, or, in exactly-once mode, through the round's transaction.
 * - Every writer of the flow asks the group lease gate (`fence`) before each produce request: a lost membership
 *   writes nothing.
 */
import { parsePartitionKey } from '../topic-partition.ts'
import { clientInt, isolationLevel } from '../config/client-settings.ts'
import { transactionTimeoutMs } from '../config/transaction-timeout.ts'
import type { FlowConfig } from '../config/types.ts'
import type { BatchWriter } from '../kafka/batch-writer.ts'
import type { ClusterClients } from '../kafka/cluster-clients.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import type { RecordWriter } from '../kafka/record-writer.ts'
import { logTransactionWait } from '../kafka/transaction-waits.ts'
import type { TransactionCoordinatorMove } from '../kafka/transactions.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { OffsetHistoryStore } from '../checkpoint/offset-history-store.ts'
import type { FlowReplicatorDeps } from '../replication/flow-replicator.ts'
import type { OffsetSyncEmitter } from '../replication/offset-sync-emitter.ts'
import type { ProgressStore } from '../replication/progress-store.ts'
import type { SyncOutbox } from '../replication/sync-outbox.ts'
import { TransactionRounds, type RoundOutcome } from '../replication/transaction-rounds.ts'

/** Bytes of uncompressed record data per partition per produce request: well under the 1 MiB broker default. */
export const MAX_CHUNK_BYTES = 512 * 1024

/** The counter of each fetch-session event of the data path's fetcher. */
const SESSION_EVENT_METRICS = { full: 'fetchFullRequests', incremental: 'fetchIncrementalRequests', reset: 'fetchSessionResets' } as const

export interface DataPathOptions {
  readonly log: Logger
  readonly metrics: Metrics
  /** The group lease gate; absent alone. */
  readonly fence: (() => string | null) | undefined
  /** Exactly-once mode: the transactional id of this instance; undefined in at-least-once mode. */
  readonly transactionalId: string | undefined
  /** How each round's transaction ended (exactly-once mode). */
  readonly onRoundEnd: (outcome: RoundOutcome, cause?: unknown) => void
  readonly onCoordinatorMoved: (move: TransactionCoordinatorMove) => void
}

export interface DataPath {
  readonly fetcher: RecordFetcher
  readonly batchWriter: BatchWriter
  /** The internal records' writer outside round transactions (checkpoints, the jobs). */
  readonly writer: RecordWriter
  /** Exactly-once mode: the round transactions; null in at-least-once mode. */
  readonly rounds: TransactionRounds | null
  /** Where the data path's internal records go: into the round's transaction, or the record writer. */
  readonly roundWriter: Pick<RecordWriter, 'write'>
}

/** Opens the flow's data-path clients on SOURCE and TARGET (their ClusterClients close them). */
export function openDataPath (config: FlowConfig, source: ClusterClients, target: ClusterClients, options: DataPathOptions): DataPath {
  const { fence, transactionalId, metrics } = options
  const consumer = config.source.consumer
  const fetcher = source.fetcher('replication-consumer', {
    isolation: isolationLevel(consumer),
    maxWaitMs: clientInt(consumer, 'fetch.max.wait.ms'),
    maxBytes: clientInt(consumer, 'fetch.max.bytes'),
    maxPartitionBytes: clientInt(consumer, 'max.partition.fetch.bytes'),
    sessions: true,
    partial: true,
    reader: config.name,
    onSessionEvent: event => metrics.inc(SESSION_EVENT_METRICS[event], { flow: config.name })
  })
  const gate = fence === undefined ? {} : { fence }
  const writer = target.writer('internal-producer', { idempotent: true, maxChunkBytes: MAX_CHUNK_BYTES, ...gate })
  const timeoutMs = transactionTimeoutMs(config)
  const producer = config.target.producer
  const batchWriter = target.batchWriter('replication-producer', {
    maxInFlight: Math.min(5, clientInt(producer, 'max.in.flight.requests.per.connection')),
    maxRequestBytes: clientInt(producer, 'max.request.size') * 4,
    timeoutMs: clientInt(producer, 'request.timeout.ms'),
    ...gate,
    ...(transactionalId === undefined
      ? {}
      : {
          transactionalId,
          transactionTimeoutMs: timeoutMs,
          transactionalIdPrefix: `${config.groupId}-`,
          onCoordinatorMoved: options.onCoordinatorMoved,
          onCoordinatorWaiting: w => { logTransactionWait(options.log, w) }
        })
  })
  const rounds = transactionalId === undefined
    ? null
    : new TransactionRounds(batchWriter, options.onRoundEnd, { timeoutMs, timeoutKey: `${config.target.alias}.producer.transaction.timeout.ms` })
  return { fetcher, batchWriter, writer, rounds, roundWriter: rounds?.records ?? writer }
}

export interface StoreSinks {
  readonly history: OffsetHistoryStore
  readonly progress: ProgressStore
  /** MM2's offset syncs written with the round (at least once: by the data path; exactly once: in its transaction). */
  readonly syncsInRound: OffsetSyncEmitter | null
  /** At-least-once mode with offset syncs: MM2's syncs go out beside the data path. */
  readonly outbox: SyncOutbox | null
  /**
   * Exactly-once mode with offset syncs on the source: the outbox they are queued in after each commit. Not sent to
   * here; only emptied with the queue of a lost membership (`dropQueued`).
   */
  readonly afterCommit?: SyncOutbox | null
}

/**
 * Where the data path stores what it copied: the positions (with the history's extents first), and the offset
 * syncs (the history first, then MM2's topic or the outbox).
 */
export function storeSinks (config: FlowConfig, { history, progress, syncsInRound, outbox, afterCommit = null }: StoreSinks): Pick<FlowReplicatorDeps, 'progress' | 'syncs'> {
  // A lost membership's queued syncs must not go out under the next one, after the new owner's (invariant 27).
  const queue = outbox ?? afterCommit
  return {
    // The exact history gets the same acknowledged syncs as MM2's offset-syncs topic, and at each progress
    // flush (after that flush's syncs) the positions and extents that make translation exact after a restart.
    progress: {
      // UNTIL (the membership the positions were taken under) goes to both writes: neither may land once it ended.
      commit: async (positions, until) => {
        // Extents first: a stored position must never be ahead of the history, or copied records past the
        // last persisted extent would read as gaps after a crash between the two writes.
        await history.checkpointExtents(new Map([...positions].map(([tp, p]) => [tp, p.lastOffset + 1])), until)
        return await progress.commit(positions, until)
      }
    },
    // The history first: a sync the history did not take is sent again with it, never twice to MM2's topic. One
    // write at a time (exactly-once mode, where there is no outbox: both join the round's transaction): two writes
    // under one producer at once would leave the second going on after the first failed and the round aborted.
    syncs: {
      // UNTIL (the membership the syncs were taken under): none of them goes out once it ended, nor is queued.
      send: outbox === null
        ? async (entries, until) => { await history.append(entries, until); until?.throwIfAborted(); await syncsInRound?.send(entries) }
        : async (entries, until) => { await history.append(entries, until); until?.throwIfAborted(); outbox.enqueue(entries) },
      // A lost membership's queued MM2 syncs and history tombstones are dropped, and its history in memory rebuilt from
      // the topic at the next follow (offset-history-store.ts).
      dropQueued: () => {
        queue?.dropQueued()
        history.membershipLost()
      },
      ...(queue === null ? {} : {
        settle: async (timeoutMs: number) => await queue.settled(timeoutMs),
        ...(queue.writesTo === undefined ? {} : { settlesTo: queue.writesTo })
      }),
      restarted: key => {
        const { topic, partition } = parsePartitionKey(key)
        history.forget(topic, partition)
      },
      // At least once (the only mode using this sink's failures) the history is what this sink waits on.
      writesTo: { noun: 'the offset history', topic: history.topic, cluster: config.target.alias }
    }
  }
}
