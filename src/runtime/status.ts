/**
 * `kmirror status`: per flow and partition, how far replication got and how far behind it is. Reads the
 * stored progress and the exact offset history from the TARGET, and the log ends and the oldest record not yet
 * copied from the SOURCE. Writes nothing. When the source is unreachable, the target's part is still shown.
 */
import { OffsetHistoryStore } from '../checkpoint/offset-history-store.ts'
import { isolationLevel } from '../config/client-settings.ts'
import type { FlowConfig } from '../config/types.ts'
import { errorMessage, isInternalError } from '../errors.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { FetchOutcomes, type PartitionPosition, type RecordFetcher } from '../kafka/record-fetcher.ts'
import { parsePartitionKey, partitionKey } from '../topic-partition.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { shouldReplicateTopic } from '../policy/should-replicate.ts'
import { createTopicFilter } from '../policy/topic-filter.ts'
import { ProgressStore } from '../replication/progress-store.ts'
import type { Translation } from '../checkpoint/offset-history.ts'
import type { MembershipStatus } from './flow-status.ts'
import { existingGroups } from './orphan-transactions.ts'
import { readFlowTransactions, type FlowTransactionsStatus } from './transaction-status.ts'

export interface PartitionReplicationStatus {
  readonly topic: string
  readonly partition: number
  readonly remoteTopic: string
  /** The last source offset replicated (consumed), as stored on the target. */
  readonly lastReplicatedOffset: number
  /** Target offset of the last copied record; null when it cannot be translated exactly. */
  readonly targetOffset: number | null
  /** Why `targetOffset` is null. */
  readonly targetOffsetUnknown?: string
  /** The source's log end (high watermark); null when the source could not be read or the topic is gone there. */
  readonly sourceLogEnd: number | null
  /**
   * Read read_committed, the partition is held at this offset (its last stable offset, at or below the next offset
   * to copy) by a transaction open on the source: nothing past it can be copied until the transaction ends. Absent
   * otherwise.
   */
  readonly heldAt?: number
  /** Why `sourceLogEnd` is null while the source answered for other partitions: its Kafka error (LEADER_NOT_AVAILABLE). */
  readonly sourceLogEndUnknown?: string
  /** Records from the next offset to copy to the log end (those an open transaction holds back included). */
  readonly lagRecords: number | null
  /** Now minus the timestamp of the oldest source record not yet copied; 0 when caught up; null when records are behind but none could be read (see partitionLagSeconds). */
  readonly lagSeconds: number | null
}

export interface FlowReplicationStatus {
  readonly flow: string
  /** False when the target could not be read: nothing is known about this flow. */
  readonly targetReachable: boolean
  readonly sourceReachable: boolean
  readonly error?: string
  readonly partitions: readonly PartitionReplicationStatus[]
  /** The members of the flow's group and what each owns; absent when the flow has no group (one instance). */
  readonly membership?: MembershipStatus
  /** Exactly-once mode: the transactions the flow's instances hold open on the target (transaction-status.ts). */
  readonly exactlyOnce?: FlowTransactionsStatus
}

/** Reads the members of a flow's group on its target (set by the group wiring); null when it has none. */
export type MembershipReader = (flow: FlowConfig) => Promise<MembershipStatus | null>

/** Records not yet copied: from the next offset to read up to the log end. */
export function lagInRecords (lastReplicatedOffset: number, sourceLogEnd: number): number {
  return Math.max(0, sourceLogEnd - (lastReplicatedOffset + 1))
}

/** Seconds since the oldest record not yet copied was written. A record timestamped in the future gives 0. */
export function lagInSeconds (oldestPendingTimestampMs: number, nowMs: number): number {
  return Math.max(0, Math.round((nowMs - oldestPendingTimestampMs) / 100) / 10)
}

/** What the search for a partition's oldest record not yet copied found. */
export interface PendingSearch {
  /** Timestamp of the first record at or after the next offset to copy, when one was read. */
  readonly oldestMs: number | undefined
  /** The reads reached the end with no record: only markers and aborted records were left. */
  readonly reachedEnd: boolean
}

/**
 * A partition's lag in seconds: from the oldest record not yet copied; 0 when caught up (no record behind, or only
 * markers and aborted records); null when records are behind but none could be read. That is unknown, never 0: the
 * next offset to copy is below the source's log start (retention deleted records never copied, the read answers out
 * of range) or the reads kept getting no answer, so the partition may be far behind.
 */
export function partitionLagSeconds (lagRecords: number | null, search: PendingSearch, nowMs: number): number | null {
  if (lagRecords === null) return null
  if (search.oldestMs !== undefined) return lagInSeconds(search.oldestMs, nowMs)
  return lagRecords === 0 || search.reachedEnd ? 0 : null
}

/**
 * The target offset of the last replicated record from the translation of the next source offset to read:
 * a consumer resuming there on the target reads the next record to copy, so the last copied one is just before.
 */
export function lastTargetOffset (next: Translation | undefined): { offset: number | null, reason?: string } {
  if (next === undefined) return { offset: null, reason: 'no offset history for this partition' }
  if (!next.exact) return { offset: null, reason: next.reason ?? 'not exactly translatable' }
  return { offset: next.offset - 1 }
}

