import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { GroupMember } from '../../../src/kafka/group-member.ts'
import { E, FakeCoordinator, FakeOwner, GROUP } from '../../fakes/fake-group.ts'
import { LogLevels, memoryLogger, type MemoryLogger } from '../../fakes/memory-logger.ts'
import { waitFor } from '../../helpers/wait.ts'

const members: GroupMember[] = []
afterEach(async () => { await Promise.all(members.splice(0).map(m => m.stop())) })

function startMember (coordinator: FakeCoordinator, logger = memoryLogger(), rebalanceTimeoutMs = 2000, owner = new FakeOwner(), sessionTimeoutMs = 2000, holdPastLease = false): { member: GroupMember, owner: FakeOwner } {
  const member = new GroupMember({
    props: {}, clientId: 'kmirror-test', cluster: coordinator.cluster, groupId: GROUP, memberName: 'host:1:1', transactionalId: null, holdPastLease,
    sessionTimeoutMs, heartbeatIntervalMs: 20, rebalanceTimeoutMs, log: logger.log, owner, coordinator
  })
  members.push(member)
  member.start()
  return { member, owner }
}

async function waitStable (member: GroupMember, memberId: string): Promise<void> {
  await waitFor(() => ({ done: member.status().state === 'stable' && member.status().memberId === memberId && member.status().owned.length === 1, state: member.status() }),
    { timeoutMs: 5000, intervalMs: 5, message: `member ${memberId} stable with its partition` })
}

describe('GroupMember after losing its membership', () => {
  it('Given a heartbeat answered ILLEGAL_GENERATION, when the member joins again, then it first leaves with its old member id, so the coordinator does not wait for that id', async () => {
    const coordinator = new FakeCoordinator()
    const logger = memoryLogger()
    const { member, owner } = startMember(coordinator, logger)
    await waitStable(member, 'm1')

    coordinator.heartbeatErrors.push(E.ILLEGAL_GENERATION)
    await waitStable(member, 'm2')

    const after = coordinator.sent.slice(coordinator.sent.findIndex(s => s.api === 'Heartbeat' && s.memberId === 'm1'))
      .filter(s => s.api !== 'Heartbeat')
    assert.deepEqual(after.slice(0, 3), [{ api: 'LeaveGroup', memberId: 'm1' }, { api: 'JoinGroup', memberId: '' }, { api: 'SyncGroup', memberId: 'm2' }])
    assert.equal(owner.lost, 1, 'the work was stopped at once')
    assert.ok(logger.lines.some(l => l.msg.startsWith(`left group ${GROUP} with the member id of the lost membership`) && l.memberId === 'm1'), 'the operator sees the leave')
  })

  it('Given a heartbeat answered UNKNOWN_MEMBER_ID, then the coordinator no longer knows the id: the member joins as a new one without a LeaveGroup', async () => {
    const coordinator = new FakeCoordinator()
    const { member } = startMember(coordinator)
    await waitStable(member, 'm1')

    coordinator.heartbeatErrors.push(E.UNKNOWN_MEMBER_ID)
    await waitStable(member, 'm2')

    assert.deepEqual(coordinator.sent.filter(s => s.api === 'LeaveGroup'), [])
  })

  it('Given a coordinator that does not answer the LeaveGroup of the old id, then the member joins anyway after heartbeat.interval.ms, and one that answers UNKNOWN_MEMBER_ID logs nothing', async () => {
    const coordinator = new FakeCoordinator()
    const logger = memoryLogger()
    coordinator.leave = () => new Promise(() => {})
    const { member } = startMember(coordinator, logger)
    await waitStable(member, 'm1')

    coordinator.heartbeatErrors.push(E.ILLEGAL_GENERATION)
    await waitStable(member, 'm2')
    assert.deepEqual(coordinator.sent.filter(s => s.api === 'LeaveGroup'), [{ api: 'LeaveGroup', memberId: 'm1' }])

    coordinator.leave = async memberId => ({ throttleTimeMs: 0, errorCode: 0, members: [{ memberId, errorCode: E.UNKNOWN_MEMBER_ID }] })
    const logged = logger.lines.length
    coordinator.heartbeatErrors.push(E.ILLEGAL_GENERATION)
    await waitStable(member, 'm3')
    assert.deepEqual(coordinator.sent.filter(s => s.api === 'LeaveGroup').map(s => s.memberId), ['m1', 'm2'])
    assert.deepEqual(logger.lines.slice(logged).filter(l => /lost membership/.test(l.msg)), [])
  })
})

