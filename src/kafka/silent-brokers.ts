/**
 * Brokers found silent, and this process's connections to them cut. A broker is silent when a request sent on an
 * established connection went unanswered for its whole bound (`RequestTimeout`): a heartbeat given up after
 * `session.timeout.ms`, or a Metadata, FindCoordinator, ListOffsets or Fetch request after `request.timeout.ms`
 * (broker-suspects.ts's `noteOutcome` tells this module), or when its cluster no longer lists it while a request waits
 * on it (fenced-brokers.ts: the controller fenced it; no request timeout waited out). Not a produce timing out: a
 * broker slow to replicate answers it at its own deadline, which is the client's too, and that is no silence. Not a
 * connection attempt that timed out. Such a broker (frozen, in a long pause, half cut off) still
 * holds every request sent on a connection to it, each until its own timeout, and connections made anew are
 * accepted and then not answered either.
 *
 * What a silence does, process-wide:
 * - Every open connection to the broker in a pool or client watched here (`watchedPool`, `watchClient`: the data
 *   path's writers and fetchers, the readers and writers of internal topics, the admin, the group coordinator's
 *   lanes) is closed. The requests waiting on them fail at
 *   once as network failures, and their callers ask the cluster again where the work is now: the leader or the
 *   coordinator the cluster moved it to once it fenced the broker. Without this, a produce sent to the broker just
 *   before it froze held its partitions for `request.timeout.ms` after the group had moved on, and the start of a
 *   new generation's work waited on reads of internal topics the broker led (30-80 s after a freeze, measured).
 * - Metadata caches holding leaders read before the silence read them again at their next use (`silentSince`),
 *   and so do the watched library clients (their metadata cleared): none goes back to the silent broker because
 *   it led a partition before it froze.
 *
 * Invariants:
 * - A cut, never an exclusion: the cluster's answer decides where the next request goes, the broker included
 *   while the cluster still names it.
 * - Safe for writes: a produce cut in flight fails as a failed write does (as when it times out, only sooner): never
 *   lost. In at-least-once mode its batches are in doubt and sent again under the same producer id with the same
 *   sequences (in-doubt.ts), so a batch the broker had appended and replicated is kept once; in exactly-once mode
 *   the round is aborted and copied again. The library's producer (internal records) retries with the same sequence.
 * - A failure a cut causes is a network failure, never a timeout, so it makes no silence of its own. A broker still
 *   silent is found again at its next request timeout: reported once at warn per AGAIN_WITHIN_MS (the runtime).
 * - Keyed by `addressKey`, one record per process, like the suspects.
 */
import type { Connection, ConnectionPool, ConnectionPoolEventPayload } from '@platformatic/kafka'
import { addressKey } from './same-broker.ts'

interface Address { readonly host: string, readonly port: number }

/** What a cut closed, for the operator's log line (the runtime listens: `onSilence`). */
export interface SilenceReport {
  /** `host:port` of the silent broker. */
  readonly broker: string
  /** The labels of the clusters whose connections were closed ("cluster B"), empty when none was open. */
  readonly clusters: readonly string[]
  /** How many connections were closed. */
  readonly closed: number
  /** The timeout that showed the silence (its message names the request and the bound). */
  readonly cause: string
  /** The broker was found silent within AGAIN_WITHIN_MS before (still frozen: the runtime logs it at debug then). */
  readonly again: boolean
  /** Its cluster no longer lists it (fenced-brokers.ts), rather than a request timing out on it. */
  readonly fenced: boolean
}

/** A silence this soon after the last one of the same broker is the same outage going on. */
export const AGAIN_WITHIN_MS = 60_000

/** addressKey → the open connections of watched pools, each with the label of its cluster. */
const open = new Map<string, Map<Connection, string>>()
/** addressKey → when it was found silent (epoch ms). */
const silencedAt = new Map<string, number>()
let lastSilence = -Infinity
const listeners = new Set<(report: SilenceReport) => void>()

/** Keeps track of POOL's open connections, so a silence of their broker closes them (CLUSTER labels the cluster). */
export function watchedPool (pool: ConnectionPool, cluster: string): ConnectionPool {
  pool.on('connect', ({ broker, connection }) => { track(broker, connection, cluster) })
  return pool
}

/**
 * The same for a client of the library (a producer, the admin): every pool it opens tells of its connections, and
 * a silence makes it read its metadata afresh.
 */
