import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FetchOutcomes, type FetchedPartition, type FetchedRecord, type PartitionPosition } from '../../../src/kafka/record-fetcher.ts'
import { fetchCursor } from '../../../src/verify/fetch-cursor.ts'

function record (offset: number): FetchedRecord {
  return { offset, timestamp: 0n, key: null, value: Buffer.from(String(offset)), headers: [] }
}

/**
 * A partition with records at `offsets` (others are markers or aborted records: they advance the position and
 * return nothing), log start `logStart`, two records per fetch.
 */
function fakeFetcher (offsets: readonly number[], logStart: number, end: number): { fetch: (p: readonly PartitionPosition[]) => Promise<FetchedPartition[]>, asked: number[] } {
  const asked: number[] = []
  return {
    asked,
    fetch: async positions => {
      const at = positions[0]!.offset
      asked.push(at)
      const base = { topic: 't', partition: 0, highWatermark: end, lastStableOffset: end, logStartOffset: logStart, bytes: 0 }
      if (at < logStart || at > end) return [{ ...base, outcome: FetchOutcomes.OUT_OF_RANGE, records: [], nextOffset: at }]
      const records = offsets.filter(o => o >= at && o < end).slice(0, 2).map(record)
      const nextOffset = records.length === 0 ? end : records.at(-1)!.offset + 1
      return [{ ...base, outcome: FetchOutcomes.OK, records, nextOffset }]
    }
  }
}

async function readAll (cursor: { next: () => Promise<FetchedRecord | null> }): Promise<number[]> {
  const out: number[] = []
  for (let r = await cursor.next(); r !== null; r = await cursor.next()) out.push(r.offset)
  return out
}

test('the cursor reads [from, to) in order across fetches, skipping offsets that hold no record', async () => {
  const fetcher = fakeFetcher([0, 1, 2, 4, 5, 7, 8, 9], 0, 10)
  assert.deepEqual(await readAll(fetchCursor(fetcher, 't', 0, { from: 1, to: 8 }, 10, 'cluster A')), [1, 2, 4, 5, 7])
})

test('the cursor stops at the end read before the comparison, and jumps over offsets retention deleted meanwhile', async () => {
  const fetcher = fakeFetcher([3, 4, 5, 6], 3, 6)
  assert.deepEqual(await readAll(fetchCursor(fetcher, 't', 0, { from: 0, to: 100 }, 6, 'cluster A')), [3, 4, 5])
  assert.equal(fetcher.asked[0], 0)
  assert.equal(fetcher.asked[1], 3)
})
