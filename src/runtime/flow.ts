/**
 * One running `source->target` flow: its clients, its remote-topic refresh job and its data path.
 * This is the composition root of a flow; nothing else creates Kafka clients for it.
 */
import { CheckpointEmitter } from '../checkpoint/checkpoint-emitter.ts'
import { GroupOffsetSync } from '../checkpoint/group-offset-sync.ts'
import { OffsetHistoryStore } from '../checkpoint/offset-history-store.ts'
import { clientInt, explicitCompression, isolationLevel, startPosition } from '../config/client-settings.ts'
import type { FlowConfig } from '../config/types.ts'
import { describeReleases } from '../kafka/broker-check.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import type { RecordWriter } from '../kafka/record-writer.ts'
import type { Logger } from '../logger.ts'
import { createMetadataJobs } from '../metadata/jobs.ts'
import { RemoteTopics } from '../metadata/remote-topics.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { FlowReplicator, type PartitionStatus, type StepFailure } from '../replication/flow-replicator.ts'
import { OffsetSyncEmitter } from '../replication/offset-sync-emitter.ts'
import { ProgressStore } from '../replication/progress-store.ts'
import type { FlowProgress } from './health.ts'
import { Scheduler, type JobStatus } from './scheduler.ts'

export interface FlowStatus {
  readonly name: string
  readonly partitions: readonly PartitionStatus[]
  /** The failure of the whole data path while it lasts (every partition waits), else null. */
  readonly stepFailure: StepFailure | null
  readonly jobs: readonly JobStatus[]
}

/** How often runs below the source log start are removed from the offset history. */
const HISTORY_TRIM_INTERVAL_MS = 5 * 60 * 1000

/** Bytes of uncompressed record data per partition per produce request: well under the 1 MiB broker default. */
const MAX_CHUNK_BYTES = 512 * 1024

/** The counter of each fetch-session event of the data path's fetcher. */
const SESSION_EVENT_METRICS = { full: 'fetchFullRequests', incremental: 'fetchIncrementalRequests', reset: 'fetchSessionResets' } as const

export class Flow {
  readonly config: FlowConfig
  readonly #log: Logger
  readonly #metrics: Metrics
  readonly #scheduler: Scheduler
  readonly #closers: (() => Promise<void>)[] = []
  #replicator: FlowReplicator | null = null
  #running: Promise<void> | null = null

