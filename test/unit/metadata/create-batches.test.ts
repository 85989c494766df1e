import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createBatches, createRecords } from '../../../src/metadata/create-batches.ts'
import type { CreateTopicAction } from '../../../src/metadata/topic-sync-plan.ts'

function action (name: string, partitions: number, configs: Record<string, string> = {}): CreateTopicAction {
  return { topic: name, remoteTopic: `A.${name}`, partitions, replicationFactor: 1, configs }
}
const names = (batches: CreateTopicAction[][]): string[][] => batches.map(b => b.map(a => a.topic))

describe('batches of remote topics to create', () => {
  it('counts a topic record, a record per partition and one per config, as a KRaft controller writes them', () => {
    assert.equal(createRecords(action('a', 5)), 6)
    assert.equal(createRecords(action('a', 1, { 'retention.ms': '1', 'cleanup.policy': 'compact' })), 4)
  })

  it('puts topics with the same configs together whatever the order of their keys, keeping the plan\'s order', () => {
    const batches = createBatches([
      action('a', 1, { x: '1', y: '2' }), action('b', 3), action('c', 2, { y: '2', x: '1' }), action('d', 1), action('e', 1, { x: '2' })
    ])
    assert.deepEqual(names(batches), [['a', 'c'], ['b', 'd'], ['e']])
  })

  it('starts a new batch before the budget would be passed, and gives a topic above the budget a batch of its own', () => {
    assert.deepEqual(names(createBatches([action('a', 4), action('b', 4), action('c', 12), action('d', 1), action('e', 2)], 10)), [['a', 'b'], ['c'], ['d', 'e']])
    assert.deepEqual(names(createBatches([action('a', 4), action('b', 3)], 9)), [['a', 'b']])
  })

  it('keeps 2,000 topics of 5 partitions (12,000 records, which one request may not hold) within the default budget, and 1,000 in one request', () => {
    const batches = createBatches(Array.from({ length: 2_000 }, (_, i) => action(`t${i}`, 5)))
    assert.ok(batches.every(b => b.reduce((n, a) => n + createRecords(a), 0) <= 8_000))
    assert.equal(batches.flat().length, 2_000)
    assert.equal(batches.length, 2)
    assert.equal(createBatches(Array.from({ length: 1_000 }, (_, i) => action(`t${i}`, 5))).length, 1)
  })
})
