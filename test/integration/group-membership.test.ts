/**
 * GroupMember on the real target cluster: four kmirror members of one group (in this process), each with an
 * in-memory WorkOwner, through joins, a clean stop and a frozen member (SIGSTOP-like, via the test hook).
 * A checker runs all along: two owners never run one item while both hold a valid lease.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { workKey, type WorkItem } from '../../src/cluster/work.ts'
import type { WorkOwner } from '../../src/cluster/work-owner.ts'
import { GroupCoordinator } from '../../src/kafka/group-coordinator.ts'
import { GroupMember } from '../../src/kafka/group-member.ts'
import { JoinGroupApi } from '../../src/kafka/protocol/join-group.ts'
import { silentLogger, type Logger } from '../../src/logger.ts'
import { memoryLogger } from '../fakes/memory-logger.ts'
import { getCluster } from '../helpers/clusters.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const SESSION_MS = 6000
const HEARTBEAT_MS = 1000
const WORK: WorkItem[] = [
  ...Array.from({ length: 12 }, (_, partition): WorkItem => ({ kind: 'partition', topic: 'orders', partition })),
  ...['refresh-topics', 'emit-checkpoints', 'emit-heartbeats', 'sync-group-offsets'].map((job): WorkItem => ({ kind: 'job', job }))
]
const ALL_KEYS = WORK.map(workKey).sort()

interface Event { readonly at: number, readonly member: string, readonly kind: 'assign' | 'revoke' | 'lose', readonly keys: readonly string[] }

class Ledger {
  readonly events: Event[] = []
  readonly violations: string[] = []
  readonly fenced: string[] = []
  readonly owners = new Map<string, FakeOwner>()

  /** Two owners running one item, both with a valid lease: what must never happen. */
  check (): void {
    const live = [...this.owners.values()].filter(o => o.member?.leaseValid() === true)
    for (const a of live) {
      for (const b of live) {
        if (a === b) continue
        const both = [...a.running].filter(k => b.running.has(k))
        if (both.length > 0) this.violations.push(`${a.name} and ${b.name} both run ${both.join(', ')} with valid leases`)
      }
    }
  }
}

class FakeOwner implements WorkOwner {
  readonly name: string
  readonly running = new Set<string>()
  readonly #ledger: Ledger
  member: GroupMember | undefined

  constructor (name: string, ledger: Ledger) {
    this.name = name
    this.#ledger = ledger
  }

  async listWork (): Promise<WorkItem[]> { return WORK }

  async assign (items: readonly WorkItem[]): Promise<void> {
    const keys = items.map(workKey)
    for (const other of this.#ledger.owners.values()) {
      const taken = keys.filter(k => other !== this && other.running.has(k))
      if (taken.length > 0 && other.member?.leaseValid() === true) this.#ledger.violations.push(`${this.name} got ${taken.join(', ')} while ${other.name} runs them with a valid lease`)
    }
    for (const k of keys) this.running.add(k)
    this.#ledger.events.push({ at: Date.now(), member: this.name, kind: 'assign', keys })
  }

  async revoke (items: readonly WorkItem[]): Promise<void> {
    const keys = items.map(workKey)
    for (const k of keys) this.running.delete(k)
    this.#ledger.events.push({ at: Date.now(), member: this.name, kind: 'revoke', keys })
  }

  lose (): void {
    if (this.member?.leaseValid() === true) this.#ledger.violations.push(`${this.name} lost its work with a valid lease`)
    this.#ledger.events.push({ at: Date.now(), member: this.name, kind: 'lose', keys: [...this.running] })
    this.running.clear()
  }
}

/**
 * The timing of the two tests that thaw a member just as its lease ends and need the coordinator to still hold it:
 * the lease ends heartbeat.interval.ms before the coordinator may evict the member, so that interval is the margin
 * the thawed member's first request has to reach a loaded broker (1 s proved tight on two cores).
 */
const WIDE_MARGIN = { sessionTimeoutMs: 9000, heartbeatIntervalMs: 3000 }

