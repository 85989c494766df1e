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

test('a JoinGroup sent while the lease held lifts the rebalance bound until it is answered; one that failed does not', () => {
  const l = lease()
  l.ack(1000)
  l.ackRebalancing(2000)
  l.joinSent(2500)
  for (let at = 3000; at <= 9000; at += 1000) l.ackRebalancing(at)
  assert.equal(l.valid(12_000), true, 'waited for by the coordinator, the session kept by heartbeats')
  l.joinEnded()
  assert.equal(l.valid(12_000), false)
  // Sent after the rebalance bound ran out: the coordinator may have completed the join without it.
  const late = lease()
  late.ack(1000)
  late.ackRebalancing(2000)
  late.joinSent(4500)
  late.ackRebalancing(5000)
  assert.equal(late.valid(4600), false)
})
