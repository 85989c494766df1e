/**
 * Where the batch writer (batch-writer.ts) sends each partition: the target's metadata read fresh for every write
 * (a remote topic may just have been created or grown: no cache), partitions grouped by their leader, and a small
 * probe of whether a leader answers for its partitions yet.
 *
 * Invariants:
 * - A partition of a topic the target refuses to describe (no DESCRIBE) is `refused`, never "no leader yet":
 *   waiting for it would be silent.
 * - A partition the target does not have yet, or without a leader right now, is `leaderless`, so the others are
 *   not held up by it.
 * - Metadata is asked of the brokers the last answer named, then of the bootstrap servers.
 * - Only the "not now" probes reuse metadata, for at most PROBE_METADATA_MAX_AGE_MS and only while it names a
 *   leader for every probed partition: a probe decides when data is sent again, never where.
 * - A probe remembers why each partition it found not ready is not (`unready`), until a probe finds it ready or the
 *   writer forgets it: what the operator is told about a partition that waits long (target-wait.ts). A probe whose
 *   metadata read failed gives every probed partition that failure as its reason.
 */
import type { Broker, Connection } from '@platformatic/kafka'
import { groupBy } from '../collections.ts'
import { ErrorCodes } from '../errors.ts'
import type { ClusterContext } from './connection-hints.ts'
import { kafkaErrorName, kafkaErrorNames, toKmirrorError } from './errors.ts'
import { leaderOf, toLeaderMetadata } from './metadata-cache.ts'
import { ListOffsetsApi, ListOffsetTimestamps } from './protocol/list-offsets.ts'
import { MetadataApi } from './protocol/metadata.ts'
import { partitionKey } from '../topic-partition.ts'
import type { WriterTransport } from './broker-produce.ts'
import { askAnyBroker } from './broker-suspects.ts'

export type TargetMetadata = ReturnType<typeof toLeaderMetadata>

/** A leader's probe that failed: none of its partitions is ready. */
const NO_ANSWER: ReadonlyMap<string, number> = new Map()

/** Why a probed partition is not ready: a Kafka error name, and what it means for this partition, naming the broker. */
export interface Unready {
  readonly error: string
  readonly detail: string
  /** The fix, when the error's usual one does not apply (partition-failures.ts `waiting` picks it otherwise). */
  readonly remedy?: string
}

/** How long "not now" probes group partitions by the leaders an earlier probe's metadata named. */
const PROBE_METADATA_MAX_AGE_MS = 1000

/** The items of a write grouped by the leader of their partition (see the invariants). */
export interface ByLeader<T> {
  readonly brokers: Map<number, Broker>
  readonly byLeader: Map<number, T[]>
  readonly leaderless: T[]
  readonly refused: { item: T, errorCode: number }[]
  /** The topic id of each topic the cluster has; null from brokers without topic ids (before Kafka 2.8). */
  readonly ids: ReadonlyMap<string, string | null>
}

export class TargetLeaders {
  readonly #transport: WriterTransport
  readonly #cluster: ClusterContext
  readonly #bootstrap: Broker[]
  /** Where metadata is asked: the bootstrap servers, then the brokers they named. */
  #brokers: Broker[]
  /** The metadata the last probe read, and when (`#probeLeaders`). */
  #probed: { at: number, metadata: TargetMetadata } | null = null
  /** Why each partition the last probes found not ready is not, by `partitionKey`. */
  readonly #unready = new Map<string, Unready>()

  constructor (transport: WriterTransport, bootstrap: Broker[], cluster: ClusterContext) {
    this.#transport = transport
    this.#cluster = cluster
    this.#bootstrap = bootstrap
    this.#brokers = bootstrap
  }

  /** The brokers the last metadata named, then the bootstrap ones. */
  get brokers (): Broker[] {
    return this.#brokers
  }

