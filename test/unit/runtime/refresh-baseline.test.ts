/**
 * When a flow's topic refresh tells its group that the work changed (src/runtime/refresh-baseline.ts).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { RefreshBaseline } from '../../../src/runtime/refresh-baseline.ts'

const orders = { source: 'orders', partitions: 4 }
const audit = { source: 'audit', partitions: 2 }

test('a refresh is compared with the previous one: same partitions, no change; a new topic or more partitions, a change', () => {
  const baseline = new RefreshBaseline()
  baseline.listed([orders])
  assert.equal(baseline.refreshed([orders], 4), false)
  assert.equal(baseline.refreshed([orders, audit], 4), true)
  assert.equal(baseline.refreshed([orders, audit], 6), false)
  assert.equal(baseline.refreshed([{ source: 'orders', partitions: 6 }, audit], 6), true)
})

test('a topic that appeared between the leader\'s list and the first refresh on the leader is a change', () => {
  const baseline = new RefreshBaseline()
  baseline.listed([orders])
  baseline.jobAssigned()
  assert.equal(baseline.refreshed([orders, audit], 4), true)
})

test('on a member that did not list the work, the first refresh after it was given the job compares with the generation\'s partitions', () => {
  const member = new RefreshBaseline()
  member.jobAssigned()
  assert.equal(member.refreshed([orders, audit], 4), true, 'the generation assigned 4 partitions, the refresh found 6')
  const other = new RefreshBaseline()
  other.jobAssigned()
  assert.equal(other.refreshed([orders], 4), false)
})

test('a refresh of its own from an older generation is no baseline once the job comes back to the member', () => {
  const member = new RefreshBaseline()
  member.jobAssigned()
  assert.equal(member.refreshed([orders], 4), false)
  // The job moved away, the group's work grew meanwhile (another member refreshed), and the job comes back.
  member.jobAssigned()
  assert.equal(member.refreshed([orders, audit], 6), false, 'the generation already holds audit: no rebalance')
})

test('with no generation known (no group, no assignment yet) and nothing listed, the first refresh is no change', () => {
  assert.equal(new RefreshBaseline().refreshed([orders], null), false)
})
