/** A Metrics sink that adds up every increment per metric and label set (`name{"label":"value"}`). */
import type { MetricKey } from '../../src/metrics/definitions.ts'
import type { MetricLabels, Metrics } from '../../src/metrics/metrics.ts'

export class CountingMetrics implements Metrics {
  readonly counts = new Map<string, number>()
  inc (metric: MetricKey, labels: MetricLabels, value = 1): void {
    const key = `${metric}${JSON.stringify(labels)}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + value)
  }

  /** The last value of each gauge per label set (`name{"label":"value"}`). */
  readonly gauges = new Map<string, number>()
  set (metric: MetricKey, labels: MetricLabels, value: number): void {
    this.gauges.set(`${metric}${JSON.stringify(labels)}`, value)
  }

  /** Every observation of each histogram per label set (`name{"label":"value"}`), in order. */
  readonly observations = new Map<string, number[]>()
  observe (metric: MetricKey, labels: MetricLabels, value: number): void {
    const key = `${metric}${JSON.stringify(labels)}`
    this.observations.set(key, [...(this.observations.get(key) ?? []), value])
  }

  /**
   * Every removal asked, in order (`name{"label":"value"}`). The maps above keep what was counted: a data path removes
   * its topics' series when it stops, and tests read the totals after.
   */
  readonly removed: string[] = []
  remove (metrics: readonly MetricKey[], labels: MetricLabels): void {
    for (const metric of metrics) this.removed.push(`${metric}${JSON.stringify(labels)}`)
  }
}