  /** Fresh every write (a remote topic may just have been created or grown): no cache. */
  async metadata (topics: readonly string[]): Promise<TargetMetadata> {
    try {
      const metadata = toLeaderMetadata(await askAnyBroker(this.#transport.pool, this.#brokers, async connection => await this.#transport.send(connection, MetadataApi, { topics }, this.#cluster.label)))
      if (metadata.brokers.size > 0) this.#brokers = [...metadata.brokers.values(), ...this.#bootstrap]
      return metadata
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.PRODUCE, `read the metadata of ${this.#cluster.label} before writing`, this.#cluster)
    }
  }

  /** The items grouped by the leader of their partition; leaderless and refused ones apart. */
  async byLeader<T> (items: readonly T[], partitionOf: (item: T) => { topic: string, partition: number }): Promise<ByLeader<T>> {
    const metadata = await this.metadata([...new Set(items.map(i => partitionOf(i).topic))])
    const refused = items.flatMap(item => {
      const errorCode = metadata.refused.get(partitionOf(item).topic)
      return errorCode === undefined ? [] : [{ item, errorCode }]
    })
    const byLeader = groupBy(items.filter(item => !metadata.refused.has(partitionOf(item).topic)), item => leaderOf(metadata, partitionOf(item).topic, partitionOf(item).partition))
    const leaderless = byLeader.get(-1) ?? []
    byLeader.delete(-1)
    const ids = new Map([...metadata.topics].map(([name, t]) => [name, t.id]))
    return { brokers: metadata.brokers, byLeader, leaderless, refused, ids }
  }

  /**
   * Which of these partitions their leader answers for now (a ListOffsets probe; errors count as not ready). Each
   * leader answers for its own partitions: one that fails or is slow (a broker restarting) holds up no other's.
   */
  async ready<T extends { topic: string, partition: number }> (partitions: readonly T[]): Promise<T[]> {
    try {
      const { brokers, byLeader, metadata } = await this.#probeLeaders(partitions)
      const ready: T[] = []
      // One reason object per kind of answer and probe, shared by its partitions: thousands wait at a cold start.
      const reasons = new Map<string, Unready>()
      const reason = (id: string, make: () => Unready): Unready => reasons.get(id) ?? reasons.set(id, make()).get(id)!
      for (const p of byLeader.get(-1) ?? []) {
        const count = metadata.topics.get(p.topic)?.leaders.length
        const kind = count === undefined ? 'no-topic' : p.partition >= count ? `no-partition:${count}:${p.topic}` : 'no-leader'
        this.#unready.set(partitionKey(p.topic, p.partition), reason(kind, () => this.#withoutLeader(p.topic, p.partition, count)))
      }
      byLeader.delete(-1)
      await Promise.all([...byLeader].map(async ([node, list]) => {
        const broker = brokers.get(node)!
        const errors = await this.#probeLeaderAt(broker, list)
        for (const p of list) {
          const key = partitionKey(p.topic, p.partition)
          const error = errors.get(key)
          if (error === 0) {
            ready.push(p)
            this.#unready.delete(key)
          } else {
            this.#unready.set(key, reason(`${node}:${error}`, () => leaderUnready(node, broker, error)))
          }
        }
      }))
      return ready
    } catch (err) {
      // No metadata, no leader known: every partition probed says so, with the cause, rather than nothing.
      const why = this.#metadataUnready(err)
      for (const p of partitions) this.#unready.set(partitionKey(p.topic, p.partition), why)
      return []
    }
  }

  #metadataUnready (err: unknown): Unready {
    const error = toKmirrorError(err, ErrorCodes.PRODUCE, `read the metadata of ${this.#cluster.label}`, this.#cluster)
    const name = kafkaErrorNames(err)[0] ?? (error.code === ErrorCodes.TIMEOUT ? 'REQUEST_TIMED_OUT' : 'NETWORK_EXCEPTION')
    return { error: name, detail: `where it is led is not known: ${error.message}` }
  }

  /** Why the last probe of this partition found it not ready; undefined when it found it ready or never probed it. */
  unready (topic: string, partition: number): Unready | undefined {
    return this.#unready.get(partitionKey(topic, partition))
  }

  /** The partition is no longer written: what was remembered of it goes. */
  forget (topic: string, partition: number): void {
    this.#unready.delete(partitionKey(topic, partition))
  }

  /**
   * Why PARTITION of TOPIC (which has COUNT partitions on the target; undefined: the target does not have the topic)
   * has no leader. A partition past the topic's count is no broker's fault: the remote topic was not grown to the
   * source's count (yet), and pointing at brokers would send the operator to the wrong place.
   */
  #withoutLeader (topic: string, partition: number, count: number | undefined): Unready {
    if (count === undefined) return { error: 'UNKNOWN_TOPIC_OR_PARTITION', detail: `${this.#cluster.label} does not have it yet` }
    if (partition >= count) {
      return {
        error: 'UNKNOWN_TOPIC_OR_PARTITION',
        detail: `remote topic ${topic} on ${this.#cluster.label} has ${count} partition${count === 1 ? '' : 's'}, not this one: ` +
          'its growth to the source topic\'s partition count has not happened yet or failed (the topic refresh logs why: a missing ALTER grant, a policy)'
      }
    }
    return { error: 'LEADER_NOT_AVAILABLE', detail: `no broker of ${this.#cluster.label} leads it (its leader is down or fenced, and no replica in sync can take over)` }
  }

  /**
   * The probed partitions by leader, from the metadata of an earlier probe while it is under PROBE_METADATA_MAX_AGE_MS
   * old and names a leader for every one of them, else read again. Probes come every 20-100 ms while partitions
   * wait, and a target creating thousands of partitions has up to every topic waiting: reading all their metadata
   * at each probe made most of the Metadata requests of a 5,000-partition start. A leader that moved meanwhile only
   * makes a probe say "not ready" until the next read; what is sent is grouped by fresh metadata (`byLeader`).
   */
  async #probeLeaders<T extends { topic: string, partition: number }> (partitions: readonly T[]): Promise<{ brokers: ReadonlyMap<number, Broker>, byLeader: Map<number, T[]>, metadata: TargetMetadata }> {
    const cached = this.#probed
    const fresh = cached !== null && Date.now() - cached.at < PROBE_METADATA_MAX_AGE_MS
    const metadata = fresh && partitions.every(p => leaderOf(cached.metadata, p.topic, p.partition) >= 0)
      ? cached.metadata
      : await this.metadata([...new Set(partitions.map(p => p.topic))])
    if (metadata !== cached?.metadata) this.#probed = { at: Date.now(), metadata }
    return { brokers: metadata.brokers, byLeader: groupBy(partitions, p => leaderOf(metadata, p.topic, p.partition)), metadata }
  }

