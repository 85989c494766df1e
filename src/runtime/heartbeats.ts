/**
 * The heartbeat side of MM2's herders: one HeartbeatEmitter job per pair, each on its own scheduler (so its
 * runs and failures are counted under the pair's name), sharing one admin client and one producer per
 * target cluster.
 *
 * Invariants:
 * - A failing heartbeat job (target unreachable, topic refused) is logged, counted and retried; it never
 *   stops a flow and never fails the start: heartbeats are monitoring, not data.
 * - Stopping never waits long for a heartbeat stuck on an unreachable cluster: the clients are closed after
 *   a short grace period, which ends any request in flight.
 * - A pair's job stopped with a reason (its group membership ended, or the group revoked it) has its run under way
 *   aborted (scheduler.ts): that run writes no heartbeat after it, and its end is no failure.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { ClusterClientConfig, FlowConfig } from '../config/types.ts'
import { HEARTBEATS_JOB, HeartbeatEmitter, type HeartbeatAdmin, type HeartbeatWriter } from '../heartbeat/heartbeat-emitter.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import { Scheduler, type JobStatus } from './scheduler.ts'

/** How long `stop` lets a heartbeat in flight finish before closing its clients. */
const STOP_GRACE_MS = 1000

/** What the heartbeats of a target cluster are written with. */
export interface TargetClients {
  readonly admin: HeartbeatAdmin
  readonly writer: HeartbeatWriter
  close (): Promise<void>
}

/** Opens the clients of a target cluster (unit tests give in-memory ones). */
export type OpenTargetClients = (target: ClusterClientConfig) => TargetClients

/** One pair's heartbeat job, started and stopped where a flow's group assigns it. */
export interface PairJob {
  start (): void
  /** ABORT (why): the run under way writes nothing more (a membership that ended, a revoke); else it may finish. */
  stop (abort?: string): Promise<void>
}

export class Heartbeats {
  readonly #pairs: readonly FlowConfig[]
  readonly #log: Logger
  readonly #metrics: Metrics
  readonly #schedulers = new Map<string, Scheduler>()
  readonly #clients = new Map<string, TargetClients>()
  readonly #openTarget: OpenTargetClients

  constructor (pairs: readonly FlowConfig[], log: Logger, metrics: Metrics, openTarget: OpenTargetClients = openTargetClients) {
    this.#pairs = pairs
    this.#log = log
    this.#metrics = metrics
    this.#openTarget = openTarget
  }

  /**
   * Schedules every pair's job but those of `except` (pairs whose heartbeat job a flow's group assigns: see
   * `pairJob`); the first heartbeat of each is written at once. A pair whose target cannot get a client (no
   * bootstrap.servers: validation only checks enabled flows) is logged and left out.
   */
  start (except: ReadonlySet<string> = new Set()): void {
    for (const pair of this.#pairs) if (!except.has(pair.name)) this.#startPair(pair)
    if (this.#schedulers.size > 0) this.#log.info({ pairs: [...this.#schedulers.keys()] }, 'heartbeats started')
  }

  /**
   * The heartbeat job of the pair `name` as one unit of a flow's work: `start` schedules it (first heartbeat at
   * once), `stop` ends it and waits for a run in progress (at most a grace period), aborting it first when given
   * a reason. Null for a pair not listed.
   * GATE (the group's lease gate) puts its runs off while it gives a reason: a member holding its work past a lease
   * that ran out writes no heartbeat either.
   */
  pairJob (name: string, gate?: () => string | null): PairJob | null {
    const pair = this.#pairs.find(p => p.name === name)
    if (pair === undefined) return null
    return {
      start: () => { if (!this.#schedulers.has(name)) this.#startPair(pair, gate) },
      stop: async (abort?: string) => {
        const scheduler = this.#schedulers.get(name)
        this.#schedulers.delete(name)
        if (scheduler === undefined) return
        const stopped = Promise.all([abort === undefined ? undefined : scheduler.cancel(HEARTBEATS_JOB, abort), scheduler.stop()])
        await Promise.race([stopped, delay(STOP_GRACE_MS, undefined, { ref: false })])
      }
    }
  }

  /** The names of every pair listed. */
  pairNames (): string[] {
    return this.#pairs.map(p => p.name)
  }

  #startPair (pair: FlowConfig, gate?: () => string | null): void {
    const log = this.#log.child({ flow: pair.name })
    let clients: TargetClients
    try {
      clients = this.#clientsFor(pair.target)
    } catch (err) {
      log.warn({ err }, 'no heartbeats for this pair: its target cluster has no usable client settings')
      return
    }
    // Every second while a target is down: its first failure warns, repeats of it go to debug, with no reminder.
    const scheduler = new Scheduler(log, {
      repeatWarningMs: Infinity,
      ...(gate === undefined ? {} : { gate }),
      onRun: (job, ok) => {
        this.#metrics.inc('jobRuns', { flow: pair.name, job_name: job })
        if (!ok) this.#metrics.inc('jobFailures', { flow: pair.name, job_name: job })
      }
    })
    const job = new HeartbeatEmitter({ pair, ...clients, log, metrics: this.#metrics }).job()
    scheduler.every(job.name, job.intervalMs, job.run, job.firstDelayMs)
    this.#schedulers.set(pair.name, scheduler)
  }

  /** One admin client and one producer per target cluster (and per distinct client settings of it). */
  #clientsFor (target: ClusterClientConfig): TargetClients {
    const key = JSON.stringify([target.alias, target.admin, target.producer])
    let clients = this.#clients.get(key)
    if (clients === undefined) {
      clients = this.#openTarget(target)
      this.#clients.set(key, clients)
    }
    return clients
  }

  async stop (): Promise<void> {
    const stopped = Promise.all([...this.#schedulers.values()].map(s => s.stop()))
    await Promise.race([stopped, delay(STOP_GRACE_MS, undefined, { ref: false })])
    await Promise.all([...this.#clients.values()].map(c => c.close()))
    // Closing ends a request in flight, and a failed run after stop is not rescheduled; still, never hang here.
    await Promise.race([stopped, delay(STOP_GRACE_MS, undefined, { ref: false })])
  }

  /** The heartbeat job of the pair `name`, if it has one. */
  jobs (name: string): JobStatus[] {
    return this.#schedulers.get(name)?.status() ?? []
  }
}

/** The Kafka clients of a target cluster: its admin client and an idempotent producer. */
function openTargetClients (target: ClusterClientConfig): TargetClients {
  const opened = new ClusterClients(target, `heartbeats->${target.alias}`, 'target')
  return { admin: opened.admin, writer: opened.writer('producer', { idempotent: true, maxChunkBytes: 64 * 1024 }), close: async () => { await opened.close() } }
}
