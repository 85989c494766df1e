/**
 * MM2's heartbeat connector and task for one `source->target` pair (mm2-spec §7.1), as one periodic job.
 *
 * Invariants:
 * - The `heartbeats` topic is created on the TARGET (compacted, 1 partition, `heartbeats.topic.replication.factor`)
 *   before the first heartbeat, also when emission is off, as MM2's connector does at start. An authorization or
 *   version refusal is logged and taken to mean the topic exists or will be auto-created, as MM2 does.
 * - Each run writes exactly one record to partition 0: key (source, target), value (v0, now), record timestamp =
 *   now, no headers: byte for byte what MirrorHeartbeatTask writes, so MM2 and its tools read it unchanged.
 * - Only the target is contacted: a pair whose flow is disabled still gets heartbeats, without any data path.
 * - A run whose signal is aborted (its group membership ended, or the job was revoked: runtime/scheduler.ts) sends
 *   nothing more, neither the topic's creation nor the heartbeat, and rejects with the signal's reason.
 */
import { MIN_HEARTBEAT_INTERVAL_MS } from '../config/job-intervals.ts'
import type { FlowConfig } from '../config/types.ts'
import { isKmirrorError } from '../errors.ts'
import { encodeHeartbeatKey, encodeHeartbeatValue } from '../formats/heartbeat.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import type { OutRecord, RecordWriter } from '../kafka/record-writer.ts'
import type { Logger } from '../logger.ts'
import type { MetadataJob } from '../metadata/flow-context.ts'
import type { Metrics } from '../metrics/metrics.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'

export type HeartbeatPair = Pick<FlowConfig, 'name' | 'source' | 'target' | 'replicationPolicy' |
  'emitHeartbeatsEnabled' | 'emitHeartbeatsIntervalSeconds' | 'heartbeatsTopicReplicationFactor'>
export type HeartbeatAdmin = Pick<AdminClient, 'createTopic'>
export type HeartbeatWriter = Pick<RecordWriter, 'write'>

export const HEARTBEATS_JOB = 'heartbeats'

/** While emission is off, how often creating the topic is retried until it succeeds once. */
const TOPIC_ONLY_INTERVAL_MS = 60_000

/** Creating the topic fails with these, MM2 logs and carries on (MirrorUtils.createCompactedTopic). */
const IGNORED_CREATE_ERRORS = ['TOPIC_AUTHORIZATION_FAILED', 'CLUSTER_AUTHORIZATION_FAILED', 'UNSUPPORTED_VERSION']

/** The record MirrorHeartbeatTask writes for `source->target` at `now` (ms since the epoch). */
export function heartbeatRecord (sourceAlias: string, targetAlias: string, now: number): OutRecord {
  return {
    key: encodeHeartbeatKey({ sourceClusterAlias: sourceAlias, targetClusterAlias: targetAlias }),
    value: encodeHeartbeatValue({ timestamp: now }),
    headers: [],
    timestamp: BigInt(now)
  }
}

/**
 * When heartbeats are written: every `emit.heartbeats.interval.seconds`, or never when
 * `emit.heartbeats.enabled = false` or the interval is negative (MM2 then starts no task).
 */
export function heartbeatIntervalMs (pair: Pick<HeartbeatPair, 'emitHeartbeatsEnabled' | 'emitHeartbeatsIntervalSeconds'>): number | null {
  if (!pair.emitHeartbeatsEnabled || !(pair.emitHeartbeatsIntervalSeconds >= 0)) return null
  return Math.max(MIN_HEARTBEAT_INTERVAL_MS, pair.emitHeartbeatsIntervalSeconds * 1000)
}

export interface HeartbeatEmitterDeps {
  readonly pair: HeartbeatPair
  readonly admin: HeartbeatAdmin
  readonly writer: HeartbeatWriter
  readonly log: Logger
  readonly metrics: Metrics
  readonly now?: () => number
}

export class HeartbeatEmitter {
  readonly topic: string
  readonly #deps: HeartbeatEmitterDeps
  readonly #intervalMs: number | null
  #topicReady = false

  constructor (deps: HeartbeatEmitterDeps) {
    this.#deps = deps
    this.topic = createReplicationPolicy(deps.pair.replicationPolicy).heartbeatsTopic()
    this.#intervalMs = heartbeatIntervalMs(deps.pair)
  }

  /** The periodic job: first run at once (topic, then a heartbeat), then every interval. */
  job (): MetadataJob {
    return {
      name: HEARTBEATS_JOB,
      intervalMs: this.#intervalMs ?? TOPIC_ONLY_INTERVAL_MS,
      firstDelayMs: 0,
      run: async signal => { await this.runOnce(signal) }
    }
  }

  /** One run: the topic until it is ready, then a heartbeat; nothing more once SIGNAL is aborted. */
  async runOnce (signal?: AbortSignal): Promise<void> {
    if (!this.#topicReady) {
      signal?.throwIfAborted()
      await this.ensureTopic()
    }
    if (this.#intervalMs === null) return
    signal?.throwIfAborted()
    await this.emit(signal)
  }

  async ensureTopic (): Promise<void> {
    const { pair, admin, log } = this.#deps
    try {
      const outcome = await admin.createTopic({
        name: this.topic, partitions: 1, replicationFactor: pair.heartbeatsTopicReplicationFactor, replicationFactorKey: 'heartbeats.topic.replication.factor', configs: { 'cleanup.policy': 'compact' }
      })
      log.info({ topic: this.topic, cluster: pair.target.alias, outcome }, 'heartbeats topic ready')
    } catch (err) {
      const kafkaErrors = isKmirrorError(err) ? (err.details.kafkaErrors as string[] | undefined) ?? [] : []
      if (!kafkaErrors.some(name => IGNORED_CREATE_ERRORS.includes(name))) throw err
      log.warn({ err, topic: this.topic, cluster: pair.target.alias }, 'cannot create the heartbeats topic; assuming it exists, as MM2 does')
    }
    this.#topicReady = true
  }

  /** SIGNAL goes with the write: aborted while it is under way, it sends nothing more (record-writer.ts). */
  async emit (signal?: AbortSignal): Promise<void> {
    const { pair, writer, metrics, now = Date.now } = this.#deps
    const record = heartbeatRecord(pair.source.alias, pair.target.alias, now())
    await writer.write([{ topic: this.topic, partition: 0, records: [record] }], { until: signal })
    metrics.inc('heartbeatsEmitted', { flow: pair.name })
  }
}
