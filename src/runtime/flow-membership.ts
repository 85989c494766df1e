/**
 * The membership of one flow (or one heartbeat-only pair) in its group on the target cluster: the GroupMember
 * that runs the flow's work as its group assigns it, the lease gate the writers ask before each produce request,
 * and what `/status` shows of the group.
 *
 * Invariants:
 * - `firstAssignment` resolves once the first assignment of this instance is applied (its work started, possibly
 *   none), so "kmirror started" means "copying what this instance owns"; a membership failure rejoining cannot fix
 *   (another program's group, a refused session timeout) rejects it, and after the start rejects `failed`.
 * - `fence` answers null only while the member's lease holds: a member past its lease never sends a produce
 *   request for data or internal records (ARCHITECTURE invariant 26). A stopping member's heartbeats keep its lease
 *   through the hand-over; from its LeaveGroup on, nothing is written.
 * - `stop` revokes everything (progress stored), leaves the group by its deadline and closes its connections: the
 *   flow's clients close only after it.
 */
import { hostname } from 'node:os'
import type { PreviousMember } from '../cluster/sticky-assignor.ts'
import type { WorkOwner } from '../cluster/work-owner.ts'
import type { WorkItem } from '../cluster/work.ts'
import { transactionTimeoutMs } from '../config/transaction-timeout.ts'
import type { FlowConfig } from '../config/types.ts'
import type { KmirrorError } from '../errors.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { clusterContext } from '../kafka/connection-hints.ts'
import { defaultMemberName, GroupMember } from '../kafka/group-member.ts'
import { logTransactionWait } from '../kafka/transaction-waits.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import { Flow } from './flow.ts'
import { JOB_REVOKED, MEMBERSHIP_ENDED } from './flow-work.ts'
import type { MembershipStatus } from './flow-status.ts'
import type { LeaseState } from './health.ts'
import type { Heartbeats, PairJob } from './heartbeats.ts'
import { JobNames } from './job-registry.ts'
import { openTransactionsOfGone } from './orphan-transactions.ts'

/** This process's member name in every group it joins: `host:pid:startTime`. */
export const PROCESS_MEMBER_NAME = defaultMemberName(hostname(), process.pid, Date.now())

/** How often `firstAssignment` looks whether the first assignment is applied. */
const POLL_MS = 25

export interface FlowMembershipOptions {
  /** The flow, or the heartbeat-only pair: its target cluster, group id and timeouts. */
  readonly config: FlowConfig
  readonly owner: WorkOwner
  readonly log: Logger
  readonly memberName?: string
  /** Exactly-once mode: `<group id>-<member name>`; null otherwise. */
  readonly transactionalId?: string | null
  readonly fenceTransactionalIds?: (ids: readonly string[]) => Promise<void>
  /** Exactly-once: members gone with transactions still open, listed once before the first join (orphan-transactions.ts). */
  readonly openTransactionsOfGone?: () => Promise<readonly PreviousMember[]>
}

export class FlowMembership {
  readonly member: GroupMember
  readonly #config: FlowConfig
  readonly #memberName: string
  /** Owner calls (listWork, assign, revoke) under way: the first assignment is applied when none is. */
  #calls = 0
  #fatal: KmirrorError | null = null
  readonly failed: Promise<never>
  #reject: (err: KmirrorError) => void = () => {}

