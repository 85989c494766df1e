import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ReplicationPolicyClasses, type ReplicationPolicyClass } from '../../../src/config/types.ts'
import { FetchOutcomes, type FetchedBatches, type FetchedRecord, type PartitionPosition, type RecordHeader } from '../../../src/kafka/record-fetcher.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { FlowReplicator, type SourceReader } from '../../../src/replication/flow-replicator.ts'
import { ORIGIN_HEADER, PATH_HEADER, ProvenanceMarker, createProvenanceMarker, originOf, pathOf } from '../../../src/replication/provenance.ts'
import { InMemoryTarget } from '../../fakes/in-memory-target.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'
import { RecordingProgress, RecordingSyncs } from '../../fakes/recording-sinks.ts'
import { sourceBatches } from '../../fakes/source-batches.ts'
import { partitionKey } from '../../../src/topic-partition.ts'

const h = (k: string, v: string | null): RecordHeader => [Buffer.from(k), v === null ? null : Buffer.from(v)]

/** Record at `offset`, produced on `origin` (undefined: produced here, no header yet). */
function rec (offset: number, origin?: string, headers: RecordHeader[] = []): FetchedRecord {
  return {
    offset, timestamp: 1_700_000_000_000n + BigInt(offset), key: Buffer.from(`k${offset}`), value: Buffer.from(`v${offset}`),
    headers: origin === undefined ? [...headers] : [...headers, h(ORIGIN_HEADER, origin)]
  }
}

/** A source whose partitions are fixed lists of records (offsets may have gaps); a fetch returns up to 4 offsets, in batches of 2. */
class ListSource implements SourceReader {
  readonly #logs = new Map<string, { records: FetchedRecord[], end: number }>()
  onCaughtUp: () => void = () => undefined
  add (topic: string, partition: number, records: FetchedRecord[]): void {
    this.#logs.set(`${topic}-${partition}`, { records, end: (records.at(-1)?.offset ?? -1) + 1 })
  }

