/**
 * Requests waiting on a broker its cluster has fenced: the connections to it are cut as soon as the cluster says
 * so, not a whole request timeout later.
 *
 * Why: a frozen broker (SIGSTOP, a long pause, a hung disk) accepts connections and answers nothing. Its controller
 * fences it within `broker.session.timeout.ms` (9 s by default; ZooKeeper mode when its session expires) and moves
 * its partition leaders and coordinators to other brokers, but every request already sent to it waits for its own
 * timeout (`request.timeout.ms`, 30 s by default), and a data-path round waits for its slowest broker: one frozen
 * target partition leader held every partition of a flow for 35 s (measured on the three-node test cluster, whose
 * controller fences a broker within 3 s).
 *
 * How: every request of the process (kmirror's own and the client library's, through the library's
 * `connections:api` diagnostics channel) is tracked from when it is written until its answer or the close of its
 * connection. While one request to broker X of cluster C has waited STALL_MS, cluster C is asked which brokers it
 * lists (Metadata without topics, on an open connection to another of its brokers that has no stalled request), at
 * most every CHECK_INTERVAL_MS per cluster and one check at a time. A stalled broker the cluster listed under the
 * same address before (in a check, or in any Metadata answer the process read from it), and no longer lists, is
 * fenced: it becomes a suspect (asked last by the requests
 * any broker can answer: broker-suspects.ts) and `markSilent` (silent-brokers.ts) cuts every connection to it, so its
 * requests fail at once as network failures and their callers ask the cluster again where the work is now.
 *
 * Invariants:
 * - Only the cluster's word cuts: a broker still listed is never cut here however slow it is (a produce waiting on
 *   slow followers, a JoinGroup waiting for a rebalance); it is only asked about.
 * - A broker counts as fenced only if an earlier Metadata answer of the same cluster listed it under the very address
 *   its connection uses: a bootstrap alias the metadata names otherwise never matches, so it is never cut for that.
 * - A check unanswered within CHECK_TIMEOUT_MS, or that fails, decides nothing; with no other broker to ask (a
 *   one-broker cluster, every connection stalled) nothing is asked, and the request's own timeout decides, as before.
 * - Tracking is per connection and bounded: a connection's entries go when it closes (a request timeout closes it
 *   too), and an entry older than FORGET_AFTER_MS is dropped.
 */
import type { Connection } from '@platformatic/kafka'
import { connectionsApiChannel, protocolAPIsById } from '@platformatic/kafka'
import { MetadataApi } from './protocol/metadata.ts'
import { sendRequest } from './protocol/negotiation.ts'
import { suspect } from './broker-suspects.ts'
import { addressKey } from './same-broker.ts'
import { clusterOf, connectionsOf, markSilent } from './silent-brokers.ts'

/** How long a request waits before its broker's cluster is asked whether it still lists the broker. */
export const STALL_MS = 2000
/** How often one cluster is asked at most. */
export const CHECK_INTERVAL_MS = 1000
/** A check unanswered by then decides nothing. */
export const CHECK_TIMEOUT_MS = 5000
/** Longer than any request's bound: an entry this old lost its end somewhere and is dropped. */
export const FORGET_AFTER_MS = 10 * 60_000
const TICK_MS = 500

/** A request waiting on a broker. */
interface Waiting { readonly at: number, readonly apiKey: number }

/** What the watch needs of the world (the process's connections; fakes in unit tests). */
export interface FenceWatchDeps {
  readonly now: () => number
  /** The cluster label of a watched connection. */
  readonly clusterOf: (connection: Connection) => string | undefined
  /** The open connections of a cluster, by broker key. */
  readonly connectionsOf: (label: string) => readonly { key: string, connection: Connection }[]
  /** The `addressKey`s of the brokers the cluster lists, asked on CONNECTION. */
  readonly listed: (connection: Connection, label: string) => Promise<ReadonlySet<string>>
  readonly cut: (connection: Connection, cause: string) => void
}