describe('GroupMember whose lease runs out (the coordinator silent past the session)', () => {
  /** An at-least-once member, stable with its partition, then holding it past a lease that ran out. */
  async function heldMember (options: { sessionTimeoutMs?: number, owner?: FakeOwner, logger?: MemoryLogger, coordinator?: FakeCoordinator } = {}): Promise<{ coordinator: FakeCoordinator, member: GroupMember, owner: FakeOwner }> {
    const coordinator = options.coordinator ?? new FakeCoordinator()
    const { member, owner } = startMember(coordinator, options.logger ?? memoryLogger(), 2000, options.owner ?? new FakeOwner(), options.sessionTimeoutMs ?? 300, true)
    await waitStable(member, 'm1')
    await quietPastLease(coordinator, member)
    return { coordinator, member, owner }
  }

  async function quietPastLease (coordinator: FakeCoordinator, member: GroupMember): Promise<void> {
    coordinator.heartbeatsUnanswered = true
    await waitFor(() => !member.leaseValid(), { timeoutMs: 5000, intervalMs: 5, message: 'the lease running out' })
    // A few heartbeat intervals more: a member that drops its work at expiry has done so by then.
    const sent = coordinator.sent.length
    await waitFor(() => coordinator.sent.length >= sent + 5, { timeoutMs: 5000, intervalMs: 5, message: 'heartbeats still sent' })
  }

  it('Given at-least-once mode, then the member holds its work writing nothing, and when the coordinator answers it in the same generation the lease holds again and nothing was lost or rejoined', async () => {
    const logger = memoryLogger()
    const { coordinator, member, owner } = await heldMember({ logger })
    assert.equal(owner.lost, 0, 'the work is held, not lost')
    assert.equal(owner.owned, 1)
    assert.equal(member.leaseValid(), false, 'nothing may be written meanwhile')
    assert.match(member.status().lastError ?? '', /^the lease ran out \d+ s ago \(.*\): writing nothing until the coordinator of group kmirror-A-B on cluster B answers; last error: connection closed: no answer$/)
    const held = logger.at(LogLevels.warn).filter(l => l.msg.startsWith('the lease of this member in group kmirror-A-B on cluster B ran out'))
    assert.equal(held.length, 1, 'one warning per hold')
    assert.equal(held[0]!['generation'], 1)
    assert.match(held[0]!.msg, /; its coordinator was broker 127\.0\.0\.1:9192\): nothing is written/, 'the silent broker named')

    coordinator.heartbeatsUnanswered = false
    await waitFor(() => member.leaseValid(), { timeoutMs: 5000, intervalMs: 5, message: 'the lease holding again' })
    assert.equal(owner.lost, 0)
    assert.equal(owner.owned, 1)
    assert.deepEqual(coordinator.sent.filter(s => s.api === 'JoinGroup' || s.api === 'LeaveGroup').map(s => s.api), ['JoinGroup'], 'no rejoin, no leave')
    await waitFor(() => logger.at(LogLevels.info).some(l => /still counts this member in generation 1: nobody was given its work/.test(l.msg)), { timeoutMs: 2000, intervalMs: 5, message: 'the resume logged' })
    assert.equal(member.status().lastError, null)
  })

  it('Given at-least-once mode and a held lease, when the coordinator answers that the member is gone, then the work is lost at once and the member joins again as a new one', async () => {
    const { coordinator, member, owner } = await heldMember()

    coordinator.heartbeatErrors.push(E.UNKNOWN_MEMBER_ID)
    coordinator.heartbeatsUnanswered = false
    await waitStable(member, 'm2')
    assert.equal(owner.lost, 1)
  })

  it('Given at-least-once mode and a held lease, when heartbeats are answered REBALANCE_IN_PROGRESS (within the rebalance deadline), then the member rejoins as the same member with its work, nothing lost', async () => {
    const { coordinator, member, owner } = await heldMember()

    coordinator.heartbeatErrors.push(E.REBALANCE_IN_PROGRESS)
    coordinator.heartbeatsUnanswered = false
    await waitFor(() => member.status().generation === 2 && member.leaseValid(), { timeoutMs: 5000, intervalMs: 5, message: 'the next generation joined with a valid lease' })
    assert.equal(member.status().memberId, 'm1')
    assert.equal(owner.lost, 0)
    assert.equal(owner.owned, 1)
  })

  it('Given a held lease and a coordinator that never answers LeaveGroup, when the member stops, then the leave is given up after a heartbeat interval, not the session', async () => {
    const coordinator = new FakeCoordinator()
    coordinator.leave = () => new Promise(() => {})
    const { member, owner } = await heldMember({ coordinator, sessionTimeoutMs: 1500 })

    const stopping = Date.now()
    await member.stop()
    members.splice(members.indexOf(member), 1)
    assert.ok(Date.now() - stopping < 750, `stopped in ${Date.now() - stopping} ms (heartbeat interval 20 ms, session 1,500 ms)`)
    assert.equal(owner.lost, 1)
  })

  it('Given exactly-once mode (no hold), then the work is lost as soon as the lease runs out', async () => {
    const coordinator = new FakeCoordinator()
    const { member, owner } = startMember(coordinator, memoryLogger(), 2000, new FakeOwner(), 300, false)
    await waitStable(member, 'm1')
    coordinator.heartbeatsUnanswered = true
    await waitFor(() => owner.lost === 1, { timeoutMs: 5000, intervalMs: 5, message: 'the work lost at expiry' })
    coordinator.heartbeatsUnanswered = false
  })

  it('Given a held lease, when the member stops, then the work is dropped as lost (nothing can be stored), never revoked', async () => {
    const coordinator = new FakeCoordinator()
    const owner = new FakeOwner()
    let revoked = 0
    owner.revoke = async items => { revoked += items.length }
    const { member } = await heldMember({ coordinator, owner })

    await member.stop()
    members.splice(members.indexOf(member), 1)
    assert.equal(revoked, 0)
    assert.equal(owner.lost, 1)
  })

  it('Given a revoke whose progress store cannot finish (the target silent) and the lease running out meanwhile, when the member stops, then the work is lost at once instead of the stop waiting for the store', async () => {
    // A real owner's store retries until lose() aborts it: modelled by a revoke that ends only on lose().
    const coordinator = new FakeCoordinator()
    const owner = new FakeOwner()
    let storing = false
    let abort = (): void => {}
    owner.revoke = async () => { storing = true; await new Promise<void>(resolve => { abort = resolve }) }
    const lose = owner.lose.bind(owner)
    owner.lose = () => { abort(); lose() }
    const { member } = startMember(coordinator, memoryLogger(), 2000, owner, 300, true)
    await waitStable(member, 'm1')

    // The partition leaves the assignment (its topic is gone): the revoke starts and hangs in its store
    owner.listWork = async () => []
    member.requestRebalance()
    await waitFor(() => storing, { timeoutMs: 5000, intervalMs: 5, message: 'the revoke storing its progress' })
    await quietPastLease(coordinator, member)

    const started = Date.now()
    await member.stop()
    members.splice(members.indexOf(member), 1)
    assert.equal(owner.lost, 1, 'lost, not left storing')
    assert.ok(Date.now() - started < 1000, `stopped in ${Date.now() - started} ms`)
  })
})

