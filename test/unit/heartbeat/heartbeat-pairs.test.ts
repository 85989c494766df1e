import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { selectHeartbeatFlows } from '../../../src/config/flows.ts'
import { parseConfig } from '../../../src/config/load.ts'

const THREE = ['clusters = A, B, C', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'C.bootstrap.servers = c:9092', 'A->B.enabled = true']

function pairs (lines: readonly string[], clusters?: readonly string[]): string[] {
  return selectHeartbeatFlows(parseConfig([...THREE, ...lines].join('\n'), 'mm2.properties'), clusters).map(f => f.name)
}

describe('selectHeartbeatFlows (MM2\'s clusterPairs)', () => {
  it('gives every ordered pair by default, disabled flows included', () => {
    assert.deepEqual(pairs([]), ['A->B', 'A->C', 'B->A', 'B->C', 'C->A', 'C->B'])
  })

  it('keeps only enabled flows when emit.heartbeats.enabled = false at top level', () => {
    assert.deepEqual(pairs(['emit.heartbeats.enabled = false', 'C->A.enabled = true']), ['A->B', 'C->A'])
  })

  it('drops a disabled pair whose own emit.heartbeats.enabled is false, and keeps a pair that turns it back on', () => {
    assert.deepEqual(pairs(['B->A.emit.heartbeats.enabled = false']), ['A->B', 'A->C', 'B->C', 'C->A', 'C->B'])
    assert.deepEqual(pairs(['emit.heartbeats.enabled = false', 'C->B.emit.heartbeats.enabled = true']), ['A->B', 'C->B'])
  })

  it('keeps an enabled flow whose heartbeats are off: its herder exists and creates the topic', () => {
    const flows = selectHeartbeatFlows(parseConfig([...THREE, 'A->B.emit.heartbeats.enabled = false'].join('\n'), 'mm2.properties'))
    const ab = flows.find(f => f.name === 'A->B')
    assert.ok(ab)
    assert.equal(ab.emitHeartbeatsEnabled, false)
  })

  it('keeps only pairs whose target is in --clusters', () => {
    assert.deepEqual(pairs([], ['A']), ['B->A', 'C->A'])
    assert.deepEqual(pairs([], ['B', 'C']), ['A->B', 'A->C', 'B->C', 'C->B'])
    assert.deepEqual(pairs([], ['Z']), [])
  })

  it('reads the per-pair interval and replication factor', () => {
    const flows = selectHeartbeatFlows(parseConfig([...THREE, 'emit.heartbeats.interval.seconds = 5', 'B->C.emit.heartbeats.interval.seconds = 2', 'heartbeats.topic.replication.factor = 1'].join('\n'), 'mm2.properties'))
    assert.deepEqual(flows.map(f => [f.name, f.emitHeartbeatsIntervalSeconds, f.heartbeatsTopicReplicationFactor]),
      [['A->B', 5, 1], ['A->C', 5, 1], ['B->A', 5, 1], ['B->C', 2, 1], ['C->A', 5, 1], ['C->B', 5, 1]])
  })
})