export function watchClient<C extends ClientEvents> (client: C, cluster: string): C {
  client.on('client:broker:connect', ({ broker, connection }) => { track(broker, connection, cluster) })
  clients.add(new WeakRef(client))
  return client
}

/** What `watchClient` needs of a library client. */
interface ClientEvents {
  on: (event: 'client:broker:connect', listener: (payload: ConnectionPoolEventPayload) => void) => unknown
  /** Forgets the cluster's brokers and leaders: the next operation reads them again. */
  clearMetadata: () => void
}

/**
 * Watched library clients. A client's metadata is read once and kept until it expires or a partition error says it
 * is stale; a cut connection is no such error, so the client would connect to a silent leader again and wait a
 * whole request timeout there (30 s of progress writes measured, the data path waiting on them). Weak: a closed
 * client is not held.
 */
const clients = new Set<WeakRef<ClientEvents>>()

function clearClientMetadata (): void {
  for (const ref of clients) {
    const client = ref.deref()
    if (client === undefined) clients.delete(ref)
    else client.clearMetadata()
  }
}

function track (broker: Address, connection: Connection, cluster: string): void {
  const key = addressKey(`${broker.host}:${broker.port}`)
  const byConnection = open.get(key) ?? new Map<Connection, string>()
  open.set(key, byConnection)
  byConnection.set(connection, cluster)
  connection.once('close', () => {
    byConnection.delete(connection)
    if (byConnection.size === 0 && open.get(key) === byConnection) open.delete(key)
  })
}

/**
 * BROKER answered nothing within a request's whole bound (CAUSE): closes every watched connection to it and marks
 * it, so that metadata read before now is read again. Returns how many connections were closed.
 */
export function markSilent (broker: Address, cause: string, now = Date.now(), fenced = false): number {
  const key = addressKey(`${broker.host}:${broker.port}`)
  const before = silencedAt.get(key)
  silencedAt.set(key, now)
  lastSilence = Math.max(lastSilence, now)
  const connections = [...(open.get(key) ?? [])]
  open.delete(key)
  for (const [connection] of connections) cut(connection)
  clearClientMetadata()
  const again = before !== undefined && now - before < AGAIN_WITHIN_MS
  const report = { broker: key, clusters: [...new Set(connections.map(([, cluster]) => cluster))].sort(), closed: connections.length, cause, again, fenced }
  for (const listener of listeners) {
    try { listener(report) } catch { /* a listener only reports; the caller's request path must not fail for it */ }
  }
  return connections.length
}

/**
 * Destroyed, not closed: the library's close() flushes the writes still queued first, and a broker that stopped
 * reading takes none, so a connection with produce bytes queued would stay "closing" with its requests waiting.
 * Destroying the socket fails every request on it at once ('Connection closed') and drops it from its pool.
 */
function cut (connection: Connection): void {
  const socket = connection.socket as Connection['socket'] | undefined
  if (socket !== undefined) socket.destroy()
  else connection.close().catch(() => undefined)
}

/** The label of the cluster a watched connection belongs to ("cluster B"); undefined when not watched. */
export function clusterOf (connection: Connection): string | undefined {
  return open.get(addressKey(`${connection.host}:${connection.port}`))?.get(connection)
}

/** The open watched connections of the cluster LABEL, with their broker's `addressKey` (fenced-brokers.ts asks them). */
export function connectionsOf (label: string): { key: string, connection: Connection }[] {
  const found: { key: string, connection: Connection }[] = []
  for (const [key, byConnection] of open) {
    for (const [connection, cluster] of byConnection) if (cluster === label) found.push({ key, connection })
  }
  return found
}

/** Whether any of BROKERS was found silent after SINCE (epoch ms): metadata read at SINCE may name it as a leader. */
export function silentSince (brokers: Iterable<Address>, since: number): boolean {
  if (lastSilence <= since) return false
  for (const b of brokers) {
    const at = silencedAt.get(addressKey(`${b.host}:${b.port}`))
    if (at !== undefined && at > since) return true
  }
  return false
}

/** Calls LISTENER at every silence (the runtime logs it); returns the function that stops it. */
export function onSilence (listener: (report: SilenceReport) => void): () => void {
  listeners.add(listener)
  return () => { listeners.delete(listener) }
}

/** Forgets every silence and every watched connection (tests). */
export function clearSilences (): void {
  open.clear()
  silencedAt.clear()
  lastSilence = -Infinity
}