export interface TargetView {
  readonly positions: Map<string, { topic: string, partition: number, last: number }>
  readonly translate: (topic: string, partition: number, committed: number) => Translation | undefined
  readonly transactions: FlowTransactionsStatus | undefined
}

async function readTarget (flow: FlowConfig, now: () => number): Promise<TargetView> {
  const target = new ClusterClients(flow.target, `${flow.name}|status`, 'target')
  try {
    await target.checkBrokers()
    const { admin, reader } = target
    const history = new OffsetHistoryStore(flow, admin, reader, null)
    await history.load({ readOnly: true })
    const stored = await new ProgressStore(flow, admin, reader, null).load({ readOnly: true })
    const policy = createReplicationPolicy(flow.replicationPolicy)
    const context = { filter: createTopicFilter(flow), policy, targetAlias: flow.target.alias, heartbeatsReplicationEnabled: flow.heartbeatsReplicationEnabled }
    const positions = new Map<string, { topic: string, partition: number, last: number }>()
    for (const [tp, last] of stored) {
      const { topic, partition } = parsePartitionKey(tp)
      // The offsets topic is shared by every flow from this source: show only what this flow replicates.
      if (!shouldReplicateTopic(topic, context)) continue
      history.history(topic, partition)?.markConsumedTo(last + 1)
      positions.set(tp, { topic, partition, last })
    }
    const transactions = await readFlowTransactions(flow, {
      list: async prefix => await target.openTransactions(prefix),
      existingGroups: async ids => await existingGroups(target, flow.groupId, ids)
    }, now())
    return { positions, translate: (topic, partition, committed) => history.history(topic, partition)?.toTarget(committed), transactions }
  } finally {
    await target.close()
  }
}

export interface SourceView {
  /** High watermarks. */
  readonly logEnds: Map<string, number>
  /** Read read_committed: the partitions an open transaction holds at their next offset to copy, and that offset. */
  readonly held: Map<string, number>
  /** Partitions whose log end the source did not give (no leader: its broker is down), with the Kafka error. */
  readonly unknown: Map<string, string>
  /** Timestamp of the first record at or after the next offset to read, per partition that has one. */
  readonly oldestPending: Map<string, number>
  /** Partitions whose reads reached their end with no record (only markers and aborted records left). */
  readonly reachedEnd: Set<string>
}

/** Fetch rounds spent looking past markers and aborted records for the oldest pending record. */
const MAX_PENDING_ROUNDS = 20

async function readSource (flow: FlowConfig, positions: TargetView['positions']): Promise<SourceView> {
  const source = new ClusterClients(flow.source, `${flow.name}|status`, 'source')
  try {
    await source.checkBrokers()
    const isolation = isolationLevel(flow.source.consumer)
    // Small fetches: only the first pending record's timestamp is wanted.
    const small = { maxWaitMs: 100, maxBytes: 1_048_576, maxPartitionBytes: 65_536 }
    const fetcher = source.fetcher('source-reader', { isolation, ...small })
    // The log ends and the first record an open transaction holds back are read past the last stable offset.
    const uncommitted = isolation === 'read_committed' ? source.fetcher('source-log-end', { isolation: 'read_uncommitted', ...small }) : fetcher
    const admin = source.admin
    // A topic deleted on the source since it was replicated would fail the whole request: ask only for the others.
    const existing = new Set(await admin.listTopics())
    const asked = [...positions.values()].filter(p => existing.has(p.topic))
    // One partition without a leader (its broker down) must not hide the lag of all the others.
    const none = { offsets: new Map<string, number>(), failed: new Map<string, string>() }
    const [{ offsets: logEnds, failed: unknown }, stable] = asked.length === 0
      ? [none, none]
      : await Promise.all([uncommitted.listOffsetsSettled(asked, 'latest'), uncommitted === fetcher ? none : fetcher.listOffsetsSettled(asked, 'latest')])
    // What the flow's reads reach: the last stable offset read_committed (the log end where it was not listed), the
    // log end otherwise.
    const readEnds = uncommitted === fetcher ? logEnds : new Map([...logEnds, ...stable.offsets])
    const held = new Map<string, number>()
    for (const [tp, p] of positions) {
      // At or below the next offset to copy (below: progress stored by a read_uncommitted reader, MM2 by default),
      // with records past the next offset to copy: as the running instance tells it.
      const end = stable.offsets.get(tp)
      const logEnd = logEnds.get(tp) ?? -1
      if (end !== undefined && end <= p.last + 1 && logEnd > p.last + 1) held.set(tp, end)
    }
    const pendingOf = (ends: ReadonlyMap<string, number>, read: (tp: string) => boolean): PartitionPosition[] => [...positions]
      .filter(([tp, p]) => read(tp) && (ends.get(tp) ?? -1) > p.last + 1).map(([, p]) => ({ topic: p.topic, partition: p.partition, offset: p.last + 1 }))
    const oldestPending = new Map<string, number>()
    const reachedEnd = new Set<string>()
    await findOldestPending(fetcher, pendingOf(readEnds, tp => !held.has(tp)), readEnds, { oldest: oldestPending, reachedEnd })
    // A held partition's oldest record not copied is past the last stable offset: the open transaction's first.
    await findOldestPending(uncommitted, pendingOf(logEnds, tp => held.has(tp)), logEnds, { oldest: oldestPending, reachedEnd })
    return { logEnds, held, unknown, oldestPending, reachedEnd }
  } finally {
    await source.close()
  }
}

