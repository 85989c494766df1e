/**
 * `kmirror verify`: compares what the target of a flow holds with its source, partition by partition, pairing
 * offsets through the flow's offset history on the target (failover/flow-history.ts). Reads both clusters with
 * read_committed and writes nothing: no topic is created, no group joined, no offset committed.
 *
 * Only the topics the flow replicates are compared (its topic filter, internal topics and cycles, as
 * MirrorSourceConnector), under their remote names (the replication policy). Records the flow has not copied yet
 * (past its stored position) are reported as not copied yet, not as missing; copies written past the stored
 * position are in flight and not compared. Partitions are compared one after the other, each streamed
 * (partition-compare.ts): memory does not grow with the number or the size of partitions.
 */
import type { FlowConfig } from '../config/types.ts'
import { startPosition } from '../config/client-settings.ts'
import { loadFlowHistory, type FlowHistory } from '../failover/flow-history.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import type { RecordFetcher, RecordFetcherOptions } from '../kafka/record-fetcher.ts'
import { createTopicSelector } from '../metadata/topic-state.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { partitionKey } from '../topic-partition.ts'
import type { OffsetSyncValue } from '../formats/offset-sync.ts'
import { fetchCursor } from './fetch-cursor.ts'
import { pairBySyncs } from './offset-sync-pairing.ts'
import { readOffsetSyncs } from './offset-sync-reader.ts'
import { pairOffsets, SegmentKinds, type OffsetRange, type Pairing, type Segment } from './pairing.ts'
import { comparePartition, type RangeReport } from './partition-compare.ts'
import type { DifferenceCounts, DifferenceRange } from './differences.ts'

const VERIFY_READER_OPTIONS: RecordFetcherOptions = Object.freeze({ isolation: 'read_committed', maxWaitMs: 50, maxBytes: 16_777_216, maxPartitionBytes: 1_048_576 })

export interface VerifyRequest {
  readonly flow: FlowConfig
  /** `--topics`: only source topics whose whole name matches. */
  readonly topics: RegExp | null
  /** `--since`: only records at or after this time (epoch ms). */
  readonly since: number | null
  /** Source offsets per digest range. */
  readonly rangeRecords: number
  /** Difference ranges listed per partition (the counts are always complete). */
  readonly maxDifferences: number
  readonly onProgress?: (progress: VerifyProgress) => void
}

export interface VerifyProgress {
  readonly partitionsDone: number
  readonly partitions: number
  readonly records: number
}

export interface PartitionReport {
  readonly topic: string
  readonly partition: number
  readonly remoteTopic: string
  /** equal; different (missing, extra or differing records); not-copied (the history holds nothing of it yet). */
  readonly status: 'equal' | 'different' | 'not-copied'
  /** What paired the offsets: kmirror's offset history, MM2's offset syncs (a flow MM2 copied), or nothing yet. */
  readonly basis: 'offset-history' | 'mm2-offset-syncs' | 'none'
  readonly sourceRecords: number
  readonly targetRecords: number
  /** Source offsets compared: from (the log start or `--since`) to the end of what was copied. */
  readonly compared: OffsetRange | null
  readonly counts: DifferenceCounts
  readonly differences: readonly DifferenceRange[]
  readonly omittedDifferences: number
  readonly ranges: readonly RangeReport[]
  readonly notCopied: OffsetRange | null
  readonly inFlight: OffsetRange | null
  readonly notes: readonly string[]
}

export interface VerifyReport {
  readonly flow: string
  readonly from: string
  readonly to: string
  readonly since: string | null
  readonly equal: boolean
  readonly partitions: readonly PartitionReport[]
  readonly notes: readonly string[]
}

interface Sides {
  readonly source: ClusterClients
  readonly target: ClusterClients
  readonly sourceFetcher: RecordFetcher
  readonly targetFetcher: RecordFetcher
}

interface TopicPlan {
  readonly topic: string
  readonly remoteTopic: string
  readonly partitions: number
  readonly targetPartitions: number
  readonly sourceCompacted: boolean
  readonly targetCompacted: boolean
}

