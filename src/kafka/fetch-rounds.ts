/**
 * One read of many partitions: split by leader, each leader asked at once, the answers put together
 * (record-fetcher.ts sends each broker's share). In the data path (`partial`) a round takes what it can: partitions
 * without a leader, of a broker resting after a failure (leader-outages.ts), or of a broker slower than the others
 * (late-fetches.ts) come back RETRY with the reason, and the other brokers' answers are kept.
 *
 * Invariants:
 * - Every position asked gets exactly one result per round, in no particular order: an answer, RETRY (unread,
 *   where it was) or FAILED (refused by the cluster); or the whole read throws.
 * - At most one fetch per broker is out (late-fetches.ts): none is sent to a broker whose earlier fetch has not
 *   settled. A late answer is used only for the partitions asked again at the very offsets it was fetched from.
 * - The read throws when a failure is not a broker's alone (credentials refused, an answer that cannot be read), or
 *   when no broker answered or may still answer (the cluster down); never when only some brokers failed in
 *   `partial`.
 * - While a broker rests or has a fetch out past its round, its topics' leaders are read again every
 *   LEADERLESS_RECHECK_MS (alone), so partitions the cluster moves to another broker are fetched from there at once;
 *   a broker with a fetch out is also a suspect from the round that left it out (asked last by the requests any
 *   broker answers, so their Metadata does not wait on it while another broker answers). A fetch kmirror holds back
 *   for the broker's quota throttle is late by the quota, not the broker: neither.
 */
import type { Broker } from '@platformatic/kafka'
import { groupBy } from '../collections.ts'
import { noteOutcome, suspect } from './broker-suspects.ts'
import type { ClusterContext } from './connection-hints.ts'
import { emptyBatches, FetchOutcomes, throttled, unanswered, unreached, type FetchedBatches, type PartitionPosition, type RetryReason } from './fetch-results.ts'
import { GRACE_MS, LateFetches, matchLate, settleWithGrace } from './late-fetches.ts'
import { isLeaderOutage, LeaderOutages } from './leader-outages.ts'
import { leaderOf, type LeaderMetadata, type MetadataCache, type TopicLeaders } from './metadata-cache.ts'

/** How soon the leaders of a topic with a partition without one (or on a resting or late broker) are read again. */
export const LEADERLESS_RECHECK_MS = 500

export interface FetchRoundsDeps {
  readonly metadata: Pick<MetadataCache, 'leaders' | 'recheck' | 'invalidate'>
  readonly cluster: ClusterContext
  /** `fetch.max.wait.ms`: a late broker is left out this long plus GRACE_MS after the first answer. */
  readonly maxWaitMs: number
  /** Take what the round can (the data path); off: the read is all or nothing, as every other reader wants. */
  readonly partial: boolean
  /** Who reads (the flow's name), named in the outage reports. */
  readonly reader?: string
  /** One broker's share of the round; its message begins with `fetchFromLabel` when it throws. */
  readonly fetchFrom: (node: number, broker: Broker, positions: PartitionPosition[], topics: ReadonlyMap<string, TopicLeaders>, how: ReadOptions) => Promise<FetchedBatches[]>
  /** The result of a partition whose topic the cluster refused to describe (Kafka error CODE). */
  readonly refused: (position: PartitionPosition, code: number) => FetchedBatches
  /**
   * Until when (epoch ms) NODE's next fetch is held on kmirror's side, waiting out the broker's quota throttle
   * (KIP-219) before it is sent; 0 or past when it is not: such a broker is late by its quota, not slow or frozen.
   */
  readonly throttledUntil?: (node: number) => number
}

/** How one read fetches: each partition's byte limit, and whether in the broker's fetch session. */
export interface ReadOptions {
  readonly partitionMaxBytes: number
  readonly session: boolean
}

/** What a failed fetch's message begins with ("fetch from broker 2 (host:9092) of cluster A"). */
export function fetchFromLabel (node: number, broker: Broker, cluster: ClusterContext): string {
  return `fetch from broker ${node} (${broker.host}:${broker.port}) of ${cluster.label}`
}

export class FetchRounds {
  readonly #deps: FetchRoundsDeps
  /** With `partial`: the brokers whose fetches fail while others answer. */
  readonly #outages: LeaderOutages | null
  /** With `partial`: fetches of brokers slower than the others, left out at the end of their round. */
  readonly #late: LateFetches | null

  constructor (deps: FetchRoundsDeps) {
    this.#deps = deps
    this.#outages = deps.partial ? new LeaderOutages(deps.cluster.label, deps.reader) : null
    this.#late = deps.partial ? new LateFetches() : null
  }

