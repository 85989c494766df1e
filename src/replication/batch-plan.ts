/**
 * Decides, per fetched source batch, whether it is forwarded to the target as it is or decoded and re-encoded,
 * and turns the result into the batches the writer sends.
 *
 * Forwarding (no decompression, no per-record work) is the default for every batch the target accepts as it
 * is and that is worth a produce slot of its own. Re-encoding is used:
 * - where forwarding would not be exact (record-batch.ts isForwardable: offset gaps from compaction, a batch
 *   starting before the wanted offset, log-append-time timestamps);
 * - where the records must change (IdentityReplicationPolicy adds the `kmirror.origin` header);
 * - where the user asked the target producer for a codec other than the batch's (`compression.type` set);
 * - for runs of small batches, which are merged into batches of up to `maxChunkBytes`: one request slot per
 *   tiny source batch would make catching up on a backlog of them slow;
 * - for a partition whose forwarded batch the target refused (e.g. too large, invalid): from then on.
 *
 * Invariants:
 * - Every record at or after the fetch offset appears in exactly one planned batch, in source order.
 * - A planned batch knows the source offset of each of its records (`offsets`, or contiguous from
 *   `firstOffset`), so acknowledged batches give exact offset syncs.
 * - A planned batch ends at every cut point (`cutAfter`: the last offsets of batches whose produce request was lost,
 *   kafka/in-doubt.ts): planned again from the same position, those batches come out with the same records,
 *   whatever was fetched after them, so the broker can recognise them.
 */
import type { BatchAck, OutBatch } from '../kafka/batch-writer.ts'
import { batchTimestamps, codecOf, decodeRecords, encodeRecords, isForwardable, recordBytes, rewriteForTarget, type FetchedRecord, type ProducerIdentity, type SourceBatch } from '../kafka/record-batch.ts'
import type { FetchedBatches } from '../kafka/record-fetcher.ts'
import { fingerprintBatch, fingerprintRecords } from './record-fingerprint.ts'

export type Codec = ReturnType<typeof codecOf>

export interface PlannedBatch extends OutBatch {
  /** Source offset of the first record. */
  readonly firstOffset: number
  /** Source offsets of the records when they are not consecutive from `firstOffset`, else null. */
  readonly offsets: readonly number[] | null
  /** The last source offset the batch accounts for: the partition's position after it is `lastOffset + 1`. */
  readonly lastOffset: number
  /** Bytes written: the batch as forwarded, or the key + value + header bytes of re-encoded records. */
  readonly bytes: number
  readonly forwarded: boolean
  /** Source timestamp (ms) of the first record, and of the newest: for latency and lag in seconds. */
  readonly firstTimestamp: number
  readonly maxTimestamp: number
}

export interface PlanOptions {
  /** The target producer's `compression.type` when the user set it; null forwards every codec as it is. */
  readonly compression: Codec | null
  /** Upper bound of a re-encoded batch (uncompressed bytes), below the brokers' default 1 MiB message limit. */
  readonly maxChunkBytes: number
  /** Source batches smaller than this (bytes on the wire) are merged with small neighbours by re-encoding. */
  readonly minForwardBytes: number
  /** Re-encode everything (the target refused a forwarded batch of this partition). */
  readonly reencode: boolean
  /** Source offsets after which a batch must end (kafka/in-doubt.ts); absent or empty for none. */
  readonly cutAfter?: ReadonlySet<number>
  /** Identity policy: drops looping records and adds the origin header; null for other policies. */
  readonly mark: ((records: FetchedRecord[]) => { records: FetchedRecord[], skipped: number }) | null
}

export interface PartitionPlan {
  readonly batches: PlannedBatch[]
  /** Records left out by `mark` (they originated on the target). */
  readonly skipped: number
}

export function planPartition (f: FetchedBatches, options: PlanOptions): PartitionPlan {
  if (options.mark !== null || options.reencode) {
    const records: FetchedRecord[] = []
    for (const b of f.batches) decodeRecords(b, f.fromOffset, records)
    const marked = options.mark === null ? { records, skipped: 0 } : options.mark(records)
    return { batches: reencode(marked.records, options.compression ?? codecOfFirst(f.batches), options.maxChunkBytes, options.cutAfter), skipped: marked.skipped }
  }
  const out: PlannedBatch[] = []
  let pending: SourceBatch[] = []
  const flushPending = (): void => {
    if (pending.length === 0) return
    const records: FetchedRecord[] = []
    for (const b of pending) decodeRecords(b, f.fromOffset, records)
    out.push(...reencode(records, options.compression ?? codecOfFirst(pending), options.maxChunkBytes, options.cutAfter))
    pending = []
  }
  const batches = f.batches
  for (let i = 0; i < batches.length; i++) {
    const b = batches[i]!
    const exact = isForwardable(b, f.fromOffset) && (options.compression === null || codecOf(b) === options.compression)
    // A small batch is merged only with a small neighbour; alone it is forwarded (merging gains nothing).
    const small = b.bytes.length < options.minForwardBytes
    const smallNeighbour = small && (isSmall(batches[i - 1], options) || isSmall(batches[i + 1], options))
    if (exact && !smallNeighbour) {
      flushPending()
      out.push(forward(b))
    } else {
      pending.push(b)
      if (cutWithin(options.cutAfter, b)) flushPending()
    }
  }
  flushPending()
  return { batches: out, skipped: 0 }
}

