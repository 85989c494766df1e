/**
 * kmirror's HTTP endpoint, for operators and their monitoring: `/metrics` (Prometheus), `/healthz`
 * (200 while every flow copies; 503 once one stopped on an error, while a partition fails or a flow's steps keep
 * failing: `healthOf`, or while a flow is stalled: runtime/health.ts), `/readyz` (503 until every flow has started)
 * `/status` (JSON: flows, partitions with position, high watermark, lag and failure, jobs, and the members of a flow's group when it has one;
 * its light views and `/topology`: status-routes.ts) and the web console at `/` (console-assets.ts). Read-only: it
 * reads runtime snapshots and changes nothing.
 */
import type { Server } from 'node:http'
import type { Server as HttpsServer } from 'node:https'
import type { Logger } from '../logger.ts'
import { createAccessServer, OPEN_ACCESS, type HttpAccess } from './http-access.ts'
import { processRedactor } from '../redactor.ts'
import type { PrometheusMetrics } from '../metrics/registry.ts'
import { updateCheckpointGauges, updateLagGauges, updatePartitionLagGauges, updateUpGauges } from './gauges.ts'
import { partitionLag } from '../replication/flow-replicator.ts'
import type { FlowStatus } from '../runtime/flow.ts'
import type { BrokerTrouble } from '../runtime/broker-troubles.ts'
import { describeStalled, type HealthReport } from '../runtime/health.ts'
import { serveConsoleAsset } from './console-assets.ts'
import { StatusRoutes } from './status-routes.ts'
import { DEGRADED_STEP_FAILURES, flowTotals, heldTooLong, type FlowContext } from './status-summary.ts'

export { updateLagGauges } from './gauges.ts'

export interface StatusSource {
  status: () => FlowStatus[]
  /** The error that stopped the replication, if one did. */
  failure: () => unknown
  /** Readiness and stalled flows; without it, ready and never stalled. */
  health?: () => HealthReport
  /** The topology to draw on the console (`/topology`); without it, /topology answers 404. */
  topology?: () => Promise<unknown>
  /** The brokers that troubled the process lately (silent, fenced, slow); without it, none. */
  brokers?: () => readonly BrokerTrouble[]
}

const ALWAYS_HEALTHY: HealthReport = Object.freeze({ ready: true, healthy: true, stalled: [] })

export interface HttpServerOptions {
  readonly host: string
  readonly port: number
  readonly metrics: PrometheusMetrics
  readonly source: StatusSource
  readonly log: Logger
  /** HTTPS and basic authentication (http-access.ts); plain HTTP, open, without it. */
  readonly access?: HttpAccess | undefined
  /** Whether a flow exports the per-partition lag (`metrics.partition.level.enabled`); every flow without it. */
  readonly partitionMetrics?: (flow: string) => boolean
}

export { DEGRADED_STEP_FAILURES }

export interface Health {
  readonly status: 200 | 503
  /** `ok`, `failed`, or `degraded: ` and what fails where. */
  readonly summary: string
}

/**
 * /healthz: 503 once replication stopped on an error (`failure`), and while any partition is set aside, a topic's
 * remote topic cannot be created or grown (the last topic refresh's problems: such a topic, or its new partitions,
 * is not copied), a flow's steps failed DEGRADED_STEP_FAILURES times in a row, or a read of its progress or history
 * has been held by an open transaction HELD_READ_DEGRADED_MS (the partitions it resumes are not copied until it
 * ends); 200 otherwise.
 */
export function healthOf (flows: readonly FlowStatus[], failure: unknown, now = Date.now()): Health {
  if (failure !== undefined) return { status: 503, summary: 'failed' }
  const problems: string[] = []
  for (const flow of flows) {
    const failing = flow.partitions.filter(p => p.failure !== null)
    if (failing.length > 0) {
      const errors = [...new Set(failing.map(p => p.failure!.error))].join(', ')
      problems.push(`${failing.length} partition(s) failing in ${flow.name} (${errors})`)
    }
    const topics = [...new Set((flow.remoteTopicProblems ?? []).map(p => p.topic))]
    if (topics.length > 0) problems.push(`${topics.length} topic(s) of ${flow.name} with a remote topic problem (${listed(topics)}; /status remoteTopicProblems names the fix)`)
    if (flow.stepFailure !== null && flow.stepFailure.attempts >= DEGRADED_STEP_FAILURES) {
      problems.push(`${flow.name} cannot copy (${flow.stepFailure.code}, ${flow.stepFailure.attempts} attempts since ${flow.stepFailure.since})`)
    }
    for (const r of heldTooLong(flow, now)) {
      problems.push(`${flow.name} waits for a transaction open on ${r.topic} on cluster ${r.cluster} (its read held since ${r.since}; /status heldReads and the log name it and how to end it)`)
    }
  }
  return problems.length === 0 ? { status: 200, summary: 'ok' } : { status: 503, summary: `degraded: ${problems.join('; ')}` }
}

/** Up to 5 names, then how many more. */
function listed (names: readonly string[]): string {
  return names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ')
}

