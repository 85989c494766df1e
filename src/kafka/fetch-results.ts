/**
 * What a fetch answers per partition: the outcome, the batches, the offsets, and why a partition was not read
 * (refused: `failure`; not now: `retryReason`). Shared by the fetcher, the data path and the unit fakes.
 */
import type { Broker } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { kafkaErrorInfo, KafkaErrorKinds, type KafkaErrorKind } from './errors.ts'
import { toOffset } from './offsets.ts'
import type { FetchPartitionResponse } from './protocol/fetch.ts'
import { scanBatches, verifyCrc, type FetchedRecord, type SourceBatch } from './record-batch.ts'
import { selectCommitted } from './transaction-filter.ts'

export interface PartitionPosition {
  readonly topic: string
  readonly partition: number
  readonly offset: number
}


export const FetchOutcomes = {
  OK: 'ok',
  /** The requested offset is outside [logStartOffset, highWatermark]. */
  OUT_OF_RANGE: 'out-of-range',
  /** Leadership moved or metadata is stale; metadata was refreshed, try again. */
  RETRY: 'retry',
  /**
   * The cluster refused this partition (no READ or DESCRIBE, a corrupt batch, an error kmirror does not expect):
   * `failure` says why. Waiting alone may not fix it; the other partitions are not affected.
   */
  FAILED: 'failed'
} as const
export type FetchOutcome = (typeof FetchOutcomes)[keyof typeof FetchOutcomes]

export interface FetchedPartition {
  readonly topic: string
  readonly partition: number
  readonly outcome: FetchOutcome
  readonly records: FetchedRecord[]
  /** Where the next fetch of this partition starts. Equals the requested offset when nothing was returned. */
  readonly nextOffset: number
  readonly highWatermark: number
  readonly lastStableOffset: number
  readonly logStartOffset: number
  /** Key + value + header bytes of the returned records. */
  readonly bytes: number
}

/** Why a partition could not be read or written. */
export interface PartitionError {
  /** The Kafka error name (TOPIC_AUTHORIZATION_FAILED, CORRUPT_MESSAGE, ...). */
  readonly error: string
  readonly kind: KafkaErrorKind
  /** What happened, naming the partition, the broker and the cluster. */
  readonly message: string
  /** What to check or grant, naming the cluster's keys. */
  readonly hint: string | undefined
  /** The ACL operation the cluster refused, when it was an authorization error: DESCRIBE (metadata) or READ (fetch). */
  readonly operation?: string
}

/** A partition's record batches as fetched, for forwarding without decoding (see record-batch.ts). */
export interface FetchedBatches {
  readonly topic: string
  readonly partition: number
  readonly outcome: FetchOutcome
  /** The requested offset: records before it in `batches[0]` were already copied. */
  readonly fromOffset: number
  /** Data batches holding records at or after `fromOffset`; control batches and aborted transactions removed, CRCs verified. */
  readonly batches: SourceBatch[]
  readonly nextOffset: number
  readonly highWatermark: number
  readonly lastStableOffset: number
  readonly logStartOffset: number
  /** Set when `outcome` is FAILED. */
  readonly failure?: PartitionError
  /** Why a RETRY partition was not read, when the fetcher knows (no leader, its leader unreachable). */
  readonly retryReason?: RetryReason
  /**
   * An answer of the partition's leader: the id of the topic it was fetched as (the source's metadata when it was
   * asked; Kafka 2.8+), null when the source gives none; absent from answers that say nothing of the topic.
   */
  readonly topicId?: string | null
}

/** Why a partition could not be read this round, though nothing refused it: it is asked again. */
export interface RetryReason {
  /** The Kafka error name: LEADER_NOT_AVAILABLE, NETWORK_EXCEPTION (its leader cannot be reached), NOT_LEADER_OR_FOLLOWER, ... */
  readonly error: string
  /** What that means for this partition, naming the broker and the cluster. */
  readonly detail: string
}

export function emptyBatches (position: PartitionPosition, outcome: FetchOutcome): FetchedBatches {
  return { topic: position.topic, partition: position.partition, outcome, fromOffset: position.offset, batches: [], nextOffset: position.offset, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1 }
}

