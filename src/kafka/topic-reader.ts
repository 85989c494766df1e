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

export interface ReadOptions {
  /** How long the whole read may take (60 s by default). */
  readonly timeoutMs?: number
  /** 'stable' (default): to the end the reader sees; 'written': to the high watermark (see above). */
  readonly through?: 'stable' | 'written'
  /** Ends the read at once, with the signal's reason (a stop). */
  readonly signal?: AbortSignal
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
  const deadline = Date.now() + timeoutMs
  while (positions.length > 0) {
    options.signal?.throwIfAborted()
    if (Date.now() > deadline) throw readTimeout(topic, timeoutMs, positions, end, options.through === 'written')
    const fetched = await fetcher.fetch(positions)
    const next: PartitionPosition[] = []
    for (const f of fetched) {
      for (const r of f.records) onRecord(f.partition, r)
      const offset = f.outcome === FetchOutcomes.OUT_OF_RANGE ? Math.max(f.logStartOffset, 0) : f.nextOffset
      if (offset < end(f.partition)) next.push({ topic, partition: f.partition, offset })
    }
    positions = next
  }
  return new Map(tps.map(tp => [tp.partition, end(tp.partition)]))
}

function readTimeout (topic: string, timeoutMs: number, stuck: readonly PartitionPosition[], end: (partition: number) => number, written: boolean): KmirrorError {
  const where = stuck.slice(0, 3).map(p => `partition ${p.partition} at offset ${p.offset} of ${end(p.partition)}`).join(', ')
  const why = written ? ': a transaction still open there holds read_committed readers until it commits, aborts or reaches its transaction timeout (a writer that died: see "Exactly-once" in docs/operations.md); retried' : ''
  return new KmirrorError(ErrorCodes.PROGRESS, `reading ${topic} to its end took longer than ${timeoutMs} ms (${where})${why}`, { retriable: true })
}