  constructor (config: FlowConfig, log: Logger, metrics: Metrics = noMetrics) {
    this.config = config
    this.#log = log.child({ flow: config.name })
    this.#metrics = metrics
    this.#scheduler = new Scheduler(this.#log, (job, ok) => {
      metrics.inc('jobRuns', { flow: config.name, job })
      if (!ok) metrics.inc('jobFailures', { flow: config.name, job })
    })
  }

  #clients (clients: ClusterClients): ClusterClients {
    this.#closers.push(() => clients.close())
    return clients
  }

  /** Prepares everything and starts copying. Rejects if the flow cannot start (clusters, internal topics). */
  async start (): Promise<void> {
    const { config } = this
    const policy = createReplicationPolicy(config.replicationPolicy)
    const source = this.#clients(new ClusterClients(config.source, config.name, 'source'))
    const target = this.#clients(new ClusterClients(config.target, config.name, 'target'))
    await this.#checkBrokers(source, target)
    const [sourceAdmin, targetAdmin] = [source.admin, target.admin]
    const consumer = config.source.consumer
    const fetcher = source.fetcher('replication-consumer', {
      isolation: isolationLevel(consumer),
      maxWaitMs: clientInt(consumer, 'fetch.max.wait.ms'),
      maxBytes: clientInt(consumer, 'fetch.max.bytes'),
      maxPartitionBytes: clientInt(consumer, 'max.partition.fetch.bytes'),
      sessions: true,
      onSessionEvent: event => this.#metrics.inc(SESSION_EVENT_METRICS[event], { flow: config.name })
    })
    // Internal records (progress, history, offset syncs) go through the record writer; replicated batches
    // through the batch writer, which forwards them as they are.
    const writer = target.writer('internal-producer', { idempotent: true, maxChunkBytes: MAX_CHUNK_BYTES })
    const batchWriter = target.batchWriter('replication-producer', {
      maxInFlight: Math.min(5, clientInt(config.target.producer, 'max.in.flight.requests.per.connection')),
      maxRequestBytes: clientInt(config.target.producer, 'max.request.size') * 4,
      timeoutMs: clientInt(config.target.producer, 'request.timeout.ms')
    })
    const offsetsReader = target.reader
    const progress = new ProgressStore(config, targetAdmin, offsetsReader, writer)
    const syncs = config.emitOffsetSyncsEnabled ? this.#offsetSyncEmitter(policy, source, target, writer) : null
    const history = new OffsetHistoryStore(config, targetAdmin, offsetsReader, writer)
    const topics = new RemoteTopics(config, policy, sourceAdmin, targetAdmin, this.#log, this.#metrics)
    // Start-up steps that do not depend on each other run at once (time to first record): the internal topics,
    // the stored progress and history, and the first topic refresh (which creates the remote topics). No
    // partition is added before its stored position is known, and the data path (the only writer of offset
    // syncs and history) starts only after all of them.
    const [, , stored, first] = await Promise.all([syncs?.init(), history.load(), progress.load(), topics.refresh(), batchWriter.prepare()])
    this.#log.info({ offsetsTopic: progress.topic, storedPartitions: stored.size, offsetSyncsTopic: syncs?.topic, historyTopic: history.topic }, 'progress loaded')
    const replicator = new FlowReplicator({
      flow: config,
      fetcher,
      writer: batchWriter,
      batching: { compression: explicitCompression(config.target.producer), maxChunkBytes: MAX_CHUNK_BYTES },
      // The exact history gets the same acknowledged syncs as MM2's offset-syncs topic, and at each progress
      // flush (after that flush's syncs) the positions and extents that make translation exact after a restart.
      progress: {
        commit: async positions => {
          // Extents first: a stored position must never be ahead of the history, or copied records past the
          // last persisted extent would read as gaps after a crash between the two writes.
          await history.checkpointExtents(new Map([...positions].map(([tp, p]) => [tp, p.lastOffset + 1])))
          return await progress.commit(positions)
        }
      },
      syncs: { send: async entries => { await Promise.all([syncs?.send(entries), history.append(entries)]) } },
      log: this.#log,
      aliases: { source: config.source.alias, target: config.target.alias },
      metrics: this.#metrics,
      startAt: startPosition(consumer)
    })
    replicator.setStoredProgress(stored)
    await replicator.addTopics(first.topics)
    this.#log.info({ topics: first.topics.length, created: first.created.length, problems: first.problems.length }, 'flow started')
    if (config.refreshTopicsEnabled && config.refreshTopicsIntervalSeconds > 0) {
      this.#scheduler.every('refresh-topics', config.refreshTopicsIntervalSeconds * 1000, async () => {
        const result = await topics.refresh({ stopReplicating: names => replicator.removeTopics(names) })
        await replicator.addTopics(result.topics, new Set(result.recopy))
      })
    }
    const context = { flow: config, policy, sourceAdmin, targetAdmin, remoteTopics: topics, log: this.#log, metrics: this.#metrics, targetReader: offsetsReader, internalWriter: writer }
    for (const job of createMetadataJobs(context)) this.#scheduler.every(job.name, job.intervalMs, job.run, job.firstDelayMs)
    if (config.emitCheckpointsEnabled && config.emitCheckpointsIntervalSeconds > 0) {
      const checkpoints = new CheckpointEmitter({
        flow: config, policy, sourceAdmin, targetAdmin, writer, log: this.#log,
        translator: { translate: (topic, partition, committed) => history.history(topic, partition)?.toTarget(committed) }
      })
      await checkpoints.init()
      this.#scheduler.every('emit-checkpoints', config.emitCheckpointsIntervalSeconds * 1000, async () => { await checkpoints.emit() })
    }
    // Bounded history: runs entirely below the source's log start can never be asked for again.
    this.#scheduler.every('trim-offset-history', HISTORY_TRIM_INTERVAL_MS, async () => {
      const partitions = history.partitions()
      if (partitions.length > 0) await history.trim(await fetcher.listOffsets(partitions, 'earliest'))
    })
    if (config.syncGroupOffsetsEnabled && config.syncGroupOffsetsIntervalSeconds > 0) {
      const groupSync = new GroupOffsetSync({
        flow: config, policy, sourceAdmin, targetAdmin, log: this.#log.child({ job: 'sync-group-offsets' }), metrics: this.#metrics,
        translator: { translate: (topic, partition, committed) => history.history(topic, partition)?.toTarget(committed) }
      })
      this.#scheduler.every('sync-group-offsets', config.syncGroupOffsetsIntervalSeconds * 1000, async () => { await groupSync.sync() })
    }
    this.#replicator = replicator
    this.#running = replicator.run()
  }

  /** Every broker of both clusters speaks what kmirror needs (Kafka 2.1+), before anything is read or written. */
  async #checkBrokers (source: ClusterClients, target: ClusterClients): Promise<void> {
    const [sourceBrokers, targetBrokers] = await Promise.all([source.checkBrokers(), target.checkBrokers()])
    this.#log.info({ source: describeReleases(sourceBrokers), target: describeReleases(targetBrokers) }, 'brokers checked')
    const silent = [...sourceBrokers, ...targetBrokers].filter(b => !b.reachable)
    if (silent.length > 0) this.#log.warn({ brokers: silent.map(b => `${b.nodeId}@${b.address}: ${b.release}`) }, 'brokers that did not answer at start: the partitions they lead wait until they do')
  }

  #offsetSyncEmitter (policy: ReturnType<typeof createReplicationPolicy>, source: ClusterClients, target: ClusterClients, targetWriter: RecordWriter): OffsetSyncEmitter {
    const { config } = this
    if (config.offsetSyncsTopicLocation === 'target') return new OffsetSyncEmitter(config, policy, target.admin, targetWriter)
    const sourceWriter = source.writer('offset-syncs-source-producer', { idempotent: true, maxChunkBytes: MAX_CHUNK_BYTES })
    return new OffsetSyncEmitter(config, policy, source.admin, sourceWriter)
  }

  /** Resolves when the data path stops; rejects with the error that stopped it. */
  get done (): Promise<void> {
    return this.#running ?? Promise.resolve()
  }

  /** Stops fetching, lets in-flight writes finish, stores progress and offset syncs, closes every client. */
  async stop (): Promise<void> {
    await this.#scheduler.stop()
    this.#replicator?.stop()
    try {
      await this.#running
    } finally {
      await Promise.all(this.#closers.map(close => close()))
    }
  }

  /** For health (health.ts): whether the data path runs, and when it last completed a round. */
  progress (): FlowProgress {
    return { name: this.config.name, started: this.#replicator !== null, lastRoundAt: this.#replicator?.lastRoundAt ?? null, stallThresholdMs: this.config.healthStallThresholdMs }
  }

  status (): FlowStatus {
    return { name: this.config.name, partitions: this.#replicator?.status() ?? [], stepFailure: this.#replicator?.stepFailure() ?? null, jobs: this.#scheduler.status() }
  }
}