/** POSITIONS led by NODE, whose fetch failed with CAUSE (or which rests after one that did): RETRY, unread. */
export function unreached (positions: readonly PartitionPosition[], node: number, broker: Broker, cause: string): FetchedBatches[] {
  const retryReason = { error: 'NETWORK_EXCEPTION', detail: `its leader, broker ${node} (${broker.host}:${broker.port}), cannot be read from: ${cause}` }
  return positions.map(position => ({ ...emptyBatches(position, FetchOutcomes.RETRY), retryReason }))
}

/** The Kafka error a partition waits with while its leader throttles kmirror's fetches (a client quota). */
export const THROTTLED = 'THROTTLING_QUOTA_EXCEEDED'

/**
 * POSITIONS led by NODE, whose fetch kmirror holds until UNTIL (epoch ms) because the broker throttles it (KIP-219:
 * the client waits out the throttle time the broker answered): RETRY, unread, with that reason, not "unanswered".
 */
export function throttled (positions: readonly PartitionPosition[], node: number, broker: Broker, until: number): FetchedBatches[] {
  const left = (Math.max(0, until - Date.now()) / 1000).toFixed(1)
  const retryReason = { error: THROTTLED, detail: `its leader, broker ${node} (${broker.host}:${broker.port}), throttles kmirror's fetches (a client quota): the next fetch goes out in ${left} s, as the broker asked` }
  return positions.map(position => ({ ...emptyBatches(position, FetchOutcomes.RETRY), retryReason }))
}

/** POSITIONS led by NODE, whose fetch sent at SENT_AT has not been answered yet (late-fetches.ts): RETRY, unread. */
export function unanswered (positions: readonly PartitionPosition[], node: number, broker: Broker, sentAt: number): FetchedBatches[] {
  const waited = ((Date.now() - sentAt) / 1000).toFixed(1)
  const retryReason = { error: 'REQUEST_TIMED_OUT', detail: `its leader, broker ${node} (${broker.host}:${broker.port}), has not answered a fetch sent ${waited} s ago while the other brokers did (slow, frozen or cut off?)` }
  return positions.map(position => ({ ...emptyBatches(position, FetchOutcomes.RETRY), retryReason }))
}

export function rawOffsets (p: FetchPartitionResponse): { highWatermark: number, lastStableOffset: number, logStartOffset: number } {
  return { highWatermark: toOffset(p.highWatermark), lastStableOffset: toOffset(p.lastStableOffset), logStartOffset: toOffset(p.logStartOffset) }
}

/**
 * The batches to copy out of one partition's fetched bytes (transaction-filter.ts), their CRCs verified: read_committed
 * drops batches of aborted transactions with the Java client's algorithm, control batches are never copied but
 * advance `nextOffset`.
 */
export function selectBatches (position: PartitionPosition, p: FetchPartitionResponse, readCommitted: boolean): FetchedBatches {
  const all = p.records === null ? [] : scanBatches(p.records, position.topic, position.partition)
  const aborted = readCommitted ? p.abortedTransactions.map(a => ({ producerId: a.producerId, firstOffset: toOffset(a.firstOffset) })) : null
  const { batches, nextOffset } = selectCommitted(all, position.offset, aborted)
  for (const batch of batches) verifyCrc(batch, position.topic, position.partition)
  return { ...emptyBatches(position, FetchOutcomes.OK), ...rawOffsets(p), batches, nextOffset }
}

/** A partition's failure as the error of a read that needs every partition (NOT_AUTHORIZED for a refusal). */
export function failedRead (failure: PartitionError): KmirrorError {
  const denied = failure.kind === KafkaErrorKinds.AUTHORIZATION
  return new KmirrorError(denied ? ErrorCodes.NOT_AUTHORIZED : ErrorCodes.FETCH, `${failure.message}${failure.hint === undefined ? '' : `; ${failure.hint}`}`, {
    retriable: !denied && kafkaErrorInfo(failure.error).retriable,
    details: { kafkaErrors: [failure.error] }
  })
}
