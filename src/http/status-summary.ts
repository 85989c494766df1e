/**
 * The light views of /status that the console polls (and anyone may): `/status?summary` gives each flow's totals,
 * state and rates, its topics aggregated (failing first, then the most lag; filtered and limited) and its failing
 * partitions; `/status?flow=F&topic=T` gives the partitions of one topic. At 5,000 partitions the full /status is
 * about 1.6 MB; a summary with the default limits stays near 20 kB whatever the partition count, and under 75 kB
 * when every partition fails (the failures' messages).
 */
import { isReadFailure, partitionLag, type PartitionStatus } from '../replication/flow-replicator.ts'
import type { FlowRate } from '../runtime/flow-rates.ts'
import type { FlowStatus } from '../runtime/flow-status.ts'

/** A partition's status, with the age of its oldest uncopied record when the runtime reports it (null: unknown). */
type PartitionWithAge = PartitionStatus & { readonly lagSeconds?: number | null }

/** Consecutive failures of a flow's whole replication step after which /healthz says degraded. */
export const DEGRADED_STEP_FAILURES = 3

/**
 * How long a read of a flow's progress or history may be held by an open transaction before the flow is degraded
 * (/healthz 503): shorter holds come with a commit slowed by a coordinator moving, and end by themselves; /status
 * and the console show a hold from 5 s on (held-reads.ts).
 */
export const HELD_READ_DEGRADED_MS = 30_000

/** The reads of FLOW held HELD_READ_DEGRADED_MS or longer at NOW. */
export function heldTooLong (flow: FlowStatus, now: number): NonNullable<FlowStatus['heldReads']> {
  return (flow.heldReads ?? []).filter(r => now - Date.parse(r.since) >= HELD_READ_DEGRADED_MS)
}

/** What flows are in, as the console shows them (worst first). */
export type FlowState = 'failed' | 'stalled' | 'cannot copy' | 'degraded' | 'starting' | 'copying' | 'caught up'

export interface FlowContext {
  /** The error that stopped replication, if one did. */
  readonly failed: boolean
  readonly ready: boolean
  /** Names of the flows that completed no round for longer than the stall threshold. */
  readonly stalled: ReadonlySet<string>
  readonly rate: (flow: string) => FlowRate
}

export interface TopicSummary {
  readonly topic: string
  readonly remoteTopic: string
  readonly partitions: number
  readonly failingPartitions: number
  /** Null while the lag of one of its partitions is unknown. */
  readonly lagRecords: number | null
  readonly lagUnknownPartitions: number
  /** The oldest uncopied record's age over its partitions; null while one is unknown. */
  readonly lagSeconds: number | null
  readonly copiedRecords: number
  readonly copiedBytes: number
}

export interface SummaryOptions {
  /** Only topics whose name contains this text (case-insensitive). */
  readonly filter: string
  /** At most this many topics per flow (the worst ones). */
  readonly limit: number
}

/** Failing partitions listed per flow in a summary; `failingPartitions` gives the full count. */
export const FAILING_SHOWN = 100
export const DEFAULT_TOPIC_LIMIT = 100
export const MAX_TOPIC_LIMIT = 10_000

/** The worst state that applies. */
export function flowState (flow: FlowStatus, context: Omit<FlowContext, 'rate'>): FlowState {
  if (context.failed) return 'failed'
  if (context.stalled.has(flow.name)) return 'stalled'
  if (flow.stepFailure !== null && flow.stepFailure.attempts >= DEGRADED_STEP_FAILURES) return 'cannot copy'
  if (flow.partitions.some(p => p.failure !== null) || (flow.remoteTopicProblems?.length ?? 0) > 0 || heldTooLong(flow, Date.now()).length > 0) return 'degraded'
  const lags = flow.partitions.map(partitionLag)
  // Without a valid lease the flow (re)joins its group: it copies nothing, whatever its partitions (none, once lost) say.
  if (!context.ready || flow.membership?.lease?.valid === false) return 'starting'
  // A lag unknown because the source gives nothing of the partition for a while is no start: the flow copies on.
  if (flow.partitions.some((p, i) => lags[i] === null && p.sourceWaitSince === undefined)) return 'starting'
  return lags.every(l => l === 0) ? 'caught up' : 'copying'
}

/** The largest known age; null when a partition's is unknown (or not reported at all). */
export function oldestLagSeconds (partitions: readonly PartitionWithAge[]): number | null {
  let oldest = 0
  for (const p of partitions) {
    if (typeof p.lagSeconds !== 'number' || isReadFailure(p.failure)) return null
    oldest = Math.max(oldest, p.lagSeconds)
  }
  return oldest
}

