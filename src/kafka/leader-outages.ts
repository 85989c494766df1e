/**
 * Source brokers the data path cannot fetch from while the others answer: a broker killed or restarting (connection
 * refused), one whose connections were cut (silent-brokers.ts), a request that failed on the way. Without this, one
 * such broker failed every fetch round of its flow, so the partitions every other broker leads stopped too until the
 * cluster moved the dead broker's leadership away (its broker session timeout, 9 s by default, and longer with
 * ZooKeeper), while kmirror backed off the whole round.
 *
 * Invariants:
 * - A broker in an outage is asked again after a back-off (BACKOFF_BASE_MS doubling up to BACKOFF_MAX_MS), not at
 *   every round: rounds of the others go on at their own pace, and a dead broker is not dialled a hundred times a
 *   second. Meanwhile its partitions come back RETRY, unread, where they were: nothing skipped, nothing advanced.
 * - A failure that was slow (a timeout: the broker's host gone without a reset, a broker that holds requests and is
 *   not fenced) held the round of every other broker as long; it rests twice as long as it took (at most
 *   SLOW_REST_MAX_MS), so the others copy at least two thirds of the time. A fast failure rests BACKOFF_MAX_MS at
 *   most.
 * - Resting does not hide a move: the fetcher reads the leaders of a resting broker's topics again every 500 ms,
 *   so partitions the cluster moved to another leader are fetched from there at once.
 * - Reported to the process's listeners (the runtime logs and counts them): the start of an outage once, each
 *   further failed try (logged at debug), and its end: answered again, or no partition led by it any more for
 *   MOVED_AFTER_MS (a rebalance or an election can take its partitions out of a round or two and give them back:
 *   without the wait each such flap was a "leads none" line and then a new outage's warning).
 * - A listener that throws never fails a fetch.
 */

import { ErrorCodes, isKmirrorError } from '../errors.ts'
import { kafkaErrorInfo } from './errors.ts'

/** The first try after a failure waits this long; each further one twice as long, up to BACKOFF_MAX_MS. */
export const BACKOFF_BASE_MS = 200
export const BACKOFF_MAX_MS = 2_000
/** A failed fetch that took this long held its round: its broker rests twice as long, up to SLOW_REST_MAX_MS. */
export const SLOW_FAILURE_MS = 5_000
export const SLOW_REST_MAX_MS = 30_000
/** How long a broker in an outage must lead none of the partitions read before its outage ends as MOVED. */
export const MOVED_AFTER_MS = 3_000
/** Partitions named in a report; the count says how many there are. */
export const PARTITIONS_NAMED = 5

export const OutagePhases = {
  /** The first failed fetch of an outage. */
  DOWN: 'down',
  /** Another failed try of the same outage. */
  AGAIN: 'again',
  /** The broker answered a fetch again. */
  BACK: 'back',
  /** The partitions it led have moved away (or lost their leader): nothing is asked of it any more. */
  MOVED: 'moved'
} as const
export type OutagePhase = (typeof OutagePhases)[keyof typeof OutagePhases]

/** One step of a broker's outage, for the operator. */
export interface LeaderOutageReport {
  readonly phase: OutagePhase
  /** `host:port`. */
  readonly broker: string
  readonly node: number
  /** The cluster's label ("cluster A"). */
  readonly cluster: string
  /** Whose fetches (the flow's name), when told: two flows reading one cluster each report its broker. */
  readonly reader?: string
  /** The partitions that wait on it (DOWN, AGAIN): how many, and the first PARTITIONS_NAMED ("orders-3"). */
  readonly partitions: number
  readonly named: readonly string[]
  /** The last failure's message (it names the request, the broker and the fix). */
  readonly cause: string
  /** Failed tries so far in this outage. */
  readonly failures: number
  /** Since the outage began. */
  readonly outageMs: number
  /** DOWN, AGAIN: when it is asked again. */
  readonly retryInMs: number
}

const listeners = new Set<(report: LeaderOutageReport) => void>()

/** Tells LISTENER of every outage step of any fetcher of this process; returns the unsubscribe function. */
export function onLeaderOutage (listener: (report: LeaderOutageReport) => void): () => void {
  listeners.add(listener)
  return () => { listeners.delete(listener) }
}

function tell (report: LeaderOutageReport): void {
  for (const listener of listeners) {
    try { listener(report) } catch { /* a listener only reports; the fetch goes on */ }
  }
}

interface Outage {
  readonly broker: string
  readonly since: number
  failures: number
  retryAt: number
  cause: string
  /** Since when the rounds' partitions have not been led by it; null while it leads some. */
  leadsNoneSince: number | null
}