/**
 * Sets in FOUND.oldest the timestamp of the first record at or after each position, looking past markers and
 * aborted records up to ENDS (what the fetcher's reads reach), and in FOUND.reachedEnd the partitions read to their
 * end with no record. A partition in neither is unknown: out of range (its position is below the log start: those
 * records are gone, no read at it will answer) or still unanswered (RETRY) after the last round.
 */
export async function findOldestPending (fetcher: Pick<RecordFetcher, 'fetch'>, positions: PartitionPosition[], ends: ReadonlyMap<string, number>,
  found: { oldest: Map<string, number>, reachedEnd: Set<string> }): Promise<void> {
  let pending = positions
  for (let round = 0; round < MAX_PENDING_ROUNDS && pending.length > 0; round++) {
    const next: PartitionPosition[] = []
    for (const f of await fetcher.fetch(pending)) {
      const tp = partitionKey(f.topic, f.partition)
      const first = f.records[0]
      if (first !== undefined) found.oldest.set(tp, Number(first.timestamp))
      else if (f.outcome === FetchOutcomes.OUT_OF_RANGE) continue
      else if (f.nextOffset < (ends.get(tp) ?? 0)) next.push({ topic: f.topic, partition: f.partition, offset: f.nextOffset })
      else found.reachedEnd.add(tp)
    }
    pending = next
  }
}

/** How the status reads each side (tests give fakes). */
export interface StatusReaders {
  readonly target: (flow: FlowConfig, now: () => number) => Promise<TargetView>
  readonly source: (flow: FlowConfig, positions: TargetView['positions']) => Promise<SourceView>
}

const CLUSTER_READERS: StatusReaders = { target: readTarget, source: readSource }

/**
 * The replication status of one flow. What could not be read is reported in the result; only a bug
 * (`isInternalError`: a TypeError, KMIRROR_ERR_INTERNAL) is thrown, so the command reports it as every command does
 * (exit 4), never as a cluster that could not be read.
 */
export async function readFlowStatus (flow: FlowConfig, now: () => number = Date.now, readMembership?: MembershipReader, readers: StatusReaders = CLUSTER_READERS): Promise<FlowReplicationStatus> {
  let target: TargetView
  try {
    target = await readers.target(flow, now)
  } catch (err) {
    if (isInternalError(err)) throw err
    return { flow: flow.name, targetReachable: false, sourceReachable: false, error: `cannot read the stored progress on ${flow.target.alias}: ${errorMessage(err)}`, partitions: [] }
  }
  let source: SourceView | null = null
  let error: string | undefined
  if (target.positions.size > 0) {
    try {
      source = await readers.source(flow, target.positions)
    } catch (err) {
      if (isInternalError(err)) throw err
      error = `cannot read the source ${flow.source.alias}: ${errorMessage(err)}; showing what the target knows`
    }
  }
  const policy = createReplicationPolicy(flow.replicationPolicy)
  const at = now()
  const partitions = [...target.positions].map(([tp, p]): PartitionReplicationStatus => {
    const targetOffset = lastTargetOffset(target.translate(p.topic, p.partition, p.last + 1))
    const logEnd = source?.logEnds.get(tp) ?? null
    const logEndUnknown = source?.unknown.get(tp)
    const heldAt = source?.held.get(tp)
    const lagRecords = logEnd === null ? null : lagInRecords(p.last, logEnd)
    return {
      topic: p.topic,
      partition: p.partition,
      remoteTopic: policy.formatRemoteTopic(flow.source.alias, p.topic),
      lastReplicatedOffset: p.last,
      targetOffset: targetOffset.offset,
      ...(targetOffset.reason === undefined ? {} : { targetOffsetUnknown: targetOffset.reason }),
      sourceLogEnd: logEnd,
      ...(logEndUnknown === undefined ? {} : { sourceLogEndUnknown: logEndUnknown }),
      ...(heldAt === undefined ? {} : { heldAt }),
      lagRecords,
      lagSeconds: source === null ? null : partitionLagSeconds(lagRecords, { oldestMs: source.oldestPending.get(tp), reachedEnd: source.reachedEnd.has(tp) }, at)
    }
  }).sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
  // The members are extra: a group that cannot be described leaves them out, a bug does not.
  const membership = readMembership === undefined ? null : await readMembership(flow).catch((err: unknown) => { if (isInternalError(err)) throw err; return null })
  return {
    flow: flow.name, targetReachable: true, sourceReachable: source !== null || target.positions.size === 0, ...(error === undefined ? {} : { error }), partitions,
    ...(membership === null ? {} : { membership }),
    ...(target.transactions === undefined ? {} : { exactlyOnce: target.transactions })
  }
}
