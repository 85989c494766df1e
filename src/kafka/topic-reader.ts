/**
 * Reads a topic from its log start to the end offsets observed when the read began (read-to-end, as
 * Connect's KafkaBasedLog does at start-up). Used for kmirror's internal topics, which are small. A refused
 * read names the READ grant on the topic.
 *
 * A read_committed reader's end is the last stable offset: a transaction still open hides every record written
 * after its first one, committed or not. `through: 'written'` reads to the high watermark instead, waiting for
 * open transactions to end (as Connect reads its offsets topic): a store whose records several writers commit in
 * transactions (the progress of exactly-once mode) must not miss the ones committed behind another's open one.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { partitionKey } from '../topic-partition.ts'
import { withGrant } from './acl-grant.ts'
import { FetchOutcomes, type FetchedPartition, type FetchedRecord, type Grantee, type PartitionPosition, type RecordFetcher } from './record-fetcher.ts'

/** How long a read through 'written' may be held by an open transaction before its listener is told. */
export const HELD_TELL_MS = 5_000

/** A read through 'written' held back by a transaction still open on its topic (see `HeldReadListener`). */
export interface HeldRead {
  readonly topic: string
  /**
   * Each partition held: where the read is (its last stable offset: the first offset of the transaction holding
   * it), the high watermark it must reach, and since when it is held there (ms since the epoch).
   */
  readonly partitions: readonly { readonly partition: number, readonly offset: number, readonly end: number, readonly since: number }[]
  /** How long the longest held partition has been held. */
  readonly heldMs: number
  /** How long the read may take in all: it fails then (retriable). */
  readonly timeoutMs: number
}

/**
 * Told when a read through 'written' waits on an open transaction: a read held silently for up to a transaction
 * timeout (a minute and more) looks like a hang to the operator.
 */
export interface HeldReadListener {
  /** How long a partition may be held before `held` (HELD_TELL_MS by default). */
  readonly tellAfterMs?: number
  /** Once per read, when a partition has sat `tellAfterMs` at the same last stable offset, below the high watermark. */
  held: (read: HeldRead) => void
  /** After `held`: READ (the object `held` was given) ended, WAITED_MS after it began, reaching its end (true) or failing (false). */
  released: (read: HeldRead, waitedMs: number, reached: boolean) => void
  /**
   * After `held`, while READ goes on: the partitions held `tellAfterMs` or longer now, when they are no longer those
   * told last (a partition moved on, another transaction holds it); none while no partition is held that long.
   */
  readonly changed?: (read: HeldRead, partitions: HeldRead['partitions']) => void
}

export interface ReadOptions {
  /** How long the whole read may take (60 s by default). */
  readonly timeoutMs?: number
  /** 'stable' (default): to the end the reader sees; 'written': to the high watermark (see above). */
  readonly through?: 'stable' | 'written'
  /** Ends the read at once, with the signal's reason (a stop). */
  readonly signal?: AbortSignal
  /** Through 'written' only: told when an open transaction holds the read (and when it no longer does). */
  readonly held?: HeldReadListener
}

export async function readTopicToEnd (
  fetcher: RecordFetcher,
  topic: string,
  partitions: number,
  onRecord: (partition: number, record: FetchedRecord) => void,
  options: ReadOptions = {}
): Promise<void> {
  try {
    await readToEnd(fetcher, topic, partitions, onRecord, options)
  } catch (err) {
    throw withReadGrant(err, fetcher.grantee, topic)
  }
}

/**
 * Reads a topic from `from` (next offset per partition; the log start for a partition not in it) to the end offsets
 * observed when the read began; returns those end offsets, where the next read continues (tailing).
 */
export async function readTopicFrom (
  fetcher: RecordFetcher,
  topic: string,
  partitions: number,
  from: ReadonlyMap<number, number>,
  onRecord: (partition: number, record: FetchedRecord) => void,
  options: ReadOptions = {}
): Promise<Map<number, number>> {
  try {
    return await readToEnd(fetcher, topic, partitions, onRecord, options, from)
  } catch (err) {
    throw withReadGrant(err, fetcher.grantee, topic)
  }
}

/** A refused read of TOPIC names the grant: READ on it, to the principal, on its cluster (fakes have no grantee). */
function withReadGrant (err: unknown, grantee: Grantee | undefined, topic: string): unknown {
  if (!(err instanceof KmirrorError) || grantee === undefined) return err
  return withGrant(err, `reading ${topic} on ${grantee.cluster.label}`, { operation: 'READ', resourceType: 'topic', names: [topic] }, grantee.principal, grantee.cluster)
}

