/**
 * The Prometheus side of the metrics port: one prom-client registry holding every metric of
 * `definitions.ts`, plus the process's default metrics (CPU, memory, event loop lag).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { MetricDefinitions, MetricTypes, type MetricDefinition, type MetricKey } from './definitions.ts'
import type { MetricLabels, Metrics } from './metrics.ts'

export class PrometheusMetrics implements Metrics {
  readonly #registry = new Registry()
  readonly #counters = new Map<MetricKey, Counter>()
  readonly #gauges = new Map<MetricKey, Gauge>()
  readonly #histograms = new Map<MetricKey, Histogram>()

  constructor () {
    collectDefaultMetrics({ register: this.#registry, prefix: 'kmirror_' })
    for (const [key, def] of Object.entries(MetricDefinitions) as [MetricKey, MetricDefinition][]) {
      const config = { name: def.name, help: def.help, labelNames: [...def.labels], registers: [this.#registry] }
      if (def.type === MetricTypes.COUNTER) this.#counters.set(key, new Counter(config))
      else if (def.type === MetricTypes.HISTOGRAM) this.#histograms.set(key, new Histogram({ ...config, buckets: [...(def.buckets ?? [])] }))
      else this.#gauges.set(key, new Gauge(config))
    }
  }

  inc (metric: MetricKey, labels: MetricLabels, value = 1): void {
    this.#counters.get(metric)?.inc(labels, value)
  }

  set (metric: MetricKey, labels: MetricLabels, value: number): void {
    this.#gauges.get(metric)?.set(labels, value)
  }

  observe (metric: MetricKey, labels: MetricLabels, value: number): void {
    this.#histograms.get(metric)?.observe(labels, value)
  }

  remove (metrics: readonly MetricKey[], labels: MetricLabels): void {
    for (const metric of metrics) {
      // prom-client finds a series by the values of the metric's labels: LABELS must name them all (else nothing goes).
      (this.#counters.get(metric) ?? this.#gauges.get(metric) ?? this.#histograms.get(metric))?.remove(labels)
    }
  }

  /** Forgets every series of a gauge (set again from a snapshot: series of groups or topics gone disappear). */
  clear (metric: MetricKey): void {
    this.#gauges.get(metric)?.reset()
  }

  get contentType (): string {
    return this.#registry.contentType
  }

  async render (): Promise<string> {
    return this.#registry.metrics()
  }
}
