/**
 * The metric series a flow's data path exports per topic and per partition (every metric of definitions.ts
 * labelled `flow, topic` or `flow, topic, partition`), and when they go. Without this, a topic deleted on the
 * source, excluded, or handed to another instance would export its last values for as long as the process runs,
 * and short-lived topics would grow the registry without bound.
 *
 * Invariants:
 * - A series labelled with a topic (or a partition) exists on this instance only while its data path copies a
 *   partition of that topic (that partition), and for a bounded time after for counters and histograms: the
 *   partition set (partition-set.ts) tells every partition that leaves it, whatever the reason (revoked by the
 *   group, lost with the membership, topic deleted, excluded or re-created on the source, remote topic unusable),
 *   so this is the one place that removes them.
 * - Gauges (lag and its unknown partitions, per topic and per partition) go at once: a stale lag is wrong.
 * - Counters and histograms (records, bytes, batches, losses, latencies) are kept, frozen, for
 *   COUNTED_SERIES_KEPT_MS after the topic's last partition left, then removed: every increment, the last ones
 *   too, reaches at least one scrape (a loss to retention counted just before a revoke still pages), while the
 *   instance exports no series for a topic it stopped copying longer ago than that. A topic copied again
 *   meanwhile keeps its series and counts on (no reset); one copied again later starts from 0 at its next
 *   increment, which `rate()` and `increase()` read as a counter reset, as after a restart.
 *   Revoked or deleted is the same here: an instance of a group that does not run the topic refresh learns of a
 *   deletion or an exclusion only as a revoke.
 * - A stopped data path removes every series of its topics at once (`removeAll`).
 */
import { MetricDefinitions, MetricTypes, type MetricDefinition, type MetricKey } from '../metrics/definitions.ts'
import type { Metrics } from '../metrics/metrics.ts'

/**
 * How long the counters and histograms of a topic stay after this instance stopped copying it: longer than a scrape
 * interval and a rule evaluation, and as long as the longest alert window on them (10 min, deploy/prometheus/alerts.yml).
 */
export const COUNTED_SERIES_KEPT_MS = 10 * 60_000

const byLabels = (labels: readonly string[], gauges: boolean): MetricKey[] =>
  (Object.entries(MetricDefinitions) as [MetricKey, MetricDefinition][])
    .filter(([, d]) => d.labels.join() === labels.join() && (d.type === MetricTypes.GAUGE) === gauges)
    .map(([key]) => key)

/** The gauges labelled `flow, topic`: removed as the topic leaves. */
export const TOPIC_GAUGES: readonly MetricKey[] = byLabels(['flow', 'topic'], true)
/** The counters and histograms labelled `flow, topic`: removed COUNTED_SERIES_KEPT_MS after the topic left. */
export const TOPIC_COUNTS: readonly MetricKey[] = byLabels(['flow', 'topic'], false)
/** The gauges labelled `flow, topic, partition`: removed as the partition leaves. */
export const PARTITION_GAUGES: readonly MetricKey[] = byLabels(['flow', 'topic', 'partition'], true)

/** What the series need to know of the partition set: whether a topic has a partition in it now. */
export interface CopiedTopics {
  hasTopic (topic: string): boolean
}

export class TopicSeries {
  readonly #metrics: Metrics
  readonly #flow: string
  readonly #keptMs: number
  /** Topics whose last partition left, with the time their counters and histograms go; in that order. */
  readonly #leaving = new Map<string, number>()

  constructor (metrics: Metrics, flow: string, keptMs = COUNTED_SERIES_KEPT_MS) {
    this.#metrics = metrics
    this.#flow = flow
    this.#keptMs = keptMs
  }

  /** A partition left the set at NOW; LAST_OF_TOPIC: no partition of its topic is left in it. */
  partitionLeft (topic: string, partition: number, lastOfTopic: boolean, now = Date.now()): void {
    this.#metrics.remove(PARTITION_GAUGES, { flow: this.#flow, topic, partition: String(partition) })
    if (!lastOfTopic) return
    this.#metrics.remove(TOPIC_GAUGES, { flow: this.#flow, topic })
    // Moved to the end: the map stays in the order of the times its entries are due (`sweep`).
    this.#leaving.delete(topic)
    this.#leaving.set(topic, now + this.#keptMs)
  }

  /** Removes the counters and histograms of topics that left long enough ago and are not copied again since. */
  sweep (now: number, copied: CopiedTopics): void {
    for (const [topic, due] of this.#leaving) {
      if (due > now) return
      this.#leaving.delete(topic)
      if (!copied.hasTopic(topic)) this.#metrics.remove(TOPIC_COUNTS, { flow: this.#flow, topic })
    }
  }

  /** The data path stopped: every series of PARTITIONS (those it still holds) and of the topics that left, at once. */
  removeAll (partitions: Iterable<{ readonly topic: string, readonly partition: number }>): void {
    const topics = new Set(this.#leaving.keys())
    for (const { topic, partition } of partitions) {
      this.#metrics.remove(PARTITION_GAUGES, { flow: this.#flow, topic, partition: String(partition) })
      topics.add(topic)
    }
    for (const topic of topics) this.#metrics.remove([...TOPIC_GAUGES, ...TOPIC_COUNTS], { flow: this.#flow, topic })
    this.#leaving.clear()
  }
}
