/**
 * A stopping GroupMember: its heartbeats keep the lease through the hand-over (revoke, progress stored), and it
 * leaves the group by the stop's deadline whatever the hand-over does (member-hand-over.ts).
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { GroupMember } from '../../../src/kafka/group-member.ts'
import { LEAVE_RESERVE_MS, leaveWaitMs, MIN_LEAVE_WAIT_MS } from '../../../src/kafka/member-hand-over.ts'
import { E, FakeCoordinator, FakeOwner, GROUP } from '../../fakes/fake-group.ts'
import { LogLevels, memoryLogger, type MemoryLogger } from '../../fakes/memory-logger.ts'
import { waitFor } from '../../helpers/wait.ts'

const members: GroupMember[] = []
afterEach(async () => { await Promise.all(members.splice(0).map(m => m.stop())) })

/** An at-least-once member with a session of SESSION_MS (heartbeats every 20 ms), stable with its partition. */
async function stableMember (coordinator: FakeCoordinator, owner: FakeOwner, sessionTimeoutMs: number, logger: MemoryLogger = memoryLogger()): Promise<GroupMember> {
  const member = new GroupMember({
    props: {}, clientId: 'kmirror-test', cluster: coordinator.cluster, groupId: GROUP, memberName: 'host:1:1', transactionalId: null, holdPastLease: true,
    sessionTimeoutMs, heartbeatIntervalMs: 20, rebalanceTimeoutMs: 2000, log: logger.log, owner, coordinator
  })
  members.push(member)
  member.start()
  await waitFor(() => member.status().state === 'stable' && member.status().owned.length === 1, { timeoutMs: 5000, intervalMs: 5, message: 'the member stable with its partition' })
  return member
}

/** Stops MEMBER (no longer stopped by afterEach). */
async function stopped (member: GroupMember, leaveBy?: number): Promise<number> {
  members.splice(members.indexOf(member), 1)
  const started = Date.now()
  await member.stop(leaveBy)
  return Date.now() - started
}

/** A revoke that ends only when the test says so (a progress store slower than the lease left at the stop). */
function slowRevoke (owner: FakeOwner): { readonly revoking: () => boolean, finish: () => void } {
  let revoking = false
  let finish = (): void => {}
  owner.revoke = async items => {
    revoking = true
    await new Promise<void>(resolve => { finish = resolve })
    owner.owned -= items.length
  }
  return { revoking: () => revoking, finish: () => { finish() } }
}