/** Whether a cut point falls in the batch's offsets: what is pending up to it is planned now. */
function cutWithin (cutAfter: ReadonlySet<number> | undefined, b: SourceBatch): boolean {
  if (cutAfter === undefined || cutAfter.size === 0) return false
  for (const offset of cutAfter) if (offset >= b.baseOffset && offset <= b.lastOffset) return true
  return false
}

function isSmall (b: SourceBatch | undefined, options: PlanOptions): boolean {
  return b !== undefined && b.bytes.length < options.minForwardBytes
}

function codecOfFirst (batches: readonly SourceBatch[]): Codec {
  return batches.length === 0 ? 'none' : codecOf(batches[0]!)
}

function forward (b: SourceBatch): PlannedBatch {
  const timestamps = batchTimestamps(b)
  return {
    firstTimestamp: timestamps.first,
    maxTimestamp: timestamps.max,
    recordCount: b.recordCount,
    firstOffset: b.baseOffset,
    offsets: null,
    lastOffset: b.lastOffset,
    bytes: b.bytes.length,
    forwarded: true,
    build: (producer: ProducerIdentity, sequence: number) => rewriteForTarget(b, producer, sequence),
    fingerprint: () => fingerprintBatch(b)
  }
}

/**
 * Records in batches of at most `maxBytes` (estimated encoded size), each at least one record, timestamps exact,
 * each ending at every cut point.
 */
function reencode (records: readonly FetchedRecord[], codec: Codec, maxBytes: number, cutAfter?: ReadonlySet<number>): PlannedBatch[] {
  // Asked once per call, not per record: cut points exist only after a lost produce request.
  const cuts = cutAfter !== undefined && cutAfter.size > 0 ? cutAfter : null
  const out: PlannedBatch[] = []
  let start = 0
  let size = 0
  const close = (end: number): void => {
    if (end <= start) return
    out.push(encoded(records.slice(start, end), codec))
    start = end
    size = 0
  }
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!
    const estimate = 70 + recordBytes(r) + 10 * r.headers.length
    if (i > start && (size + estimate > maxBytes || !withinDeltaRange(records[start]!.timestamp, r.timestamp))) close(i)
    size += estimate
    if (cuts !== null && cuts.has(r.offset)) close(i + 1)
  }
  close(records.length)
  return out
}

/**
 * The client library's record encoder (@platformatic/dynamic-buffer 0.3.1, int64ZigZagEncode) is only right
 * for timestamp deltas within the int32 range: a record 2^31 ms (about 25 days) or more away from its batch's
 * first timestamp would be written with a wrong timestamp. Such records start a new batch instead.
 */
const MAX_TIMESTAMP_DELTA = 2n ** 31n - 1n

function withinDeltaRange (first: bigint, timestamp: bigint): boolean {
  const delta = timestamp - first
  return delta <= MAX_TIMESTAMP_DELTA && delta >= -MAX_TIMESTAMP_DELTA
}

function encoded (records: FetchedRecord[], codec: Codec): PlannedBatch {
  const first = records[0]!.offset
  const last = records[records.length - 1]!.offset
  let bytes = 0
  let max = records[0]!.timestamp
  for (const r of records) {
    bytes += recordBytes(r)
    if (r.timestamp > max) max = r.timestamp
  }
  return {
    firstTimestamp: Number(records[0]!.timestamp),
    maxTimestamp: Number(max),
    recordCount: records.length,
    firstOffset: first,
    offsets: last - first === records.length - 1 ? null : records.map(r => r.offset),
    lastOffset: last,
    bytes,
    forwarded: false,
    build: (producer: ProducerIdentity, sequence: number) => encodeRecords(records, codec, producer, sequence),
    fingerprint: () => fingerprintRecords(records)
  }
}

/** Runs of consecutive source offsets of an acknowledged batch: (source start, target start, length). */
export function ackedRuns (batch: PlannedBatch, ack: Pick<BatchAck, 'baseOffset'>): { source: number, target: number, count: number }[] {
  if (batch.offsets === null) return [{ source: batch.firstOffset, target: ack.baseOffset, count: batch.recordCount }]
  const runs: { source: number, target: number, count: number }[] = []
  const offsets = batch.offsets
  let runStart = 0
  for (let j = 1; j <= offsets.length; j++) {
    if (j < offsets.length && offsets[j] === offsets[j - 1]! + 1) continue
    runs.push({ source: offsets[runStart]!, target: ack.baseOffset + runStart, count: j - runStart })
    runStart = j
  }
  return runs
}
