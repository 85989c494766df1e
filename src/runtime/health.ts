/**
 * Health of a running `kmirror run`, for `/healthz` and `/readyz`: pure, from each flow's progress.
 *
 * - Ready: every flow has started (start-up done, data path running).
 * - Stalled: a flow has completed no fetch-and-write round for longer than its `health.stall.threshold.ms`,
 *   counted from its last completed round, or from the process's start while it has not started (a start that
 *   keeps waiting for a broker). An idle flow, with nothing to copy, completes a round every `fetch.max.wait.ms`
 *   and is not stalled; a flow whose broker does not answer completes none.
 * - Also stalled: a started flow in a group whose lease has not held for longer than that threshold (evicted and
 *   unable to join again, its coordinator unavailable). Such a flow owns nothing, or writes nothing, so its rounds
 *   (over no partition) prove nothing; a flow with no group (no `lease`) is judged by its rounds alone.
 */

/** A flow's group lease, for health: null `invalidSince` while it holds. */
export interface LeaseState {
  readonly group: string
  /** The alias of the cluster the group lives on (the flow's target). */
  readonly cluster: string
  /** Since when (epoch ms) the lease has not held; null while it holds. */
  readonly invalidSince: number | null
}

export interface FlowProgress {
  readonly name: string
  readonly started: boolean
  /** Date.now() time of the last completed round; null before the data path runs. */
  readonly lastRoundAt: number | null
  readonly stallThresholdMs: number
  /** The flow's group lease; absent when the flow has no group. */
  readonly lease?: LeaseState
}

export interface StalledFlow {
  readonly flow: string
  /** How long since the last completed round (or since the start, for a flow not started), or since the lease ended. */
  readonly sinceMs: number
  readonly thresholdMs: number
  readonly started: boolean
  /** Stalled because its group lease has not held since `invalidSince` (ISO): the group and its cluster. */
  readonly lease?: { readonly group: string, readonly cluster: string, readonly invalidSince: string }
}

export interface HealthReport {
  readonly ready: boolean
  readonly healthy: boolean
  readonly stalled: readonly StalledFlow[]
}

export function evaluateHealth (flows: readonly FlowProgress[], at: { ready: boolean, since: number, now: number }): HealthReport {
  const stalled: StalledFlow[] = []
  for (const f of flows) {
    // The lease first: it names the cause when both apply (a lease held past its end also stops the rounds).
    const leaseEnded = f.started ? f.lease?.invalidSince ?? null : null
    if (f.lease !== undefined && leaseEnded !== null && at.now - leaseEnded > f.stallThresholdMs) {
      const lease = { group: f.lease.group, cluster: f.lease.cluster, invalidSince: new Date(leaseEnded).toISOString() }
      stalled.push({ flow: f.name, sinceMs: at.now - leaseEnded, thresholdMs: f.stallThresholdMs, started: true, lease })
      continue
    }
    const sinceMs = at.now - (f.lastRoundAt ?? at.since)
    if (sinceMs > f.stallThresholdMs) stalled.push({ flow: f.name, sinceMs, thresholdMs: f.stallThresholdMs, started: f.started })
  }
  return { ready: at.ready, healthy: stalled.length === 0, stalled }
}

/** The `/healthz` body of a report that is not healthy: one line per stalled flow. */
export function describeStalled (report: HealthReport): string {
  return report.stalled.map(s => `stalled: ${describeStall(s)}\n`).join('')
}

/** Why S is stalled, for /healthz and the log line: `flow A->B has ...`. */
export function describeStall (s: StalledFlow): string {
  const threshold = `for ${Math.round(s.sinceMs / 1000)} s (health.stall.threshold.ms = ${s.thresholdMs})`
  if (s.lease !== undefined) {
    return `flow ${s.flow} has had no valid lease in group ${s.lease.group} on cluster ${s.lease.cluster} since ${s.lease.invalidSince} ${threshold}: ` +
      'it is not a member of the group now (evicted, or its coordinator does not answer) and copies nothing until it joins again; ' +
      'see membership.lease in /status and the log for the cause'
  }
  return `flow ${s.flow} ${s.started ? 'has completed no fetch-and-write round' : 'has not started'} ${threshold}; see /status and the log for the cause`
}