  constructor (options: FlowMembershipOptions) {
    const { config, log } = options
    this.#config = config
    this.#memberName = options.memberName ?? PROCESS_MEMBER_NAME
    this.failed = new Promise<never>((_resolve, reject) => { this.#reject = reject })
    this.failed.catch(() => undefined)
    const consumer = config.target.consumer
    this.member = new GroupMember({
      props: consumer,
      clientId: `kmirror-${config.name}-group`,
      cluster: clusterContext(config.target.alias, consumer),
      groupId: config.groupId,
      memberName: this.#memberName,
      sessionTimeoutMs: config.sessionTimeoutMs,
      heartbeatIntervalMs: config.heartbeatIntervalMs,
      rebalanceTimeoutMs: config.rebalanceTimeoutMs,
      transactionalId: options.transactionalId ?? null,
      holdPastLease: (options.transactionalId ?? null) === null,
      log: log.child({ flow: config.name }),
      owner: this.#counted(options.owner),
      ...(options.fenceTransactionalIds === undefined ? {} : { fenceTransactionalIds: options.fenceTransactionalIds }),
      ...(options.openTransactionsOfGone === undefined ? {} : { openTransactionsOfGone: options.openTransactionsOfGone }),
      onFatal: err => {
        this.#fatal = err
        this.#reject(err)
      }
    })
  }

  start (): void {
    this.member.start()
  }

  /** Resolves when the first assignment is applied (see the invariants); rejects on a fatal membership failure. */
  async firstAssignment (signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.#fatal !== null) throw this.#fatal
      const status = this.member.status()
      if (status.state === 'stopped' || signal?.aborted === true) return
      if (status.generation >= 0 && status.state === 'stable' && this.#calls === 0) return
      await new Promise(resolve => setTimeout(resolve, POLL_MS))
    }
  }

  /** The lease gate of the writers: null while the lease holds, else why this instance must not write. */
  readonly fence = (): string | null => {
    if (this.member.leaseValid(Date.now())) return null
    return `the lease of member ${this.#memberName} in group ${this.#config.groupId} on cluster ${this.#config.target.alias} is not valid (no heartbeat answered within session.timeout.ms - heartbeat.interval.ms, or not a member now): another instance may own this work, so nothing is written until the coordinator answers`
  }

  /** The group as this instance last saw it, for `/status`. */
  status (): MembershipStatus {
    const status = this.member.status()
    const valid = this.fence() === null
    const invalidSince = valid ? null : this.member.leaseInvalidSince()
    return {
      group: status.groupId,
      generation: status.generation,
      leader: status.leaderName ?? '',
      self: status.memberName,
      members: this.member.members().map(m => ({ name: m.memberName, partitions: m.partitions, jobs: m.jobs })),
      lease: { valid, lastError: status.lastError, ...(invalidSince === null ? {} : { invalidSince: new Date(invalidSince).toISOString() }) }
    }
  }

  /** The lease for health (health.ts): the group, its cluster, and since when the lease has not held (null: it holds). */
  leaseState (now = Date.now()): LeaseState {
    return { group: this.#config.groupId, cluster: this.#config.target.alias, invalidSince: this.member.leaseInvalidSince(now) }
  }

  /**
   * Revokes everything (progress stored), leaves the group by LEAVE_BY (epoch ms; GroupMember's default when not
   * given), closes the group's connections.
   */
  async stop (leaveBy?: number): Promise<void> {
    await this.member.stop(leaveBy)
  }

  #counted (owner: WorkOwner): WorkOwner {
    const counted = async <T>(call: () => Promise<T>): Promise<T> => {
      this.#calls++
      try {
        return await call()
      } finally {
        this.#calls--
      }
    }
    return {
      listWork: async () => await counted(() => owner.listWork()),
      assign: async items => { await counted(() => owner.assign(items)) },
      revoke: async (items, by) => { await counted(() => owner.revoke(items, by)) },
      lose: () => { owner.lose() }
    }
  }
}

/**
 * The work of a heartbeat-only pair (a disabled flow MM2 still runs heartbeats for): its heartbeat job, run where
 * the pair's own group assigns it. A revoke or a loss aborts its run under way, as a flow's jobs (flow-work.ts).
 */
export class HeartbeatPairOwner implements WorkOwner {
  readonly #job: PairJob
  #running = false

  constructor (job: PairJob) {
    this.#job = job
  }

  async listWork (): Promise<WorkItem[]> {
    return [{ kind: 'job', job: JobNames.EMIT_HEARTBEATS }]
  }

  async assign (items: readonly WorkItem[]): Promise<void> {
    if (items.some(isHeartbeats) && !this.#running) {
      this.#running = true
      this.#job.start()
    }
  }

  async revoke (items: readonly WorkItem[]): Promise<void> {
    if (items.some(isHeartbeats) && this.#running) {
      this.#running = false
      await this.#job.stop(JOB_REVOKED)
    }
  }

  lose (): void {
    if (!this.#running) return
    this.#running = false
    void this.#job.stop(MEMBERSHIP_ENDED)
  }

  /** Heartbeats of the pair run here now. */
  get running (): boolean {
    return this.#running
  }
}

function isHeartbeats (item: WorkItem): boolean {
  return item.kind === 'job' && item.job === JobNames.EMIT_HEARTBEATS
}

/** A flow that runs what its group assigns, and its membership in that group. */
export interface GroupedFlow {
  readonly flow: Flow
  readonly membership: FlowMembership
}

/**
 * A flow wired to its group: the flow owns what the group assigns (`owned: 'assigned'` at start), tells the group
 * when the source partitions change, writes only under the lease, runs its pair's heartbeats as one of its jobs,
 * and shows its group in `/status`.
 */
export function groupedFlow (config: FlowConfig, log: Logger, metrics: Metrics, heartbeats: Heartbeats): GroupedFlow {
  let membership: FlowMembership | null = null
  const fence = fenceOf(() => membership)
  const job = heartbeats.pairJob(config.name, fence)
  // Exactly-once: each member writes under its own transactional id, which the leader fences when the member
  // leaves work behind (lost), before it hands that work out.
  const memberName = PROCESS_MEMBER_NAME
  const transactionalId = config.exactlyOnce ? `${config.groupId}-${memberName}` : null
  const flow = new Flow(config, log, metrics, {
    onWorkChanged: () => membership?.member.requestRebalance(),
    ...(job === null ? {} : { heartbeats: job }),
    ...(transactionalId === null ? {} : { transactionalId }),
    memberName,
    fence
  })
  membership = new FlowMembership({
    config,
    owner: flow,
    log,
    memberName,
    transactionalId,
    ...(transactionalId === null
      ? {}
      : {
          fenceTransactionalIds: async (ids: readonly string[]) => { await fenceOnTarget(config, ids, log) },
          openTransactionsOfGone: async () => await openTransactionsOfGone(config, log)
        })
  })
  const created = membership
  flow.setMembershipProvider(() => created.status())
  return { flow, membership }
}

/** Fences IDS on the flow's target (InitProducerId with each: epoch bumped, open transaction aborted). */
async function fenceOnTarget (config: FlowConfig, ids: readonly string[], log: Logger): Promise<void> {
  const target = new ClusterClients(config.target, `${config.name}|group-fencer`, 'target')
  try {
    // A lost member's transaction being completed holds its fencing, and the leader's assignment with it: told.
    await target.fenceTransactionalIds(ids, wait => { logTransactionWait(log, wait) },
      { transactionTimeoutMs: transactionTimeoutMs(config), transactionalIdPrefix: `${config.groupId}-` })
  } finally {
    await target.close()
  }
}

/**
 * The heartbeats of a pair no enabled flow runs (a disabled flow MM2 still emits heartbeats for), in the pair's own
 * group; null when its target has no bootstrap servers (then `Heartbeats.start` reports that it has none).
 */
export function heartbeatPairMembership (pair: FlowConfig, log: Logger, heartbeats: Heartbeats): FlowMembership | null {
  let membership: FlowMembership | null = null
  const job = heartbeats.pairJob(pair.name, fenceOf(() => membership))
  if (job === null || pair.target.bootstrapServers.length === 0) return null
  membership = new FlowMembership({ config: pair, owner: new HeartbeatPairOwner(job), log })
  return membership
}

/**
 * The lease gate of a membership made after the writers that ask it: closed until it exists, then the membership's
 * own answer. Its null means open and must pass through as null (a `??` fallback would close the gate for good).
 */
export function fenceOf (membership: () => Pick<FlowMembership, 'fence'> | null): () => string | null {
  return () => {
    const current = membership()
    return current === null ? 'not a member of the group yet' : current.fence()
  }
}