  /** `#probeLeader` on a connection to BROKER; a failure (no connection, no answer) is no partition ready. */
  async #probeLeaderAt (broker: Broker, partitions: readonly { topic: string, partition: number }[]): Promise<ReadonlyMap<string, number>> {
    try {
      return await this.#probeLeader(await this.#transport.pool.get(broker), partitions)
    } catch {
      return NO_ANSWER
    }
  }

  /**
   * Asks the partitions' leader for their log end, only to learn whether it leads them now: a remote topic's leader
   * is in the metadata before the broker has loaded the partition. The error code per partition (0 = ready): a
   * few bytes, where a produce attempt would carry the data again.
   */
  async #probeLeader (connection: Connection, partitions: readonly { topic: string, partition: number }[]): Promise<ReadonlyMap<string, number>> {
    const topics = [...groupBy(partitions, p => p.topic)].map(([name, list]) => ({ name, partitions: list.map(p => ({ partition: p.partition, timestamp: ListOffsetTimestamps.LATEST })) }))
    const response = await this.#transport.send(connection, ListOffsetsApi, { isolationLevel: 0, topics }, this.#cluster.label)
    const errors = new Map<string, number>()
    for (const t of response.topics) for (const p of t.partitions) errors.set(partitionKey(t.name, p.partition), p.errorCode)
    return errors
  }
}

/** Why the leader NODE did not find a partition ready: its error for it, or no answer (`error` undefined). */
function leaderUnready (node: number, broker: Broker, error: number | undefined): Unready {
  const leader = `its leader, broker ${node} (${broker.host}:${broker.port}),`
  if (error === undefined) return { error: 'NETWORK_EXCEPTION', detail: `${leader} does not answer` }
  const name = kafkaErrorName(error)
  return { error: name, detail: `${leader} answers ${name} for it` }
}