export async function verifyFlow (request: VerifyRequest): Promise<VerifyReport> {
  const { flow } = request
  const source = new ClusterClients(flow.source, 'verify', 'source')
  const target = new ClusterClients(flow.target, 'verify', 'target')
  try {
    await Promise.all([source.checkBrokers(), target.checkBrokers()])
    const sides: Sides = { source, target, sourceFetcher: source.fetcher('source-verify', VERIFY_READER_OPTIONS), targetFetcher: target.fetcher('target-verify', VERIFY_READER_OPTIONS) }
    const policy = createReplicationPolicy(flow.replicationPolicy)
    const history = await loadFlowHistory(flow, policy, target.admin, target.reader)
    const notes: string[] = []
    const topics = await planTopics(request, sides, remote => policy.formatRemoteTopic(flow.source.alias, remote), notes)
    const withoutHistory = topics.filter(t => Array.from({ length: t.partitions }, (_, p) => history.historyOf(t.topic, p)).some(h => h === undefined || h.runs.length === 0))
    const syncs = withoutHistory.length === 0 ? new Map<string, OffsetSyncValue[]>() : await readOffsetSyncs(flow, policy, { source, target }, new Set(withoutHistory.map(t => t.topic)))
    const pairings = { history, syncs }
    const total = topics.reduce((n, t) => n + t.partitions, 0)
    const partitions: PartitionReport[] = []
    let records = 0
    const progress = (): void => request.onProgress?.({ partitionsDone: partitions.length, partitions: total, records })
    for (const topic of topics) {
      for (const report of await verifyTopic(topic, pairings, sides, request, n => { records += n; progress() })) {
        partitions.push(report)
        progress()
      }
    }
    if (topics.length === 0) notes.push(`no topic of ${flow.source.alias} is replicated by flow ${flow.name}${request.topics === null ? '' : ' and matches --topics'}: nothing compared`)
    return {
      flow: flow.name, from: flow.source.alias, to: flow.target.alias,
      since: request.since === null ? null : new Date(request.since).toISOString(),
      equal: partitions.every(p => p.status !== 'different'), partitions, notes
    }
  } finally {
    await Promise.all([source.close(), target.close()])
  }
}

/** The source topics to compare, their remote topics on the target and whether each side compacts them. */
async function planTopics (request: VerifyRequest, sides: Sides, remoteTopicOf: (topic: string) => string, notes: string[]): Promise<TopicPlan[]> {
  const { flow } = request
  const replicated = createTopicSelector(flow, createReplicationPolicy(flow.replicationPolicy))
  const described = await sides.source.admin.describeAllTopics()
  const asked = [...described.keys()].filter(t => request.topics === null || request.topics.test(t)).sort()
  for (const t of asked.filter(t => !replicated(t))) {
    if (request.topics !== null) notes.push(`topic ${t} matches --topics but flow ${flow.name} does not replicate it (its topics filter, an internal topic or a cycle): not compared`)
  }
  const chosen = asked.filter(replicated)
  const remote = chosen.map(remoteTopicOf)
  const targetTopics = await sides.target.admin.describeTopics(remote)
  const compacted = async (clients: ClusterClients, names: readonly string[]): Promise<Set<string>> => {
    const read = await clients.admin.readTopicConfigs(names)
    for (const [name, err] of read.refused) notes.push(`${clients.label}: the configs of ${name} could not be read (${err.message}); it is compared as a topic without compaction`)
    return new Set([...read.configs].filter(([, entries]) => entries.some(e => e.name === 'cleanup.policy' && (e.value ?? '').includes('compact'))).map(([name]) => name))
  }
  const [sourceCompacted, targetCompacted] = await Promise.all([compacted(sides.source, chosen), compacted(sides.target, [...targetTopics.keys()])])
  return chosen.map((topic, i) => ({
    topic, remoteTopic: remote[i]!, partitions: described.get(topic)!.partitions, targetPartitions: targetTopics.get(remote[i]!)?.partitions ?? 0,
    sourceCompacted: sourceCompacted.has(topic), targetCompacted: targetCompacted.has(remote[i]!)
  }))
}

async function bounds (fetcher: RecordFetcher, topic: string, partitions: number): Promise<OffsetRange[]> {
  if (partitions === 0) return []
  const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }))
  const [starts, ends] = await Promise.all([fetcher.listOffsets(tps, 'earliest'), fetcher.listOffsets(tps, 'latest')])
  return tps.map(tp => ({ from: starts.get(partitionKey(topic, tp.partition)) ?? 0, to: ends.get(partitionKey(topic, tp.partition)) ?? 0 }))
}

interface Pairings {
  readonly history: FlowHistory
  /** MM2's offset syncs of the partitions without a kmirror history. */
  readonly syncs: ReadonlyMap<string, readonly OffsetSyncValue[]>
}

async function verifyTopic (plan: TopicPlan, pairings: Pairings, sides: Sides, request: VerifyRequest, onRecords: (n: number) => void): Promise<PartitionReport[]> {
  const sourceBounds = await bounds(sides.sourceFetcher, plan.topic, plan.partitions)
  const targetBounds = await bounds(sides.targetFetcher, plan.remoteTopic, plan.targetPartitions)
  const tps = sourceBounds.map((_, partition) => ({ topic: plan.topic, partition }))
  const since = request.since === null ? null : await sides.sourceFetcher.listOffsets(tps, { atOrAfter: request.since })
  const reports: PartitionReport[] = []
  for (let partition = 0; partition < plan.partitions; partition++) {
    const sourceRange = sourceBounds[partition]!
    const atSince = since?.get(partitionKey(plan.topic, partition))
    const sourceFrom = atSince === undefined ? sourceRange.from : atSince < 0 ? sourceRange.to : Math.max(atSince, sourceRange.from)
    reports.push(await verifyPartition({ plan, partition, sourceRange, targetRange: targetBounds[partition] ?? { from: 0, to: 0 }, sourceFrom }, pairings, sides, request, onRecords))
  }
  return reports
}