describe('GroupMember stop: the hand-over under the lease', () => {
  it('Given a revoke longer than the session, when the member stops, then its heartbeats keep the lease valid until the revoke ends, and it leaves only after', async () => {
    // Given a session of 500 ms (a lease of 480 ms at most) and a revoke that takes a whole second
    const coordinator = new FakeCoordinator()
    const owner = new FakeOwner()
    const member = await stableMember(coordinator, owner, 500)
    const revoke = slowRevoke(owner)
    let writableAtLeave: boolean | null = null
    const leave = coordinator.leave
    coordinator.leave = async memberId => { writableAtLeave = member.leaseValid(); return await leave(memberId) }
    // When the member stops
    const stopping = stopped(member, Date.now() + 5000)
    await waitFor(revoke.revoking, { timeoutMs: 2000, intervalMs: 5, message: 'the revoke under way' })
    const beatsAtStop = coordinator.sent.filter(s => s.api === 'Heartbeat').length
    await new Promise(resolve => setTimeout(resolve, 1000))
    // Then, past the lease it held at the stop, it is still valid: heartbeats went on meanwhile
    assert.equal(member.leaseValid(), true, 'the lease holds through the hand-over')
    assert.ok(coordinator.sent.filter(s => s.api === 'Heartbeat').length >= beatsAtStop + 10, 'heartbeats sent during the hand-over')
    assert.equal(coordinator.sent.filter(s => s.api === 'LeaveGroup').length, 0, 'not left while handing over')
    // and once the revoke completes it leaves, after which it writes nothing and sends no heartbeat
    revoke.finish()
    await stopping
    assert.equal(owner.lost, 0, 'handed over, not lost')
    assert.equal(owner.owned, 0)
    assert.equal(coordinator.sent.at(-1)?.api, 'LeaveGroup')
    assert.equal(writableAtLeave, false, 'the lease gate closed before the LeaveGroup went out')
    assert.equal(member.leaseValid(), false)
    const sentAfterLeave = coordinator.sent.length
    await new Promise(resolve => setTimeout(resolve, 100))
    assert.equal(coordinator.sent.length, sentAfterLeave, 'no heartbeat after the leave')
  })

  it('Given a revoke that never ends (its store retrying), when the member stops, then the work is dropped as lost before the deadline, a warning names it, and the member leaves in time', async () => {
    const logger = memoryLogger()
    const coordinator = new FakeCoordinator()
    const owner = new FakeOwner()
    const member = await stableMember(coordinator, owner, 10_000, logger)
    slowRevoke(owner)
    // When the member must have left within 1.5 s (its session is 10 s)
    const elapsed = await stopped(member, Date.now() + 1500)
    // Then it dropped the work at the hand-over's deadline and left before its own
    assert.ok(elapsed >= 1500 - LEAVE_RESERVE_MS - 50 && elapsed < 1500, `stopped in ${elapsed} ms`)
    assert.equal(owner.lost, 1)
    assert.equal(coordinator.sent.at(-1)?.api, 'LeaveGroup')
    const warning = logger.at(LogLevels.warn).find(l => l.msg.startsWith('the stop could not hand the work of group kmirror-A-B on cluster B over'))
    assert.ok(warning !== undefined, 'the unfinished hand-over is told')
    assert.match(warning.msg, /\(the stop could not wait longer for it\): the progress of 1 partition\(s\) copied since their last store is not stored/)
    assert.deepEqual(warning['partitions'], ['A.t-0'])
  })

  it('Given a stop with a deadline, then the revoke is told when the hand-over ends (LEAVE_RESERVE_MS before it), so what may wait less ends first', async () => {
    const coordinator = new FakeCoordinator()
    const owner = new FakeOwner()
    const member = await stableMember(coordinator, owner, 10_000)
    const told: (number | undefined)[] = []
    owner.revoke = async (items, by) => { told.push(by); owner.owned -= items.length }
    const leaveBy = Date.now() + 3000
    await stopped(member, leaveBy)
    assert.deepEqual(told, [leaveBy - LEAVE_RESERVE_MS])
    assert.equal(owner.lost, 0)
  })

  it('Given a coordinator that never answers the LeaveGroup, when the member stops, then the leave is waited for only until the stop\'s deadline, not the session', async () => {
    const coordinator = new FakeCoordinator()
    coordinator.leave = () => new Promise(() => {})
    const member = await stableMember(coordinator, new FakeOwner(), 10_000)
    const elapsed = await stopped(member, Date.now() + 1200)
    assert.ok(elapsed < 1200 + 100, `stopped in ${elapsed} ms (deadline 1,200 ms, session 10,000 ms)`)
  })

  it('Given a coordinator gone silent during the hand-over, then the hand-over ends as soon as the lease runs out: the work is lost, nothing written past the lease', async () => {
    const logger = memoryLogger()
    const coordinator = new FakeCoordinator()
    const owner = new FakeOwner()
    const member = await stableMember(coordinator, owner, 300, logger)
    const revoke = slowRevoke(owner)
    coordinator.heartbeatsUnanswered = true
    const stopping = stopped(member, Date.now() + 5000)
    await waitFor(revoke.revoking, { timeoutMs: 2000, intervalMs: 5, message: 'the revoke under way' })
    // When the lease runs out, then the work is dropped at once, the lease gate closed, and the member leaves
    const elapsed = await stopping
    assert.ok(elapsed < 1000, `stopped in ${elapsed} ms: the lease (300 ms session), not the deadline (5 s), ends the hand-over`)
    assert.equal(owner.lost, 1)
    assert.equal(member.leaseValid(), false)
    assert.ok(logger.at(LogLevels.warn).some(l => /over \(the lease ran out: /.test(l.msg)), 'the reason is told')
  })

  it('Given the membership lost during the hand-over (a heartbeat answered UNKNOWN_MEMBER_ID), then the hand-over ends at once, the work lost once, and no LeaveGroup is sent for an id the coordinator does not know', async () => {
    const coordinator = new FakeCoordinator()
    const owner = new FakeOwner()
    const member = await stableMember(coordinator, owner, 10_000)
    const revoke = slowRevoke(owner)
    const stopping = stopped(member, Date.now() + 5000)
    await waitFor(revoke.revoking, { timeoutMs: 2000, intervalMs: 5, message: 'the revoke under way' })
    coordinator.heartbeatErrors.push(E.UNKNOWN_MEMBER_ID)
    const elapsed = await stopping
    assert.ok(elapsed < 1000, `stopped in ${elapsed} ms`)
    assert.equal(owner.lost, 1)
    assert.equal(coordinator.sent.filter(s => s.api === 'LeaveGroup').length, 0)
  })
})

describe('GroupMember stop during an assignment\'s start', () => {
  it('Given an assignment whose start waits (a progress read held by an open transaction), when the stop ends that wait (the flow ends its waiting reads first), then the stop ends in time and the failed start is told at info, not as an error', async () => {
    const logger = memoryLogger()
    const coordinator = new FakeCoordinator()
    const owner = new FakeOwner()
    let endWait = (_err: Error): void => {}
    owner.assignGate = new Promise<void>((_resolve, reject) => { endWait = reject })
    const member = new GroupMember({
      props: {}, clientId: 'kmirror-test', cluster: coordinator.cluster, groupId: GROUP, memberName: 'host:1:1', transactionalId: null, holdPastLease: true,
      sessionTimeoutMs: 10_000, heartbeatIntervalMs: 20, rebalanceTimeoutMs: 2000, log: logger.log, owner, coordinator
    })
    member.start()
    await waitFor(() => owner.assigning, { timeoutMs: 5000, intervalMs: 5, message: 'the assignment under way' })
    // When the stop begins after the flow ended its waiting reads (mirror-maker.ts stopFlow)
    endWait(new Error('stopped reading mm2-offsets.A.internal: the flow is stopping'))
    const elapsed = await stopped(member, Date.now() + 1500)
    // Then it left in time, and nothing is logged as an error
    assert.ok(elapsed < 1500, `stopped in ${elapsed} ms`)
    assert.equal(coordinator.sent.at(-1)?.api, 'LeaveGroup')
    assert.deepEqual(logger.at(LogLevels.error).map(l => l.msg), [])
    assert.ok(logger.at(LogLevels.info).some(l => l.msg === 'the assignment under way ended with the stop'), JSON.stringify(logger.at(LogLevels.info).map(l => l.msg)))
  })
})

describe('leaveWaitMs', () => {
  it('waits what is left until the deadline, at most the bound, at least a moment', () => {
    assert.equal(leaveWaitMs(10_000, 3000, 5000), 3000)
    assert.equal(leaveWaitMs(10_000, 30_000, 9000), 1000)
    assert.equal(leaveWaitMs(10_000, 30_000, 11_000), MIN_LEAVE_WAIT_MS)
  })
})
