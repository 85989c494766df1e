/**
 * Source record timestamps on the data path: MM2's `record-age-ms` (fetch time minus record timestamp) and
 * `replication-latency-ms` (the time the target acknowledged minus record timestamp), and each partition's lag in
 * seconds (the age of its oldest record not copied yet).
 *
 * kmirror forwards whole batches, so it measures per planned batch, not per record (MM2 measures per record):
 * each batch is one observation, taken with the timestamp of its first record, its oldest in producer order, so
 * an observation is the largest latency of its batch. The timestamps come from the batch header (no decoding) or,
 * for re-encoded batches, from the records already decoded.
 *
 * Lag in seconds of a partition, from its `head` (the timestamp of its oldest record known not to be copied):
 * - unknown (null) while its lag in records is (failing, not read yet, waiting on the source), or no timestamp is known;
 * - 0 when it has caught up (nothing left to copy);
 * - else now minus `head`. A fetch sets `head` to the first planned record's timestamp; an acknowledged batch to
 *   the next batch's of the same fetch, or, when it was the last one fetched, to the newest timestamp of its own
 *   batch (the next record is not fetched yet: it was written at that time or later, so the age shown is at
 *   most one round too old, never younger than the truth).
 *   Example: batches [t=1000..1040] and [t=1050..1090] fetched at 1200: head 1000, lag 0.2 s; the first acked at
 *   1210: head 1050 (0.16 s); the second acked: head 1090 and, with the high watermark reached, lag 0.
 */
import type { Metrics } from '../metrics/metrics.ts'
import type { PlannedBatch } from './batch-plan.ts'
import type { FailureReport } from './partition-failures.ts'
import type { PartitionState } from './partition-set.ts'
import { partitionLag, type PartitionStatus } from './replicator-ports.ts'

/** A timestamp a producer did not set (-1, old message formats) tells nothing about time. */
function isKnown (timestamp: number): boolean {
  return timestamp >= 0
}

/** record-age-ms: one observation per batch planned from a fetch that returned at `now`. */
export function observeRecordAge (metrics: Metrics, labels: { flow: string, topic: string }, batches: readonly PlannedBatch[], now: number): void {
  for (const b of batches) if (isKnown(b.firstTimestamp)) metrics.observe('recordAge', labels, Math.max(0, now - b.firstTimestamp))
}

/** replication-latency-ms of a batch the target acknowledged at `now`. */
export function observeLatency (metrics: Metrics, labels: { flow: string, topic: string }, batch: PlannedBatch, now: number): void {
  if (isKnown(batch.firstTimestamp)) metrics.observe('replicationLatency', labels, Math.max(0, now - batch.firstTimestamp))
}

/** The head after a fetch planned `batches`: the first's timestamp; unchanged when nothing was planned. */
export function headAfterFetch (head: number | null, batches: readonly PlannedBatch[]): number | null {
  const first = batches[0]
  if (first === undefined) return head
  return isKnown(first.firstTimestamp) ? first.firstTimestamp : null
}

/** The head after `batch` was acknowledged, `next` being the batch planned after it in the same fetch, if any. */
export function headAfterAck (batch: PlannedBatch, next: PlannedBatch | undefined): number | null {
  const timestamp = next === undefined ? batch.maxTimestamp : next.firstTimestamp
  return isKnown(timestamp) ? timestamp : null
}

/** Seconds: 0 when caught up, null when unknown (see the module comment). */
export function lagSeconds (p: Pick<PartitionStatus, 'highWatermark' | 'position' | 'failure' | 'sourceWaitSince'>, head: number | null, now: number): number | null {
  const records = partitionLag(p)
  if (records === null) return null
  if (records === 0) return 0
  return head === null ? null : Math.max(0, now - head) / 1000
}

/**
 * What /status shows of a partition in the set: its counters, its failure and its lag in seconds. WAIT_SINCE (epoch
 * ms): the source has given nothing of it since then (source-waits.ts `staleSince`), so its lag is unknown.
 */
export function statusOf (state: PartitionState, failure: FailureReport | null, now: number, waitSince?: number): PartitionStatus {
  const { topic, partition, remoteTopic, position, highWatermark, copiedRecords, copiedBytes, lostToRetention, head } = state
  const reported = {
    topic, partition, remoteTopic, position, highWatermark, copiedRecords, copiedBytes, lostToRetention, failure,
    ...(waitSince === undefined ? {} : { sourceWaitSince: new Date(waitSince).toISOString() })
  }
  return { ...reported, lagSeconds: lagSeconds(reported, head, now) }
}