/** Exactly-once members (a transactional id, fenced by the leader) unless HOLD: at-least-once, holding work past a lease that ran out. */
function startMember (groupId: string, name: string, ledger: Ledger, log: Logger = silentLogger(), hold = false, timing = { sessionTimeoutMs: SESSION_MS, heartbeatIntervalMs: HEARTBEAT_MS }): { member: GroupMember, owner: FakeOwner } {
  const owner = new FakeOwner(name, ledger)
  ledger.owners.set(name, owner)
  const member = new GroupMember({
    props: { 'bootstrap.servers': getCluster('target').bootstrap },
    clientId: `kmirror|${groupId}|${name}`,
    cluster: { label: 'cluster target', alias: 'target' },
    groupId,
    memberName: name,
    ...timing,
    rebalanceTimeoutMs: 10_000,
    transactionalId: hold ? null : `${groupId}-${name}`,
    holdPastLease: hold,
    log,
    owner,
    ...(hold ? {} : { fenceTransactionalIds: async (ids: readonly string[]) => { ledger.fenced.push(...ids) } }),
    onFatal: err => { ledger.violations.push(`${name} failed: ${err.message}`) }
  })
  owner.member = member
  member.start()
  return { member, owner }
}

/** Every item run exactly once by OWNERS, partitions and jobs each balanced within one. */
function balanced (owners: readonly FakeOwner[]): { done: boolean, state: unknown } {
  const all = owners.flatMap(o => [...o.running]).sort()
  const partitions = owners.map(o => [...o.running].filter(k => k.startsWith('p:')).length)
  const jobs = owners.map(o => [...o.running].filter(k => k.startsWith('j:')).length)
  const even = (c: number[]): boolean => Math.max(...c) - Math.min(...c) <= 1
  const done = JSON.stringify(all) === JSON.stringify(ALL_KEYS) && even(partitions) && even(jobs) && owners.every(o => o.member?.status().state === 'stable')
  return { done, state: { partitions, jobs, total: all.length, states: owners.map(o => o.member?.status().state) } }
}

const revokedBy = (ledger: Ledger, member: string, since: number): Set<string> =>
  new Set(ledger.events.filter(e => e.member === member && e.kind === 'revoke' && e.at >= since).flatMap(e => e.keys))

test('members share the work of a group once each, hand it over on join, stop and freeze, and never run an item twice under a valid lease', { timeout: 90_000 }, async t => {
  const groupId = uniqueName('group-membership')
  const ledger = new Ledger()
  const checker = setInterval(() => ledger.check(), 20)
  const members = new Map<string, GroupMember>()
  t.after(async () => {
    clearInterval(checker)
    await Promise.allSettled([...members.values()].map(m => m.stop()))
  })
  const start = (name: string): FakeOwner => {
    const { member, owner } = startMember(groupId, name, ledger)
    members.set(name, member)
    return owner
  }

  // Given three members: every item runs exactly once, 4/4/4 partitions, jobs 2/1/1.
  const [a, b, c] = [start('m1'), start('m2'), start('m3')]
  await waitFor(() => balanced([a, b, c]), { timeoutMs: 20_000, message: 'three members balanced' })
  assert.deepEqual([a, b, c].map(o => [...o.running].filter(k => k.startsWith('p:')).length), [4, 4, 4])
  const generation = members.get('m1')!.status().generation
  assert.ok([...members.values()].every(m => m.status().generation === generation && m.leaseValid()))
  assert.deepEqual(members.get('m2')!.status().members.map(m => m.memberName), ['m1', 'm2', 'm3'])

  // When a fourth joins: it gets work within seconds, and what stays where it was is never revoked.
  const before = new Map([a, b, c].map(o => [o.name, new Set(o.running)]))
  const joinedAt = Date.now()
  const d = start('m4')
  await waitFor(() => d.running.size > 0, { timeoutMs: 10_000, message: 'the fourth member got work' })
  assert.ok(Date.now() - joinedAt < 10_000)
  await waitFor(() => balanced([a, b, c, d]), { timeoutMs: 20_000, message: 'four members balanced' })
  for (const o of [a, b, c]) {
    const stayed = [...before.get(o.name)!].filter(k => o.running.has(k))
    assert.ok(stayed.length >= 3, `${o.name} kept ${stayed.length}`)
    assert.deepEqual(stayed.filter(k => revokedBy(ledger, o.name, joinedAt).has(k)), [], `${o.name} had items revoked that stayed`)
  }

  // When one stops cleanly: its items are revoked by it before anyone else is given them.
  const bItems = [...b.running]
  const stoppedAt = Date.now()
  await members.get('m2')!.stop()
  members.delete('m2')
  ledger.owners.delete('m2')
  await waitFor(() => balanced([a, c, d]), { timeoutMs: 20_000, message: 'three members balanced after a stop' })
  const revokedAt = ledger.events.find(e => e.member === 'm2' && e.kind === 'revoke' && e.at >= stoppedAt)!.at
  for (const e of ledger.events.filter(e => e.kind === 'assign' && e.at >= stoppedAt && e.keys.some(k => bItems.includes(k)))) {
    assert.ok(e.at >= revokedAt, `${e.member} got m2's items before m2 revoked them`)
  }

  // When one freezes (no heartbeat, no join): its lease runs out before the others get its items, they get
  // them within the session timeout plus a few seconds, and the leader fenced its transactional id.
  const frozen = members.get('m3')!
  const cItems = [...c.running]
  const frozenAt = Date.now()
  frozen.freezeForTest()
  await waitFor(() => cItems.every(k => a.running.has(k) || d.running.has(k)), { timeoutMs: SESSION_MS + 15_000, message: 'the frozen member\'s items taken over' })
  assert.ok(Date.now() - frozenAt < SESSION_MS + 8000, `took over after ${Date.now() - frozenAt} ms`)
  assert.ok(!frozen.leaseValid())
  assert.ok(ledger.fenced.includes(`${groupId}-m3`), `fenced ${ledger.fenced.join(', ')}`)
  await waitFor(() => balanced([a, d]), { timeoutMs: 10_000, message: 'two members balanced' })

  // When it resumes: it loses its old work (never with a valid lease) and joins again as a new member.
  const oldMemberId = frozen.status().memberId
  frozen.thawForTest()
  await waitFor(() => ledger.events.some(e => e.member === 'm3' && e.kind === 'lose'), { timeoutMs: 10_000, message: 'the thawed member lost its work' })
  await waitFor(() => balanced([a, c, d]), { timeoutMs: 20_000, message: 'three members balanced after the thaw' })
  assert.notEqual(frozen.status().memberId, oldMemberId)
  assert.deepEqual(ledger.violations, [])
})

