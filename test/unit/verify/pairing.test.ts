import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PartitionOffsetHistory } from '../../../src/checkpoint/offset-history.ts'
import { pairOffsets, type PairingInput } from '../../../src/verify/pairing.ts'

/** The worked example of pairing.ts: 0..4 → 0..4, a marker at 5, 6..9 → 5..8, position 12. */
function example (): PairingInput {
  const history = new PartitionOffsetHistory()
  history.addRunStart(0, 0)
  history.markReplicatedTo(5, 5)
  history.addRunStart(6, 5, 4)
  history.markReplicatedTo(10, 9)
  return { runs: history.runs, replicatedEnd: history.replicatedEnd, targetEnd: history.targetEnd, position: 12, source: { from: 0, to: 15 }, target: { from: 0, to: 11 }, sourceFrom: 0 }
}

test('runs pair source and target ranges; gaps between them are one-sided; the uncopied tail is not copied yet', () => {
  const pairing = pairOffsets(example())
  assert.deepEqual(pairing.segments, [
    { kind: 'paired', source: { from: 0, to: 5 }, target: { from: 0, to: 5 } },
    { kind: 'source-only', source: { from: 5, to: 6 } },
    { kind: 'paired', source: { from: 6, to: 10 }, target: { from: 5, to: 9 } },
    { kind: 'source-only', source: { from: 10, to: 12 } }
  ])
  assert.deepEqual(pairing.notCopied, { from: 12, to: 15 })
  assert.deepEqual(pairing.unconfirmed, { from: 9, to: 11 })
  assert.equal(pairing.beforeHistory, null)
  assert.equal(pairing.targetBeforeHistory, null)
})

test('--since clips every segment to source offsets at or after it, both sides alike', () => {
  const pairing = pairOffsets({ ...example(), sourceFrom: 7 })
  assert.deepEqual(pairing.segments, [
    { kind: 'paired', source: { from: 7, to: 10 }, target: { from: 6, to: 9 } },
    { kind: 'source-only', source: { from: 10, to: 12 } }
  ])
  assert.deepEqual(pairing.notCopied, { from: 12, to: 15 })
})

test('target retention clips the paired ranges to the target log start; source retention to the source log start', () => {
  const pairing = pairOffsets({ ...example(), target: { from: 3, to: 11 }, source: { from: 2, to: 15 }, sourceFrom: 2 })
  assert.deepEqual(pairing.segments[0], { kind: 'paired', source: { from: 3, to: 5 }, target: { from: 3, to: 5 } })
})

test('a gap on the target between runs while the source goes on (an exactly-once commit marker, or a re-copy) is compared as possible duplicates of the next run', () => {
  const history = new PartitionOffsetHistory()
  history.addRunStart(0, 0)
  history.markReplicatedTo(3, 3)
  history.addRunStart(3, 4, 2)
  history.markReplicatedTo(6, 7)
  const pairing = pairOffsets({ runs: history.runs, replicatedEnd: history.replicatedEnd, targetEnd: history.targetEnd, position: 6, source: { from: 0, to: 6 }, target: { from: 0, to: 8 }, sourceFrom: 0 })
  assert.deepEqual(pairing.segments, [
    { kind: 'paired', source: { from: 0, to: 3 }, target: { from: 0, to: 3 } },
    { kind: 'duplicate', target: { from: 3, to: 4 }, source: { from: 3, to: 6 } },
    { kind: 'paired', source: { from: 3, to: 6 }, target: { from: 4, to: 7 } }
  ])
  assert.equal(pairing.notCopied, null)
  assert.deepEqual(pairing.unconfirmed, { from: 7, to: 8 })
})

test('a partition without history is not copied yet from its log start, and its target records are not compared', () => {
  const pairing = pairOffsets({ runs: [], replicatedEnd: -1, targetEnd: -1, position: -1, source: { from: 4, to: 20 }, target: { from: 0, to: 3 }, sourceFrom: 0 })
  assert.deepEqual(pairing.segments, [])
  assert.deepEqual(pairing.notCopied, { from: 4, to: 20 })
  assert.deepEqual(pairing.unconfirmed, { from: 0, to: 3 })
})

test('source records before the first run, and target records before it, are reported apart', () => {
  const history = new PartitionOffsetHistory()
  history.addRunStart(10, 2)
  history.markReplicatedTo(15, 7)
  const pairing = pairOffsets({ runs: history.runs, replicatedEnd: history.replicatedEnd, targetEnd: history.targetEnd, position: 15, source: { from: 0, to: 15 }, target: { from: 0, to: 7 }, sourceFrom: 0 })
  assert.deepEqual(pairing.beforeHistory, { from: 0, to: 10 })
  assert.deepEqual(pairing.targetBeforeHistory, { from: 0, to: 2 })
  assert.deepEqual(pairing.segments, [{ kind: 'paired', source: { from: 10, to: 15 }, target: { from: 2, to: 7 } }])
})

test('a re-copy after a crash (position stored at 5, records 5..9 written twice): the first copies are compared as duplicates of source 5 on', () => {
  // Given the history a crash leaves: run 0→0 copied up to source 10 / target 10 (only 5 of it stored), then the
  // restart copying again from source 5 to target 10
  const history = new PartitionOffsetHistory()
  history.addRunStart(0, 0)
  history.markReplicatedTo(5, 5)
  history.addRunStart(5, 10)
  history.markReplicatedTo(10, 15)
  const pairing = pairOffsets({ runs: history.runs, replicatedEnd: history.replicatedEnd, targetEnd: history.targetEnd, position: 10, source: { from: 0, to: 10 }, target: { from: 0, to: 15 }, sourceFrom: 0 })
  assert.deepEqual(pairing.segments, [
    { kind: 'paired', source: { from: 0, to: 5 }, target: { from: 0, to: 5 } },
    { kind: 'duplicate', target: { from: 5, to: 10 }, source: { from: 5, to: 10 } },
    { kind: 'paired', source: { from: 5, to: 10 }, target: { from: 10, to: 15 } }
  ])
})

test('a gap on both sides between runs stays one-sided: source-only and target-only', () => {
  const history = new PartitionOffsetHistory()
  history.addRunStart(0, 0)
  history.markReplicatedTo(3, 3)
  history.addRunStart(5, 6, 2)
  history.markReplicatedTo(8, 9)
  const pairing = pairOffsets({ runs: history.runs, replicatedEnd: history.replicatedEnd, targetEnd: history.targetEnd, position: 8, source: { from: 0, to: 8 }, target: { from: 0, to: 9 }, sourceFrom: 0 })
  assert.deepEqual(pairing.segments, [
    { kind: 'paired', source: { from: 0, to: 3 }, target: { from: 0, to: 3 } },
    { kind: 'source-only', source: { from: 3, to: 5 } },
    { kind: 'target-only', target: { from: 3, to: 6 } },
    { kind: 'paired', source: { from: 5, to: 8 }, target: { from: 6, to: 9 } }
  ])
})
