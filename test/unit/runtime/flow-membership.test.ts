/**
 * The group wiring of a flow without a coordinator: the lease gate refuses writes before the first join and names
 * the member, group and cluster; the gate the writers hold opens once the membership exists and holds its lease; a
 * heartbeat-only pair's owner lists its one job and starts, stops and loses it.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { fenceOf, FlowMembership, HeartbeatPairOwner, PROCESS_MEMBER_NAME } from '../../../src/runtime/flow-membership.ts'
import { JOB_REVOKED, MEMBERSHIP_ENDED } from '../../../src/runtime/flow-work.ts'
import { JobNames } from '../../../src/runtime/job-registry.ts'
import { memoryLogger } from '../../fakes/memory-logger.ts'
import { flowOf, parse, twoClusters } from '../config/fixtures.ts'

const noWork = { listWork: async () => [], assign: async () => {}, revoke: async () => {}, lose: () => {} }

test('the lease gate refuses writes before the first join, naming member, group and cluster; the status names the group', async () => {
  const config = flowOf(parse(twoClusters('A->B.group.id = mirrors')), 'A->B')
  const createdAt = Date.now()
  const membership = new FlowMembership({ config, owner: noWork, log: memoryLogger().log })
  const reason = membership.fence()
  assert.ok(reason !== null)
  assert.match(reason, new RegExp(`member ${PROCESS_MEMBER_NAME} in group mirrors on cluster B`))
  // No lease yet: none since the membership was created
  const { invalidSince } = membership.leaseState(createdAt + 60_000)
  assert.ok(invalidSince !== null && invalidSince >= createdAt && invalidSince <= Date.now(), String(invalidSince))
  assert.deepEqual(membership.leaseState(createdAt + 60_000), { group: 'mirrors', cluster: 'B', invalidSince })
  assert.deepEqual(membership.status(), {
    group: 'mirrors', generation: -1, leader: '', self: PROCESS_MEMBER_NAME, members: [], lease: { valid: false, lastError: null, invalidSince: new Date(invalidSince).toISOString() }
  })
  await membership.stop()
  assert.notEqual(membership.fence(), null, 'a stopped member never writes')
})

test('a heartbeat-only pair\'s owner: one job, started on assign, stopped on revoke and on loss, its run under way aborted by both', async () => {
  const calls: string[] = []
  const owner = new HeartbeatPairOwner({ start: () => { calls.push('start') }, stop: async abort => { calls.push(abort === JOB_REVOKED ? 'stop (revoked)' : abort === MEMBERSHIP_ENDED ? 'stop (membership ended)' : 'stop') } })
  const item = { kind: 'job', job: JobNames.EMIT_HEARTBEATS } as const
  assert.deepEqual(await owner.listWork(), [item])
  await owner.assign([item])
  await owner.assign([item])
  assert.equal(owner.running, true)
  await owner.revoke([item])
  await owner.assign([item])
  owner.lose()
  owner.lose()
  assert.deepEqual(calls, ['start', 'stop (revoked)', 'start', 'stop (membership ended)'])
  assert.equal(owner.running, false)
})

test('the gate the writers hold: closed until the membership exists, then exactly the membership\'s answer, open included', () => {
  let membership: { fence: () => string | null } | null = null
  let answer: string | null = 'lease ran out'
  const gate = fenceOf(() => membership)
  assert.equal(gate(), 'not a member of the group yet')
  membership = { fence: () => answer }
  assert.equal(gate(), 'lease ran out')
  answer = null
  assert.equal(gate(), null, 'a held lease opens the gate')
  answer = 'stopped'
  assert.equal(gate(), 'stopped')
})
