/**
 * Partitions of a flow set aside because the source or the target refused them (authorization, unknown topic,
 * a batch too large or corrupt, an error kmirror does not expect), with what `/status`, the metrics and the log
 * say about them.
 *
 * Invariants:
 * - A failing partition is retried with its own back-off (RETRY_BASE_MS doubling up to RETRY_MAX_MS); the other
 *   partitions of the flow are never held up by it.
 * - The log gets one warning when a partition starts failing or fails with a different error, and one info line
 *   when it recovers; the retries in between log at debug level only.
 * - The gauge `failingPartitions` counts the failing partitions by flow and Kafka error, and goes back to 0 for
 *   an error no partition has any more.
 * - A partition that waited longer than the stall threshold for the target to take its records (`waiting`: no
 *   leader, a leader that does not answer for it) is reported the same way, but has no back-off of its own: it
 *   stays parked (target-wait.ts) and is copied as soon as the target takes it, which `recover` then logs. So is
 *   one the source gave nothing of for that long though it refused nothing (`unreadable`: no leader, its leader
 *   out of reach; source-waits.ts): fetched every round meanwhile; and one a transaction open on the source has held
 *   for longer than health.transaction.hang.threshold.ms (`held`), whose report its answers do not end: `recover`
 *   keeps it while the partition is held at the same offset, and ends it otherwise. Another report taking its place
 *   meanwhile (its leader out of reach past the stall threshold) is ended by `recover` without a recovery line when
 *   the partition is still held at that offset: the hold's report comes back as it was, with its warning not
 *   repeated, so the partition never shows healthy in between.
 */
import { ErrorCodes, type ErrorCode } from '../errors.ts'
import { describeGrant } from '../kafka/acl-grant.ts'
import { errorCodeOfKind, kafkaErrorInfo, KafkaErrorKinds, type KafkaErrorKind } from '../kafka/errors.ts'
import { THROTTLED } from '../kafka/fetch-results.ts'
import { toolCommand, type ToolCluster } from '../kafka/tool-command.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import { SOURCE_TRANSACTION_OPEN } from './source-waits.ts'

export const FailureSides = { SOURCE: 'source', TARGET: 'target' } as const
export type FailureSide = (typeof FailureSides)[keyof typeof FailureSides]

/** Why a partition could not be read (side source) or written (side target). */
export interface PartitionFault {
  readonly side: FailureSide
  /** The Kafka error name, e.g. TOPIC_AUTHORIZATION_FAILED. */
  readonly error: string
  readonly kind: KafkaErrorKind
  /** What happened, naming the partition, the broker and the cluster. */
  readonly message: string
  /** The ACL operation that was refused, when it is known: READ, DESCRIBE, WRITE. */
  readonly operation?: string
}

/** A failing partition as `/status` shows it. */
export interface FailureReport {
  readonly side: FailureSide
  /** The alias of the cluster that refused. */
  readonly cluster: string
  readonly code: ErrorCode
  readonly error: string
  readonly kind: KafkaErrorKind
  readonly message: string
  /** What the operator should do. */
  readonly remedy: string
  readonly since: string
  readonly attempts: number
  readonly nextRetry: string
}

export interface FailingPartition {
  readonly topic: string
  readonly partition: number
  readonly remoteTopic: string
}

/** The first retry of a failing partition waits this long; each further one twice as long, up to RETRY_MAX_MS. */
export const RETRY_BASE_MS = 1_000
export const RETRY_MAX_MS = 15_000

export interface FailureBackoff {
  readonly baseMs: number
  readonly maxMs: number
}

/** A partition that has waited long for the target to take its records (target-wait.ts). */
export interface TargetWaitReport {
  /** The Kafka error name of why its leader does not take it (LEADER_NOT_AVAILABLE, NETWORK_EXCEPTION, ...). */
  readonly error: string
  /** What that means for this partition, naming the broker. */
  readonly detail: string
  /** The fix, when the error's usual one does not apply (a topic its transaction coordinator does not know). */
  readonly remedy?: string
  readonly sinceMs: number
  /** The threshold it waited past (the flow's health.stall.threshold.ms). */
  readonly thresholdMs: number
  /** When it is fetched again at the latest, if no probe finds it ready before. */
  readonly nextTryAt: number
}

