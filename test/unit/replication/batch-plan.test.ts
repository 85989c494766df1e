import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BatchAttributes, codecOf, scanBatches, type FetchedRecord, type SourceBatch } from '../../../src/kafka/record-batch.ts'
import { FetchOutcomes, type FetchedBatches } from '../../../src/kafka/record-fetcher.ts'
import { ackedRuns, planPartition, type PartitionPlan, type PlannedBatch, type PlanOptions } from '../../../src/replication/batch-plan.ts'
import { sourceRecord } from '../../fakes/in-memory-source.ts'
import { createPrng } from '../../fakes/prng.ts'
import { CODECS, decodeAll, encodeSourceBatch, type BatchSpec } from '../../fakes/source-batches.ts'

/** A broker's append time, within 2^31 ms of the records' create times (see the timestamp-delta test below). */
const APPEND_TIME = 1_700_000_500_000n
const OPTIONS: PlanOptions = { compression: null, maxChunkBytes: 512 * 1024, minForwardBytes: 0, reencode: false, mark: null }
const range = (first: number, count: number): number[] => Array.from({ length: count }, (_, i) => first + i)
const records = (offsets: readonly number[]): FetchedRecord[] => offsets.map(o => sourceRecord('t', 0, o))

/** A fetch result holding these batches (as one response, so they are views of one buffer like the fetcher's). */
function fetched (specs: readonly BatchSpec[], fromOffset?: number): FetchedBatches {
  const batches = scanBatches(Buffer.concat(specs.map(encodeSourceBatch)), 't', 0)
  const from = fromOffset ?? batches[0]?.baseOffset ?? 0
  return { topic: 't', partition: 0, outcome: FetchOutcomes.OK, fromOffset: from, batches, nextOffset: (batches.at(-1)?.lastOffset ?? from - 1) + 1, highWatermark: 1000, lastStableOffset: 1000, logStartOffset: 0 }
}

/** What the target would store of a planned batch: its records decoded from the built bytes, with their source offsets. */
function written (batch: PlannedBatch): { records: FetchedRecord[], codec: string, sourceOffsets: readonly number[] } {
  const bytes = batch.build({ id: 9n, epoch: 0 }, 0)
  const [decoded] = scanBatches(bytes, 'A.t', 0)
  assert.equal(decoded!.bytes.length, bytes.length)
  assert.equal(decoded!.recordCount, batch.recordCount)
  const sourceOffsets = batch.offsets ?? range(batch.firstOffset, batch.recordCount)
  return { records: decodeAll([decoded!]), codec: codecOf(decoded!), sourceOffsets }
}

/** Asserts every source record at or after `fromOffset` is written exactly once, in order, under its source offset. */
function assertCoversOnce (f: FetchedBatches, expected: readonly FetchedRecord[], plan: PartitionPlan): void {
  const out: FetchedRecord[] = []
  for (const b of plan.batches) {
    const w = written(b)
    assert.equal(w.sourceOffsets.length, w.records.length)
    w.records.forEach((r, i) => out.push({ ...r, offset: w.sourceOffsets[i]! }))
    assert.equal(b.lastOffset, w.sourceOffsets.at(-1))
  }
  assert.deepEqual(out, expected.filter(r => r.offset >= f.fromOffset))
}

const shape = (plan: PartitionPlan): [boolean, number, number][] => plan.batches.map(b => [b.forwarded, b.firstOffset, b.recordCount])

