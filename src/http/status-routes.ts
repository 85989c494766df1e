/**
 * The JSON routes: `/status` (everything), `/status?summary[&filter=T][&limit=N]` (totals and topics aggregated:
 * status-summary.ts), `/status?flow=F&topic=T` (one topic's partitions) and `/topology` (the clusters and links
 * to draw). Everything leaving goes through the redactor (an error message may quote a secret).
 */
import type { ServerResponse } from 'node:http'
import type { Logger } from '../logger.ts'
import { processRedactor } from '../redactor.ts'
import { FlowRates } from '../runtime/flow-rates.ts'
import type { BrokerTrouble } from '../runtime/broker-troubles.ts'
import type { FlowStatus } from '../runtime/flow-status.ts'
import type { HealthReport } from '../runtime/health.ts'
import { summaryDocument, summaryOptions, topicPartitions, type FlowContext } from './status-summary.ts'

export interface JsonSource {
  status: () => FlowStatus[]
  failure: () => unknown
  health: () => HealthReport
  /** The topology to draw; absent: /topology answers 404. */
  topology?: () => Promise<unknown>
  /** The brokers that troubled the process lately; absent: none. */
  brokers?: () => readonly BrokerTrouble[]
}

/** The documents server.ts builds: the head of /status (health, error) and the whole of it. */
export interface Documents {
  readonly head: (flows: readonly FlowStatus[], failure: unknown) => { healthy: boolean }
  readonly full: (flows: readonly FlowStatus[], failure: unknown, context: FlowContext) => unknown
}

export class StatusRoutes {
  readonly #source: JsonSource
  readonly #documents: Documents
  readonly #log: Logger
  readonly #rates = new FlowRates()

  constructor (source: JsonSource, documents: Documents, log: Logger) {
    this.#source = source
    this.#documents = documents
    this.#log = log
  }

  /** Answers `/status` (with its query) or `/topology`; false for any other path. */
  handle (path: string, query: URLSearchParams, res: ServerResponse): boolean {
    if (path === '/status') this.#status(query, res)
    else if (path === '/topology') this.#topology(res)
    else return false
    return true
  }

  #status (query: URLSearchParams, res: ServerResponse): void {
    const flows = this.#source.status()
    this.#rates.sample(flows, Date.now())
    const health = this.#source.health()
    const failure = this.#source.failure()
    const context: FlowContext = { failed: failure !== undefined, ready: health.ready, stalled: new Set(health.stalled.map(s => s.flow)), rate: flow => this.#rates.rate(flow) }
    const flowName = query.get('flow')
    const topic = query.get('topic')
    if (flowName !== null && topic !== null) {
      const partitions = topicPartitions(flows, flowName, topic)
      if (partitions === null) sendJson(res, 404, { error: `flow ${flowName} copies no topic ${topic}` })
      else sendJson(res, 200, { flow: flowName, topic, partitions })
      return
    }
    const base = this.#documents.head(flows, failure)
    const head = { ...base, healthy: base.healthy && health.healthy, ready: health.ready, stalled: health.stalled, brokers: this.#source.brokers?.() ?? [] }
    if (query.has('summary')) sendJson(res, 200, { ...head, summary: true, flows: summaryDocument(flows, context, summaryOptions(query)) })
    else sendJson(res, 200, { ...(this.#documents.full(flows, failure, context) as object), ...head })
  }

  #topology (res: ServerResponse): void {
    const read = this.#source.topology
    if (read === undefined) {
      sendJson(res, 404, { error: 'no topology: this endpoint serves no configuration' })
      return
    }
    read().then(
      document => sendJson(res, 200, document),
      (err: unknown) => {
        this.#log.warn({ err }, 'cannot read the topology for /topology')
        sendJson(res, 500, { error: `cannot read the topology: ${err instanceof Error ? err.message : String(err)}` })
      })
  }
}

export function sendJson (res: ServerResponse, status: number, value: unknown): void {
  const document = processRedactor.redactValue(value)
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    .end(processRedactor.redactSerialized(JSON.stringify(document, null, 2)))
}
