/**
 * Runs a set of flows in one process (MM2's dedicated mode). The flows start together (start-together.ts), and
 * start is all-or-nothing: if one flow cannot start, the others' starts end and every flow is stopped cleanly,
 * then that flow's error is raised. A flow whose start fails on a
 * transient fault is started again (fresh clients) with back-off, for up to its `start.retry.timeout.ms`
 * (start-retry.ts). `stop()` during start ends the start: no further attempt, every client opened is closed.
 * Heartbeats run for every pair MM2 would run a herder for (`selectHeartbeatFlows`), disabled flows included;
 * they never fail the start or stop a flow.
 *
 * Several instances on one configuration share the work: every flow (and every heartbeat-only pair) is a member
 * of its group on its target cluster (flow-membership.ts) and runs what the group assigns it; a flow has started
 * once its first assignment is applied, so "kmirror started" means this instance copies its share. A membership
 * failure rejoining cannot fix fails the start (exit 3) or, later, the run (exit 4), as a data-path failure does.
 * Stopping revokes every flow's work (progress stored) and leaves its group before the flow's clients close.
 */
import type { FlowConfig } from '../config/types.ts'
import { ErrorCodes, isInternalError, isKmirrorError, KmirrorError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import type { FlowStatus } from './flow.ts'
import { groupedFlow, heartbeatPairMembership, type FlowMembership, type GroupedFlow } from './flow-membership.ts'
import { Ownerships } from './flow-work.ts'
import { evaluateHealth, type HealthReport } from './health.ts'
import { Heartbeats } from './heartbeats.ts'
import { watchFencedBrokers } from '../kafka/fenced-brokers.ts'
import { watchQuotaThrottles } from '../kafka/quota-throttles.ts'
import { reportBrokerTroubles } from './broker-reports.ts'
import { BrokerTroubles, type BrokerTrouble } from './broker-troubles.ts'
import { refuseWhileMm2Copies } from './mm2-worker-check.ts'
import { startWithRetries } from './start-retry.ts'
import { startTogether } from './start-together.ts'

/**
 * Why flow NAME could not start, as `start()` raises it. The cause's code is kept: an incompatible broker or a
 * refused ACL is not an unreachable cluster, and a bug (a TypeError) is KMIRROR_ERR_INTERNAL, reported as one.
 */
export function startFailure (name: string, error: unknown): KmirrorError {
  const code = isInternalError(error) ? ErrorCodes.INTERNAL : isKmirrorError(error) ? error.code : ErrorCodes.CLUSTER_UNREACHABLE
  return new KmirrorError(code, `flow ${name} could not start: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
}

/** What a stop with a deadline keeps, once the members left their groups, for the flows to close their clients. */
const CLOSE_RESERVE_MS = 1000

/** Raised by `start()` when `stop()` was called before every flow had started. */
export class StoppedDuringStart extends Error {
  constructor () {
    super('stopped before every flow had started')
    this.name = 'StoppedDuringStart'
  }
}

export class MirrorMaker {
  readonly #flows: GroupedFlow[]
  readonly #log: Logger
  readonly #metrics: Metrics
  readonly #heartbeats: Heartbeats
  /** Heartbeat-only pairs, each in its own group; pairs not in a group run their heartbeats here at once. */
  readonly #pairs: FlowMembership[]
  readonly #ungroupedPairs: ReadonlySet<string>
  readonly #stopping = new AbortController()
  readonly #createdAt = Date.now()
  /** Logs, counts and notes the brokers that trouble the process (broker-reports.ts). */
  readonly #stopReportingBrokers: () => void
  /** Cuts the connections to a broker the cluster fenced while requests wait on it (fenced-brokers.ts). */
  readonly #stopWatchingFences: () => void
  readonly #stopWatchingThrottles: () => void
  /** The brokers that troubled this process lately, for /status. */
  readonly #troubles = new BrokerTroubles()
  #started = false

  /** `heartbeatPairs`: the pairs that get heartbeats (`selectHeartbeatFlows`); by default the flows themselves. */
  constructor (flows: readonly FlowConfig[], log: Logger, metrics: Metrics = noMetrics, heartbeatPairs: readonly FlowConfig[] = flows) {
    this.#log = log
    this.#metrics = metrics
    this.#heartbeats = new Heartbeats(heartbeatPairs, log, metrics)
    this.#flows = flows.map(f => groupedFlow(f, log, metrics, this.#heartbeats))
    const flowNames = new Set(flows.map(f => f.name))
    const pairs = heartbeatPairs.filter(p => !flowNames.has(p.name)).map(p => ({ name: p.name, membership: heartbeatPairMembership(p, log, this.#heartbeats) }))
    this.#pairs = pairs.flatMap(p => p.membership === null ? [] : [p.membership])
    this.#ungroupedPairs = new Set(pairs.filter(p => p.membership === null).map(p => p.name))
    for (const pair of this.#pairs) pair.failed.catch((err: unknown) => log.error({ err }, 'heartbeats of a pair stopped: its group membership failed'))
    this.#stopReportingBrokers = reportBrokerTroubles(log, metrics, this.#troubles)
    this.#stopWatchingFences = watchFencedBrokers()
    this.#stopWatchingThrottles = watchQuotaThrottles()
  }

  async start (): Promise<void> {
    const stopping = this.#stopping.signal
    const failure = await startTogether(this.#flows.length, (i, signal) => this.#startFlow(i, signal), stopping)
    if (failure !== undefined || stopping.aborted) {
      await Promise.allSettled(this.#flows.map(f => stopFlow(f)))
      if (stopping.aborted || failure === undefined) throw new StoppedDuringStart()
      const { index, error } = failure
      throw startFailure(this.#flows[index]!.flow.config.name, error)
    }
    // Every pair in a group runs its heartbeats where its group assigns them.
    this.#heartbeats.start(new Set(this.#heartbeats.pairNames().filter(name => !this.#ungroupedPairs.has(name))))
    for (const pair of this.#pairs) pair.start()
    this.#started = true
    // `node`: the Node release and the flags it was started with (src/cli/node-flags.ts), which size its heap.
    const node = [process.version, ...process.execArgv].join(' ')
    this.#log.info({ flows: this.#flows.map(f => f.flow.config.name), owned: Object.fromEntries(this.#flows.map(f => [f.flow.config.name, f.flow.owned().partitions.length])), node }, 'kmirror started')
  }

  /** Starts flow I and waits for its first assignment, with retries; SIGNAL ends it (stop, or another flow failed). */
  async #startFlow (i: number, signal: AbortSignal): Promise<void> {
    const config = this.#flows[i]!.flow.config
    await startWithRetries(async () => {
      const { flow, membership } = this.#flows[i]!
      await flow.start({ owned: Ownerships.ASSIGNED })
      // Before it owns anything (a failed start of its clients reports first, as before): a live MM2 on this
      // flow would copy every record a second time.
      await refuseWhileMm2Copies(config, this.#log.child({ flow: config.name }))
      membership.start()
      await membership.firstAssignment(signal)
    }, {
      timeoutMs: config.startRetryTimeoutMs,
      log: this.#log.child({ flow: config.name }),
      signal,
      // A failed attempt's clients are closed; the next attempt is a fresh flow.
      cleanUp: async () => {
        await stopFlow(this.#flows[i]!).catch(() => undefined)
        this.#flows[i] = groupedFlow(config, this.#log, this.#metrics, this.#heartbeats)
      }
    })
  }

  /** Readiness (every flow started) and liveness (no flow stalled), for `/readyz` and `/healthz`. */
  health (now: number = Date.now()): HealthReport {
    return evaluateHealth(this.#flows.map(f => ({ ...f.flow.progress(), lease: f.membership.leaseState(now) })), { ready: this.#started, since: this.#createdAt, now })
  }

  /** Resolves when every flow stopped; rejects as soon as one flow's data path or group membership fails. */
  get done (): Promise<void> {
    return Promise.all(this.#flows.map(f => Promise.race([f.flow.done, f.membership.failed]))).then(() => undefined)
  }

  /**
   * Stops every flow; during `start()`, also ends the start (no further attempt, clients closed). With a DEADLINE
   * (epoch ms, the process's own: it exits then), every member has left its group and MM2's queued offset syncs are
   * given up CLOSE_RESERVE_MS before it, so the clients can still close.
   */
  async stop (deadline?: number): Promise<void> {
    this.#stopping.abort(new StoppedDuringStart())
    const closeBy = deadline === undefined ? undefined : deadline - CLOSE_RESERVE_MS
    const pairs = Promise.allSettled(this.#pairs.map(p => p.stop(closeBy))).then(async () => { await this.#heartbeats.stop() })
    // Silences are still reported during the hand-over, when a wedged broker slows it most.
    const results = await Promise.allSettled([...this.#flows.map(f => stopFlow(f, closeBy)), pairs])
    this.#stopReportingBrokers()
    this.#stopWatchingFences()
    this.#stopWatchingThrottles()
    const failed = results.find(r => r.status === 'rejected')
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
  }

  /** The brokers that were silent, fenced, slow or out of reach lately (broker-troubles.ts), newest first. */
  brokers (): BrokerTrouble[] {
    return this.#troubles.list()
  }

  status (): FlowStatus[] {
    return this.#flows.map(({ flow }) => {
      const status = flow.status()
      return { ...status, jobs: [...status.jobs, ...this.#heartbeats.jobs(status.name)] }
    })
  }
}

/**
 * Hands the flow's work over (progress stored, group left), then stops the flow and closes its clients; by CLOSE_BY
 * (epoch ms), the group is left and MM2's queued offset syncs are given up.
 */
async function stopFlow ({ flow, membership }: GroupedFlow, closeBy?: number): Promise<void> {
  // (the hand-over waits for the assignment under way: one waiting on an open transaction must not outlast the stop)
  flow.endWaitingReads()
  try {
    await membership.stop(closeBy)
  } finally {
    await flow.stop(closeBy)
  }
}
