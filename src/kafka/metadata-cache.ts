/**
 * Partition leaders of the topics a reader asks for, over kmirror's own Metadata request (negotiated per broker),
 * cached until someone says they are stale (a "not leader" answer) or they are older than `maxAgeMs`
 * (`metadata.max.age.ms`, 5 minutes as in the Java client).
 *
 * Invariants:
 * - A topic the cluster does not have is an answer (left out of `topics`), never a failure of the others: one
 *   deleted topic must not stop the partitions of every other topic.
 * - A topic kmirror may not describe (or any other topic error) is in `refused` with its Kafka error code, never a
 *   failure of the others; it is asked again at every use until the cluster answers it.
 * - Brokers come from the latest answer; the bootstrap servers are asked only while no answer came yet, or when
 *   none of the known brokers answers.
 * - Leaders read before one of the brokers fell silent (silent-brokers.ts) are read again at the next use.
 * - Only the topics that are stale (not cached, past their age, or due for a `recheck`) are asked: a topic whose
 *   partition has no leader is looked for again on its own, never with every other topic at every round.
 */
import type { Broker, Connection, ConnectionPool } from '@platformatic/kafka'
import { ErrorCodes } from '../errors.ts'
import type { ClusterContext } from './connection-hints.ts'
import { kafkaErrorName, kafkaResponseError, toKmirrorError } from './errors.ts'
import { MetadataApi, partitionLeaders, type MetadataResponse } from './protocol/metadata.ts'
import { sendRequest } from './protocol/negotiation.ts'
import { askAnyBroker } from './broker-suspects.ts'
import { silentSince } from './silent-brokers.ts'

export interface TopicLeaders {
  /** Null on brokers without topic ids (before Kafka 2.8). */
  readonly id: string | null
  /** Leader per partition index, -1 while a partition has none. */
  readonly leaders: readonly number[]
}

export interface LeaderMetadata {
  readonly brokers: ReadonlyMap<number, Broker>
  /** The asked topics the cluster has. */
  readonly topics: ReadonlyMap<string, TopicLeaders>
  /** Asked topics the cluster answered with an error other than "not there" (e.g. TOPIC_AUTHORIZATION_FAILED): the code. */
  readonly refused: ReadonlyMap<string, number>
}

/** The answer's brokers, each topic that has no error with its id and partition leaders, and the refused topics. */
export function toLeaderMetadata (response: MetadataResponse): { brokers: Map<number, Broker>, topics: Map<string, TopicLeaders>, refused: Map<string, number> } {
  const brokers = new Map([...response.brokers].map(([id, b]) => [id, { host: b.host, port: b.port }]))
  const topics = new Map([...response.topics.values()].filter(t => t.errorCode === 0).map(t => [t.name, { id: t.id, leaders: partitionLeaders(t) }]))
  const refused = new Map([...response.topics.values()].filter(t => t.errorCode !== 0 && !ABSENT.has(kafkaErrorName(t.errorCode))).map(t => [t.name, t.errorCode]))
  return { brokers, topics, refused }
}

/** Throws the error of the first of `topics` the cluster refused to describe, naming it and the missing ACL. */
export function throwIfRefused (metadata: LeaderMetadata, topics: Iterable<string>, cluster: ClusterContext): void {
  for (const topic of topics) {
    const code = metadata.refused.get(topic)
    if (code !== undefined) throw kafkaResponseError(code, ErrorCodes.FETCH, `read metadata of topic ${topic} on ${cluster.label}`, cluster)
  }
}

/** The broker leading a partition now, or -1 when it has none or its leader is not among the known brokers. */
export function leaderOf (metadata: LeaderMetadata, topic: string, partition: number): number {
  const leader = metadata.topics.get(topic)?.leaders[partition]
  return leader !== undefined && leader >= 0 && metadata.brokers.has(leader) ? leader : -1
}

/**
 * Topic errors that mean "not there (yet)": the topic is left out, its partitions wait. A topic the principal may
 * not describe is not absent but refused (`refused`): its partitions are set aside with that error and the others
 * go on; on the source, the topic refresh keeps it and its remote topic (deletion-proof.ts).
 */
const ABSENT = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_ID'])

/** How the cache asks for metadata: kmirror's versioned Metadata request by default; unit tests answer it themselves. */
export type SendMetadata = (connection: Connection, topics: readonly string[], cluster: string) => Promise<MetadataResponse>

const sendMetadata: SendMetadata = async (connection, topics, cluster) => await sendRequest(connection, MetadataApi, { topics }, cluster)

