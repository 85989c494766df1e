/**
 * `kmirror verify`'s progress bar on a terminal: drawn in place, throttled between partitions, always redrawn when
 * a partition is done, and erased before the report (nothing erased when nothing was drawn).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { progressBar } from '../../../src/cli/verify-progress.ts'

const ERASE = '\r\x1b[2K'

function bar (): { lines: string[], clock: { at: number }, progress: ReturnType<typeof progressBar> } {
  const lines: string[] = []
  const clock = { at: 1_000 }
  return { lines, clock, progress: progressBar('A->B', text => lines.push(text), () => clock.at) }
}

test('the bar is one line redrawn in place: the flow, a 30-wide bar, partitions done and records read', () => {
  const { lines, progress } = bar()
  progress.update({ partitionsDone: 3, partitions: 8, records: 12_345 })
  assert.deepEqual(lines, [`${ERASE}verify A->B [###########...................] 3/8 partitions, 12345 records read`])
})

test('between partitions it is redrawn at most every 100 ms; a finished partition redraws at once', () => {
  const { lines, clock, progress } = bar()
  progress.update({ partitionsDone: 0, partitions: 2, records: 10 })
  clock.at += 50
  progress.update({ partitionsDone: 0, partitions: 2, records: 20 })
  assert.equal(lines.length, 1, 'a redraw 50 ms later with no partition done is skipped')
  progress.update({ partitionsDone: 1, partitions: 2, records: 30 })
  assert.equal(lines.length, 2, 'a partition done is shown at once')
  assert.match(lines[1]!, /\[###############...............\] 1\/2 partitions, 30 records read$/)
  clock.at += 100
  progress.update({ partitionsDone: 1, partitions: 2, records: 40 })
  assert.match(lines[2]!, /1\/2 partitions, 40 records read$/)
})

test('a flow with no partitions shows a full bar; clear erases the line only if one was drawn', () => {
  const empty = bar()
  empty.progress.clear()
  assert.deepEqual(empty.lines, [], 'nothing drawn, nothing erased (a report on a clean terminal line)')
  empty.progress.update({ partitionsDone: 0, partitions: 0, records: 0 })
  empty.progress.clear()
  assert.deepEqual(empty.lines, [`${ERASE}verify A->B [${'#'.repeat(30)}] 0/0 partitions, 0 records read`, ERASE])
})