  async fetchBatches (positions: readonly PartitionPosition[]): Promise<FetchedBatches[]> {
    if (positions.every(p => p.offset >= this.#logs.get(`${p.topic}-${p.partition}`)!.end)) this.onCaughtUp()
    return positions.map(p => {
      const log = this.#logs.get(`${p.topic}-${p.partition}`)!
      const next = Math.min(p.offset + 4, log.end)
      const records = log.records.filter(r => r.offset >= p.offset && r.offset < next)
      const batches = sourceBatches(records, { batchRecords: 2 })
      return { topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, fromOffset: p.offset, batches, nextOffset: next, highWatermark: log.end, lastStableOffset: log.end, logStartOffset: 0 }
    })
  }

  async listOffsets (partitions: readonly { topic: string, partition: number }[]): Promise<Map<string, number>> {
    return new Map(partitions.map(p => [partitionKey(p.topic, p.partition), 0]))
  }

  async listOffsetsSettled (partitions: readonly { topic: string, partition: number }[]): Promise<{ offsets: Map<string, number>, failed: Map<string, string> }> {
    return { offsets: await this.listOffsets(partitions), failed: new Map() }
  }
}


function flowOf (className: ReplicationPolicyClass) {
  return {
    name: 'A->B', offsetLagMax: 100, offsetFlushIntervalMs: 3_600_000,
    replicationPolicy: { className, separator: '.', internalTopicSeparatorEnabled: true, sourceClusterAlias: 'A' },
    source: { alias: 'A' },
    target: { alias: 'B' }
  }
}

async function replicate (className: ReplicationPolicyClass, topic: string, records: FetchedRecord[]) {
  const source = new ListSource()
  source.add(topic, 0, records)
  const target = new InMemoryTarget()
  const syncs = new RecordingSyncs()
  const progress = new RecordingProgress()
  const metrics = new CountingMetrics()
  const replicator = new FlowReplicator({ flow: flowOf(className), fetcher: source, writer: target, progress, syncs, log: memoryLogger().log, startAt: 'earliest', metrics })
  source.onCaughtUp = () => replicator.stop()
  await replicator.addTopics([{ source: topic, remote: topic, partitions: 1 }])
  await replicator.run()
  return { target, syncs, progress, metrics, status: replicator.status() }
}

function partitionOf (records: FetchedRecord[]) {
  return { topic: 't', partition: 0, outcome: FetchOutcomes.OK, records, nextOffset: records.length, highWatermark: records.length, lastStableOffset: records.length, logStartOffset: 0, bytes: 0 }
}

function meshFlow (source: string, target: string, clusters: string[], relays: string[]) {
  return {
    replicationPolicy: { className: ReplicationPolicyClasses.IDENTITY, separator: '.', internalTopicSeparatorEnabled: true, sourceClusterAlias: source },
    source: { alias: source },
    target: { alias: target },
    identityMesh: { clusters, relays }
  }
}

const pathText = (r: { headers: readonly RecordHeader[] }): string | undefined => r.headers.find(([k]) => k.toString() === PATH_HEADER)?.[1]?.toString()

const originText = (r: { headers: readonly RecordHeader[] }): string | null | undefined => {
  const o = originOf(r)
  return o === undefined || o === null ? o : o.toString('utf8')
}

describe('provenance header with IdentityReplicationPolicy', () => {
  it('marks local records with the source alias, keeps an upstream origin, and never sends back records from the target', async () => {
    // Given records produced on A, records that came from B, and one that came from C through A
    const records = [rec(0), rec(1, 'B'), rec(2, 'B'), rec(3, undefined, [h('x', '1'), h('x', '2')]), rec(4, 'C'), rec(5, 'B'), rec(6), rec(7)]
    // When flow A->B copies them
    const { target, metrics } = await replicate(ReplicationPolicyClasses.IDENTITY, 'orders', records)
    // Then the records from B stay on A, local records carry origin A after their own headers, C's keep origin C
    const copied = target.copied('orders', 0)
    assert.deepEqual(copied.map(r => r.value?.toString()), ['v0', 'v3', 'v4', 'v6', 'v7'])
    assert.deepEqual(copied.map(originText), ['A', 'A', 'C', 'A', 'A'])
    assert.deepEqual(copied[1]!.headers.map(([k, v]) => `${k.toString()}=${v?.toString()}`), ['x=1', 'x=2', 'kmirror.origin=A', 'kmirror.path=A,B'])
    assert.deepEqual(copied.map(r => pathText(r)), ['A,B', 'A,B', 'C,A,B', 'A,B', 'A,B'])
    assert.equal(metrics.counts.get('loopRecordsSkipped{"flow":"A->B","topic":"orders"}'), 3)
    assert.equal(metrics.counts.get('recordsCopied{"flow":"A->B","topic":"orders"}'), 5)
  })

  it('emits offset syncs across the gaps skipped records leave, so every copied record translates exactly', async () => {
    const records = [rec(0), rec(1), rec(2, 'B'), rec(3, 'B'), rec(4, 'B'), rec(5), rec(6), rec(7, 'B'), rec(8), rec(9, 'B'), rec(10, 'B'), rec(11)]
    const { target, syncs, progress } = await replicate(ReplicationPolicyClasses.IDENTITY, 'orders', records)
    const stored = target.stored('orders', 0)
    const copiedSource = records.filter(r => originText(r) !== 'B').map(r => r.offset)
    assert.equal(stored.length, copiedSource.length)
    const all = syncs.of('orders', 0).sort((a, b) => a.upstreamOffset - b.upstreamOffset)
    copiedSource.forEach((up, i) => {
      const sync = all.filter(s => s.upstreamOffset <= up).at(-1)
      assert.ok(sync, `a sync at or before ${up}`)
      assert.equal(sync.downstreamOffset + (up - sync.upstreamOffset), stored[i]!.offset, `source offset ${up}`)
    })
    // And the position moves past skipped records: a restart does not read them again
    assert.deepEqual(progress.latest(), { 'orders-0': 11 })
  })

  it('moves past a fetch in which every record came from the target, writing nothing', async () => {
    const records = [rec(0, 'B'), rec(1, 'B'), rec(2, 'B'), rec(3, 'B'), rec(4), rec(5, 'B')]
    const { target, progress, status } = await replicate(ReplicationPolicyClasses.IDENTITY, 'orders', records)
    assert.deepEqual(target.copied('orders', 0).map(r => r.value?.toString()), ['v4'])
    assert.deepEqual(progress.latest(), { 'orders-0': 5 })
    assert.equal(status[0]!.copiedRecords, 1)
  })

  it('leaves heartbeat topics byte for byte as MM2 writes them', async () => {
    const records = [rec(0), rec(1)]
    const { target } = await replicate(ReplicationPolicyClasses.IDENTITY, 'heartbeats', records)
    assert.deepEqual(target.copied('heartbeats', 0).map(r => r.headers), [[], []])
  })

  it('does nothing with the default policy, where names already prevent loops', async () => {
    assert.equal(createProvenanceMarker(flowOf(ReplicationPolicyClasses.DEFAULT)), null)
    const records = [rec(0), rec(1, 'B')]
    const { target } = await replicate(ReplicationPolicyClasses.DEFAULT, 'orders', records)
    assert.deepEqual(target.copied('orders', 0).map(originText), [undefined, 'B'])
  })

  it('treats a null origin value as unknown: kept as is, not marked again, and the path starts at the source', () => {
    const marker = new ProvenanceMarker(flowOf(ReplicationPolicyClasses.IDENTITY))
    const { partition: marked, skipped } = marker.mark(partitionOf([rec(0, undefined, [h(ORIGIN_HEADER, null)])]))
    assert.equal(skipped, 0)
    assert.deepEqual(marked.records[0]!.headers, [h(ORIGIN_HEADER, null), h(PATH_HEADER, 'A,B')])
  })

  it('never copies a record to a cluster on its path: A->B->C->B is stopped at C (origin alone would not stop it)', () => {
    // Flow C->B of a ring or mesh, reading on C records of A that came through B, records of A that came directly, and local ones
    const marker = new ProvenanceMarker(meshFlow('C', 'B', ['A', 'B', 'C'], ['A', 'C']))
    const records = [
      rec(0, 'A', [h(PATH_HEADER, 'A,B,C')]),
      rec(1, 'A', [h(PATH_HEADER, 'A,C')]),
      rec(2),
      rec(3, 'B', [h(PATH_HEADER, 'B,A,C')])
    ]
    const { partition: marked, skipped } = marker.mark(partitionOf(records))
    assert.equal(skipped, 2)
    assert.deepEqual(marked.records.map(r => [r.offset, originText(r), pathText(r)]), [[1, 'A', 'A,C,B'], [2, 'C', 'C,B']])
    // The path is replaced where it stands, the record's own headers keep their order
    assert.deepEqual(marked.records[0]!.headers.map(([k]) => k.toString()), [PATH_HEADER, ORIGIN_HEADER])
  })

  it('relays only the origins whose tree goes through this flow; an origin outside the configuration by path alone', () => {
    // Full mesh A, B, C: B->C relays B's own records only, A's reach C from A
    const marker = new ProvenanceMarker(meshFlow('B', 'C', ['A', 'B', 'C'], ['B']))
    const records = [rec(0, 'A', [h(PATH_HEADER, 'A,B')]), rec(1), rec(2, 'X', [h(PATH_HEADER, 'X,B')]), rec(3, 'A')]
    const { partition: marked } = marker.mark(partitionOf(records))
    assert.deepEqual(marked.records.map(r => [r.offset, pathText(r)]), [[1, 'B,C'], [2, 'X,B,C']])
  })

  it('reads the path of a record copied by a kmirror that wrote only the origin as origin, then source', () => {
    assert.deepEqual(pathOf(rec(0, 'A'), 'B'), ['A', 'B'])
    assert.deepEqual(pathOf(rec(0, 'B'), 'B'), ['B'])
    assert.deepEqual(pathOf(rec(0), 'B'), ['B'])
    assert.deepEqual(pathOf(rec(0, 'A', [h(PATH_HEADER, 'A,C')]), 'B'), ['A', 'C', 'B'])
  })
})
