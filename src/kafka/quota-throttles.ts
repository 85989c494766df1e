/**
 * Brokers throttling this process for a client quota (KIP-219): a broker over a quota (`producer_byte_rate`,
 * `consumer_byte_rate`, `request_percentage`) answers at once with a throttle time and mutes the connection for it,
 * and kmirror waits it out before its next request to that broker. Nothing fails, nothing times out: without this,
 * a quota slowed a flow to its pace with nothing to say why (a write round waits for its slowest broker, so a
 * throttled target broker paces every partition the flow writes).
 *
 * How: every answer the process reads (kmirror's own requests and the client library's, through the library's
 * `connections:api` diagnostics channel) whose `throttleTimeMs` is above zero is reported to the listeners (the
 * runtime logs, counts and lists it): the broker, its cluster, the API and the throttle time, and whether it is
 * the first of that broker and API within THROTTLE_AGAIN_MS (logged at warn) or a repeat (debug).
 *
 * Invariants:
 * - Reporting only: nothing waits, retries or is cut here (the callers honour the throttle time themselves).
 * - A handler never throws: the channel would raise it as an uncaught exception. A listener that throws is ignored.
 * - Bounded: what was warned about is forgotten THROTTLE_AGAIN_MS after; one tool entry per cluster kmirror opens.
 * - The pauses of several connections to one broker add up: the count can exceed the time elapsed.
 */
import type { Connection } from '@platformatic/kafka'
import { connectionsApiChannel } from '@platformatic/kafka'
import type { ClusterContext } from './connection-hints.ts'
import { addressKey } from './same-broker.ts'
import { sharedWatch } from './shared-watch.ts'
import { clusterOf } from './silent-brokers.ts'
import { apiName } from './slow-brokers.ts'
import type { ToolCluster } from './tool-command.ts'

/** The first throttle of a broker and API is reported as such; the next ones within this long are repeats. */
export const THROTTLE_AGAIN_MS = 60_000

export interface ThrottleReport {
  /** `host:port` (`addressKey`: as the other broker reports name it). */
  readonly broker: string
  /** The cluster's label ("cluster B"), when the connection is one kmirror opened for a cluster. */
  readonly cluster: string | undefined
  /** How a Kafka tool reaches that cluster (alias, bootstrap.servers, security.protocol), when known. */
  readonly tool: ToolCluster | undefined
  /** The API throttled ("Produce", "Fetch"). */
  readonly api: string
  readonly throttleMs: number
  /** The first of this broker and API within THROTTLE_AGAIN_MS. */
  readonly first: boolean
}

const listeners = new Set<(report: ThrottleReport) => void>()

/** label ("cluster B") → how a Kafka tool reaches that cluster: the remedy's kafka-configs.sh lines. */
const tools = new Map<string, ToolCluster>()

/** Remembers how a tool reaches the cluster of CONTEXT (cluster-clients.ts, for each cluster it opens clients of). */
export function knowCluster (context: ClusterContext): void {
  tools.set(context.label, { ...(context.alias === undefined ? {} : { alias: context.alias }), ...(context.brokers === undefined ? {} : { brokers: context.brokers }), ...(context.protocol === undefined ? {} : { protocol: context.protocol }) })
}

/** Calls LISTENER at every throttle the process is answered; returns the function that stops it. */
export function onQuotaThrottle (listener: (report: ThrottleReport) => void): () => void {
  listeners.add(listener)
  return () => { listeners.delete(listener) }
}

/** Which throttles were reported lately, to tell a first from a repeat. */
export class QuotaThrottles {
  /** `broker api` → when its first throttle was reported. */
  readonly #firstAt = new Map<string, number>()

  /** An answer of API (its key) from CONNECTION's broker asked for THROTTLE_MS; returns its report, or null below 1 ms. */
  answered (connection: Pick<Connection, 'host' | 'port'>, apiKey: number, throttleMs: number, cluster: string | undefined, now: number): ThrottleReport | null {
    if (!(throttleMs > 0) || connection.host === undefined) return null
    for (const [key, at] of this.#firstAt) if (now - at >= THROTTLE_AGAIN_MS) this.#firstAt.delete(key)
    const broker = addressKey(`${connection.host}:${connection.port ?? 0}`)
    const api = apiName(apiKey)
    const key = `${broker} ${api}`
    const first = !this.#firstAt.has(key)
    if (first) this.#firstAt.set(key, now)
    return { broker, cluster, tool: cluster === undefined ? undefined : tools.get(cluster), api, throttleMs, first }
  }
}

/**
 * The throttle time of an answer (kmirror's decoders and the library's both name it `throttleTimeMs`); an answer
 * the library parsed into an error (a CreateTopics refused with THROTTLING_QUOTA_EXCEEDED) carries it in the
 * error's `response`.
 */
export function throttleTimeOf (result: unknown, error?: unknown): number {
  const of = (answer: unknown): unknown => (answer as { throttleTimeMs?: unknown } | null | undefined)?.throttleTimeMs
  const value = of(result) ?? of((error as { response?: unknown } | null | undefined)?.response)
  return typeof value === 'number' ? value : 0
}

interface AnswerEvent { readonly connection?: Connection, readonly apiKey?: number, readonly result?: unknown, readonly error?: unknown }

/**
 * Watches every answer of the process for throttles; returns the function that releases it. One watch per process
 * however many callers start it, stopped when the last releases it (shared-watch.ts).
 */
export const watchQuotaThrottles = sharedWatch(() => {
  const throttles = new QuotaThrottles()
  const answered = (message: unknown): void => {
    try {
      const e = message as AnswerEvent
      // Every answer of the process passes here: the throttle time first, nothing more for the (almost all) without.
      const throttleMs = throttleTimeOf(e.result, e.error)
      if (throttleMs <= 0 || e.connection === undefined || e.apiKey === undefined) return
      const report = throttles.answered(e.connection, e.apiKey, throttleMs, clusterOf(e.connection), Date.now())
      if (report === null) return
      for (const listener of listeners) {
        try { listener(report) } catch { /* a listener only reports */ }
      }
    } catch { /* best effort: a throttle missed is only not reported */ }
  }
  connectionsApiChannel.asyncStart.subscribe(answered)
  return () => { connectionsApiChannel.asyncStart.unsubscribe(answered) }
})