test('a member whose lease ran out while the coordinator still holds it leaves with its old member id (the coordinator accepts it) before joining again as a new member', { timeout: 60_000 }, async t => {
  const groupId = uniqueName('group-leave-lost')
  const ledger = new Ledger()
  const logger = memoryLogger('info')
  const [a, b] = [startMember(groupId, 'm1', ledger, silentLogger(), false, WIDE_MARGIN), startMember(groupId, 'm2', ledger, logger.log, false, WIDE_MARGIN)]
  t.after(async () => { await Promise.allSettled([a.member.stop(), b.member.stop()]) })
  await waitFor(() => balanced([a.owner, b.owner]), { timeoutMs: 20_000, message: 'two members balanced' })

  // Given m2 frozen just until its lease runs out: the lease ends at least heartbeat.interval.ms before the
  // coordinator may evict it, so the coordinator still holds its member id when it thaws
  const oldMemberId = b.member.status().memberId
  b.member.freezeForTest()
  await waitFor(() => !b.member.leaseValid(), { timeoutMs: WIDE_MARGIN.sessionTimeoutMs, intervalMs: 20, message: 'm2\'s lease ran out' })
  b.member.thawForTest()
  const thawedAt = Date.now()

  // Then it leaves with the old id (the coordinator answered it as a member: not UNKNOWN_MEMBER_ID) and joins
  // again as a new member; the two are balanced again well within the old id's session timeout. (Here the old id
  // would have expired at most heartbeat.interval.ms later anyway; the leave matters most after an
  // ILLEGAL_GENERATION, when the old id is fully alive: group-member.test.ts.)
  await waitFor(() => balanced([a.owner, b.owner]).done && b.member.status().memberId !== oldMemberId, { timeoutMs: 20_000, message: 'two members balanced after the thaw' })
  const left = logger.lines.filter(l => l.msg.startsWith(`left group ${groupId} with the member id of the lost membership`))
  assert.deepEqual(left.map(l => l.memberId), [oldMemberId])
  assert.ok(Date.now() - thawedAt < WIDE_MARGIN.sessionTimeoutMs, `balanced ${Date.now() - thawedAt} ms after the thaw`)
  assert.deepEqual(ledger.violations, [])
})

