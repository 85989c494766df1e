/**
 * Runs a set of flows in one process (MM2's dedicated mode). Start is all-or-nothing: if one flow cannot
 * start, the ones already started are stopped cleanly and the error is raised. A flow whose start fails on a
 * transient fault is started again (fresh clients) with back-off, for up to its `start.retry.timeout.ms`
 * (start-retry.ts). `stop()` during start ends the start: no further attempt, every client opened is closed.
 * Heartbeats run for every pair MM2 would run a herder for (`selectHeartbeatFlows`), disabled flows included;
 * they start once the flows have started and never fail the start or stop a flow.
 */
import type { FlowConfig } from '../config/types.ts'
import { ErrorCodes, isKmirrorError, KmirrorError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import { Flow, type FlowStatus } from './flow.ts'
import { evaluateHealth, type HealthReport } from './health.ts'
import { Heartbeats } from './heartbeats.ts'
import { startWithRetries } from './start-retry.ts'

/** Raised by `start()` when `stop()` was called before every flow had started. */
export class StoppedDuringStart extends Error {
  constructor () {
    super('stopped before every flow had started')
    this.name = 'StoppedDuringStart'
  }
}

export class MirrorMaker {
  readonly #flows: Flow[]
  readonly #log: Logger
  readonly #metrics: Metrics
  readonly #heartbeats: Heartbeats
  readonly #stopping = new AbortController()
  readonly #createdAt = Date.now()
  #started = false

  /** `heartbeatPairs`: the pairs that get heartbeats (`selectHeartbeatFlows`); by default the flows themselves. */
  constructor (flows: readonly FlowConfig[], log: Logger, metrics: Metrics = noMetrics, heartbeatPairs: readonly FlowConfig[] = flows) {
    this.#log = log
    this.#metrics = metrics
    this.#flows = flows.map(f => new Flow(f, log, metrics))
    this.#heartbeats = new Heartbeats(heartbeatPairs, log, metrics)
  }

  async start (): Promise<void> {
    const signal = this.#stopping.signal
    for (let i = 0; i < this.#flows.length; i++) {
      const config = this.#flows[i]!.config
      try {
        await startWithRetries(() => this.#flows[i]!.start(), {
          timeoutMs: config.startRetryTimeoutMs,
          log: this.#log.child({ flow: config.name }),
          signal,
          // A failed attempt's clients are closed; the next attempt is a fresh flow.
          cleanUp: async () => {
            await this.#flows[i]!.stop().catch(() => undefined)
            this.#flows[i] = new Flow(config, this.#log, this.#metrics)
          }
        })
      } catch (err) {
        await Promise.allSettled(this.#flows.slice(0, i).map(f => f.stop()))
        if (signal.aborted) throw new StoppedDuringStart()
        // The cause's code is kept: an incompatible broker or a refused ACL is not an unreachable cluster.
        const code = isKmirrorError(err) ? err.code : ErrorCodes.CLUSTER_UNREACHABLE
        throw new KmirrorError(code, `flow ${config.name} could not start: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
      }
      if (signal.aborted) {
        await Promise.allSettled(this.#flows.slice(0, i + 1).map(f => f.stop()))
        throw new StoppedDuringStart()
      }
    }
    this.#heartbeats.start()
    this.#started = true
    this.#log.info({ flows: this.#flows.map(f => f.config.name) }, 'kmirror started')
  }

  /** Readiness (every flow started) and liveness (no flow stalled), for `/readyz` and `/healthz`. */
  health (now: number = Date.now()): HealthReport {
    return evaluateHealth(this.#flows.map(f => f.progress()), { ready: this.#started, since: this.#createdAt, now })
  }

  /** Resolves when every flow stopped; rejects as soon as one flow's data path fails. */
  get done (): Promise<void> {
    return Promise.all(this.#flows.map(f => f.done)).then(() => undefined)
  }

  /** Stops every flow; during `start()`, also ends the start (no further attempt, clients closed). */
  async stop (): Promise<void> {
    this.#stopping.abort(new StoppedDuringStart())
    const results = await Promise.allSettled([...this.#flows.map(f => f.stop()), this.#heartbeats.stop()])
    const failed = results.find(r => r.status === 'rejected')
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
  }

  status (): FlowStatus[] {
    return this.#flows.map(f => {
      const status = f.status()
      return { ...status, jobs: [...status.jobs, ...this.#heartbeats.jobs(status.name)] }
    })
  }
}