async function readToEnd (
  fetcher: RecordFetcher,
  topic: string,
  partitions: number,
  onRecord: (partition: number, record: FetchedRecord) => void,
  options: ReadOptions,
  from: ReadonlyMap<number, number> = new Map()
): Promise<Map<number, number>> {
  const timeoutMs = options.timeoutMs ?? 60_000
  const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }))
  const [earliest, latest] = await Promise.all([fetcher.listOffsets(tps, 'earliest'), fetcher.listOffsets(tps, options.through === 'written' ? 'written' : 'latest')])
  const end = (partition: number): number => latest.get(partitionKey(topic, partition)) ?? 0
  let positions: PartitionPosition[] = tps
    .map(tp => ({ ...tp, offset: Math.max(from.get(tp.partition) ?? 0, earliest.get(partitionKey(topic, tp.partition)) ?? 0) }))
    .filter(p => p.offset < end(p.partition))
  const startedAt = Date.now()
  const deadline = startedAt + timeoutMs
  const held = options.through === 'written' ? heldWatch(topic, startedAt, timeoutMs, options.held) : null
  let reached = false
  try {
    while (positions.length > 0) {
      options.signal?.throwIfAborted()
      if (Date.now() > deadline) throw readTimeout(topic, timeoutMs, positions, end, options.through === 'written')
      const fetched = await fetcher.fetch(positions)
      // (an OFFSET_OUT_OF_RANGE answer gives no log start, -1: retention moved it since the read began, asked again)
      const unknownStart = fetched.filter(f => f.outcome === FetchOutcomes.OUT_OF_RANGE && f.logStartOffset < 0)
      const starts = unknownStart.length === 0 ? new Map<string, number>() : await fetcher.listOffsets(unknownStart.map(f => ({ topic, partition: f.partition })), 'earliest')
      const next: PartitionPosition[] = []
      for (const f of fetched) {
        for (const r of f.records) onRecord(f.partition, r)
        const logStart = f.logStartOffset >= 0 ? f.logStartOffset : starts.get(partitionKey(topic, f.partition)) ?? 0
        const offset = f.outcome === FetchOutcomes.OUT_OF_RANGE ? logStart : f.nextOffset
        if (offset < end(f.partition)) next.push({ topic, partition: f.partition, offset })
        held?.saw(f, offset, end(f.partition))
      }
      positions = next
      held?.check(positions)
    }
    reached = true
  } finally {
    held?.done(reached)
  }
  return new Map(tps.map(tp => [tp.partition, end(tp.partition)]))
}

/**
 * Tells LISTENER once when a partition sits at the same last stable offset below its answer's own high watermark
 * (only an open transaction makes that: a leader just elected whose high watermark lags has both equal) for
 * `tellAfterMs`, and then the read's end. A partition that moves on, or reaches its end, starts over.
 */
function heldWatch (topic: string, startedAt: number, timeoutMs: number, listener: HeldReadListener | undefined): {
  saw: (f: Pick<FetchedPartition, 'partition' | 'lastStableOffset' | 'highWatermark'>, offset: number, end: number) => void
  check: (left: readonly PartitionPosition[]) => void
  done: (reached: boolean) => void
} | null {
  if (listener === undefined) return null
  const tellAfterMs = listener.tellAfterMs ?? HELD_TELL_MS
  const heldAt = new Map<number, { partition: number, offset: number, end: number, since: number }>()
  let told: HeldRead | null = null
  /** The partitions told held last (by `held` or `changed`). */
  let last: HeldRead['partitions'] = []
  return {
    saw: (f, offset, end) => {
      const stable = f.lastStableOffset
      const atHold = offset < end && stable >= 0 && offset >= stable && stable < f.highWatermark
      const before = heldAt.get(f.partition)
      if (!atHold) heldAt.delete(f.partition)
      else if (before === undefined || before.offset !== stable) heldAt.set(f.partition, { partition: f.partition, offset: stable, end, since: Date.now() })
    },
    check: left => {
      const now = Date.now()
      const partitions = left.flatMap(p => heldAt.get(p.partition) ?? []).filter(h => now - h.since >= tellAfterMs)
      if (told !== null) {
        if (sameHolds(partitions, last)) return
        last = partitions
        listener.changed?.(told, partitions)
        return
      }
      if (partitions.length === 0) return
      told = { topic, partitions, heldMs: Math.max(...partitions.map(h => now - h.since)), timeoutMs }
      last = partitions
      listener.held(told)
    },
    done: reached => { if (told !== null) listener.released(told, Date.now() - startedAt, reached) }
  }
}

/** Whether A and B hold the same partitions at the same offsets, in any order. */
function sameHolds (a: HeldRead['partitions'], b: HeldRead['partitions']): boolean {
  if (a.length !== b.length) return false
  const offsets = new Map(b.map(h => [h.partition, h.offset]))
  return a.every(h => offsets.get(h.partition) === h.offset)
}

function readTimeout (topic: string, timeoutMs: number, stuck: readonly PartitionPosition[], end: (partition: number) => number, written: boolean): KmirrorError {
  const where = stuck.slice(0, 3).map(p => `partition ${p.partition} at offset ${p.offset} of ${end(p.partition)}`).join(', ')
  const why = written ? ': a transaction still open there holds read_committed readers until it commits, aborts or reaches its transaction timeout (a writer that died: see "Exactly-once" in docs/operations.md); retried' : ''
  return new KmirrorError(ErrorCodes.PROGRESS, `reading ${topic} to its end took longer than ${timeoutMs} ms (${where})${why}`, { retriable: true })
}
