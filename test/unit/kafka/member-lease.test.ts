import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MemberLease } from '../../../src/kafka/member-lease.ts'

// session 10 s, heartbeat 1 s, rebalance 4 s
const lease = (): MemberLease => new MemberLease(10_000, 1000, 4000)

test('a steady answer holds the lease until its send time + session - heartbeat interval', () => {
  const l = lease()
  assert.equal(l.valid(0), false)
  l.ack(1000)
  assert.equal(l.valid(9999), true)
  assert.equal(l.valid(10_000), false)
})

test('answers REBALANCE_IN_PROGRESS keep the session but not past the last steady answer + rebalance timeout - heartbeat interval', () => {
  const l = lease()
  l.ack(1000)
  for (let at = 2000; at <= 8000; at += 1000) l.ackRebalancing(at)
  // The coordinator may complete the join without this member from 1000 + 4000 on: the lease ends a heartbeat before.
  assert.equal(l.valid(3999), true)
  assert.equal(l.valid(4000), false)
  // Rejoined (the join answered in the new generation): the session bound alone again, from the newest answered send time (8000).
  l.ack(7000)
  assert.equal(l.valid(16_999), true)
  assert.equal(l.valid(17_000), false)
})

test('a lost membership ends the lease, rebalance bound included', () => {
  const l = lease()
  l.ack(1000)
  l.ackRebalancing(2000)
  l.end()
  assert.equal(l.valid(2001), false)
  l.ackRebalancing(3000)
  assert.equal(l.valid(3001), false)
})
