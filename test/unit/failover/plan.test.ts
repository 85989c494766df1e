import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ExitCodes } from '../../../src/errors.ts'
import { exitCodeOf, isWritable, measureMove, partitionId, PlanKinds, planGroup, problemPlan, type GroupFacts, type WantedOffset } from '../../../src/failover/plan.ts'

function facts (overrides: Partial<GroupFacts> & { wanted: WantedOffset[] }): GroupFacts {
  return { kind: PlanKinds.FAILOVER, group: 'g', cluster: 'B', state: 'Empty', members: 0, current: new Map(), force: false, ...overrides }
}

function wanted (partition: number, offset: number, processed: number | null = offset): WantedOffset {
  return { topic: 'A.orders', partition, offset, exact: true, processed }
}

test('a move forward to the translated position re-reads and skips nothing', () => {
  // Given the group committed 80 on B earlier and its commit on A translates to 100
  const plan = planGroup(facts({ current: new Map([[partitionId('A.orders', 0), 80]]), wanted: [wanted(0, 100)] }))
  // Then the move is safe: offsets 80..99 were processed on A
  assert.deepEqual(plan.moves, [{ topic: 'A.orders', partition: 0, current: 80, next: 100, reRead: 0, skip: 0, exact: true }])
  assert.deepEqual(plan.refusals, [])
  assert.equal(isWritable(plan), true)
})

