/**
 * The gauges set on every scrape of `/metrics` from the runtime's snapshots (not by the engine as it runs): lag
 * in records and in seconds per topic, readiness, each flow's up state, and the age of each group's checkpoints.
 * An unknown value is NaN, never a stale or made-up 0; series of topics or groups that went away disappear.
 */
import type { PrometheusMetrics } from '../metrics/registry.ts'
import { partitionLag } from '../replication/flow-replicator.ts'
import type { FlowStatus } from '../runtime/flow.ts'
import type { HealthReport } from '../runtime/health.ts'

interface TopicLag {
  records: number
  seconds: number
  unknownRecords: number
  unknownSeconds: boolean
}

/**
 * Per flow and topic: lag in records (the sum over its partitions) and in seconds (the largest), NaN while one of
 * its partitions is unknown (the source refusing it, or not read yet), and how many partitions have an unknown lag
 * in records.
 * The three gauges are cleared first and set again from the snapshot, so a deleted topic, or one whose partitions
 * all moved to another instance, has no series left.
 */
export function updateLagGauges (metrics: PrometheusMetrics, flows: readonly FlowStatus[]): void {
  metrics.clear('replicationLag')
  metrics.clear('lagUnknownPartitions')
  metrics.clear('replicationLagSeconds')
  for (const flow of flows) {
    const byTopic = new Map<string, TopicLag>()
    for (const p of flow.partitions) {
      const topic = byTopic.get(p.topic) ?? { records: 0, seconds: 0, unknownRecords: 0, unknownSeconds: false }
      const lag = partitionLag(p)
      if (lag === null) topic.unknownRecords++
      else topic.records += lag
      if (p.lagSeconds === null) topic.unknownSeconds = true
      else topic.seconds = Math.max(topic.seconds, p.lagSeconds)
      byTopic.set(p.topic, topic)
    }
    for (const [topic, lag] of byTopic) {
      const labels = { flow: flow.name, topic }
      metrics.set('replicationLag', labels, lag.unknownRecords > 0 ? Number.NaN : lag.records)
      metrics.set('lagUnknownPartitions', labels, lag.unknownRecords)
      metrics.set('replicationLagSeconds', labels, lag.unknownSeconds ? Number.NaN : lag.seconds)
    }
  }
}

/**
 * Per source partition this instance copies now: lag in seconds and in records (NaN while unknown), for the flows
 * whose `metrics.partition.level.enabled` is on. Both gauges are cleared first and set again from the snapshot, so
 * a partition handed to another instance, or of a deleted topic, has no series left. The snapshot's order is kept
 * (nothing is sorted per scrape); test/unit/http/gauges.test.ts measures a scrape at 5,000 partitions.
 */
export function updatePartitionLagGauges (metrics: PrometheusMetrics, flows: readonly FlowStatus[], enabled: (flow: string) => boolean): void {
  metrics.clear('partitionLagSeconds')
  metrics.clear('partitionLagRecords')
  for (const flow of flows) {
    if (!enabled(flow.name)) continue
    for (const p of flow.partitions) {
      const labels = { flow: flow.name, topic: p.topic, partition: String(p.partition) }
      metrics.set('partitionLagSeconds', labels, p.lagSeconds ?? Number.NaN)
      metrics.set('partitionLagRecords', labels, partitionLag(p) ?? Number.NaN)
    }
  }
}

/**
 * `kmirror_ready` as /readyz; `kmirror_flow_up` 1 per flow while ready, not stopped on an error and not stalled;
 * the partitions each flow copies here and, in a group, how many members it has and whether its lease holds; the
 * topics with a remote topic problem, as /status shows them: only on the instance that runs the topic refresh now
 * (0 elsewhere, so an instance the job moved away from never keeps an old count that no refresh clears).
 */
export function updateUpGauges (metrics: PrometheusMetrics, flows: readonly FlowStatus[], health: HealthReport, failed: boolean): void {
  metrics.set('ready', {}, health.ready ? 1 : 0)
  metrics.clear('groupMembers')
  metrics.clear('groupLeaseValid')
  for (const flow of flows) {
    const up = health.ready && !failed && !health.stalled.some(s => s.flow === flow.name)
    metrics.set('flowUp', { flow: flow.name }, up ? 1 : 0)
    metrics.set('ownedPartitions', { flow: flow.name }, flow.partitions.length)
    metrics.set('remoteTopicProblems', { flow: flow.name }, new Set((flow.remoteTopicProblems ?? []).map(p => p.topic)).size)
    if (flow.membership !== null) metrics.set('groupMembers', { flow: flow.name }, flow.membership.members.length)
    if (flow.membership?.lease !== undefined) metrics.set('groupLeaseValid', { flow: flow.name }, flow.membership.lease.valid ? 1 : 0)
  }
}

/** Seconds since each group's checkpoints were last brought up to date, for the groups this instance checkpoints. */
export function updateCheckpointGauges (metrics: PrometheusMetrics, flows: readonly FlowStatus[], now: number): void {
  metrics.clear('checkpointAge')
  for (const flow of flows) {
    for (const c of flow.checkpoints ?? []) metrics.set('checkpointAge', { flow: flow.name, group: c.group }, Math.max(0, now - c.at) / 1000)
  }
}
