/**
 * Runs a set of flows in one process (MM2's dedicated mode). Start is all-or-nothing: if one flow cannot
 * start, the ones already started are stopped cleanly and the error is raised.
 * Heartbeats run for every pair MM2 would run a herder for (`selectHeartbeatFlows`), disabled flows included;
 * they start once the flows have started and never fail the start or stop a flow.
 */
import type { FlowConfig } from '../config/types.ts'
import { ErrorCodes, isKmirrorError, KmirrorError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import { Flow, type FlowStatus } from './flow.ts'
import { Heartbeats } from './heartbeats.ts'

export class MirrorMaker {
  readonly #flows: Flow[]
  readonly #log: Logger
  readonly #heartbeats: Heartbeats

  /** `heartbeatPairs`: the pairs that get heartbeats (`selectHeartbeatFlows`); by default the flows themselves. */
  constructor (flows: readonly FlowConfig[], log: Logger, metrics: Metrics = noMetrics, heartbeatPairs: readonly FlowConfig[] = flows) {
    this.#log = log
    this.#flows = flows.map(f => new Flow(f, log, metrics))
    this.#heartbeats = new Heartbeats(heartbeatPairs, log, metrics)
  }

  async start (): Promise<void> {
    const started: Flow[] = []
    for (const flow of this.#flows) {
      try {
        await flow.start()
        started.push(flow)
      } catch (err) {
        await Promise.allSettled([flow.stop(), ...started.map(f => f.stop())])
        // The cause's code is kept: an incompatible broker or a refused ACL is not an unreachable cluster.
        const code = isKmirrorError(err) ? err.code : ErrorCodes.CLUSTER_UNREACHABLE
        throw new KmirrorError(code, `flow ${flow.config.name} could not start: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
      }
    }
    this.#heartbeats.start()
    this.#log.info({ flows: this.#flows.map(f => f.config.name) }, 'kmirror started')
  }

  /** Resolves when every flow stopped; rejects as soon as one flow's data path fails. */
  get done (): Promise<void> {
    return Promise.all(this.#flows.map(f => f.done)).then(() => undefined)
  }

  async stop (): Promise<void> {
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