  async read (positions: readonly PartitionPosition[], how: ReadOptions): Promise<FetchedBatches[]> {
    if (positions.length === 0) return []
    const metadata = await this.#deps.metadata.leaders([...new Set(positions.map(p => p.topic))])
    // A topic the cluster refused to describe fails its partitions alone.
    const results = positions.filter(p => metadata.refused.has(p.topic)).map(p => this.#deps.refused(p, metadata.refused.get(p.topic)!))
    const byLeader = groupBy(positions.filter(p => !metadata.refused.has(p.topic)), position => leaderOf(metadata, position.topic, position.partition))
    const leaderless = byLeader.get(-1)
    if (leaderless !== undefined) {
      byLeader.delete(-1)
      results.push(...this.#leaderless(leaderless, metadata))
    }
    if (this.#outages !== null) results.push(...this.#resting(this.#outages, byLeader, metadata.brokers))
    // A broker whose late answer this round uses, or whose fetch is still out, is one that answers (or may): the
    // brokers asked now failing is then not the cluster down.
    const lateOnes = this.#late === null ? { results: [], othersAnswer: false } : await this.#collectLate(this.#late, byLeader, metadata)
    results.push(...lateOnes.results)
    const asked = [...byLeader]
    const started = Date.now()
    const failedAt = new Map<number, number>()
    const fetches = asked.map(async ([node, list]) => await this.#deps.fetchFrom(node, metadata.brokers.get(node)!, list, metadata.topics, how)
      .catch((err: unknown) => { failedAt.set(node, Date.now() - started); throw err }))
    const late = this.#late
    if (late === null) {
      this.#settle(asked, await Promise.allSettled(fetches), metadata.brokers, failedAt, results)
      return results
    }
    const settled = await settleWithGrace(fetches, this.#deps.maxWaitMs + GRACE_MS)
    asked.forEach(([node, list], i) => {
      if (settled[i] !== undefined) return
      late.leave(node, fetches[i]!, started, new Map(list.map(p => [p.topic, metadata.topics.get(p.topic)?.id ?? null])))
      results.push(...this.#waitingOnLate(node, metadata.brokers.get(node)!, list, started))
    })
    const answered = settled.flatMap((s, i) => s === undefined ? [] : [i])
    this.#settle(answered.map(i => asked[i]!), answered.map(i => settled[i]!), metadata.brokers, failedAt, results, lateOnes.othersAnswer)
    return results
  }

  /**
   * Takes out of BY_LEADER the brokers with a fetch out from an earlier round (their partitions RETRY, unread) and
   * those whose late fetch settled since: its answers for the partitions asked again at the same offsets are this
   * round's (the others are asked anew); its failure is theirs now. When every broker left has a fetch out, waits
   * (at most `fetch.max.wait.ms`) for one to settle first, so that such a round neither spins nor returns nothing.
   */
  async #collectLate (late: LateFetches, byLeader: Map<number, PartitionPosition[]>, metadata: LeaderMetadata): Promise<{ results: FetchedBatches[], othersAnswer: boolean }> {
    late.forgetSettled(new Set(byLeader.keys()))
    if (byLeader.size > 0 && [...byLeader.keys()].every(node => late.outstanding(node))) await late.anySettled(byLeader.keys(), this.#deps.maxWaitMs)
    const results: FetchedBatches[] = []
    let othersAnswer = false
    for (const [node, list] of [...byLeader]) {
      const broker = metadata.brokers.get(node)!
      const sentAt = late.sentAt(node)
      if (sentAt !== undefined) {
        results.push(...this.#waitingOnLate(node, broker, list, sentAt))
        byLeader.delete(node)
        othersAnswer = true
        continue
      }
      const outcome = late.take(node)
      if (outcome === null) continue
      if (!outcome.ok) {
        byLeader.delete(node)
        // Rests as a fast failure would: a late fetch held no round, however long it took.
        this.#settle([[node, list]], [{ status: 'rejected', reason: outcome.reason }], metadata.brokers, new Map([[node, 0]]), results, true)
        continue
      }
      othersAnswer = true
      this.#outages?.answered(node)
      noteOutcome(broker)
      const current = new Map(list.map(p => [p.topic, metadata.topics.get(p.topic)?.id ?? null]))
      const { answered, unanswered: again } = matchLate(outcome.value, list, outcome.topicIds, current)
      results.push(...answered)
      if (again.length === 0) byLeader.delete(node)
      else byLeader.set(node, again)
    }
    return { results, othersAnswer }
  }

  /**
   * The partitions LIST of NODE, whose fetch (sent at SENT_AT) is out past its round (from the round that leaves it
   * out on): RETRY, unread. Leaders the cluster moves off it (it fenced the broker, or a reassignment) are seen within
   * LEADERLESS_RECHECK_MS, not at the cut, and the broker is asked last meanwhile, so that Metadata request does not
   * wait on it (a suspect is only ordered last: still asked when no other broker answers). A fetch kmirror holds to
   * honour the broker's quota throttle is not the broker's lateness: its partitions say so, nothing else is done.
   */
  #waitingOnLate (node: number, broker: Broker, list: PartitionPosition[], sentAt: number): FetchedBatches[] {
    const until = this.#deps.throttledUntil?.(node) ?? 0
    if (until > Date.now()) return throttled(list, node, broker, until)
    suspect(broker)
    this.#deps.metadata.recheck(new Set(list.map(p => p.topic)), LEADERLESS_RECHECK_MS)
    return unanswered(list, node, broker, sentAt)
  }

  /**
   * Partitions without a known leader (a topic deleted or not there yet, a leader moving, its replicas' brokers down)
   * wait, RETRY with the reason; the others go on. In the data path (`partial`) their topics' leaders are read again
   * LEADERLESS_RECHECK_MS after their last read, alone: a partition offline for hours costs a small Metadata
   * request a few times a second, not one of every topic at every round. Other readers read every topic again at
   * their next try (a loop reading to an end waits on that request, never spins).
   */
  #leaderless (positions: readonly PartitionPosition[], metadata: LeaderMetadata): FetchedBatches[] {
    const label = this.#deps.cluster.label
    const noLeader: RetryReason = { error: 'LEADER_NOT_AVAILABLE', detail: `${label} names no leader for it (its replicas' brokers down, or none in sync)` }
    const noTopic: RetryReason = { error: 'UNKNOWN_TOPIC_OR_PARTITION', detail: `its topic is not in the metadata of ${label} (deleted, or not created yet)` }
    if (this.#outages === null) this.#deps.metadata.invalidate()
    else this.#deps.metadata.recheck(new Set(positions.map(p => p.topic)), LEADERLESS_RECHECK_MS)
    return positions.map(position => ({ ...emptyBatches(position, FetchOutcomes.RETRY), retryReason: metadata.topics.has(position.topic) ? noLeader : noTopic }))
  }

  /**
   * Takes out of BY_LEADER the brokers resting after a failed fetch: their partitions RETRY, unread. Their topics'
   * leaders are read again every LEADERLESS_RECHECK_MS meanwhile, so partitions the cluster moves to another broker
   * are fetched from there at once, however long the rest.
   */
  #resting (outages: LeaderOutages, byLeader: Map<number, PartitionPosition[]>, brokers: ReadonlyMap<number, Broker>): FetchedBatches[] {
    if (outages.size === 0) return []
    outages.leading(new Set(byLeader.keys()))
    const waiting: FetchedBatches[] = []
    for (const [node, list] of byLeader) {
      if (!outages.resting(node)) continue
      waiting.push(...unreached(list, node, brokers.get(node)!, outages.causeOf(node) ?? 'an earlier fetch failed'))
      this.#deps.metadata.recheck(new Set(list.map(p => p.topic)), LEADERLESS_RECHECK_MS)
      byLeader.delete(node)
    }
    return waiting
  }

  /**
   * The answers of the brokers ASKED, added to RESULTS (FAILED_AT: how long each failed one took). One failing for
   * a reason of its own while another answered (with `partial`): its partitions wait, the others' answers are kept.
   * Otherwise the read fails: with the error that is not a broker's own when there is one (refused credentials
   * must not hide behind a refused connection), else the first; so does every broker asked failing (the cluster
   * down): the step's failure says so.
   */
  #settle (asked: readonly (readonly [number, PartitionPosition[]])[], settled: readonly PromiseSettledResult<readonly FetchedBatches[]>[], brokers: ReadonlyMap<number, Broker>,
    failedAt: ReadonlyMap<number, number>, results: FetchedBatches[], othersAnswer = false): void {
    const outages = this.#outages
    const failure = settled.find(s => s.status === 'rejected')
    if (failure !== undefined) {
      const fatal = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected' && !isLeaderOutage(s.reason))
      if (fatal !== undefined) throw fatal.reason
      // Every broker failing is the cluster down, unless another answers (a late answer, a fetch still out).
      if (outages === null || (!othersAnswer && settled.every(s => s.status === 'rejected'))) throw failure.reason
    }
    settled.forEach((s, i) => {
      const [node, list] = asked[i]!
      if (s.status === 'fulfilled') {
        results.push(...s.value)
        outages?.answered(node)
        return
      }
      const broker = brokers.get(node)!
      // The message begins with what failed ("fetch from broker 2 (host:port) of cluster A: "): the report says that.
      const message = s.reason instanceof Error ? s.reason.message : String(s.reason)
      const prefix = `${fetchFromLabel(node, broker, this.#deps.cluster)}: `
      const cause = message.startsWith(prefix) ? message.slice(prefix.length) : message
      outages!.failed(node, `${broker.host}:${broker.port}`, cause, list.map(p => `${p.topic}-${p.partition}`), Date.now(), failedAt.get(node) ?? 0)
      results.push(...unreached(list, node, broker, cause))
    })
  }
}
