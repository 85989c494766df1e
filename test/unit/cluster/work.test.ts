import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseWorkKey, workKey, type WorkItem } from '../../../src/cluster/work.ts'

test('work keys round-trip, topic names with colons included', () => {
  const items: WorkItem[] = [
    { kind: 'partition', topic: 'orders', partition: 0 },
    { kind: 'partition', topic: 'a:b:c', partition: 17 },
    { kind: 'job', job: 'emit-checkpoints' }
  ]
  for (const item of items) assert.deepEqual(parseWorkKey(workKey(item)), item)
  assert.equal(workKey(items[1]!), 'p:17:a:b:c')
})

test('a key no kmirror wrote is refused', () => {
  for (const key of ['', 'x:1', 'p:x:t', 'p:1:', 'j:']) assert.throws(() => parseWorkKey(key), /not a kmirror work key/)
})
