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
import { FetchOutcomes, type FetchedRecord, type Grantee, type PartitionPosition, type RecordFetcher } from './record-fetcher.ts'

/** How long a read through 'written' may be held by an open transaction before its listener is told. */
export const HELD_TELL_MS = 5_000

/** A read through 'written' held back by a transaction still open on its topic (see `HeldReadListener`). */
export interface HeldRead {
  readonly topic: string
  /** Each partition held: where the read is (its last stable offset) and the high watermark it must reach. */
  readonly partitions: readonly { readonly partition: number, readonly offset: number, readonly end: number }[]
  readonly waitedMs: number
  /** How long the read may wait in all. */
  readonly timeoutMs: number
}

/**
 * Told when a read through 'written' waits on an open transaction: a read held silently for up to a transaction
 * timeout (a minute and more) looks like a hang to the operator.
 */
export interface HeldReadListener {
  /** How long a read may be held before `held` (HELD_TELL_MS by default). */
  readonly tellAfterMs?: number
  /** Once per read, `tellAfterMs` after it began, while a partition is held at its last stable offset. */
  held: (read: HeldRead) => void
  /** After `held`: the read reached its end, WAITED_MS after it began. */
  released: (topic: string, waitedMs: number) => void
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
  while (positions.length > 0) {
    options.signal?.throwIfAborted()
    if (Date.now() > deadline) throw readTimeout(topic, timeoutMs, positions, end, options.through === 'written')
    const fetched = await fetcher.fetch(positions)
    const next: PartitionPosition[] = []
    for (const f of fetched) {
      for (const r of f.records) onRecord(f.partition, r)
      const offset = f.outcome === FetchOutcomes.OUT_OF_RANGE ? Math.max(f.logStartOffset, 0) : f.nextOffset
      if (offset < end(f.partition)) {
        next.push({ topic, partition: f.partition, offset })
        held?.saw(f.partition, offset, f.lastStableOffset, end(f.partition))
      }
    }
    positions = next
    held?.check(positions)
  }
  held?.done()
  return new Map(tps.map(tp => [tp.partition, end(tp.partition)]))
}

/** Tells LISTENER once when partitions stay held at their last stable offset past HELD_TELL_MS, and their release. */
function heldWatch (topic: string, startedAt: number, timeoutMs: number, listener: HeldReadListener | undefined): { saw: (partition: number, offset: number, lastStable: number, end: number) => void, check: (left: readonly PartitionPosition[]) => void, done: () => void } | null {
  if (listener === undefined) return null
  const atStable = new Map<number, { partition: number, offset: number, end: number }>()
  let told = false
  return {
    saw: (partition, offset, lastStable, end) => {
      if (lastStable >= 0 && offset >= lastStable && lastStable < end) atStable.set(partition, { partition, offset, end })
      else atStable.delete(partition)
    },
    check: left => {
      const waitedMs = Date.now() - startedAt
      if (told || waitedMs < (listener.tellAfterMs ?? HELD_TELL_MS)) return
      const partitions = left.flatMap(p => atStable.get(p.partition) ?? [])
      if (partitions.length === 0) return
      told = true
      listener.held({ topic, partitions, waitedMs, timeoutMs })
    },
    done: () => { if (told) listener.released(topic, Date.now() - startedAt) }
  }
}

function readTimeout (topic: string, timeoutMs: number, stuck: readonly PartitionPosition[], end: (partition: number) => number, written: boolean): KmirrorError {
  const where = stuck.slice(0, 3).map(p => `partition ${p.partition} at offset ${p.offset} of ${end(p.partition)}`).join(', ')
  const why = written ? ': a transaction still open there holds read_committed readers until it commits, aborts or reaches its transaction timeout (a writer that died: see "Exactly-once" in docs/operations.md); retried' : ''
  return new KmirrorError(ErrorCodes.PROGRESS, `reading ${topic} to its end took longer than ${timeoutMs} ms (${where})${why}`, { retriable: true })
}