export class MetadataCache {
  readonly #pool: Pick<ConnectionPool, 'getFirstAvailable'>
  readonly #send: SendMetadata
  readonly #bootstrap: readonly Broker[]
  readonly #cluster: ClusterContext
  readonly #maxAgeMs: number
  #brokers = new Map<number, Broker>()
  /**
   * Topics asked since the last invalidation, with when they were read and when they go stale (`at` + maxAgeMs, or
   * sooner by `recheck`); a topic not here or stale is read from the cluster at its next use.
   */
  readonly #topics = new Map<string, { leaders: TopicLeaders, at: number, staleAt: number }>()
  /** Asked topics the cluster does not have: when they were asked, and when to ask again. */
  readonly #absent = new Map<string, { at: number, staleAt: number }>()
  /** Topics of the last answer that carried an error (never cached: asked again at their next use). */
  #refused = new Map<string, number>()
  /**
   * When every cached topic was last read together (epoch ms): a silence since then may concern any of them. A read
   * of some topics only (`recheck`) leaves it, so a silence is never missed for the others.
   */
  #readAt = -Infinity

  constructor (pool: Pick<ConnectionPool, 'getFirstAvailable'>, bootstrap: readonly Broker[], cluster: ClusterContext, maxAgeMs = 300_000, send = sendMetadata) {
    this.#pool = pool
    this.#send = send
    this.#bootstrap = bootstrap
    this.#cluster = cluster
    this.#maxAgeMs = maxAgeMs
  }

  /** Every topic is read from the cluster again at its next use (a leader moved, a partition was added). */
  invalidate (): void {
    this.#topics.clear()
    this.#absent.clear()
  }

  /**
   * These topics are read again at their first use AFTER_MS or more after their last read, alone: a partition
   * without a leader (its broker down, for minutes or hours) or of a topic the cluster does not have (deleted) is
   * looked for again a few times a second, not at every round, and the topics whose leaders are known are not read
   * with it. (A topic not there is otherwise asked again at every use.)
   */
  recheck (topics: Iterable<string>, afterMs: number): void {
    for (const t of topics) {
      const cached = this.#topics.get(t)
      if (cached !== undefined) cached.staleAt = Math.min(cached.staleAt, cached.at + afterMs)
      const absent = this.#absent.get(t)
      if (absent !== undefined) absent.staleAt = absent.at + afterMs
    }
  }

  async leaders (topics: readonly string[]): Promise<LeaderMetadata> {
    const now = Date.now()
    // Leaders read before a broker fell silent may name it; the cluster moves them once it fences the broker.
    if (silentSince(this.#brokers.values(), this.#readAt)) this.invalidate()
    if (this.#brokers.size === 0) await this.#refresh(topics, true)
    else {
      const stale = topics.filter(t => now >= ((this.#topics.get(t) ?? this.#absent.get(t))?.staleAt ?? -Infinity))
      if (stale.length > 0) await this.#refresh(stale, this.#coversCache(stale))
    }
    const out = new Map<string, TopicLeaders>()
    const refused = new Map<string, number>()
    for (const t of topics) {
      const cached = this.#topics.get(t)
      if (cached !== undefined) out.set(t, cached.leaders)
      const code = this.#refused.get(t)
      if (code !== undefined) refused.set(t, code)
    }
    return { brokers: this.#brokers, topics: out, refused }
  }

  /** Whether TOPICS hold every topic cached: read together, they move `#readAt`. */
  #coversCache (topics: readonly string[]): boolean {
    if (topics.length < this.#topics.size) return false
    const asked = new Set(topics)
    for (const t of this.#topics.keys()) if (!asked.has(t)) return false
    return true
  }

  /** Reads TOPICS from the cluster; ALL: they are every topic cached, so `#readAt` moves. */
  async #refresh (topics: readonly string[], all: boolean): Promise<void> {
    // A silence while the request is in flight is after this: the leaders it answers may predate it.
    const sentAt = Date.now()
    let response
    try {
      response = await askAnyBroker(this.#pool, [...this.#brokers.values(), ...this.#bootstrap], async connection => await this.#send(connection, topics, this.#cluster.label))
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.FETCH, `read metadata of ${topics.length} topic(s) from ${this.#cluster.label}`, this.#cluster)
    }
    const at = Date.now()
    if (all) this.#readAt = sentAt
    const { brokers, topics: found, refused } = toLeaderMetadata(response)
    for (const t of topics) {
      this.#refused.delete(t)
      this.#topics.delete(t)
      // Not there (deleted, not created yet): asked again at every use, unless a `recheck` spaces the asks.
      if (found.has(t) || refused.has(t)) this.#absent.delete(t)
      else this.#absent.set(t, { at, staleAt: at })
    }
    for (const [name, code] of refused) this.#refused.set(name, code)
    for (const [name, leaders] of found) this.#topics.set(name, { leaders, at, staleAt: at + this.#maxAgeMs })
    this.#brokers = brokers
  }
}