interface PartitionInput {
  readonly plan: TopicPlan
  readonly partition: number
  readonly sourceRange: OffsetRange
  readonly targetRange: OffsetRange
  readonly sourceFrom: number
}

async function verifyPartition (input: PartitionInput, pairings: Pairings, sides: Sides, request: VerifyRequest, onRecords: (n: number) => void): Promise<PartitionReport> {
  const { plan, partition, sourceRange, targetRange } = input
  const { basis, pairing, segments, notes } = pairPartition(input, pairings, request.flow.source.consumer)
  if (pairing.targetBeforeHistory !== null) notes.push(`target offsets ${span(pairing.targetBeforeHistory)} precede the offset history (copied before it was trimmed, or written by another producer): not compared`)
  if (plan.targetPartitions <= partition && basis !== 'none') notes.push(`${plan.remoteTopic}-${partition} does not exist on ${request.flow.target.alias}`)
  const comparison = await comparePartition(segments, {
    source: range => fetchCursor(sides.sourceFetcher, plan.topic, partition, range, sourceRange.to, sides.source.label),
    target: range => fetchCursor(sides.targetFetcher, plan.remoteTopic, partition, range, targetRange.to, sides.target.label)
  }, { rangeRecords: request.rangeRecords, maxDifferences: request.maxDifferences, sourceCompacted: plan.sourceCompacted, targetCompacted: plan.targetCompacted, onRecords })
  const compared = comparedRange(segments)
  const status = comparison.differences.hasDifferences ? 'different' : basis === 'none' ? 'not-copied' : 'equal'
  return {
    topic: plan.topic, partition, remoteTopic: plan.remoteTopic, status, basis,
    sourceRecords: comparison.sourceRecords, targetRecords: comparison.targetRecords, compared,
    counts: { ...comparison.differences.counts }, differences: comparison.differences.ranges(), omittedDifferences: comparison.differences.omitted,
    ranges: comparison.ranges, notCopied: pairing.notCopied, inFlight: pairing.unconfirmed, notes
  }
}

/** Pairs by kmirror's history when it has runs, else by MM2's offset syncs when there are some. */
function pairPartition (input: PartitionInput, pairings: Pairings, consumer: FlowConfig['source']['consumer']): { basis: PartitionReport['basis'], pairing: Pairing, segments: Segment[], notes: string[] } {
  const { plan, partition, sourceRange, targetRange, sourceFrom } = input
  const notes: string[] = []
  const runs = pairings.history.historyOf(plan.topic, partition)
  const position = pairings.history.positionOf(plan.topic, partition) ?? -1
  const syncs = pairings.syncs.get(partitionKey(plan.topic, partition))
  if ((runs === undefined || runs.runs.length === 0) && syncs !== undefined && syncs.length > 0) {
    const pairing = pairBySyncs({ syncs, position, source: sourceRange, target: targetRange, sourceFrom })
    notes.push('paired by MM2\'s offset syncs (no kmirror offset history): between syncs whose offsets do not advance alike, records pair by their order')
    if (pairing.skipped !== null) notes.push(`source offsets ${span(pairing.skipped)} are after --since but inside a stretch paired by order, whose start on the target is unknown: not compared`)
    return { basis: 'mm2-offset-syncs', pairing, segments: [...pairing.segments], notes }
  }
  const pairing = pairOffsets({
    runs: runs?.runs ?? [], replicatedEnd: runs?.replicatedEnd ?? -1, targetEnd: runs?.targetEnd ?? -1, position, source: sourceRange, target: targetRange, sourceFrom
  })
  const segments = [...pairing.segments]
  if (pairing.beforeHistory !== null) {
    if (startPosition(consumer) === 'latest') {
      notes.push(`source offsets ${span(pairing.beforeHistory)} precede the first copied offset: the flow started at the end of the partition (auto.offset.reset = latest), not compared`)
    } else {
      segments.unshift({ kind: SegmentKinds.SOURCE_ONLY, source: pairing.beforeHistory })
    }
  }
  return { basis: runs === undefined || runs.runs.length === 0 ? 'none' : 'offset-history', pairing, segments, notes }
}

function comparedRange (segments: readonly Segment[]): OffsetRange | null {
  const sourceRanges = segments.flatMap(s => s.kind === SegmentKinds.TARGET_ONLY ? [] : [s.source])
  if (sourceRanges.length === 0) return null
  return { from: Math.min(...sourceRanges.map(r => r.from)), to: Math.max(...sourceRanges.map(r => r.to)) }
}

/** `[from, to)` as inclusive offsets: `12-14`, or `12` for one offset. */
export function span (range: OffsetRange): string {
  return range.to - range.from === 1 ? String(range.from) : `${range.from}-${range.to - 1}`
}