test('at-least-once: a member whose lease ran out while the coordinator still holds it keeps its work, and goes on with it once the coordinator answers: no loss, no rejoin, no other owner meanwhile', { timeout: 60_000 }, async t => {
  const groupId = uniqueName('group-hold')
  const ledger = new Ledger()
  const checker = setInterval(() => ledger.check(), 20)
  const logger = memoryLogger('info')
  const [a, b] = [startMember(groupId, 'm1', ledger, silentLogger(), true, WIDE_MARGIN), startMember(groupId, 'm2', ledger, logger.log, true, WIDE_MARGIN)]
  t.after(async () => {
    clearInterval(checker)
    await Promise.allSettled([a.member.stop(), b.member.stop()])
  })
  await waitFor(() => balanced([a.owner, b.owner]), { timeoutMs: 20_000, message: 'two members balanced' })
  const othersOwned = [...a.owner.running].sort()

  // Given m2 frozen just until its lease runs out (the lease ends heartbeat.interval.ms before the coordinator may
  // evict it), then thawed
  const { memberId, generation } = b.member.status()
  const owned = [...b.owner.running].sort()
  b.member.freezeForTest()
  await waitFor(() => !b.member.leaseValid(), { timeoutMs: WIDE_MARGIN.sessionTimeoutMs, intervalMs: 20, message: 'm2\'s lease ran out' })
  b.member.thawForTest()

  // Then it holds its work until the coordinator answers it as a member of the same generation: the lease holds
  // again, with the same member id, generation and work, and nothing was lost or taken over meanwhile
  await waitFor(() => b.member.leaseValid(), { timeoutMs: WIDE_MARGIN.sessionTimeoutMs, intervalMs: 20, message: 'm2\'s lease holding again' })
  assert.deepEqual({ memberId: b.member.status().memberId, generation: b.member.status().generation }, { memberId, generation })
  assert.deepEqual([...b.owner.running].sort(), owned)
  assert.deepEqual([...a.owner.running].sort(), othersOwned, 'the other member was given nothing of the held work')
  assert.deepEqual(ledger.events.filter(e => e.kind === 'lose'), [])
  assert.equal(logger.lines.filter(l => l.msg.startsWith(`the lease of this member in group ${groupId} on cluster target ran out`)).length, 1)
  assert.ok(logger.lines.some(l => l.msg.startsWith(`the coordinator of group ${groupId} on cluster target still counts this member in generation ${generation}`)))
  assert.deepEqual(ledger.violations, [])
})

/** A member whose only outcome of interest is its fatal error. */
async function fatalOf (groupId: string, sessionTimeoutMs: number): Promise<{ code: string, message: string }> {
  const ledger = new Ledger()
  const owner = new FakeOwner('lonely', ledger)
  let member: GroupMember | undefined
  try {
    return await new Promise((resolve, reject) => {
      member = new GroupMember({
        props: { 'bootstrap.servers': getCluster('target').bootstrap },
        clientId: `kmirror|${groupId}|lonely`,
        cluster: { label: 'cluster target', alias: 'target' },
        groupId,
        memberName: 'lonely',
        sessionTimeoutMs,
        heartbeatIntervalMs: Math.min(HEARTBEAT_MS, sessionTimeoutMs / 2),
        rebalanceTimeoutMs: 10_000,
        transactionalId: null,
        log: silentLogger(),
        owner,
        onFatal: err => resolve({ code: err.code, message: err.message })
      })
      member.start()
      setTimeout(() => reject(new Error('no fatal error within 20 s')), 20_000).unref()
    })
  } finally {
    await member?.stop()
  }
}

test('a group id used by a program of another protocol type fails with GROUP_CONFLICT naming the group, the cluster and the key to set', { timeout: 30_000 }, async t => {
  const groupId = uniqueName('group-conflict')
  // Another program's member (protocol type "connect", as a Connect worker group) holds the group.
  const other = new GroupCoordinator({ 'bootstrap.servers': getCluster('target').bootstrap }, 'connect-worker', { label: 'cluster target', alias: 'target' }, groupId, 10_000)
  t.after(() => other.close())
  const join = { groupId, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'connect', protocols: [{ name: 'sessioned', metadata: Buffer.alloc(0) }], reason: null }
  let answer = await other.send(JoinGroupApi, join, 'join')
  if (answer.errorCode === 79) answer = await other.send(JoinGroupApi, { ...join, memberId: answer.memberId }, 'join')
  assert.equal(answer.errorCode, 0)

  const failure = await fatalOf(groupId, SESSION_MS)
  assert.equal(failure.code, 'KMIRROR_ERR_GROUP_CONFLICT')
  assert.match(failure.message, new RegExp(`group ${groupId} on cluster target belongs to another program .*set the flow's group id \\(\`A->B.group.id\`\\)`))
})

test('a session timeout below the brokers\' group.min.session.timeout.ms fails with GROUP_MEMBERSHIP naming the bounds', { timeout: 30_000 }, async () => {
  const failure = await fatalOf(uniqueName('group-session'), 1000)
  assert.equal(failure.code, 'KMIRROR_ERR_GROUP_MEMBERSHIP')
  assert.match(failure.message, /JoinGroup of group group-session-.* on cluster target: Kafka error INVALID_SESSION_TIMEOUT; .*group.min.session.timeout.ms and group.max.session.timeout.ms/)
})