/** The outages of one fetcher's brokers (one cluster). */
export class LeaderOutages {
  readonly #cluster: string
  readonly #reader: string | undefined
  readonly #outages = new Map<number, Outage>()

  constructor (cluster: string, reader?: string) {
    this.#cluster = cluster
    this.#reader = reader
  }

  /** Whether NODE is in an outage and not due for another try at NOW: its partitions wait without a request. */
  resting (node: number, now = Date.now()): boolean {
    const outage = this.#outages.get(node)
    return outage !== undefined && now < outage.retryAt
  }

  /** The cause of NODE's outage, or undefined when it has none. */
  causeOf (node: number): string | undefined {
    return this.#outages.get(node)?.cause
  }

  /**
   * A fetch from NODE (BROKER, `host:port`) failed with CAUSE after TOOK_MS; PARTITIONS (`topic-p`) wait on it. A
   * failure that took SLOW_FAILURE_MS or more (a connection or request timing out) held the round that long: the
   * broker then rests twice as long (up to SLOW_REST_MAX_MS), so the other brokers' partitions copy two thirds of
   * the time at least while it stays out of reach.
   */
  failed (node: number, broker: string, cause: string, partitions: readonly string[], now = Date.now(), tookMs = 0): void {
    const before = this.#outages.get(node)
    const outage = before ?? { broker, since: now, failures: 0, retryAt: now, cause, leadsNoneSince: null }
    outage.failures++
    outage.cause = cause
    const backoffMs = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (outage.failures - 1))
    const retryInMs = tookMs >= SLOW_FAILURE_MS ? Math.min(SLOW_REST_MAX_MS, Math.max(backoffMs, 2 * tookMs)) : backoffMs
    outage.retryAt = now + retryInMs
    this.#outages.set(node, outage)
    this.#tell(before === undefined ? OutagePhases.DOWN : OutagePhases.AGAIN, node, outage, partitions, now, retryInMs)
  }

  /** NODE answered a fetch: the end of its outage, if it had one. */
  answered (node: number, now = Date.now()): void {
    this.#end(node, OutagePhases.BACK, now)
  }

  /**
   * The leaders of this round's partitions: an outage of a broker that has led none of them for MOVED_AFTER_MS has
   * ended (the cluster moved its partitions away).
   */
  leading (nodes: ReadonlySet<number>, now = Date.now()): void {
    for (const [node, outage] of [...this.#outages]) {
      if (nodes.has(node)) {
        // Partitions given back to it (it may be a new incarnation): tried at once, as after a MOVED end
        if (outage.leadsNoneSince !== null) outage.retryAt = Math.min(outage.retryAt, now)
        outage.leadsNoneSince = null
      } else if (outage.leadsNoneSince === null) outage.leadsNoneSince = now
      else if (now - outage.leadsNoneSince >= MOVED_AFTER_MS) this.#end(node, OutagePhases.MOVED, now)
    }
  }

  get size (): number {
    return this.#outages.size
  }

  #end (node: number, phase: OutagePhase, now: number): void {
    const outage = this.#outages.get(node)
    if (outage === undefined) return
    this.#outages.delete(node)
    this.#tell(phase, node, outage, [], now, 0)
  }

  #tell (phase: OutagePhase, node: number, outage: Outage, partitions: readonly string[], now: number, retryInMs: number): void {
    tell({
      phase, broker: outage.broker, node, cluster: this.#cluster, ...(this.#reader === undefined ? {} : { reader: this.#reader }), partitions: partitions.length, named: partitions.slice(0, PARTITIONS_NAMED),
      cause: outage.cause, failures: outage.failures, outageMs: now - outage.since, retryInMs
    })
  }
}

/**
 * A broker's fetch failing in a way that concerns that broker alone: unreachable or its connection cut
 * (CLUSTER_UNREACHABLE), no answer in time (TIMEOUT), or a whole-request error the broker answered that waiting
 * fixes (its Kafka error named). Its partitions can wait while the others are read. Refused credentials, errors
 * kmirror cannot classify (a response it cannot decode, a bug) fail the read.
 */
export function isLeaderOutage (err: unknown): boolean {
  if (!isKmirrorError(err) || !err.retriable) return false
  if (err.code === ErrorCodes.CLUSTER_UNREACHABLE || err.code === ErrorCodes.TIMEOUT) return true
  const names = err.details?.['kafkaErrors']
  return err.code === ErrorCodes.FETCH && Array.isArray(names) && names.length > 0 && names.every(n => typeof n === 'string' && kafkaErrorInfo(n).retriable)
}
