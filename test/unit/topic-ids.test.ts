import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TopicIdLedger } from '../../src/topic-ids.ts'

describe('TopicIdLedger', () => {
  it('learns a first id, finds a new one once, and treats the replaced id as stale for every partition', () => {
    const ids = new TopicIdLedger()
    assert.deepEqual(ids.check('t-0', 'old'), { kind: 'current' })
    assert.deepEqual(ids.check('t-1', 'old'), { kind: 'current' })
    assert.deepEqual(ids.check('t-0', 'new'), { kind: 'recreated', before: 'old' })
    // The next answer with the new id is learnt afresh; a lagging broker's old id changes nothing
    assert.deepEqual(ids.check('t-0', 'new'), { kind: 'current' })
    assert.deepEqual(ids.check('t-0', 'old'), { kind: 'stale', id: 'old' })
    assert.deepEqual(ids.check('t-0', 'new'), { kind: 'current' })
    // Partition 1 still had the old id: its next answer with it is stale, the new one is learnt, not a re-creation
    assert.deepEqual(ids.check('t-1', 'old'), { kind: 'stale', id: 'old' })
    assert.deepEqual(ids.check('t-1', 'new'), { kind: 'recreated', before: 'old' })
  })

  it('learns again after forget, and keeps retired ids', () => {
    const ids = new TopicIdLedger()
    ids.check('t-0', 'a')
    ids.check('t-0', 'b')
    ids.forget('t-0')
    assert.deepEqual(ids.check('t-0', 'c'), { kind: 'current' })
    assert.deepEqual(ids.check('t-0', 'a'), { kind: 'stale', id: 'a' })
  })
})