/** Lag, counts and failures summed over some partitions. */
function totals (partitions: readonly PartitionWithAge[]): Omit<TopicSummary, 'topic' | 'remoteTopic'> {
  let lag = 0
  let unknown = 0
  let failing = 0
  let copiedRecords = 0
  let copiedBytes = 0
  for (const p of partitions) {
    const l = partitionLag(p)
    if (l === null) unknown++
    else lag += l
    if (p.failure !== null) failing++
    copiedRecords += p.copiedRecords
    copiedBytes += p.copiedBytes
  }
  return {
    partitions: partitions.length, failingPartitions: failing, lagRecords: unknown > 0 ? null : lag, lagUnknownPartitions: unknown,
    lagSeconds: oldestLagSeconds(partitions), copiedRecords, copiedBytes
  }
}

/** Every topic of the flow, aggregated, the failing ones first, then the most lag (unknown lag first), then by name. */
export function summarizeTopics (partitions: readonly PartitionWithAge[]): TopicSummary[] {
  const byTopic = new Map<string, PartitionWithAge[]>()
  for (const p of partitions) {
    const list = byTopic.get(p.topic)
    if (list === undefined) byTopic.set(p.topic, [p])
    else list.push(p)
  }
  return [...byTopic].map(([topic, list]) => ({ topic, remoteTopic: list[0]!.remoteTopic, ...totals(list) })).sort(worstTopicFirst)
}

function worstTopicFirst (a: TopicSummary, b: TopicSummary): number {
  return b.failingPartitions - a.failingPartitions ||
    (b.lagRecords ?? Number.POSITIVE_INFINITY) - (a.lagRecords ?? Number.POSITIVE_INFINITY) ||
    (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0)
}

/** A partition as /status shows it: with its lag in records (null when unknown). */
export function withLag (p: PartitionStatus): PartitionStatus & { readonly lagRecords: number | null } {
  return { ...p, lagRecords: partitionLag(p) }
}

/** A flow's totals, state and rates (in the full /status and in the summary). */
export function flowTotals (flow: FlowStatus, context: FlowContext): Record<string, unknown> {
  const { partitions, ...sums } = totals(flow.partitions)
  return { state: flowState(flow, context), partitionCount: partitions, ...sums, ...context.rate(flow.name) }
}

export function summaryDocument (flows: readonly FlowStatus[], context: FlowContext, options: SummaryOptions): Array<Record<string, unknown>> {
  const filter = options.filter.toLowerCase()
  return flows.map(flow => {
    const topics = summarizeTopics(flow.partitions)
    const shown = filter === '' ? topics : topics.filter(t => t.topic.toLowerCase().includes(filter))
    return {
      name: flow.name,
      ...flowTotals(flow, context),
      stepFailure: flow.stepFailure,
      ...(flow.offsetSyncs === undefined ? {} : { offsetSyncs: flow.offsetSyncs }),
      ...(flow.exactlyOnce === undefined ? {} : { exactlyOnce: flow.exactlyOnce }),
      ...(flow.heldReads === undefined ? {} : { heldReads: flow.heldReads }),
      jobs: flow.jobs,
      ...(flow.membership === null ? {} : { membership: flow.membership }),
      topicCount: topics.length,
      topicsMatching: shown.length,
      topics: shown.slice(0, options.limit),
      failing: flow.partitions.filter(p => p.failure !== null).slice(0, FAILING_SHOWN).map(withLag),
      ...(flow.remoteTopicProblems === undefined ? {} : { remoteTopicProblemCount: flow.remoteTopicProblems.length, remoteTopicProblems: flow.remoteTopicProblems.slice(0, FAILING_SHOWN) })
    }
  })
}

/** The partitions of one topic of one flow, by partition number; null when the flow does not copy that topic. */
export function topicPartitions (flows: readonly FlowStatus[], flowName: string, topic: string): Array<ReturnType<typeof withLag>> | null {
  const flow = flows.find(f => f.name === flowName)
  const partitions = flow?.partitions.filter(p => p.topic === topic) ?? []
  return partitions.length === 0 ? null : partitions.map(withLag).sort((a, b) => a.partition - b.partition)
}

/** `?summary&filter=orders&limit=50`: the options, the limit clamped to 1..MAX_TOPIC_LIMIT. */
export function summaryOptions (query: URLSearchParams): SummaryOptions {
  const asked = Number.parseInt(query.get('limit') ?? '', 10)
  const limit = Number.isFinite(asked) ? Math.min(MAX_TOPIC_LIMIT, Math.max(1, asked)) : DEFAULT_TOPIC_LIMIT
  return { filter: query.get('filter') ?? '', limit }
}