/** The head of /status (and of its summary): health and the error that stopped replication. */
export function statusHead (flows: readonly FlowStatus[], failure: unknown): { healthy: boolean, health: string, error: string | null } {
  const health = healthOf(flows, failure)
  return {
    healthy: health.status === 200,
    health: health.summary,
    error: failure === undefined ? null : (failure instanceof Error ? failure.message : String(failure))
  }
}

/** /status; with a context, each flow also has its state, records/s and bytes/s and totals (status-summary.ts). */
export function statusDocument (flows: readonly FlowStatus[], failure: unknown, context?: FlowContext): unknown {
  return {
    ...statusHead(flows, failure),
    flows: flows.map(f => {
      const lags = f.partitions.map(p => partitionLag(p))
      const unknown = lags.filter(l => l === null).length
      const seconds = f.partitions.map(p => p.lagSeconds)
      return {
        name: f.name,
        ...(context === undefined ? {} : flowTotals(f, context)),
        /** Null while the lag of a partition is unknown: `lagUnknownPartitions` says how many. */
        lagRecords: unknown > 0 ? null : lags.reduce<number>((n, l) => n + (l ?? 0), 0),
        /** The largest of its partitions' (the oldest record not copied yet); null while one is unknown. */
        lagSeconds: seconds.includes(null) ? null : seconds.reduce<number>((max, s) => Math.max(max, s ?? 0), 0),
        lagUnknownPartitions: unknown,
        failingPartitions: f.partitions.filter(p => p.failure !== null).length,
        stepFailure: f.stepFailure,
        partitions: f.partitions.map((p, i) => ({ ...p, lagRecords: lags[i] })),
        jobs: f.jobs,
        // Only a flow that shares its work through a group has members to show.
        ...(f.membership === null ? {} : { membership: f.membership }),
        ...(f.checkpoints === undefined ? {} : { checkpoints: f.checkpoints.map(c => ({ group: c.group, at: new Date(c.at).toISOString() })) }),
        ...(f.offsetSyncs === undefined ? {} : { offsetSyncs: f.offsetSyncs }),
        ...(f.exactlyOnce === undefined ? {} : { exactlyOnce: f.exactlyOnce }),
        ...(f.remoteTopicProblems === undefined ? {} : { remoteTopicProblems: f.remoteTopicProblems }),
        ...(f.heldReads === undefined ? {} : { heldReads: f.heldReads })
      }
    })
  }
}

export async function startHttpServer (options: HttpServerOptions): Promise<Server | HttpsServer> {
  const { metrics, source, log } = options
  const routes = new StatusRoutes({ ...source, health: () => source.health?.() ?? ALWAYS_HEALTHY }, { head: statusHead, full: statusDocument }, log)
  const server = createAccessServer(options.access ?? OPEN_ACCESS, (req, res) => {
    const url = URL.parse(req.url ?? '/', 'http://kmirror')
    const path = url?.pathname
    if (url === null) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('bad request: the path is not a URL path\n')
    } else if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end()
    } else if (path === '/metrics') {
      const flows = source.status()
      updateLagGauges(metrics, flows)
      updatePartitionLagGauges(metrics, flows, options.partitionMetrics ?? (() => true))
      updateUpGauges(metrics, flows, source.health?.() ?? ALWAYS_HEALTHY, source.failure() !== undefined)
      updateCheckpointGauges(metrics, flows, Date.now())
      metrics.render().then(
        text => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        (err: unknown) => { log.warn({ err }, 'cannot render metrics'); res.writeHead(500).end() })
    } else if (path === '/healthz') {
      const health = healthOf(source.status(), source.failure())
      const stall = source.health?.() ?? ALWAYS_HEALTHY
      const failed = source.failure() !== undefined
      // Degraded partitions and stalled flows are both listed: either alone makes the answer 503.
      const body = failed ? 'failed\n' : [health.status === 200 ? '' : `${health.summary}\n`, stall.healthy ? '' : describeStalled(stall)].join('') || 'ok\n'
      res.writeHead(failed || health.status !== 200 || !stall.healthy ? 503 : 200, { 'content-type': 'text/plain' }).end(processRedactor.redactSerialized(body))
    } else if (path === '/livez') {
      // For a liveness probe: only a flow stopped on an error is fixed by a restart. Degraded partitions (an ACL, a
      // record too large) and stalls (a broker down) are not: a restart would only re-copy and rebalance the group.
      const failed = source.failure() !== undefined
      res.writeHead(failed ? 503 : 200, { 'content-type': 'text/plain' }).end(failed ? 'failed: a flow stopped on an error (see /status and the log); a restart starts it again\n' : 'alive\n')
    } else if (path === '/readyz') {
      const ready = (source.health?.() ?? ALWAYS_HEALTHY).ready
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ready\n' : 'starting\n')
    } else if (routes.handle(url.pathname, url.searchParams, res) || serveConsoleAsset(url.pathname, res)) {
      // answered: the JSON routes (status-routes.ts) or the console's page and files (console-assets.ts)
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try / (the console), /metrics, /healthz, /livez, /readyz, /status or /topology\n')
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => { server.off('error', reject); resolve() })
  })
  server.unref()
  return server
}
