/**
 * The metrics port the engine writes to. Every metric is declared once in `definitions.ts`; the engine names
 * it by key and never sees the metrics library (the Prometheus registry lives in `registry.ts`).
 */
import type { MetricKey } from './definitions.ts'

export type MetricLabels = Readonly<Record<string, string>>

export interface Metrics {
  /** Adds `value` (default 1) to a counter. */
  inc (metric: MetricKey, labels: MetricLabels, value?: number): void
  /** Sets a gauge. */
  set (metric: MetricKey, labels: MetricLabels, value: number): void
  /** Adds an observation to a histogram. */
  observe (metric: MetricKey, labels: MetricLabels, value: number): void
  /**
   * Removes the series of each of METRICS labelled exactly LABELS (every label of the metric, as `inc`, `set` and
   * `observe` take them): `/metrics` no longer shows it, and a later `inc`, `set` or `observe` starts it afresh
   * (a counter from 0). A metric without that series is left as it is.
   */
  remove (metrics: readonly MetricKey[], labels: MetricLabels): void
}

/** Metrics that go nowhere: for unit tests and one-shot commands. */
export const noMetrics: Metrics = { inc: () => undefined, set: () => undefined, observe: () => undefined, remove: () => undefined }
