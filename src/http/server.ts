/**
 * kmirror's HTTP endpoint, for operators and their monitoring: `/metrics` (Prometheus), `/healthz`
 * (200 while every flow runs, 503 once one stopped on an error or stalled: runtime/health.ts), `/readyz` (503 until
 * every flow has started) and `/status` (JSON: flows, partitions with position, high watermark and lag, and jobs).
 * Read-only: it reads runtime snapshots and changes nothing.
 */
import { createServer, type Server } from 'node:http'
import type { Logger } from '../logger.ts'
import { processRedactor } from '../redactor.ts'
import type { PrometheusMetrics } from '../metrics/registry.ts'
import type { FlowStatus } from '../runtime/flow.ts'
import { describeStalled, type HealthReport } from '../runtime/health.ts'

export interface StatusSource {
  status: () => FlowStatus[]
  /** The error that stopped the replication, if one did. */
  failure: () => unknown
  /** Readiness and stalled flows; without it, ready and never stalled. */
  health?: () => HealthReport
}

const ALWAYS_HEALTHY: HealthReport = Object.freeze({ ready: true, healthy: true, stalled: [] })

export interface HttpServerOptions {
  readonly host: string
  readonly port: number
  readonly metrics: PrometheusMetrics
  readonly source: StatusSource
  readonly log: Logger
}

/** Lag per flow and topic, set on every scrape from the partitions' last seen high watermarks. */
export function updateLagGauges (metrics: PrometheusMetrics, flows: readonly FlowStatus[]): void {
  for (const flow of flows) {
    const byTopic = new Map<string, number>()
    for (const p of flow.partitions) {
      if (p.highWatermark < 0) continue
      byTopic.set(p.topic, (byTopic.get(p.topic) ?? 0) + Math.max(0, p.highWatermark - p.position))
    }
    for (const [topic, lag] of byTopic) metrics.set('replicationLag', { flow: flow.name, topic }, lag)
  }
}

export function statusDocument (flows: readonly FlowStatus[], failure: unknown): unknown {
  return {
    healthy: failure === undefined,
    error: failure === undefined ? null : (failure instanceof Error ? failure.message : String(failure)),
    flows: flows.map(f => ({
      name: f.name,
      lagRecords: f.partitions.reduce((n, p) => n + (p.highWatermark < 0 ? 0 : Math.max(0, p.highWatermark - p.position)), 0),
      partitions: f.partitions.map(p => ({ ...p, lagRecords: p.highWatermark < 0 ? null : Math.max(0, p.highWatermark - p.position) })),
      jobs: f.jobs
    }))
  }
}

export async function startHttpServer (options: HttpServerOptions): Promise<Server> {
  const { metrics, source, log } = options
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end()
    } else if (path === '/metrics') {
      updateLagGauges(metrics, source.status())
      metrics.render().then(
        text => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        (err: unknown) => { log.warn({ err }, 'cannot render metrics'); res.writeHead(500).end() })
    } else if (path === '/healthz') {
      const failed = source.failure() !== undefined
      const health = source.health?.() ?? ALWAYS_HEALTHY
      const body = failed ? 'failed\n' : health.healthy ? 'ok\n' : describeStalled(health)
      res.writeHead(failed || !health.healthy ? 503 : 200, { 'content-type': 'text/plain' }).end(body)
    } else if (path === '/readyz') {
      const ready = (source.health?.() ?? ALWAYS_HEALTHY).ready
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ready\n' : 'starting\n')
    } else if (path === '/status') {
      const health = source.health?.() ?? ALWAYS_HEALTHY
      const base = statusDocument(source.status(), source.failure()) as { healthy: boolean }
      // An error message may quote a secret (a value from a config provider, say): redacted like every output,
      // before it is escaped into JSON.
      const document = processRedactor.redactValue({ ...base, healthy: base.healthy && health.healthy, ready: health.ready, stalled: health.stalled })
      res.writeHead(200, { 'content-type': 'application/json' }).end(processRedactor.redactSerialized(JSON.stringify(document, null, 2)))
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics, /healthz, /readyz or /status\n')
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => { server.off('error', reject); resolve() })
  })
  server.unref()
  return server
}
