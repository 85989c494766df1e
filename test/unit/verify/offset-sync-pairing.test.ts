import assert from 'node:assert/strict'
import { test } from 'node:test'
import { anchorsOf, pairBySyncs } from '../../../src/verify/offset-sync-pairing.ts'

const sync = (upstreamOffset: number, downstreamOffset: number) => ({ upstreamOffset, downstreamOffset })

test('MM2 syncs: stretches whose offsets advance alike pair by offset, the others and the tail by order', () => {
  const pairing = pairBySyncs({ syncs: [sync(0, 0), sync(10, 10), sync(20, 19)], position: 25, source: { from: 0, to: 30 }, target: { from: 0, to: 24 }, sourceFrom: 0 })
  assert.deepEqual(pairing.segments, [
    { kind: 'paired', source: { from: 0, to: 10 }, target: { from: 0, to: 10 } },
    { kind: 'ordered', source: { from: 10, to: 20 }, target: { from: 10, to: 19 } },
    { kind: 'ordered', source: { from: 20, to: 25 }, target: { from: 19, to: 24 } }
  ])
  assert.deepEqual(pairing.notCopied, { from: 25, to: 30 })
  assert.equal(pairing.unconfirmed, null)
})

test('MM2 syncs compacted away: the stretch before the first remaining sync pairs by order from both log starts', () => {
  const pairing = pairBySyncs({ syncs: [sync(50, 48)], position: 51, source: { from: 0, to: 51 }, target: { from: 0, to: 49 }, sourceFrom: 0 })
  assert.deepEqual(pairing.segments, [
    { kind: 'ordered', source: { from: 0, to: 50 }, target: { from: 0, to: 48 } },
    { kind: 'ordered', source: { from: 50, to: 51 }, target: { from: 48, to: 49 } }
  ])
})

test('MM2 syncs: --since inside an ordered stretch skips it (its start on the target is unknown), clips paired ones', () => {
  const pairing = pairBySyncs({ syncs: [sync(0, 0), sync(10, 10), sync(20, 19), sync(30, 29)], position: 31, source: { from: 0, to: 31 }, target: { from: 0, to: 30 }, sourceFrom: 15 })
  assert.deepEqual(pairing.segments, [
    { kind: 'paired', source: { from: 20, to: 30 }, target: { from: 19, to: 29 } },
    { kind: 'ordered', source: { from: 30, to: 31 }, target: { from: 29, to: 30 } }
  ])
  assert.deepEqual(pairing.skipped, { from: 15, to: 20 })
})

test('a re-copy after an MM2 restart replaces the anchors from its source offset on', () => {
  assert.deepEqual(anchorsOf([sync(0, 0), sync(10, 10), sync(20, 20), sync(15, 30), sync(25, 40)]), [sync(0, 0), sync(10, 10), sync(15, 30), sync(25, 40)])
})

test('a partition without syncs is not copied yet', () => {
  const pairing = pairBySyncs({ syncs: [], position: -1, source: { from: 0, to: 5 }, target: { from: 0, to: 0 }, sourceFrom: 0 })
  assert.deepEqual(pairing.segments, [])
  assert.deepEqual(pairing.notCopied, { from: 0, to: 5 })
})
