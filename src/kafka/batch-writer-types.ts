/**
 * What the batch writer (batch-writer.ts) takes and answers: the batches of a write, their acknowledgements, the
 * partitions the target refused, and its options. Types only, so the replication side can name them without the
 * writer's machinery.
 */
import type { ClusterContext } from './connection-hints.ts'
import type { KafkaErrorKind } from './errors.ts'
import type { ProducerIdentity } from './record-batch.ts'
import type { TransactionCoordinatorMove } from './transactions.ts'
import type { WaitReporter } from './transaction-waits.ts'

/** A batch to write: it is built for the producer id and sequence the writer gives it when it is sent. */
export interface OutBatch {
  readonly recordCount: number
  /**
   * The source offsets of its first and last record, when it copies source records (the data path): a batch sent
   * again whose outcome was in doubt must carry the same span (in-doubt.ts). Absent for records written once.
   */
  readonly firstOffset?: number
  readonly lastOffset?: number
  /**
   * A checksum of the records it carries, computed only when asked (a lost request): with the span, it tells a
   * batch sent again from one carrying other records at the same source offsets (replication/record-fingerprint.ts).
   */
  readonly fingerprint?: () => number
  build (producer: ProducerIdentity, baseSequence: number): Buffer
}

export interface PartitionWrite {
  readonly topic: string
  readonly partition: number
  readonly batches: readonly OutBatch[]
}

/** Batch `batch` of write `write` was acknowledged; its first record is at target offset `baseOffset`. */
export interface BatchAck {
  readonly write: number
  readonly batch: number
  readonly baseOffset: number
}

export type OnBatchesAcked = (acks: readonly BatchAck[]) => Promise<void> | void

/**
 * A partition the target refused records of (authorization, unknown topic, too large, invalid batch, ...): its
 * batches from the refused one on were not appended. The other partitions of the write are not affected.
 */
export interface PartitionFailure {
  /** Index of the write in `write()`'s argument. */
  readonly write: number
  readonly topic: string
  readonly partition: number
  /** The Kafka error name (e.g. TOPIC_AUTHORIZATION_FAILED). */
  readonly error: string
  readonly kind: KafkaErrorKind
  /** The broker's error message, if it sent one. */
  readonly message: string | null
  readonly retriable: boolean
  /** The target refused the batch itself as it is (too large, invalid): re-encoding it may help. */
  readonly refusedBatch: boolean
  /** What to check, naming the cluster's keys. */
  readonly hint: string | undefined
  /** The ACL operation refused, when known: WRITE (produce, the default) or DESCRIBE (metadata). */
  readonly operation?: string
}

export interface WriteResult {
  /** Writes left for a "not now" reason (no leader yet, leader moving): try them again shortly. */
  readonly incomplete: number[]
  /** Partitions the target refused; their acknowledged batches were reported. */
  readonly failed: PartitionFailure[]
}

export interface BatchWriterOptions {
  /** Produce requests in flight per broker connection (at most 5: the broker's idempotence window). */
  readonly maxInFlight: number
  /** A request is closed once its batches reach this many bytes (a single larger batch still goes alone). */
  readonly maxRequestBytes: number
  readonly timeoutMs: number
  /** Names the cluster in messages ("cluster B") and its alias in hints; the client id when not given. */
  readonly cluster?: ClusterContext
  /**
   * Asked synchronously right before each produce request is handed to the connection: a non-null reason (the
   * group lease ran out) means no request is sent and the write throws FENCED (KmirrorError, not retriable).
   */
  readonly fence?: () => string | null
  /** Exactly-once mode: writes are transactional, with this transactional id (see the invariants above). */
  readonly transactionalId?: string
  /** Exactly-once mode: the transaction timeout sent with InitProducerId (TRANSACTION_TIMEOUT_MS when not set). */
  readonly transactionTimeoutMs?: number
  /** Exactly-once mode: the prefix of the flow's transactional ids (`<group id>-`), for the grant a refusal names. */
  readonly transactionalIdPrefix?: string
  /** Exactly-once mode: the transaction coordinator of the id was found at another broker than before. */
  readonly onCoordinatorMoved?: (move: TransactionCoordinatorMove) => void
  /** Exactly-once mode: a request to the transaction coordinator held off for long by "not yet" answers, and its end. */
  readonly onCoordinatorWaiting?: WaitReporter
}