describe('GroupMember with a coordinator that is loading', () => {
  it('Given JoinGroup answered COORDINATOR_LOAD_IN_PROGRESS (a new group on a fresh cluster), then the retries are logged at info while they last less than session.timeout.ms, then as a warning', async () => {
    const coordinator = new FakeCoordinator()
    const logger = memoryLogger()
    const COORDINATOR_LOAD_IN_PROGRESS = 14
    coordinator.joinErrors.push(COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_LOAD_IN_PROGRESS)
    // Back-off 250 ms then 500 ms: the third answer comes 750 ms after the first, past the 600 ms session.
    const { member } = startMember(coordinator, logger, 2000, new FakeOwner(), 600)
    await waitStable(member, 'm1')

    const retries = logger.lines.filter(l => l.msg === 'group membership: will try again')
    assert.deepEqual(retries.map(l => l.level), [LogLevels.info, LogLevels.info, LogLevels.warn])
    assert.match(String((retries[0]!['err'] as { message: string }).message), /JoinGroup of group kmirror-A-B: the coordinator moved or is loading \(COORDINATOR_LOAD_IN_PROGRESS\)/)
  })

  it('Given JoinGroup refused for another cause, then the first retry is already a warning', async () => {
    const coordinator = new FakeCoordinator()
    const logger = memoryLogger()
    const NOT_ENOUGH_REPLICAS = 19
    coordinator.joinErrors.push(NOT_ENOUGH_REPLICAS)
    coordinator.refusal = (errorCode, action) => new KmirrorError(ErrorCodes.GROUP_MEMBERSHIP, `${action} refused with Kafka error ${errorCode}`, { retriable: true, details: { kafkaErrors: ['NOT_ENOUGH_REPLICAS'] } })
    const { member } = startMember(coordinator, logger)
    await waitStable(member, 'm1')

    assert.deepEqual(logger.lines.filter(l => l.msg === 'group membership: will try again').map(l => l.level), [LogLevels.warn])
  })
})

