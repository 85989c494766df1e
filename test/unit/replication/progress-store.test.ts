import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { FlowConfig } from '../../../src/config/types.ts'
import { encodeSourceOffsetKey, encodeSourceOffsetValue } from '../../../src/formats/connect-offset.ts'
import type { AdminClient } from '../../../src/kafka/admin-client.ts'
import { FetchOutcomes, type FetchedPartition, type PartitionPosition, type RecordFetcher } from '../../../src/kafka/record-fetcher.ts'
import { ProgressStore } from '../../../src/replication/progress-store.ts'
import { partitionKey } from '../../../src/topic-partition.ts'

const flow = { source: { alias: 'A' }, target: { alias: 'B', producer: { 'transaction.timeout.ms': '60000' } }, offsetStorageTopic: 'mm2-offsets.A.internal', exactlyOnce: true } as unknown as FlowConfig
const admin = { describeTopics: async (names: readonly string[]) => new Map(names.map(n => [n, { name: n, id: 'x', partitions: 1 }])) } as unknown as AdminClient

/**
 * The offsets topic's one partition: progress of t-0 at 10, then (offset 1) the first record of another member's
 * transaction still open, then (offset 2) progress of t-0 at 20 committed by a third member after it. A
 * read_committed reader sees offset 0 only until the open transaction ends (after OPEN_FOR fetches).
 */
function sharedOffsetsTopic (openFor: number): { fetcher: RecordFetcher, asked: string[] } {
  const asked: string[] = []
  let fetches = 0
  const key = encodeSourceOffsetKey({ connectorName: 'MirrorSourceConnector', cluster: 'A', topic: 't', partition: 0 })
  const log = [10, null, 20].map((value, offset) => ({ offset, timestamp: 0n, key: value === null ? null : key, value: value === null ? null : encodeSourceOffsetValue(value), headers: [] }))
  const fetcher = {
    listOffsets: async (tps: readonly { topic: string, partition: number }[], which: string) => {
      asked.push(which)
      return new Map(tps.map(tp => [partitionKey(tp.topic, tp.partition), which === 'earliest' ? 0 : which === 'written' ? 3 : 1]))
    },
    fetch: async (positions: readonly PartitionPosition[]): Promise<FetchedPartition[]> => positions.map(p => {
      const stable = ++fetches > openFor ? 3 : 1
      return { topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, records: log.slice(p.offset, stable), nextOffset: Math.max(p.offset, stable), highWatermark: 3, lastStableOffset: stable, logStartOffset: 0, bytes: 0 }
    })
  }
  return { fetcher: fetcher as unknown as RecordFetcher, asked }
}

describe('ProgressStore.load', () => {
  it('reads to the high watermark, waiting for a transaction open on the shared topic: progress committed behind it counts', async () => {
    const { fetcher, asked } = sharedOffsetsTopic(2)
    const stored = await new ProgressStore(flow, admin, fetcher, null).load({ readOnly: true, waitForTransactions: true })
    assert.deepEqual([...stored], [[partitionKey('t', 0), 20]])
    assert.ok(asked.includes('written'))
  })

  it('without waitForTransactions (commands, a start its group assignment reads again) takes what is stable now', async () => {
    const { fetcher, asked } = sharedOffsetsTopic(Number.MAX_SAFE_INTEGER)
    const stored = await new ProgressStore(flow, admin, fetcher, null).load({ readOnly: true })
    assert.deepEqual([...stored], [[partitionKey('t', 0), 10]])
    assert.equal(asked.includes('written'), false)
  })

  it('a load waiting for a transaction gives up at once when the flow stops (close), retriable', async () => {
    const { fetcher } = sharedOffsetsTopic(Number.MAX_SAFE_INTEGER)
    const store = new ProgressStore(flow, admin, fetcher, null)
    const loading = store.load({ readOnly: true, waitForTransactions: true })
    store.close()
    await assert.rejects(loading, (err: { code?: string, retriable?: boolean, message: string }) =>
      err.code === 'KMIRROR_ERR_PROGRESS' && err.retriable === true && /stopped reading mm2-offsets\.A\.internal: the flow is stopping/.test(err.message))
  })
})
