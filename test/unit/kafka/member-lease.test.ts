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
  l.end(2000)
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
  l.joinEnded(false)
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

test('a SyncGroup sent in time suspends the sync bound until it fails; a join answered again in the same generation keeps the earlier bound', () => {
  const l = lease()
  l.joinAnswered(1000, 3)
  l.syncSent(3900)
  for (let at = 5000; at <= 8000; at += 1000) l.ack(at)
  assert.equal(l.valid(8000), true, 'synced in time: the session bound alone while it is in flight')
  // The SyncGroup failed unanswered (the coordinator may never have read it), the member rejoins: answered from
  // the same generation, whose deadline ran from the first completion.
  l.syncEnded()
  assert.equal(l.valid(8000), false)
  l.joinSent(8100)
  l.joinAnswered(8100, 3)
  assert.equal(l.valid(8200), false, 'the earlier bound (4000) stands')
  const again = lease()
  again.joinAnswered(1000, 3)
  again.joinAnswered(3000, 3)
  again.ack(3500)
  assert.equal(again.valid(3999), true)
  again.joinAnswered(4500, 4)
  assert.equal(again.valid(7499), true, 'a new generation: a new deadline')
  assert.equal(again.valid(7500), false)
})

test('a JoinGroup whose answer was lost bounds the next completion: a rejoin answered from it counts from the first send', () => {
  const l = lease()
  l.ack(500)
  l.joinSent(1000)
  l.joinEnded(false)
  // Rejoined at 2500; the coordinator answers from the completion the first JoinGroup took part in (after 1000).
  l.joinSent(2500)
  l.joinAnswered(2500, 5)
  assert.equal(l.valid(3999), true)
  assert.equal(l.valid(4000), false, 'bound from 1000, not 2500')
  // A JoinGroup answered with an error took part in no completion: the next one counts from its own send.
  const refused = lease()
  refused.ack(500)
  refused.joinSent(1000)
  refused.joinEnded(true)
  refused.joinSent(2500)
  refused.joinAnswered(2500, 5)
  assert.equal(refused.valid(5499), true)
  assert.equal(refused.valid(5500), false)
})

test('tells since when the lease has not held: the creation before the first grant, its end when it ran out, the loss while it held, the first loss until granted again', () => {
  const l = new MemberLease(10_000, 1000, 4000, 500)
  assert.equal(l.invalidSince(2000), 500)
  l.ack(5000)
  assert.equal(l.invalidSince(13_999), null)
  // Ran out at 5000 + 10000 - 1000, then lost at 30000: invalid since it ran out, through the loss and failed rejoins
  assert.equal(l.invalidSince(20_000), 14_000)
  l.end(30_000)
  assert.equal(l.invalidSince(30_000), 14_000)
  l.end(40_000)
  assert.equal(l.invalidSince(60_000), 14_000)
  // Granted again, then lost while it held: invalid from the loss
  l.ack(70_000)
  assert.equal(l.invalidSince(71_000), null)
  l.end(72_000)
  assert.equal(l.invalidSince(90_000), 72_000)
})
