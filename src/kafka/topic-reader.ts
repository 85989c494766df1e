/**
 * Reads a topic from its log start to the end offsets observed when the read began (read-to-end, as
 * Connect's KafkaBasedLog does at start-up). Used for kmirror's internal topics, which are small. A refused
 * read names the READ grant on the topic.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { partitionKey } from '../topic-partition.ts'
import { withGrant } from './acl-grant.ts'
import { FetchOutcomes, type FetchedRecord, type Grantee, type PartitionPosition, type RecordFetcher } from './record-fetcher.ts'

export async function readTopicToEnd (
  fetcher: RecordFetcher,
  topic: string,
  partitions: number,
  onRecord: (partition: number, record: FetchedRecord) => void,
  timeoutMs = 60_000
): Promise<void> {
  try {
    await readToEnd(fetcher, topic, partitions, onRecord, timeoutMs)
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
  timeoutMs = 60_000
): Promise<Map<number, number>> {
  try {
    return await readToEnd(fetcher, topic, partitions, onRecord, timeoutMs, from)
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
  timeoutMs: number,
  from: ReadonlyMap<number, number> = new Map()
): Promise<Map<number, number>> {
  const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }))
  const [earliest, latest] = await Promise.all([fetcher.listOffsets(tps, 'earliest'), fetcher.listOffsets(tps, 'latest')])
  let positions: PartitionPosition[] = tps
    .map(tp => ({ ...tp, offset: Math.max(from.get(tp.partition) ?? 0, earliest.get(partitionKey(topic, tp.partition)) ?? 0) }))
    .filter(p => p.offset < (latest.get(partitionKey(topic, p.partition)) ?? 0))
  const deadline = Date.now() + timeoutMs
  while (positions.length > 0) {
    if (Date.now() > deadline) {
      throw new KmirrorError(ErrorCodes.PROGRESS, `reading ${topic} to its end took longer than ${timeoutMs} ms`, { retriable: true })
    }
    const fetched = await fetcher.fetch(positions)
    const next: PartitionPosition[] = []
    for (const f of fetched) {
      for (const r of f.records) onRecord(f.partition, r)
      const end = latest.get(partitionKey(topic, f.partition)) ?? 0
      const offset = f.outcome === FetchOutcomes.OUT_OF_RANGE ? Math.max(f.logStartOffset, 0) : f.nextOffset
      if (offset < end) next.push({ topic, partition: f.partition, offset })
    }
    positions = next
  }
  return new Map(tps.map(tp => [tp.partition, latest.get(partitionKey(topic, tp.partition)) ?? 0]))
}