/** A partition the source has given nothing of for long, though it refused nothing (source-waits.ts). */
export interface SourceWaitReport {
  /** The Kafka error name of why: LEADER_NOT_AVAILABLE, NETWORK_EXCEPTION (its leader out of reach), ... */
  readonly error: string
  /** What that means for this partition, naming the broker and the cluster. */
  readonly detail: string
  readonly sinceMs: number
  /** The threshold it waited past (the flow's health.stall.threshold.ms). */
  readonly thresholdMs: number
}

/** A partition a transaction open on the source has held for long (source-waits.ts `holdsDue`). */
export interface SourceHoldReport {
  /** The open transaction's first offset (the last stable offset). */
  readonly at: number
  readonly highWatermark: number
  readonly sinceMs: number
  /** The threshold it was held past (the flow's health.transaction.hang.threshold.ms). */
  readonly thresholdMs: number
}

/**
 * A side of the flow as remedies name it: its alias, and what the Kafka tool lines they print need (brokers,
 * security protocol) with the principal kmirror uses there (`User:bob`, or a description when the config does
 * not say).
 */
export interface FailureCluster extends ToolCluster {
  readonly alias: string
  readonly principal?: string
}

interface Entry { report: FailureReport, sinceMs: number, labels: { flow: string, error: string }, heldAt?: number }

export class PartitionFailures {
  readonly #flow: string
  readonly #clusters: { readonly source: FailureCluster, readonly target: FailureCluster }
  readonly #log: Logger
  readonly #metrics: Metrics
  readonly #backoff: FailureBackoff
  readonly #entries = new Map<string, Entry>()
  /** The report of each reported hold, kept while another report takes its place in `#entries` (see the invariants). */
  readonly #holds = new Map<string, Entry>()
  /** Label sets of the gauge set to a non-zero value, so they go back to 0 once no partition has that error. */
  readonly #reported = new Map<string, Entry['labels']>()

  constructor (flow: string, clusters: { source: FailureCluster, target: FailureCluster }, log: Logger, metrics: Metrics, backoff: FailureBackoff = { baseMs: RETRY_BASE_MS, maxMs: RETRY_MAX_MS }) {
    this.#flow = flow
    this.#backoff = backoff
    this.#clusters = clusters
    this.#log = log
    this.#metrics = metrics
  }