describe('planPartition', () => {
  it('keeps timestamps exact when re-encoded records are 2^31 ms (about 25 days) or more apart', () => {
    // Given a compacted batch (so it is re-encoded) whose records are 30 days apart, backwards and forwards
    // (the client library's encoder is only right for timestamp deltas within the int32 range)
    const day = 86_400_000n
    const input = records([0, 2, 3, 5]).map((r, i) => ({ ...r, timestamp: 1_700_000_000_000n + [0n, 30n, -30n, 31n][i]! * day }))
    const f = fetched([{ records: input }])
    // When planned
    const plan = planPartition(f, OPTIONS)
    // Then every record is written once with its own timestamp, in batches that keep deltas in range
    assertCoversOnce(f, input, plan)
    assert.deepEqual(shape(plan), [[false, 0, 1], [false, 2, 1], [false, 3, 1], [false, 5, 1]])
  })

  it('forwards every exact batch at least minForwardBytes long as it is', () => {
    // Given three exact batches of 10 records, each over the forwarding threshold
    const f = fetched([{ records: records(range(0, 10)) }, { records: records(range(10, 10)), codec: 'lz4' }, { records: records(range(20, 10)), codec: 'gzip' }])
    const options = { ...OPTIONS, minForwardBytes: Math.min(...f.batches.map(b => b.bytes.length)) }
    // When planned
    const plan = planPartition(f, options)
    // Then each is forwarded with its own bytes and offsets
    assert.deepEqual(shape(plan), [[true, 0, 10], [true, 10, 10], [true, 20, 10]])
    assert.deepEqual(plan.batches.map(b => [b.offsets, b.lastOffset, b.bytes]), f.batches.map(b => [null, b.lastOffset, b.bytes.length]))
    assert.deepEqual(plan.batches.map(b => written(b).codec), ['none', 'lz4', 'gzip'])
    assert.equal(plan.skipped, 0)
  })

  it('re-encodes batches with compaction gaps, a head before the fetch offset or log-append time, and forwards the others', () => {
    // Given: 0..4 fetched from 2, exact 5..9, compacted 10..19 (3 records left), exact 20..24, log-append 25..27, exact 28..30
    const specs: BatchSpec[] = [
      { records: records(range(0, 5)) },
      { records: records(range(5, 5)) },
      { records: records([10, 14, 19]) },
      { records: records(range(20, 5)) },
      { records: records(range(25, 3)), attributes: BatchAttributes.LOG_APPEND_TIME, appendTime: APPEND_TIME },
      { records: records(range(28, 3)) }
    ]
    const f = fetched(specs, 2)
    // When planned
    const plan = planPartition(f, OPTIONS)
    // Then the inexact ones were re-encoded, exactly where they were
    assert.deepEqual(shape(plan), [[false, 2, 3], [true, 5, 5], [false, 10, 3], [true, 20, 5], [false, 25, 3], [true, 28, 3]])
    assert.deepEqual(plan.batches[2]!.offsets, [10, 14, 19])
    const expected = specs.flatMap(s => s.records).map(r => r.offset >= 25 && r.offset <= 27 ? { ...r, timestamp: APPEND_TIME } : r)
    assertCoversOnce(f, expected, plan)
  })

  it('merges runs of small batches into re-encoded ones, but forwards a lone small batch between big ones', () => {
    // Given big, small, big, then three small batches, then big
    const big = (first: number): BatchSpec => ({ records: records(range(first, 20)), codec: 'zstd' })
    const small = (first: number): BatchSpec => ({ records: records([first]), codec: 'zstd' })
    const specs = [big(0), small(20), big(21), small(41), small(42), small(43), big(44)]
    const f = fetched(specs)
    const options = { ...OPTIONS, minForwardBytes: Math.max(...f.batches.filter(b => b.recordCount === 1).map(b => b.bytes.length)) + 1 }
    assert.ok(f.batches.filter(b => b.recordCount === 20).every(b => b.bytes.length >= options.minForwardBytes))
    // When planned
    const plan = planPartition(f, options)
    // Then the lone small batch is forwarded and the run of three becomes one batch in the source codec
    assert.deepEqual(shape(plan), [[true, 0, 20], [true, 20, 1], [true, 21, 20], [false, 41, 3], [true, 44, 20]])
    assert.equal(written(plan.batches[3]!).codec, 'zstd')
    assertCoversOnce(f, specs.flatMap(s => s.records), plan)
  })

  it('re-encodes into the compression.type the user set when a batch has another codec, and forwards those that have it', () => {
    const specs: BatchSpec[] = [{ records: records(range(0, 4)), codec: 'gzip' }, { records: records(range(4, 4)), codec: 'lz4' }, { records: records(range(8, 4)), codec: 'none' }]
    const f = fetched(specs)
    const plan = planPartition(f, { ...OPTIONS, compression: 'lz4' })
    assert.deepEqual(shape(plan), [[false, 0, 4], [true, 4, 4], [false, 8, 4]])
    assert.deepEqual(plan.batches.map(b => written(b).codec), ['lz4', 'lz4', 'lz4'])
    assertCoversOnce(f, specs.flatMap(s => s.records), plan)
  })

  it('re-encodes everything, in chunks of at most maxChunkBytes, for a partition whose forwarded batch was refused', () => {
    const specs: BatchSpec[] = [{ records: records(range(0, 10)), codec: 'snappy' }, { records: records(range(10, 10)), codec: 'snappy' }]
    const f = fetched(specs, 3)
    const plan = planPartition(f, { ...OPTIONS, reencode: true, maxChunkBytes: 800 })
    assert.ok(plan.batches.length > 1 && plan.batches.every(b => !b.forwarded))
    assert.ok(plan.batches.every(b => written(b).codec === 'snappy'))
    assertCoversOnce(f, specs.flatMap(s => s.records), plan)
  })

  it('re-encodes everything the identity policy marks, leaving out the skipped records and counting them', () => {
    // Given a marker that drops odd offsets and adds a header to the rest
    const specs: BatchSpec[] = [{ records: records(range(0, 6)) }, { records: records(range(6, 6)), codec: 'gzip' }]
    const f = fetched(specs)
    const mark = (rs: FetchedRecord[]): { records: FetchedRecord[], skipped: number } => {
      const kept = rs.filter(r => r.offset % 2 === 0).map(r => ({ ...r, headers: [...r.headers, [Buffer.from('o'), Buffer.from('A')]] as FetchedRecord['headers'] }))
      return { records: kept, skipped: rs.length - kept.length }
    }
    const plan = planPartition(f, { ...OPTIONS, mark })
    assert.equal(plan.skipped, 6)
    assert.ok(plan.batches.every(b => !b.forwarded))
    assert.deepEqual(plan.batches.map(b => b.offsets), [[0, 2, 4, 6, 8, 10]])
    assertCoversOnce(f, mark(specs.flatMap(s => s.records)).records, plan)
  })

  it('writes every record at or after the fetch offset exactly once, in order, whatever the batches and options', () => {
    const prng = createPrng(20261130)
    for (let round = 0; round < 150; round++) {
      // Given random batches: codecs, compaction gaps, log-append time, sizes; a random fetch offset and options
      const specs: BatchSpec[] = []
      let next = prng.int(0, 50)
      for (let b = prng.int(1, 8); b > 0; b--) {
        const offsets = range(next, prng.int(1, 12)).filter((_, i) => i === 0 || !prng.chance(0.15))
        const logAppend = prng.chance(0.1)
        specs.push({
          records: records(offsets),
          lastOffset: offsets.at(-1)! + (prng.chance(0.1) ? 2 : 0),
          codec: prng.pick(CODECS),
          ...(logAppend ? { attributes: BatchAttributes.LOG_APPEND_TIME, appendTime: APPEND_TIME } : {})
        })
        next = offsets.at(-1)! + (prng.chance(0.1) ? 3 : 1) + (specs.at(-1)!.lastOffset! - offsets.at(-1)!)
      }
      const first = specs[0]!.records[0]!.offset
      const f = fetched(specs, first + (prng.chance(0.3) ? prng.int(0, 5) : 0))
      const options: PlanOptions = {
        compression: prng.chance(0.3) ? prng.pick(CODECS) : null,
        maxChunkBytes: prng.pick([300, 2000, 512 * 1024]),
        minForwardBytes: prng.pick([0, 400, 1500, 16 * 1024]),
        reencode: prng.chance(0.1),
        mark: null
      }
      const expected = specs.flatMap(s => (s.attributes ?? 0) & BatchAttributes.LOG_APPEND_TIME ? s.records.map(r => ({ ...r, timestamp: s.appendTime! })) : s.records)
      // When planned, Then the written batches hold each wanted record once, in order, under its source offset
      const plan = planPartition(f, options)
      assertCoversOnce(f, expected, plan)
      for (const b of plan.batches) if (b.forwarded) assert.ok(f.batches.some((s: SourceBatch) => s.baseOffset === b.firstOffset && s.recordCount === b.recordCount))
    }
  })
})

