/**
 * Requests a broker holds far longer than it should, while nothing cuts them: a broker its cluster still lists
 * (a hung disk, long GC pauses, followers behind under acks=all, a client quota throttling the connection) holds
 * requests until their own timeout ends them, and a frozen broker does until its cluster fences it. So that the
 * operator is not left with a silent stall meanwhile, every request that has waited SLOW_MS is reported once (the
 * runtime counts each and logs the first of a broker at warn, the rest of the minute at debug). Reporting cuts
 * nothing. The requests come from the fence watch's tracking (fenced-brokers.ts), in the order they were written.
 *
 * Invariants:
 * - Requests a broker holds by design are never reported (PATIENT_APIS), nor the requests written after one of
 *   them on the same connection while it waits: a broker handles a connection's requests one at a time, in order,
 *   so those queue behind it. Once it is answered, they count from its answer, not from their write.
 * - A check that comes late (this process paused: a long GC or VM pause) reports nothing: answers that arrived
 *   meanwhile are not read yet, and every request would look slow.
 * - Bounded: the last warn per broker is forgotten after SLOW_AGAIN_MS, a connection's release time goes with it.
 */
import type { Connection } from '@platformatic/kafka'
import { protocolAPIsById } from '@platformatic/kafka'
import { addressKey } from './same-broker.ts'

/** A request unanswered this long (not one a broker holds by design) is reported. */
export const SLOW_MS = 10_000
/** The first slow request of a broker is logged at warn; the next ones within this long are the same trouble. */
export const SLOW_AGAIN_MS = 60_000

/**
 * What brokers hold by design: Fetch (a long poll, up to fetch.max.wait.ms), JoinGroup and SyncGroup (until the
 * rebalance completes), and the requests that wait for the controller (up to their own timeout, or forwarded to it
 * in KRaft mode): a thousand topics created at once, or a slow controller, is not this broker's trouble.
 */
const PATIENT_NAMES = new Set(['Fetch', 'JoinGroup', 'SyncGroup', 'CreateTopics', 'DeleteTopics', 'DeleteRecords', 'CreatePartitions', 'ElectLeaders',
  'CreateAcls', 'DeleteAcls', 'AlterConfigs', 'IncrementalAlterConfigs', 'AlterPartitionReassignments', 'AlterClientQuotas', 'AlterUserScramCredentials', 'UpdateFeatures'])
const PATIENT_APIS: ReadonlySet<number> = new Set(Object.entries(protocolAPIsById).filter(([, name]) => PATIENT_NAMES.has(name)).map(([key]) => Number(key)))

/** The name of an API key, for messages ("Produce"). */
export const apiName = (apiKey: number): string => (protocolAPIsById as Record<number, string | undefined>)[apiKey] ?? `API ${apiKey}`

/** A request waiting on a broker since `at` (written then). */
export interface Waiting { readonly at: number, readonly apiKey: number }

/** One request that waited SLOW_MS or more. */
export interface SlowBrokerReport {
  /** `host:port` of the broker (its `addressKey`). */
  readonly broker: string
  /** The cluster's label ("cluster B"). */
  readonly cluster: string
  /** The request's API name ("Produce"). */
  readonly api: string
  readonly waitedMs: number
  /** The first report of this broker within SLOW_AGAIN_MS: logged at warn (the others at debug). */
  readonly first: boolean
}

export class SlowRequests {
  readonly #clusterOf: (connection: Connection) => string | undefined
  readonly #report: (report: SlowBrokerReport) => void
  /** A check later than this after the one before means this process was paused. */
  readonly #lateAfterMs: number
  readonly #reported = new WeakSet<Waiting>()
  /** When a request a broker holds by design was last answered on a connection: those queued behind it count from then. */
  readonly #releasedAt = new WeakMap<Connection, number>()
  /** `addressKey` → when its last warn was. */
  readonly #warnedAt = new Map<string, number>()
  #lastCheck: number | null = null

  constructor (clusterOf: (connection: Connection) => string | undefined, report: (report: SlowBrokerReport) => void, lateAfterMs: number) {
    this.#clusterOf = clusterOf
    this.#report = report
    this.#lateAfterMs = lateAfterMs
  }

  /** A request was answered on CONNECTION at NOW. */
  answered (connection: Connection, request: Waiting, now: number): void {
    if (PATIENT_APIS.has(request.apiKey)) this.#releasedAt.set(connection, now)
  }

  /** Reports every request of WAITING (per connection, in the order written) that has become slow by NOW. */
  check (waiting: ReadonlyMap<Connection, ReadonlyMap<number, Waiting>>, now: number): void {
    const late = this.#lastCheck !== null && now - this.#lastCheck > this.#lateAfterMs
    this.#lastCheck = now
    if (late) return
    for (const [key, at] of this.#warnedAt) if (now - at >= SLOW_AGAIN_MS) this.#warnedAt.delete(key)
    for (const [connection, requests] of waiting) {
      const releasedAt = this.#releasedAt.get(connection) ?? Number.NEGATIVE_INFINITY
      for (const request of requests.values()) {
        // The ones after a request the broker holds by design queue behind it
        if (PATIENT_APIS.has(request.apiKey)) break
        const waitedMs = now - Math.max(request.at, releasedAt)
        if (waitedMs < SLOW_MS || this.#reported.has(request)) continue
        const cluster = this.#clusterOf(connection)
        if (cluster === undefined) break
        this.#reported.add(request)
        const broker = addressKey(`${connection.host}:${connection.port}`)
        const first = !this.#warnedAt.has(broker)
        if (first) this.#warnedAt.set(broker, now)
        this.#report({ broker, cluster, api: apiName(request.apiKey), waitedMs, first })
      }
    }
  }
}