describe('GroupMember during a rebalance', () => {
  it('Given heartbeats answered REBALANCE_IN_PROGRESS while the member is too busy to send its JoinGroup, then its work stops once rebalance.timeout.ms may have passed, long before the session ends', async () => {
    // The coordinator may complete the join without this member rebalance.timeout.ms after the rebalance began and
    // give its work to another; the heartbeats it still answers must not stretch the lease past that.
    const coordinator = new FakeCoordinator()
    const busy = new FakeOwner()
    let release = (): void => {}
    busy.assignGate = new Promise(resolve => { release = resolve })
    startMember(coordinator, memoryLogger(), 300, busy)
    await waitFor(() => busy.assigning, { timeoutMs: 5000, intervalMs: 5, message: 'the member starting its work' })
    coordinator.heartbeatErrors.push(...Array.from({ length: 10_000 }, () => E.REBALANCE_IN_PROGRESS))
    const rebalancing = Date.now()
    try {
      await waitFor(() => busy.lost === 1, { timeoutMs: 1500, intervalMs: 5, message: 'work stopped while the member could not rejoin' })
      assert.ok(Date.now() - rebalancing < 1000, `stopped after ${Date.now() - rebalancing} ms: the session (2,000 ms) kept alive by heartbeats must not be the bound`)
      assert.equal(coordinator.sent.filter(s => s.api === 'JoinGroup').length, 1, 'no JoinGroup was sent during the rebalance')
    } finally {
      coordinator.heartbeatErrors.length = 0
      release()
    }
  })

  it('Given a member that sent its JoinGroup at once, when the join completes only after rebalance.timeout.ms (another member slow to rejoin), then it keeps its work: the coordinator waits for it', async () => {
    const coordinator = new FakeCoordinator()
    const { member, owner } = startMember(coordinator, memoryLogger(), 300)
    await waitStable(member, 'm1')
    let release = (): void => {}
    coordinator.joinGate = new Promise(resolve => { release = resolve })
    coordinator.heartbeatErrors.push(...Array.from({ length: 10_000 }, () => E.REBALANCE_IN_PROGRESS))
    const joins = (): number => coordinator.sent.filter(s => s.api === 'JoinGroup').length
    try {
      await waitFor(() => joins() === 2, { timeoutMs: 1000, intervalMs: 5, message: 'the member rejoining' })
      const joinedAt = coordinator.sent.length
      // Well past rebalance.timeout.ms (300 ms) of heartbeats answered REBALANCE_IN_PROGRESS (every 20 ms)
      await waitFor(() => coordinator.sent.slice(joinedAt).filter(s => s.api === 'Heartbeat').length >= 40, { timeoutMs: 5000, intervalMs: 5, message: '40 heartbeats while the JoinGroup waits' })
      assert.equal(owner.lost, 0)
      assert.equal(owner.owned, 1)
    } finally {
      coordinator.heartbeatErrors.length = 0
      coordinator.joinGate = null
      release()
    }
    await waitFor(() => member.status().state === 'stable' && owner.owned === 1 && joins() >= 2, { timeoutMs: 5000, intervalMs: 5, message: 'stable again with its work' })
    assert.equal(owner.lost, 0)
  })

  it('Given a leader slow to compute the assignment while its heartbeats are answered NONE, then its work stops once rebalance.timeout.ms may have passed since the join completed, long before the session ends', async () => {
    // The coordinator drops a member that has not sent SyncGroup within rebalance.timeout.ms of the join's
    // completion and gives its work out; heartbeats answered NONE meanwhile must not stretch the lease past that.
    const coordinator = new FakeCoordinator()
    const { member, owner } = startMember(coordinator, memoryLogger(), 300)
    await waitStable(member, 'm1')
    let release = (): void => {}
    owner.listGate = new Promise(resolve => { release = resolve })
    const syncs = (): number => coordinator.sent.filter(s => s.api === 'SyncGroup').length
    const synced = syncs()
    const rejoining = Date.now()
    member.requestRebalance()
    try {
      await waitFor(() => owner.lost === 1, { timeoutMs: 1500, intervalMs: 5, message: 'work stopped while the leader could not send its SyncGroup' })
      assert.ok(Date.now() - rejoining < 1000, `stopped after ${Date.now() - rejoining} ms: the session (2,000 ms) kept alive by heartbeats must not be the bound`)
      assert.equal(syncs(), synced, 'no SyncGroup was sent while the leader listed the work')
    } finally {
      owner.listGate = null
      release()
    }
    // Joins again as a new member, after leaving with the lost id.
    await waitStable(member, 'm2')
    assert.ok(coordinator.sent.some(s => s.api === 'LeaveGroup' && s.memberId === 'm1'))
  })
})