describe('ackedRuns', () => {
  it('gives one run for a batch of consecutive offsets', () => {
    const [b] = planPartition(fetched([{ records: records(range(40, 6)) }]), OPTIONS).batches
    assert.deepEqual(ackedRuns(b!, { baseOffset: 1000 }), [{ source: 40, target: 1000, count: 6 }])
  })

  it('gives the exact runs of a re-encoded batch whose source offsets have gaps', () => {
    // Given a compacted batch holding 3, 4, 5, 8, 9 and 12
    const [b] = planPartition(fetched([{ records: records([3, 4, 5, 8, 9, 12]) }]), OPTIONS).batches
    assert.equal(b!.forwarded, false)
    // When it is acknowledged at target offset 100
    // Then each run of consecutive source offsets maps to consecutive target offsets
    assert.deepEqual(ackedRuns(b!, { baseOffset: 100 }), [{ source: 3, target: 100, count: 3 }, { source: 8, target: 103, count: 2 }, { source: 12, target: 105, count: 1 }])
  })
})

describe('planned batch fingerprints (record-fingerprint.ts)', () => {
  it('Given the same records forwarded as they are and re-encoded, then their fingerprints are equal; other records at the same offsets differ', () => {
    const input = records(range(0, 10))
    const f = fetched([{ records: input, codec: 'lz4' }])
    const [forwarded] = planPartition(f, OPTIONS).batches
    const [reencoded] = planPartition(f, { ...OPTIONS, reencode: true }).batches
    assert.deepEqual([forwarded!.forwarded, reencoded!.forwarded], [true, false])
    assert.equal(forwarded!.fingerprint!(), reencoded!.fingerprint!())

    const other = fetched([{ records: input.map((r, i) => (i === 9 ? { ...r, value: Buffer.from('created again') } : r)), codec: 'lz4' }])
    const [recreated] = planPartition(other, OPTIONS).batches
    assert.deepEqual([recreated!.firstOffset, recreated!.lastOffset, recreated!.recordCount], [forwarded!.firstOffset, forwarded!.lastOffset, forwarded!.recordCount])
    assert.notEqual(recreated!.fingerprint!(), forwarded!.fingerprint!())
  })
})