interface ClusterChecks {
  /** Every broker an answer listed, by `addressKey`. */
  readonly everListed: Set<string>
  lastAt: number
  checking: boolean
}

export class FenceWatch {
  readonly #deps: FenceWatchDeps
  readonly #waiting = new Map<Connection, Map<number, Waiting>>()
  /** The connections whose close is listened to. */
  readonly #listening = new WeakSet<Connection>()
  readonly #clusters = new Map<string, ClusterChecks>()

  constructor (deps: FenceWatchDeps) {
    this.#deps = deps
  }

  /** A request was written on CONNECTION. */
  sent (connection: Connection, correlationId: number, apiKey: number): void {
    let requests = this.#waiting.get(connection)
    if (requests === undefined) {
      requests = new Map()
      this.#waiting.set(connection, requests)
      // Once per connection: its entries come and go many times over its life.
      if (!this.#listening.has(connection)) {
        this.#listening.add(connection)
        connection.once('close', () => { this.#waiting.delete(connection) })
      }
    }
    requests.set(correlationId, { at: this.#deps.now(), apiKey })
  }

  /**
   * The brokers a Metadata answer from cluster LABEL listed: what a later check compares with (the checks alone
   * could first ask only once the cluster had fenced the broker, and never have seen it listed).
   */
  listedBy (label: string, keys: Iterable<string>): void {
    const checks = this.#checks(label)
    for (const key of keys) checks.everListed.add(key)
  }

  #checks (label: string): ClusterChecks {
    const checks = this.#clusters.get(label) ?? { everListed: new Set<string>(), lastAt: Number.NEGATIVE_INFINITY, checking: false }
    this.#clusters.set(label, checks)
    return checks
  }

  /** The answer to a request came. */
  answered (connection: Connection, correlationId: number): void {
    const requests = this.#waiting.get(connection)
    if (requests === undefined) return
    requests.delete(correlationId)
    if (requests.size === 0) this.#waiting.delete(connection)
  }

  /** Asks the clusters of stalled brokers whether they still list them (see the module's invariants). */
  tick (): void {
    const now = this.#deps.now()
    for (const [label, stalled] of this.#stalled(now)) {
      const checks = this.#checks(label)
      if (checks.checking || now - checks.lastAt < CHECK_INTERVAL_MS) continue
      const peer = this.#deps.connectionsOf(label).find(c => !stalled.has(c.key) && c.connection.status === 'connected')
      if (peer === undefined) continue
      checks.checking = true
      checks.lastAt = now
      void this.#check(label, checks, peer).finally(() => { checks.checking = false })
    }
  }

  async #check (label: string, checks: ClusterChecks, peer: { key: string, connection: Connection }): Promise<void> {
    let listed: ReadonlySet<string>
    try {
      listed = await withTimeout(this.#deps.listed(peer.connection, label), CHECK_TIMEOUT_MS)
    } catch {
      return
    }
    const now = this.#deps.now()
    for (const [key, { connection, oldest }] of this.#stalled(now).get(label) ?? new Map<string, StalledBroker>()) {
      if (!checks.everListed.has(key) || listed.has(key)) continue
      const api = protocolAPIsById[oldest.apiKey] ?? `API ${oldest.apiKey}`
      this.#deps.cut(connection, `a ${api} request to broker ${key} unanswered for ${((now - oldest.at) / 1000).toFixed(1)} s, and broker ${peer.key} no longer lists it among the brokers of ${label}: the cluster fenced it`)
    }
    for (const key of listed) checks.everListed.add(key)
  }

  /** The brokers with a request waiting STALL_MS or more, by cluster label, each with its oldest request. */
  #stalled (now: number): Map<string, Map<string, StalledBroker>> {
    const byCluster = new Map<string, Map<string, StalledBroker>>()
    for (const [connection, requests] of this.#waiting) {
      let oldest: Waiting | undefined
      for (const [id, waiting] of requests) {
        if (now - waiting.at >= FORGET_AFTER_MS) requests.delete(id)
        else if (oldest === undefined || waiting.at < oldest.at) oldest = waiting
      }
      if (requests.size === 0) this.#waiting.delete(connection)
      if (oldest === undefined || now - oldest.at < STALL_MS) continue
      const label = this.#deps.clusterOf(connection)
      if (label === undefined) continue
      const key = addressKey(`${connection.host}:${connection.port}`)
      const brokers = byCluster.get(label) ?? new Map<string, StalledBroker>()
      byCluster.set(label, brokers)
      const known = brokers.get(key)
      if (known === undefined || oldest.at < known.oldest.at) brokers.set(key, { connection, oldest })
    }
    return byCluster
  }
}

interface StalledBroker { readonly connection: Connection, readonly oldest: Waiting }

async function withTimeout<T> (promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error('no answer in time')) }, ms) })])
  } finally {
    clearTimeout(timer)
  }
}

