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
 * lists (Metadata without topics, on an open connection to another of its brokers), at most every
 * CHECK_INTERVAL_MS per cluster and one check at a time. A stalled broker that an earlier Metadata answer of C (a
 * check, or any answer the process read on a watched connection) listed together with the broker asked, and that
 * the answer no longer lists, is fenced: it becomes a suspect (asked last by the requests any broker can answer:
 * broker-suspects.ts) and `markSilent` (silent-brokers.ts) cuts every connection to it, so its requests fail at once
 * as network failures and their callers ask the cluster again where the work is now.
 *
 * Invariants:
 * - Only the cluster's word cuts: a broker still listed is never cut here however slow it is (a produce waiting on
 *   slow followers, a JoinGroup waiting for a rebalance); it is only asked about, once a second at most.
 * - Names are compared within one listener only: X counts as fenced only if an earlier answer listed X together
 *   with the broker asked now, and the answer now lists that broker itself. A cluster reached through two listeners
 *   (role overrides on another port), or a bootstrap alias, never makes a healthy broker look unlisted.
 * - The broker asked is one an answer listed (never a bootstrap alias, which may be the stalled broker itself), not
 *   stalled itself, idle if one is (a connection busy with a long poll answers after it), in turn. A check
 *   unanswered within CHECK_TIMEOUT_MS, or that fails, decides nothing.
 * - Without another open connection to the cluster (a one-broker cluster, a small flow whose every leader and
 *   coordinator is the stalled broker) nothing is asked, and the request's own timeout decides, as before.
 * - Tracking is per connection and bounded: a connection's entries go when it closes (a request timeout closes it
 *   too), a request "written" on a connection already closed is not tracked, and an entry older than
 *   FORGET_AFTER_MS is dropped. One watch per process (`watchFencedBrokers`), and its handlers never throw.
 * - A long poll longer than STALL_MS (`fetch.max.wait.ms` of 2 s or more) or a JoinGroup waiting for a rebalance
 *   makes the watch ask its cluster once a second while it waits: a few bytes, never a cut while the broker is listed.
 *
 * The same tracking feeds slow-brokers.ts: requests a broker holds for long without being fenced are reported.
 */
import type { Connection } from '@platformatic/kafka'
import { connectionsApiChannel } from '@platformatic/kafka'
import { resolveAfter } from '../deadline.ts'
import { MetadataApi } from './protocol/metadata.ts'
import { sendRequest } from './protocol/negotiation.ts'
import { suspect } from './broker-suspects.ts'
import { addressKey } from './same-broker.ts'
import { sharedWatch } from './shared-watch.ts'
import { clusterOf, connectionsOf, markSilent } from './silent-brokers.ts'
import { apiName, SlowRequests, type SlowBrokerReport, type Waiting } from './slow-brokers.ts'

/** How long a request waits before its broker's cluster is asked whether it still lists the broker. */
export const STALL_MS = 2000
/** How often one cluster is asked at most. */
export const CHECK_INTERVAL_MS = 1000
/** A check unanswered by then decides nothing (its peer is busy or slow: the next check asks another). */
export const CHECK_TIMEOUT_MS = 2000
/** Longer than any request's bound: an entry this old lost its end somewhere and is dropped. */
export const FORGET_AFTER_MS = 10 * 60_000
const TICK_MS = 500
/** A tick this much later than TICK_MS means the process was paused (slow-brokers.ts then reports nothing). */
const LATE_TICK_MS = 1000
/** The library's connection statuses in which a request written is really sent (it publishes the others too). */
const SENDING = new Set(['connected', 'authenticating', 'reauthenticating'])

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
  /** A request waited SLOW_MS on a broker (slow-brokers.ts). */
  readonly slow?: (report: SlowBrokerReport) => void
}

interface ClusterChecks {
  /**
   * For each broker a Metadata answer listed (by `addressKey`), the brokers listed in the same answer: one
   * listener's addresses. A cluster reached through two listeners (a producer on a SASL port, a consumer on
   * another) is two sets of names for the same brokers, and an answer only speaks for its own.
   */
  readonly listedWith: Map<string, Set<string>>
  lastAt: number
  checking: boolean
  /** Rotates the peers asked. */
  turn: number
}

export class FenceWatch {
  readonly #deps: FenceWatchDeps
  readonly #waiting = new Map<Connection, Map<number, Waiting>>()
  /** The connections whose close is listened to. */
  readonly #listening = new WeakSet<Connection>()
  readonly #clusters = new Map<string, ClusterChecks>()
  readonly #slow: SlowRequests

  constructor (deps: FenceWatchDeps) {
    this.#deps = deps
    this.#slow = new SlowRequests(deps.clusterOf, report => { deps.slow?.(report) }, TICK_MS + LATE_TICK_MS)
  }

  /** A request was written on CONNECTION. */
  sent (connection: Connection, correlationId: number, apiKey: number): void {
    // A request "written" on a closed connection fails at once, and its close came before: never tracked.
    if (!SENDING.has(connection.status)) return
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
    const together = [...keys]
    const { listedWith } = this.#checks(label)
    for (const key of together) {
      const seen = listedWith.get(key) ?? new Set<string>()
      listedWith.set(key, seen)
      for (const other of together) seen.add(other)
    }
  }

