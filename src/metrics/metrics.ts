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
}

/** Metrics that go nowhere: for unit tests and one-shot commands. */
export const noMetrics: Metrics = { inc: () => undefined, set: () => undefined, observe: () => undefined }
