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

test('after a join answered, the lease ends at the join\'s completion (at the earliest) + rebalance timeout - heartbeat interval until SyncGroup is sent', () => {
  const l = lease()
  l.ack(1000)
  l.ackRebalancing(2000)
  l.joinSent(2500)
  l.ackRebalancing(3000)
  // Completed after 3000 (a heartbeat sent then was answered REBALANCE_IN_PROGRESS): dropped from 3000 + 4000 on without a SyncGroup.
  l.joinAnswered(2500, 7)
  for (let at = 3500; at <= 8000; at += 500) l.ack(at)
  assert.equal(l.valid(5999), true)
  assert.equal(l.valid(6000), false, 'heartbeats answered NONE before the SyncGroup do not stretch it')
  // A SyncGroup sent too late does not bring it back; one answered does.
  l.syncSent(6500)
  assert.equal(l.valid(6500), false)
  l.syncAnswered(6500)
  // The session bound alone again, from the newest answered send time (8000).
  assert.equal(l.valid(16_999), true)
  assert.equal(l.valid(17_000), false)
})

test('a SyncGroup sent in time ends the sync bound; a join answered again in the same generation keeps the earlier bound', () => {
  const l = lease()
  l.joinAnswered(1000, 3)
  l.syncSent(3900)
  for (let at = 5000; at <= 8000; at += 1000) l.ack(at)
  assert.equal(l.valid(8000), true, 'synced in time: the session bound alone')
  const again = lease()
  again.joinAnswered(1000, 3)
  again.joinAnswered(3000, 3)
  again.ack(3500)
  assert.equal(again.valid(3999), true)
  assert.equal(again.valid(4000), false, 'the coordinator counts from the first completion')
  again.joinAnswered(4500, 4)
  assert.equal(again.valid(7499), true, 'a new generation: a new deadline')
  assert.equal(again.valid(7500), false)
})
