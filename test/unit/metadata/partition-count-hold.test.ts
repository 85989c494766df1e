import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PartitionCountHold } from '../../../src/metadata/partition-count-hold.ts'

const NO_ID = '00000000-0000-0000-0000-000000000000'
const replicated = [{ source: 't', remote: 'A.t', partitions: 6 }]

describe('PartitionCountHold', () => {
  it('holds the replicated count of a topic read lower under the same topic id, at every refresh', () => {
    const hold = new PartitionCountHold()
    const read = new Map([['t', { partitions: 3, id: 'id-1' }]])
    const known = new Map([['t', 'id-1']])
    assert.deepEqual(hold.held(replicated, read, known), new Map([['t', 6]]))
    assert.deepEqual(hold.held(replicated, read, known), new Map([['t', 6]]))
  })

  it('takes the lower count of a topic with another id at once: a new topic', () => {
    const hold = new PartitionCountHold()
    assert.deepEqual(hold.held(replicated, new Map([['t', { partitions: 3, id: 'id-2' }]]), new Map([['t', 'id-1']])), new Map())
  })

  it('without topic ids, holds a lower count once and believes it when the next refresh reads it too', () => {
    const hold = new PartitionCountHold()
    const lower = new Map([['t', { partitions: 3, id: NO_ID }]])
    const known = new Map([['t', NO_ID]])
    assert.deepEqual(hold.held(replicated, lower, known), new Map([['t', 6]]))
    assert.deepEqual(hold.held(replicated, new Map([['t', { partitions: 6, id: NO_ID }]]), known), new Map(), 'read whole again')
    assert.deepEqual(hold.held(replicated, lower, known), new Map([['t', 6]]), 'a lower read after a whole one counts from one again')
    assert.deepEqual(hold.held(replicated, lower, known), new Map())
  })

  it('holds nothing for topics read with as many partitions or more, or missing', () => {
    const hold = new PartitionCountHold()
    assert.deepEqual(hold.held(replicated, new Map([['t', { partitions: 8, id: 'id-1' }]]), new Map([['t', 'id-1']])), new Map())
    assert.deepEqual(hold.held(replicated, new Map(), new Map([['t', 'id-1']])), new Map())
  })
})