  #checks (label: string): ClusterChecks {
    const checks = this.#clusters.get(label) ?? { listedWith: new Map<string, Set<string>>(), lastAt: Number.NEGATIVE_INFINITY, checking: false, turn: 0 }
    this.#clusters.set(label, checks)
    return checks
  }

  /** The answer to a request came. */
  answered (connection: Connection, correlationId: number): void {
    const requests = this.#waiting.get(connection)
    const request = requests?.get(correlationId)
    if (requests === undefined || request === undefined) return
    requests.delete(correlationId)
    if (requests.size === 0) this.#waiting.delete(connection)
    this.#slow.answered(connection, request, this.#deps.now())
  }

  /** Asks the clusters of stalled brokers whether they still list them (see the module's invariants). */
  tick (): void {
    const now = this.#deps.now()
    this.#slow.check(this.#waiting, now)
    for (const [label, stalled] of this.#stalled(now)) {
      const checks = this.#checks(label)
      if (checks.checking || now - checks.lastAt < CHECK_INTERVAL_MS) continue
      const peer = this.#peer(label, checks, stalled)
      if (peer === undefined) continue
      checks.checking = true
      checks.lastAt = now
      this.#check(label, checks, peer)
        .catch(() => undefined)
        .finally(() => { checks.checking = false })
    }
  }

  /**
   * Whom to ask: a connection to a broker an answer listed (never a bootstrap alias, which may be the stalled broker
   * itself) that is not stalled, one with nothing in flight first (a connection busy with a long poll or a JoinGroup
   * would answer only after it), in turn.
   */
  #peer (label: string, checks: ClusterChecks, stalled: ReadonlyMap<string, StalledBroker>): { key: string, connection: Connection } | undefined {
    const candidates = this.#deps.connectionsOf(label).filter(c => !stalled.has(c.key) && c.connection.status === 'connected' && checks.listedWith.has(c.key))
    const idle = candidates.filter(c => !this.#waiting.has(c.connection))
    const from = idle.length > 0 ? idle : candidates
    return from.length === 0 ? undefined : from[checks.turn++ % from.length]
  }

  async #check (label: string, checks: ClusterChecks, peer: { key: string, connection: Connection }): Promise<void> {
    const listed = await resolveAfter(this.#deps.listed(peer.connection, label), CHECK_TIMEOUT_MS, null).catch(() => null)
    // No answer in time, or one that does not name the broker asked (it speaks for another listener): nothing to compare.
    if (listed === null || !listed.has(peer.key)) return
    const now = this.#deps.now()
    for (const [key, { connection, oldest }] of this.#stalled(now).get(label) ?? new Map<string, StalledBroker>()) {
      if (checks.listedWith.get(key)?.has(peer.key) !== true || listed.has(key)) continue
      this.#deps.cut(connection, `a ${apiName(oldest.apiKey)} request to broker ${key} unanswered for ${((now - oldest.at) / 1000).toFixed(1)} s, and broker ${peer.key} no longer lists it among the brokers of ${label}: the cluster fenced it`)
    }
    this.listedBy(label, listed)
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

const slowListeners = new Set<(report: SlowBrokerReport) => void>()

/** Calls LISTENER at every slow-broker report of the process's watch (the runtime logs it); returns the function that stops it. */
export function onSlowBroker (listener: (report: SlowBrokerReport) => void): () => void {
  slowListeners.add(listener)
  return () => { slowListeners.delete(listener) }
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

/** What the diagnostics handlers feed (a FenceWatch; a recorder in unit tests). */
export type WatchInput = Pick<FenceWatch, 'sent' | 'answered' | 'listedBy'>

/**
 * Feeds WATCH from the library's `connections:api` diagnostics channel: each request written, each answer, and the
 * brokers of each Metadata answer on a watched connection. Returns the function that stops it. A handler never
 * throws: the channel would raise it as an uncaught exception.
 */
export function subscribeWatch (watch: WatchInput, labelOf: (connection: Connection) => string | undefined = clusterOf): () => void {
  const sent = (message: unknown): void => {
    try {
      const e = message as SendEvent
      if (e.operation === 'send' && e.connection !== undefined && e.correlationId !== undefined) watch.sent(e.connection, e.correlationId, e.apiKey ?? -1)
    } catch { /* tracking is best effort: a request it misses is only not watched */ }
  }
  const answered = (message: unknown): void => {
    try {
      const e = message as SendEvent
      if (e.connection === undefined || e.correlationId === undefined) return
      watch.answered(e.connection, e.correlationId)
      if (e.apiKey !== METADATA_KEY) return
      const label = labelOf(e.connection)
      if (label !== undefined) watch.listedBy(label, brokerKeys(e.result))
    } catch { /* as above */ }
  }
  connectionsApiChannel.start.subscribe(sent)
  connectionsApiChannel.asyncStart.subscribe(answered)
  return () => {
    connectionsApiChannel.start.unsubscribe(sent)
    connectionsApiChannel.asyncStart.unsubscribe(answered)
  }
}

/**
 * Watches every request of the process; returns the function that releases it. One watch per process however many
 * callers start it (several MirrorMakers in one process share it), stopped when the last releases it
 * (shared-watch.ts). The long-running `run` starts it: a data-path round must not wait a request timeout on a
 * broker the cluster fenced.
 */
export const watchFencedBrokers = sharedWatch(() => {
  const watch = new FenceWatch({
    now: Date.now,
    clusterOf,
    connectionsOf,
    listed: listedBrokers,
    cut: (connection, cause) => {
      if (connection.host === undefined || connection.port === undefined) return
      // Asked last by every request any broker can answer, then cut: nothing goes back to it first meanwhile.
      suspect({ host: connection.host, port: connection.port })
      markSilent({ host: connection.host, port: connection.port }, cause, Date.now(), true)
    },
    slow: report => {
      for (const listener of slowListeners) {
        try { listener(report) } catch { /* a listener only reports; the watch must go on */ }
      }
    }
  })
  const unsubscribe = subscribeWatch(watch)
  const timer = setInterval(() => { watch.tick() }, TICK_MS)
  timer.unref()
  return () => {
    clearInterval(timer)
    unsubscribe()
  }
})