describe('planPartition with cut points (batches in doubt planned again as they were)', () => {
  const identity = (b: PlannedBatch): [number, number, number, number] => [b.firstOffset, b.lastOffset, b.recordCount, b.fingerprint!()]

  it('Given small batches merged into one, when planned again with more fetched after them, then the cut point gives the same first batch', () => {
    const specs: BatchSpec[] = [{ records: records(range(0, 3)) }, { records: records(range(3, 3)) }, { records: records(range(6, 3)) }]
    const options = { ...OPTIONS, minForwardBytes: 1 << 20 }
    const [first] = planPartition(fetched(specs.slice(0, 2)), options).batches
    assert.deepEqual([first!.firstOffset, first!.lastOffset], [0, 5])
    // Without the cut, the records fetched since join the batch
    assert.equal(planPartition(fetched(specs), options).batches[0]!.lastOffset, 8)
    const again = planPartition(fetched(specs), { ...options, cutAfter: new Set([5]) })
    assert.deepEqual(identity(again.batches[0]!), identity(first!))
    assert.deepEqual(shape(again), [[false, 0, 6], [false, 6, 3]])
  })

  it('Given a small batch forwarded alone (nothing after it yet), when planned again with a small neighbour fetched since, then it is re-encoded alone: same span, same fingerprint', () => {
    const specs: BatchSpec[] = [{ records: records(range(0, 3)) }, { records: records(range(3, 3)) }]
    const options = { ...OPTIONS, minForwardBytes: 1 << 20 }
    const [alone] = planPartition(fetched(specs.slice(0, 1)), options).batches
    assert.equal(alone!.forwarded, true)
    const again = planPartition(fetched(specs), { ...options, cutAfter: new Set([2]) })
    assert.deepEqual(identity(again.batches[0]!), identity(alone!))
    assert.deepEqual(shape(again), [[false, 0, 3], [false, 3, 3]])
  })

  it('Given re-encoded records cut by size, then a cut point inside a source batch ends a batch there too', () => {
    const f = fetched([{ records: records(range(0, 10)) }])
    const plan = planPartition(f, { ...OPTIONS, reencode: true, cutAfter: new Set([3, 6]) })
    assertCoversOnce(f, records(range(0, 10)), plan)
    assert.deepEqual(shape(plan), [[false, 0, 4], [false, 4, 3], [false, 7, 3]])
  })
})