/** The brokers cluster LABEL lists, asked on CONNECTION. */
async function listedBrokers (connection: Connection, label: string): Promise<ReadonlySet<string>> {
  const { brokers } = await sendRequest(connection, MetadataApi, { topics: [] }, label)
  return new Set([...brokers.values()].map(b => addressKey(`${b.host}:${b.port}`)))
}

interface SendEvent { readonly connection?: Connection, readonly operation?: string, readonly correlationId?: number, readonly apiKey?: number, readonly result?: unknown }

const METADATA_KEY = MetadataApi.key

/** The `addressKey`s of the brokers a Metadata answer lists: kmirror's decoding (a Map) or the library's (an array). */
export function brokerKeys (result: unknown): string[] {
  const brokers = (result as { brokers?: unknown } | null | undefined)?.brokers
  const list: unknown[] = brokers instanceof Map ? [...(brokers as Map<unknown, unknown>).values()] : Array.isArray(brokers) ? brokers : []
  return list.flatMap(b => {
    const { host, port } = (b ?? {}) as { host?: unknown, port?: unknown }
    return typeof host === 'string' && typeof port === 'number' ? [addressKey(`${host}:${port}`)] : []
  })
}

/**
 * Starts watching every request of the process (one watch at a time); returns the function that stops it. The
 * long-running `run` starts it: a data-path round must not wait a request timeout on a broker the cluster fenced.
 */
export function watchFencedBrokers (): () => void {
  const watch = new FenceWatch({
    now: Date.now,
    clusterOf,
    connectionsOf,
    listed: listedBrokers,
    cut: (connection, cause) => {
      if (connection.host === undefined || connection.port === undefined) return
      // Asked last by every request any broker can answer, then cut: nothing goes back to it first meanwhile.
      suspect({ host: connection.host, port: connection.port })
      markSilent({ host: connection.host, port: connection.port }, cause)
    }
  })
  const sent = (message: unknown): void => {
    const e = message as SendEvent
    if (e.operation === 'send' && e.connection !== undefined && e.correlationId !== undefined) watch.sent(e.connection, e.correlationId, e.apiKey ?? -1)
  }
  const answered = (message: unknown): void => {
    const e = message as SendEvent
    if (e.connection === undefined || e.correlationId === undefined) return
    watch.answered(e.connection, e.correlationId)
    if (e.apiKey !== METADATA_KEY) return
    const label = clusterOf(e.connection)
    if (label !== undefined) watch.listedBy(label, brokerKeys(e.result))
  }
  connectionsApiChannel.start.subscribe(sent)
  connectionsApiChannel.asyncStart.subscribe(answered)
  const timer = setInterval(() => { watch.tick() }, TICK_MS)
  timer.unref()
  return () => {
    clearInterval(timer)
    connectionsApiChannel.start.unsubscribe(sent)
    connectionsApiChannel.asyncStart.unsubscribe(answered)
  }
}
