/**
 * Health of a running `kmirror run`, for `/healthz` and `/readyz`: pure, from each flow's progress.
 *
 * - Ready: every flow has started (start-up done, data path running).
 * - Stalled: a flow has completed no fetch-and-write round for longer than its `health.stall.threshold.ms`,
 *   counted from its last completed round, or from the process's start while it has not started (a start that
 *   keeps waiting for a broker). An idle flow, with nothing to copy, completes a round every `fetch.max.wait.ms`
 *   and is not stalled; a flow whose broker does not answer completes none.
 */

export interface FlowProgress {
  readonly name: string
  readonly started: boolean
  /** Date.now() time of the last completed round; null before the data path runs. */
  readonly lastRoundAt: number | null
  readonly stallThresholdMs: number
}

export interface StalledFlow {
  readonly flow: string
  /** How long since the last completed round (or since the start, for a flow not started). */
  readonly sinceMs: number
  readonly thresholdMs: number
  readonly started: boolean
}

export interface HealthReport {
  readonly ready: boolean
  readonly healthy: boolean
  readonly stalled: readonly StalledFlow[]
}

export function evaluateHealth (flows: readonly FlowProgress[], at: { ready: boolean, since: number, now: number }): HealthReport {
  const stalled: StalledFlow[] = []
  for (const f of flows) {
    const sinceMs = at.now - (f.lastRoundAt ?? at.since)
    if (sinceMs > f.stallThresholdMs) stalled.push({ flow: f.name, sinceMs, thresholdMs: f.stallThresholdMs, started: f.started })
  }
  return { ready: at.ready, healthy: stalled.length === 0, stalled }
}

/** The `/healthz` body of a report that is not healthy: one line per stalled flow. */
export function describeStalled (report: HealthReport): string {
  return report.stalled.map(s => `stalled: flow ${s.flow} ${s.started ? 'has completed no fetch-and-write round' : 'has not started'} ` +
    `for ${Math.round(s.sinceMs / 1000)} s (health.stall.threshold.ms = ${s.thresholdMs}); see /status and the log for the cause\n`).join('')
}
