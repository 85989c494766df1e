/**
 * Which keys of the progress store commits wrote while a load read (replication/commit-marks.ts): a load keeps the
 * in-memory value of those, and takes its read for every other key, also those a failed write marked.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CommitMarks } from '../../../src/replication/commit-marks.ts'

describe('CommitMarks', () => {
  it('marks a key written during a load from the write\'s start; no load, no mark', () => {
    const marks = new CommitMarks()
    assert.equal(marks.writing(['t-0']), null)
    const since = marks.loadStarted()
    const token = marks.writing(['t-0'])
    assert.equal(marks.markedSince('t-0', since), true)
    marks.written(['t-0'], token)
    assert.equal(marks.markedSince('t-0', since), true)
    assert.equal(marks.markedSince('t-1', since), false)
    marks.loadEnded()
    assert.equal(marks.markedSince('t-0', since), false)
  })

  it('a write begun before the load and acknowledged during it is marked', () => {
    const marks = new CommitMarks()
    const outer = marks.loadStarted()
    const token = marks.writing(['t-0'])
    const since = marks.loadStarted()
    assert.equal(marks.markedSince('t-0', since), false)
    marks.written(['t-0'], token)
    assert.equal(marks.markedSince('t-0', since), true)
    assert.equal(marks.markedSince('t-0', outer), true)
  })

  it('a failed write takes back only its own mark, in any order with another write of the key', () => {
    for (const order of [['first', 'second'], ['second', 'first']] as const) {
      const marks = new CommitMarks()
      const since = marks.loadStarted()
      const tokens = { first: marks.writing(['t-0']), second: marks.writing(['t-0']) }
      marks.failed(['t-0'], tokens[order[0]])
      assert.equal(marks.markedSince('t-0', since), true, `${order[0]} failed, the other still under way`)
      marks.failed(['t-0'], tokens[order[1]])
      assert.equal(marks.markedSince('t-0', since), false, 'both failed: the read counts')
    }
    // and an acknowledged write stands when another write of the key fails after it
    const marks = new CommitMarks()
    const since = marks.loadStarted()
    const ok = marks.writing(['t-0'])
    const failing = marks.writing(['t-0'])
    marks.written(['t-0'], ok)
    marks.failed(['t-0'], failing)
    assert.equal(marks.markedSince('t-0', since), true)
  })
})