  /** Records one more failed attempt of partition `key`; returns when to try it again (epoch ms). */
  fail (key: string, p: FailingPartition, fault: PartitionFault, now = Date.now()): number {
    const before = this.#entries.get(key)
    const attempts = before !== undefined && before.report.error === fault.error ? before.report.attempts + 1 : 1
    const retryAt = now + Math.min(this.#backoff.maxMs, this.#backoff.baseMs * 2 ** (attempts - 1))
    const side = fault.side === FailureSides.SOURCE ? this.#clusters.source : this.#clusters.target
    const cluster = side.alias
    const sinceMs = attempts === 1 ? now : before!.sinceMs
    const code = errorCodeOfKind(fault.kind, fault.side === FailureSides.SOURCE ? ErrorCodes.FETCH : ErrorCodes.PRODUCE)
    const report: FailureReport = {
      side: fault.side, cluster, code, error: fault.error, kind: fault.kind, message: fault.message, remedy: remedyFor(p, fault, side),
      since: new Date(sinceMs).toISOString(), attempts, nextRetry: new Date(retryAt).toISOString()
    }
    this.#entries.set(key, { report, sinceMs, labels: { flow: this.#flow, error: fault.error } })
    const fields = { topic: p.topic, partition: p.partition, remoteTopic: p.remoteTopic, cluster, error: fault.error, attempt: attempts, retryInMs: retryAt - now }
    if (attempts === 1) {
      const verb = fault.side === FailureSides.SOURCE ? `read ${p.topic}-${p.partition} from` : `write ${p.remoteTopic}-${p.partition} to`
      this.#log.warn(fields, `cannot ${verb} cluster ${cluster}: ${fault.message}; ${report.remedy}. This partition is set aside and retried with back-off; the others keep flowing`)
      this.#updateGauge()
    } else {
      this.#log.debug(fields, 'partition still failing')
    }
    return retryAt
  }

  /** Partition `key` has waited long for the target (see the invariants): one warning, and failing until `recover`. */
  waiting (key: string, p: FailingPartition, wait: TargetWaitReport, quiet = false, now = Date.now()): void {
    const cluster = this.#clusters.target.alias
    const waitedS = Math.round((now - wait.sinceMs) / 1000)
    const remedy = wait.remedy ?? (wait.error === 'UNKNOWN_TOPIC_OR_PARTITION'
      ? `the topic refresh creates ${p.remoteTopic} on cluster ${cluster}, or grows it to the source's partition count; if the partition stays missing, look for the refresh's error line (a missing CREATE or ALTER grant, a policy refusing the topic)`
      : leaderRemedy(p.remoteTopic, p.partition, this.#clusters.target))
    const report: FailureReport = {
      side: FailureSides.TARGET, cluster, code: ErrorCodes.PRODUCE, error: wait.error, kind: kafkaErrorInfo(wait.error).kind,
      message: `${p.remoteTopic}-${p.partition} takes no records: ${wait.detail}`, remedy,
      since: new Date(wait.sinceMs).toISOString(), attempts: 1, nextRetry: new Date(Math.max(wait.nextTryAt, now)).toISOString()
    }
    this.#entries.set(key, { report, sinceMs: wait.sinceMs, labels: { flow: this.#flow, error: wait.error } })
    const log = quiet ? this.#log.debug.bind(this.#log) : this.#log.warn.bind(this.#log)
    log({ topic: p.topic, partition: p.partition, remoteTopic: p.remoteTopic, cluster, error: wait.error, waitedMs: now - wait.sinceMs, thresholdMs: wait.thresholdMs },
      `cannot write ${p.remoteTopic}-${p.partition} to cluster ${cluster} for ${waitedS} s (health.stall.threshold.ms = ${wait.thresholdMs}): ${wait.detail}; ${remedy}. ` +
      `Its records wait on the source, none is skipped; kmirror copies it as soon as the target takes it, and the others keep flowing`)
    this.#updateGauge()
  }

  /**
   * Partition `key` has been read nothing of for longer than the threshold though the source refused nothing (no
   * leader, its leader out of reach): one warning, and failing until `recover`. It is fetched at every round meanwhile.
   */
  unreadable (key: string, p: FailingPartition, wait: SourceWaitReport, quiet = false, now = Date.now()): void {
    const source = this.#clusters.source
    const waitedS = Math.round((now - wait.sinceMs) / 1000)
    const remedy = wait.error === THROTTLED ? quotaRemedy(source) : leaderRemedy(p.topic, p.partition, source)
    const report: FailureReport = {
      side: FailureSides.SOURCE, cluster: source.alias, code: ErrorCodes.FETCH, error: wait.error, kind: kafkaErrorInfo(wait.error).kind,
      message: `${p.topic}-${p.partition} cannot be read: ${wait.detail}`, remedy,
      since: new Date(wait.sinceMs).toISOString(), attempts: 1, nextRetry: new Date(now).toISOString()
    }
    this.#entries.set(key, { report, sinceMs: wait.sinceMs, labels: { flow: this.#flow, error: wait.error } })
    const log = quiet ? this.#log.debug.bind(this.#log) : this.#log.warn.bind(this.#log)
    log({ topic: p.topic, partition: p.partition, remoteTopic: p.remoteTopic, cluster: source.alias, error: wait.error, waitedMs: now - wait.sinceMs, thresholdMs: wait.thresholdMs },
      `cannot read ${p.topic}-${p.partition} from cluster ${source.alias} for ${waitedS} s (health.stall.threshold.ms = ${wait.thresholdMs}): ${wait.detail}; ${remedy}. ` +
      `Its records wait on the source, none is skipped; kmirror copies it as soon as the source gives it, and the others keep flowing`)
    this.#updateGauge()
  }

  /**
   * Partition `key` has been held by a transaction open on the source for longer than the threshold: one warning
   * naming the transaction's first offset and the tool lines to find and abort it, and failing until `recover`.
   */
  held (key: string, p: FailingPartition, hold: SourceHoldReport, quiet = false, now = Date.now()): void {
    const source = this.#clusters.source
    // The same hold reported before (its clock restarted since, e.g. by a restart of its tracking): its first report stands.
    const before = this.#holds.get(key)
    if (before?.heldAt === hold.at) {
      this.#entries.set(key, before)
      this.#log.debug({ topic: p.topic, partition: p.partition, heldAt: hold.at }, 'partition still held by the same open transaction')
      this.#updateGauge()
      return
    }
    const heldS = Math.round((now - hold.sinceMs) / 1000)
    const detail = `it is read read_committed, and a transaction still open on the source since offset ${hold.at} (its last stable offset; the log goes on to ` +
      `${hold.highWatermark}) holds it: its leader gives nothing past that offset until the transaction commits or aborts`
    const remedy = transactionRemedy(p.topic, p.partition, hold.at, source)
    const report: FailureReport = {
      side: FailureSides.SOURCE, cluster: source.alias, code: ErrorCodes.FETCH, error: SOURCE_TRANSACTION_OPEN, kind: kafkaErrorInfo(SOURCE_TRANSACTION_OPEN).kind,
      message: `${p.topic}-${p.partition} cannot be read: ${detail}`, remedy,
      since: new Date(hold.sinceMs).toISOString(), attempts: 1, nextRetry: new Date(now).toISOString()
    }
    const entry: Entry = { report, sinceMs: hold.sinceMs, labels: { flow: this.#flow, error: SOURCE_TRANSACTION_OPEN }, heldAt: hold.at }
    this.#entries.set(key, entry)
    this.#holds.set(key, entry)
    const log = quiet ? this.#log.debug.bind(this.#log) : this.#log.warn.bind(this.#log)
    log({ topic: p.topic, partition: p.partition, remoteTopic: p.remoteTopic, cluster: source.alias, error: SOURCE_TRANSACTION_OPEN, heldAt: hold.at, heldMs: now - hold.sinceMs, thresholdMs: hold.thresholdMs },
      `cannot read ${p.topic}-${p.partition} from cluster ${source.alias} for ${heldS} s (health.transaction.hang.threshold.ms = ${hold.thresholdMs}): ${detail}; ${remedy}. ` +
      `Its records wait on the source, none is skipped; kmirror copies them as soon as the transaction ends, and the others keep flowing`)
    this.#updateGauge()
  }

  /**
   * Partition `key` was read and written again: logs its recovery if it was failing, and returns whether it was. A
   * report of a hold at HELD_AT (the offset an open transaction holds it at now) is kept: the partition still fails.
   */
  recover (key: string, p: FailingPartition, heldAt?: number): boolean {
    const entry = this.#entries.get(key)
    if (entry === undefined || (heldAt !== undefined && entry.heldAt === heldAt)) return false
    const hold = this.#holds.get(key)
    if (heldAt !== undefined && hold?.heldAt === heldAt) {
      // Its other failure ended; the hold it was reported for goes on.
      this.#entries.set(key, hold)
      this.#log.info({ topic: p.topic, partition: p.partition, cluster: entry.report.cluster, error: entry.report.error, heldAt },
        `${p.topic}-${p.partition} answers again (it failed with ${entry.report.error} on cluster ${entry.report.cluster}); it is still held by the transaction open since offset ${heldAt}`)
      this.#updateGauge()
      return false
    }
    const endedHold = hold !== undefined && hold !== entry ? `; the transaction open since offset ${hold.heldAt} ended too` : ''
    this.#holds.delete(key)
    this.#entries.delete(key)
    this.#log.info({ topic: p.topic, partition: p.partition, remoteTopic: p.remoteTopic, cluster: entry.report.cluster, error: entry.report.error, failedForMs: Date.now() - entry.sinceMs, attempts: entry.report.attempts },
      `${p.topic}-${p.partition} is replicated again (it failed with ${entry.report.error} on cluster ${entry.report.cluster}${endedHold})`)
    this.#updateGauge()
    return true
  }

  /** The partition is no longer replicated (topic removed): forgets it without a recovery line. */
  forget (key: string): void {
    this.#holds.delete(key)
    if (this.#entries.delete(key)) this.#updateGauge()
  }

  has (key: string): boolean {
    return this.#entries.has(key)
  }

  report (key: string): FailureReport | null {
    return this.#entries.get(key)?.report ?? null
  }

  get size (): number {
    return this.#entries.size
  }

  #updateGauge (): void {
    const counts = new Map<string, { labels: Entry['labels'], count: number }>()
    for (const { labels } of this.#entries.values()) {
      const id = labels.error
      counts.set(id, { labels, count: (counts.get(id)?.count ?? 0) + 1 })
    }
    for (const [id, labels] of this.#reported) if (!counts.has(id)) this.#metrics.set('failingPartitions', labels, 0)
    this.#reported.clear()
    for (const [id, { labels, count }] of counts) {
      this.#metrics.set('failingPartitions', labels, count)
      this.#reported.set(id, labels)
    }
  }
}

/** What fixes the fault, naming the topic, the cluster and the missing permission or setting. */
export function remedyFor (p: FailingPartition, fault: PartitionFault, side: FailureCluster): string {
  const topic = fault.side === FailureSides.SOURCE ? p.topic : p.remoteTopic
  const cluster = side.alias
  if (fault.error === 'LEADER_NOT_AVAILABLE' || fault.error === 'NETWORK_EXCEPTION') return leaderRemedy(topic, p.partition, side)
  if (fault.error === THROTTLED) return quotaRemedy(side)
  if (fault.error === 'INVALID_TIMESTAMP' && fault.side !== FailureSides.SOURCE) return timestampRemedy(topic, p.topic, side)
  switch (fault.kind) {
    case KafkaErrorKinds.AUTHORIZATION: {
      const operation = fault.operation ?? (fault.side === FailureSides.SOURCE ? 'READ' : 'WRITE')
      return describeGrant({ operation, resourceType: 'topic', names: [topic] }, side.principal ?? `the principal kmirror uses on cluster ${cluster}`, side)
    }
    case KafkaErrorKinds.TOO_LARGE:
      return `raise max.message.bytes of topic ${topic} on cluster ${cluster} (or message.max.bytes of its brokers) above the largest record batch of ${p.topic}`
    case KafkaErrorKinds.UNKNOWN_TOPIC:
      return `topic ${topic} does not exist on cluster ${cluster}; the topic refresh creates or removes it`
    case KafkaErrorKinds.CORRUPT:
      return fault.side === FailureSides.SOURCE
        ? `check the disks and logs of the brokers of cluster ${cluster} that host ${topic}-${p.partition}`
        : `check the broker logs of cluster ${cluster} for why it refuses records of ${topic}`
    default:
      return `check the broker logs of cluster ${cluster} for ${fault.error} on ${topic}-${p.partition}`
  }
}

/**
 * The target refuses record timestamps (CreateTime kept from the source) outside what the remote topic accepts: its
 * message.timestamp.before.max.ms / after.max.ms (Kafka 3.6+, KIP-937) or difference.max.ms, typically copied from the
 * source topic, where the records were recent when written.
 */
function timestampRemedy (remoteTopic: string, sourceTopic: string, side: FailureCluster): string {
  return `the records of ${sourceTopic} keep their source timestamps, which ${remoteTopic} on cluster ${side.alias} refuses as too old or too new: ` +
    `remove message.timestamp.before.max.ms, message.timestamp.after.max.ms and message.timestamp.difference.max.ms from ${remoteTopic} ` +
    `(${toolCommand('kafka-configs.sh', side, `--alter --entity-type topics --entity-name ${remoteTopic} --delete-config message.timestamp.before.max.ms,message.timestamp.after.max.ms,message.timestamp.difference.max.ms`)}) ` +
    'and keep them in config.properties.exclude so that the config sync does not copy them back'
}

/** A source broker throttling kmirror's fetches for a client quota long enough for its partitions to be reported. */
function quotaRemedy (side: FailureCluster): string {
  return `raise or remove the fetch quota (consumer_byte_rate) that throttles kmirror's principal or client id on cluster ${side.alias} ` +
    `(to see them: ${toolCommand('kafka-configs.sh', side, '--describe --entity-type users')} and ${toolCommand('kafka-configs.sh', side, '--describe --entity-type clients')}); ` +
    'until then it is copied at the quota\'s pace'
}

/** What ends a hold by an open transaction on the source, and how to find and abort one that hangs (KIP-664, Kafka 3.0+). */
function transactionRemedy (topic: string, partition: number, offset: number, side: FailureCluster): string {
  return `a producer's transaction ends with its commit or abort, or at its transaction.timeout.ms (at most the brokers' transaction.max.timeout.ms, ` +
    `15 min by default); one open longer hangs (its coordinator lost track of it). Find its producer, the one whose ` +
    `CurrentTransactionStartOffset is ${offset} (${toolCommand('kafka-transactions.sh', side, `describe-producers --topic ${topic} --partition ${partition}`)}); ` +
    `once sure that producer is gone, abort the transaction, with CLUSTER_ACTION on the cluster or, from Kafka 3.8, ALTER ` +
    `(${toolCommand('kafka-transactions.sh', side, `abort --topic ${topic} --partition ${partition} --start-offset ${offset}`, 'ADMIN')})`
}

/** A partition without a leader (or with one that does not answer for it): where to look, and what brings it back. */
function leaderRemedy (topic: string, partition: number, side: FailureCluster): string {
  return `bring back the broker that leads ${topic}-${partition} on cluster ${side.alias}, or elect a leader among its live replicas ` +
    `(to list it: ${toolCommand('kafka-topics.sh', side, `--describe --topic ${topic} --unavailable-partitions`)})`
}