test('a failover that would move backwards is refused without --force and allowed with it', () => {
  const current = new Map([[partitionId('A.orders', 0), 130]])
  const refused = planGroup(facts({ current, wanted: [wanted(0, 100)] }))
  assert.equal(refused.moves[0]!.reRead, 30)
  assert.equal(refused.refusals.length, 1)
  assert.match(refused.refusals[0]!, /backwards \(30 record\(s\) re-read/)
  assert.equal(isWritable(refused), false)
  const forced = planGroup(facts({ current, wanted: [wanted(0, 100)], force: true }))
  assert.deepEqual(forced.refusals, [])
  assert.equal(isWritable(forced), true)
})

test('a group with active members on the destination is refused even with --force', () => {
  const plan = planGroup(facts({ state: 'Stable', members: 2, force: true, wanted: [wanted(0, 100)] }))
  assert.equal(plan.refusals.length, 1)
  assert.match(plan.refusals[0]!, /2 active member\(s\) on B \(state Stable\)/)
})

test('a group whose commits a transaction holds open on the destination (no member) is refused even with --force, naming UNSTABLE_OFFSET_COMMIT', () => {
  const plan = planGroup(facts({ force: true, inTransaction: true, wanted: [wanted(0, 100)] }))
  assert.deepEqual(plan.refusals, ['a transaction holds commits of group g open on B (UNSTABLE_OFFSET_COMMIT): an application commits offsets for it in transactions, so it is in use; ' +
    'stop that application, or let its transaction end, then plan again (--force does not override this)'])
  assert.equal(isWritable(plan), false)
  assert.equal(exitCodeOf([plan], true), ExitCodes.REFUSED)
})

test('partitions already at the planned offset are not moves, so a second apply changes nothing', () => {
  const current = new Map([[partitionId('A.orders', 0), 100], [partitionId('A.orders', 1), 7]])
  const plan = planGroup(facts({ state: 'Stable', members: 1, current, wanted: [wanted(0, 100), wanted(1, 7)] }))
  assert.deepEqual(plan.moves, [])
  assert.equal(plan.unchanged, 2)
  // nothing to write: an active group is not even refused
  assert.deepEqual(plan.refusals, [])
  assert.equal(exitCodeOf([plan], false), ExitCodes.OK)
})

test('offsets set: a rewind is allowed, a skip past records nobody processed needs --force', () => {
  const current = new Map([[partitionId('t', 0), 100]])
  const rewind = planGroup(facts({ kind: PlanKinds.OFFSETS_SET, current, wanted: [{ topic: 't', partition: 0, offset: 40, exact: true, processed: 100 }] }))
  assert.equal(rewind.moves[0]!.reRead, 60)
  assert.deepEqual(rewind.refusals, [])
  const skip = planGroup(facts({ kind: PlanKinds.OFFSETS_SET, current, wanted: [{ topic: 't', partition: 0, offset: 150, exact: true, processed: 100 }] }))
  assert.equal(skip.moves[0]!.skip, 50)
  assert.match(skip.refusals[0]!, /skip up to 50 record/)
  assert.deepEqual(planGroup(facts({ kind: PlanKinds.OFFSETS_SET, current, force: true, wanted: [{ topic: 't', partition: 0, offset: 150, exact: true, processed: 100 }] })).refusals, [])
})

test('measureMove counts re-reads and skips from the current and the processed positions', () => {
  assert.deepEqual(measureMove(null, 10, 10), { reRead: 0, skip: 0 })
  assert.deepEqual(measureMove(null, 10, null), { reRead: 0, skip: 0 })
  assert.deepEqual(measureMove(5, 10, 10), { reRead: 0, skip: 0 })
  assert.deepEqual(measureMove(5, 10, null), { reRead: 0, skip: 5 })
  assert.deepEqual(measureMove(15, 10, 10), { reRead: 5, skip: 0 })
  assert.deepEqual(measureMove(5, 12, 10), { reRead: 0, skip: 2 })
})

test('moves are sorted by topic and partition', () => {
  const plan = planGroup(facts({ wanted: [wanted(2, 5), { ...wanted(0, 1), topic: 'A.a' }, wanted(1, 3)] }))
  assert.deepEqual(plan.moves.map(m => `${m.topic}-${m.partition}`), ['A.a-0', 'A.orders-1', 'A.orders-2'])
})

test('exit codes: unreadable 3 before refused 5 before dry-run moves 1; applied or nothing to do 0', () => {
  const moving = planGroup(facts({ wanted: [wanted(0, 1)] }))
  const refused = planGroup(facts({ state: 'Stable', members: 1, wanted: [wanted(0, 1)] }))
  const broken = problemPlan('h', 'B', 'no checkpoint')
  assert.equal(exitCodeOf([moving], false), ExitCodes.DRIFT)
  assert.equal(exitCodeOf([moving], true), ExitCodes.OK)
  assert.equal(exitCodeOf([moving, refused], true), ExitCodes.REFUSED)
  assert.equal(exitCodeOf([moving, refused, broken], false), ExitCodes.START_FAILED)
  assert.equal(exitCodeOf([], false), ExitCodes.OK)
})

test('a move by a translation before the history\'s first run is refused without --force: how much it skips is not known', () => {
  // Given a commit on A at 500, before the first offset kmirror's history maps (1000 -> 980; MM2 copied before it)
  const before: WantedOffset = { topic: 'A.orders', partition: 0, offset: 980, exact: false, reason: 'source offset 500 is before the first replicated offset 1000', processed: 980, maySkip: true }
  const refused = planGroup(facts({ wanted: [before] }))
  // Then the plan shows the move, not exact, and refuses it naming where the history starts and the way out
  assert.deepEqual(refused.moves.map(m => [m.next, m.exact, m.maySkip]), [[980, false, true]])
  assert.equal(refused.refusals.length, 1)
  assert.match(refused.refusals[0]!, /1 partition\(s\) would move to where kmirror's offset history starts.*A\.orders-0 none -> 980: source offset 500 is before the first replicated offset 1000\); records there may be skipped: use --force/)
  assert.equal(exitCodeOf([refused], false), ExitCodes.REFUSED)
  // and --force writes it
  assert.equal(isWritable(planGroup(facts({ wanted: [before], force: true }))), true)
  // A translation beyond what was replicated is not exact either, but never skips: not refused
  const beyond: WantedOffset = { topic: 'A.orders', partition: 0, offset: 50, exact: false, reason: 'beyond', processed: 50 }
  assert.deepEqual(planGroup(facts({ wanted: [beyond] })).refusals, [])
})
