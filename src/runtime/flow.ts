/**
 * One running `source->target` flow: its clients, its periodic jobs (job-registry.ts) and its data path.
 * This is the composition root of a flow; nothing else creates Kafka clients for it. Alone, a flow owns all its
 * work from its start; started with `owned: 'assigned'`, it owns what its group assigns (`WorkOwner`, flow-work.ts).
 */
import { CheckpointEmitter } from '../checkpoint/checkpoint-emitter.ts'
import { GroupOffsetSync } from '../checkpoint/group-offset-sync.ts'
import { OffsetHistoryStore } from '../checkpoint/offset-history-store.ts'
import { explicitCompression, isolationLevel, startPosition } from '../config/client-settings.ts'
import { checkpointIntervalMs } from '../config/job-intervals.ts'
import type { FlowConfig } from '../config/types.ts'
import { describeReleases } from '../kafka/broker-check.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import type { RecordWriter } from '../kafka/record-writer.ts'
import { toolClusterOf } from '../kafka/tool-command.ts'
import type { TransactionCoordinatorMove } from '../kafka/transactions.ts'
import type { Logger } from '../logger.ts'
import type { WorkOwner } from '../cluster/work-owner.ts'
import type { WorkItem } from '../cluster/work.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { FlowContext } from '../metadata/flow-context.ts'
import { RemoteTopics } from '../metadata/remote-topics.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { FlowReplicator } from '../replication/flow-replicator.ts'
import { OffsetSyncEmitter } from '../replication/offset-sync-emitter.ts'
import { ProgressStore } from '../replication/progress-store.ts'
import type { FlowStatus, HeldReadStatus, MembershipProvider } from './flow-status.ts'
import { MAX_CHUNK_BYTES, openDataPath, storeSinks } from './flow-data-path.ts'
import { FlowWork, Ownerships, type Ownership } from './flow-work.ts'
import type { FlowProgress } from './health.ts'
import type { PairJob } from './heartbeats.ts'
import { flowJobs, JobNames } from './job-registry.ts'
import { readGroupMembership } from './membership-reader.ts'
import { retryRetriable } from '../retry.ts'
import { RefreshBaseline } from './refresh-baseline.ts'
import { Scheduler } from './scheduler.ts'
import { TransactionTally } from '../replication/transaction-tally.ts'
import { transactionTimeoutMs } from '../config/transaction-timeout.ts'
import { SyncOutbox } from '../replication/sync-outbox.ts'
import { HeldReads } from './held-reads.ts'
import type { ExactlyOnceDeps } from '../replication/flow-replicator.ts'
import { topicRefreshJob } from './topic-refresh-job.ts'

/** How long the remote topics' early creation waits for a group coordinator (`#createRemotesWhileJoining`). */
const EARLY_CREATION_PATIENCE_MS = 5_000

/** The transactional id of a lone instance: like a Connect task's `<group>-<connector>-0`, stable across restarts. */
export function defaultTransactionalId (config: FlowConfig): string {
  return `kmirror-${config.source.alias}-${config.target.alias}-0`
}

export type { FlowStatus, GroupCheckpoints, MemberStatus, MembershipProvider, MembershipStatus } from './flow-status.ts'
export { Ownerships, type Ownership } from './flow-work.ts'

export interface FlowOptions {
  /**
   * Hears when the topic refresh finds source partitions added or removed, so the flow's group rebalances. Alone,
   * the flow also adds and removes them itself, as always.
   */
  readonly onWorkChanged?: () => void
  /** The pair's heartbeat job, as part of this flow's work (group only; alone, MirrorMaker runs heartbeats). */
  readonly heartbeats?: PairJob
  /** Exactly-once mode: this instance's transactional id (`<group id>-<member name>`); `defaultTransactionalId` otherwise. */
  readonly transactionalId?: string
  /**
   * The group lease gate (flow-membership.ts): asked right before each produce request of the data path (BatchWriter
   * `fence`) and of the internal writers, and before each write round; a reason sends nothing. Absent alone.
   */
  readonly fence?: () => string | null
  /** In a group: this instance's member name, so that its own join does not count as another member. */
  readonly memberName?: string
}

export interface FlowStartOptions {
  /** 'all' (default): the flow owns all its work from its start. 'assigned': it waits for `assign`. */
  readonly owned?: Ownership
}

/** How long a stop waits for MM2's offset syncs still queued (sync-outbox.ts) before it closes the clients. */
const SYNC_DRAIN_MS = 10_000

export class Flow implements WorkOwner {
  readonly config: FlowConfig
  readonly #log: Logger
  readonly #metrics: Metrics
  readonly #scheduler: Scheduler
  readonly #closers: (() => Promise<void>)[] = []
  readonly #options: FlowOptions
  /** `stop` was called: start-up steps that wait and retry give up. */
  #stopping = false
  /** Aborted when the flow stops: ends the refresh made while joining (its waits for a quota included). */
  readonly #stopped = new AbortController()
  #replicator: FlowReplicator | null = null
  /** At-least-once mode with offset syncs: MM2's syncs not written yet, drained at stop. */
  #outbox: SyncOutbox | null = null
  /** The stores whose reads may wait for open transactions (progress, history): told to give up at a stop. */
  readonly #waitingReads: Array<{ close (): void }> = []
  /** Exactly-once mode: what the round transactions came to; null otherwise. */
  #transactions: TransactionTally | null = null
  #checkpoints: CheckpointEmitter | null = null
  #remoteTopics: RemoteTopics | null = null
  #work: FlowWork | null = null
  #running: Promise<void> | null = null
  #membership: MembershipProvider = () => null
  /** What the next topic refresh compares with, to tell the group when its work changes. */
  readonly #refreshed = new RefreshBaseline()
  /**
   * The topic refresh job ran here since it was last assigned here: as the group's leader, this instance lists its
   * last result as the work (`RemoteTopics.replicable`), which the next refresh then finds again.
   */
  #refreshRanSinceAssigned = false
  /** The reads of progress and history that an open transaction holds now (told, and shown in /status). */
  readonly #heldReads: HeldReads

  constructor (config: FlowConfig, log: Logger, metrics: Metrics = noMetrics, options: FlowOptions = {}) {
    this.config = config
    this.#options = options
    this.#log = log.child({ flow: config.name })
    this.#heldReads = new HeldReads(this.#log, toolClusterOf(config.target.alias, config.target.producer))
    this.#metrics = metrics
    this.#scheduler = new Scheduler(this.#log, {
      onRun: (job, ok) => {
        metrics.inc('jobRuns', { flow: config.name, job_name: job })
        if (!ok) metrics.inc('jobFailures', { flow: config.name, job_name: job })
      },
      gate: () => this.#options.fence?.() ?? null
    })
  }

  #clients (clients: ClusterClients): ClusterClients {
    this.#closers.push(() => clients.close())
    return clients
  }

  /**
   * Prepares everything and starts copying (alone) or waits for its assignment (`owned: 'assigned'`). Rejects if
   * the flow cannot start (clusters, internal topics).
   */
  async start (options: FlowStartOptions = {}): Promise<void> {
    const owned = options.owned ?? Ownerships.ALL
    const { config } = this
    const policy = createReplicationPolicy(config.replicationPolicy)
    const source = this.#clients(new ClusterClients(config.source, config.name, 'source'))
    const target = this.#clients(new ClusterClients(config.target, config.name, 'target'))
    await this.#checkBrokers(source, target)
    const [sourceAdmin, targetAdmin] = [source.admin, target.admin]
    const fence = this.#options.fence
    const transactionalId = config.exactlyOnce ? (this.#options.transactionalId ?? defaultTransactionalId(config)) : undefined
    const { fetcher, batchWriter, writer, rounds, roundWriter } = openDataPath(config, source, target, {
      log: this.#log, metrics: this.#metrics, fence, transactionalId, onRoundEnd: (outcome, cause) => { this.#transactions?.ended(outcome, cause) }, onCoordinatorMoved: m => this.#coordinatorMoved(m)
    })
    this.#transactions = transactionalId === undefined ? null : new TransactionTally(config.name, transactionalId, transactionTimeoutMs(config), this.#metrics)
    const offsetsReader = target.reader
    const held = this.#heldReads
    const progress = new ProgressStore(config, targetAdmin, offsetsReader, roundWriter, held)
    const { emitter: syncs, sourceWriter: syncsSourceWriter } = config.emitOffsetSyncsEnabled ? this.#offsetSyncEmitter(policy, source, target, roundWriter) : { emitter: null, sourceWriter: null }
    const history = new OffsetHistoryStore(config, targetAdmin, offsetsReader, roundWriter, held)
    this.#waitingReads.push(progress, history)
    if (rounds !== null) {
      // Initialises this process's own transactional id (it carries the pid and start time, so it fences no one):
      // an earlier process's open transactions are ended by the group's leader fencing its id, or by their timeout,
      // and the progress read waits for them (progress-store.ts).
      await batchWriter.abortTransaction()
      this.#log.info({ transactionalId }, 'exactly-once: transactional producer initialised, earlier producers of this id fenced')
    }
    const syncsInRound = syncs !== null && (rounds === null || config.offsetSyncsTopicLocation === 'target') ? syncs : null
    // At-least-once: MM2's syncs go out beside the data path (sync-outbox.ts), never holding up a progress store.
    // Exactly-once with syncs on the source: they cannot join the target's transaction, so after each commit.
    const afterCommit = rounds !== null && syncsInRound === null
    const outbox = syncs !== null && (rounds === null || afterCommit) ? new SyncOutbox(syncs, this.#log, {
      flow: config.name,
      metrics: this.#metrics,
      writesTo: { topic: syncs.topic, cluster: config.offsetSyncsTopicLocation === 'target' ? config.target.alias : config.source.alias }
    }) : null
    this.#outbox = outbox
    const topics = new RemoteTopics(config, policy, sourceAdmin, targetAdmin, this.#log, this.#metrics)
    this.#remoteTopics = topics
    // Start-up steps that do not depend on each other run at once (time to first record): the internal topics,
    // the stored progress and history, and the first topic refresh (which creates the remote topics). No
    // partition is added before its stored position is known, and the data path (the only writer of offset
    // syncs and history) starts only after all of them.
    // In a group the topic refresh is a job: it runs where it is assigned.
    const alone = owned === Ownerships.ALL
    const early = alone ? null : this.#createRemotesWhileJoining(topics)
    // Alone, this load is what the data path resumes from; in a group, each assignment reads again (flow-work.ts).
    const [, , stored, first] = await Promise.all([syncs?.init(), history.load({ waitForTransactions: alone }), progress.load({ waitForTransactions: alone, forgotten: true }), alone ? topics.refresh() : null, batchWriter.prepare()])
    this.#log.info({ offsetsTopic: progress.topic, storedPartitions: [...stored.values()].filter(v => v >= 0).length, offsetSyncsTopic: syncs?.topic, historyTopic: history.topic }, 'progress loaded')
    const replicator = new FlowReplicator({
      flow: config,
      fetcher,
      isolation: isolationLevel(config.source.consumer),
      writer: batchWriter,
      batching: { compression: explicitCompression(config.target.producer), maxChunkBytes: MAX_CHUNK_BYTES },
      ...storeSinks(config, { history, progress, syncsInRound, outbox: rounds === null ? outbox : null, afterCommit: afterCommit ? outbox : null }),
      ...(rounds === null ? {} : { exactlyOnce: { rounds, reloadProgress: () => progress.reload(), syncsAfterCommit: afterCommit ? outbox : null } satisfies ExactlyOnceDeps }),
      log: this.#log,
      clusters: { source: toolClusterOf(config.source.alias, config.source.consumer), target: toolClusterOf(config.target.alias, config.target.producer) },
      metrics: this.#metrics,
      startAt: startPosition(config.source.consumer),
      copiedFrom: key => history.copiedFrom(key),
      ...(fence === undefined ? {} : { fence }),
      flushWhenCaughtUp: owned === Ownerships.ASSIGNED
    })
    replicator.setStoredProgress(stored)
    if (first !== null) {
      await replicator.addTopics(first.topics)
      this.#refreshed.listed(first.topics)
      this.#log.info({ topics: first.topics.length, created: first.created.length, problems: first.problems.length }, 'flow started')
    } else {
      this.#log.info({ ownership: owned }, 'flow started; waiting for its assignment')
    }
    const context: FlowContext = { flow: config, policy, sourceAdmin, targetAdmin, remoteTopics: topics, log: this.#log, metrics: this.#metrics, targetReader: offsetsReader, internalWriter: writer }
    const translator = { translate: (topic: string, partition: number, committed: number) => history.history(topic, partition)?.toTarget(committed) }
    const checkpoints = checkpointIntervalMs(config) !== null
      ? new CheckpointEmitter({ flow: config, policy, sourceAdmin, targetAdmin, writer, reader: offsetsReader, log: this.#log, translator })
      : null
    await checkpoints?.init()
    this.#checkpoints = checkpoints
    const groupSync = new GroupOffsetSync({ flow: config, policy, sourceAdmin, targetAdmin, log: this.#log.child({ job: 'sync-group-offsets' }), metrics: this.#metrics, translator })
    let work: FlowWork | null = null
    const jobs = flowJobs(context, {
      refreshTopics: topicRefreshJob({
        topics,
        replicator,
        progress,
        target: config.target.alias,
        owns: key => work?.ownsPartition(key) ?? false,
        alone,
        before: early,
        log: this.#log,
        refreshed: result => {
          this.#refreshRanSinceAssigned = true
          this.#noteRefreshed(result.topics)
        }
      }),
      refreshTopicsAssigned: () => { topics.acquired() },
      refreshTopicsStopped: () => { topics.released() },
      emitCheckpoints: async signal => { await work?.followHistory(); await checkpoints?.emit(signal) },
      trimOffsetHistory: async signal => {
        // Followed first: trimming another instance's partition from a stale view could delete its live run.
        await work?.followHistory()
        const partitions = history.partitions()
        if (partitions.length === 0) return
        // Settled, asked once (the job has its own schedule): a deleted source topic, whose history stays for
        // failover, must not keep every other partition from being trimmed.
        const { offsets, failed } = await fetcher.listOffsetsSettled(partitions, 'earliest', 1)
        if (failed.size > 0) this.#log.debug({ partitions: [...failed].slice(0, 20).map(([tp, error]) => `${tp.replace('\u0000', '-')}: ${error}`) }, 'offset history not trimmed for these partitions (no log start offset)')
        signal.throwIfAborted()
        await history.trim(offsets)
      },
      syncGroupOffsets: async signal => { await work?.followHistory(); await groupSync.sync(signal) }
    })
    work = new FlowWork({
      config, policy, sourceAdmin, replicator, progress, history, scheduler: this.#scheduler, jobs, log: this.#log, ...(rounds === null ? {} : { endLostTransaction: () => rounds.recover() }), membershipLost: () => { writer.renew(); syncsSourceWriter?.renew() }, replicable: () => topics.replicable({ fromLastRefresh: this.#refreshRanSinceAssigned && this.owned().jobs.includes(JobNames.REFRESH_TOPICS) }), heartbeats: alone ? null : (this.#options.heartbeats ?? null)
    }, owned)
    if (alone) work.startAllJobs()
    this.#work = work
    this.#replicator = replicator
    this.#running = replicator.run()
  }

  /**
   * In a group the topic refresh, which creates the remote topics, runs where the group assigns it: seconds after
   * start (join, the leader's listing, sync), while the target could already be creating them (thousands of new
   * partitions take it many seconds). With no member in the group, no instance holds refresh state that an early
   * creation could confuse (a remote topic deleted by hand, found missing by the refresh that knew it), so this
   * instance creates the missing remote topics at once, while it starts and joins (its own join, waiting for the
   * first assignment, holds no refresh state either); the assigned refresh waits for it. Best effort: any failure
   * leaves the creation to the assigned refresh.
   */
  async #createRemotesWhileJoining (topics: RemoteTopics): Promise<void> {
    const group = this.config.groupId
    const cluster = this.config.target.alias
    try {
      // kmirror's own DescribeGroups: the client library's decodes every member as a consumer and throws on ours. A
      // fresh target has no group coordinator for a moment (it creates its offsets topic on the first FindCoordinator)
      // while its group join waits out the broker's initial rebalance delay (3 s by default): asked again meanwhile.
      // Only this instance's own join in the group (it waits there for the first assignment) is no other member.
      const membership = await retryRetriable(async () => await readGroupMembership(this.config), EARLY_CREATION_PATIENCE_MS, { stopped: () => this.#stopping })
      if (membership !== null && membership.members.some(m => m.name !== this.#options.memberName)) return
      const result = await topics.refresh({ signal: this.#stopped.signal })
      this.#log.info({ group, created: result.created.length, topics: result.topics.length }, `no member in group ${group} on cluster ${cluster} yet: remote topics created while joining it`)
    } catch (err) {
      this.#log.debug({ group, err }, `creating the remote topics on cluster ${cluster} while joining group ${group} failed; the assigned topic refresh creates them`)
    }
  }

  /** Tells the group (`onWorkChanged`) when a refresh finds other source partitions than its work holds. */
  #noteRefreshed (replicated: readonly { source: string, partitions: number }[]): void {
    const members = this.#membership()?.members ?? []
    const generation = members.length === 0 ? null : members.reduce((n, m) => n + m.partitions, 0)
    if (this.#refreshed.refreshed(replicated, generation)) this.#options.onWorkChanged?.()
  }

  /** Exactly-once mode: the round's transactions follow their coordinator to another broker; the operator sees it. */
  #coordinatorMoved (move: TransactionCoordinatorMove): void {
    this.#log.warn({ ...move }, `the transaction coordinator of transactional id ${move.transactionalId} on ${move.cluster} moved from broker ${move.from} ` +
      `to broker ${move.to} (node ${move.nodeId}): the flow's transactions go on with it (a round cut short by the move is aborted and copied again)`)
  }

  /** Every broker of both clusters speaks what kmirror needs (Kafka 2.1+), before anything is read or written. */
  async #checkBrokers (source: ClusterClients, target: ClusterClients): Promise<void> {
    const [sourceBrokers, targetBrokers] = await Promise.all([source.checkBrokers(), target.checkBrokers()])
    this.#log.info({ source: describeReleases(sourceBrokers), target: describeReleases(targetBrokers) }, 'brokers checked')
    const silent = [...sourceBrokers, ...targetBrokers].filter(b => !b.reachable)
    if (silent.length > 0) this.#log.warn({ brokers: silent.map(b => `${b.nodeId}@${b.address}: ${b.release}`) }, 'brokers that did not answer at start: the partitions they lead wait until they do')
  }

  /**
   * MM2's offset-sync emitter; with the topic on the source, the writer of its own it uses there, which a lost
   * membership renews as it does the target's (a send under way then sends nothing more: record-writer.ts).
   */
  #offsetSyncEmitter (policy: ReturnType<typeof createReplicationPolicy>, source: ClusterClients, target: ClusterClients, targetWriter: Pick<RecordWriter, 'write'>): { emitter: OffsetSyncEmitter, sourceWriter: RecordWriter | null } {
    const { config } = this
    if (config.offsetSyncsTopicLocation === 'target') return { emitter: new OffsetSyncEmitter(config, policy, target.admin, targetWriter), sourceWriter: null }
    const fence = this.#options.fence
    const sourceWriter = source.writer('offset-syncs-source-producer', { idempotent: true, maxChunkBytes: MAX_CHUNK_BYTES, ...(fence === undefined ? {} : { fence }) })
    return { emitter: new OffsetSyncEmitter(config, policy, source.admin, sourceWriter), sourceWriter }
  }

  /** Resolves when the data path stops; rejects with the error that stopped it. */
  get done (): Promise<void> {
    return this.#running ?? Promise.resolve()
  }

  /**
   * A stop begins: a progress or history read waiting for a transaction to end (an assignment's start, a reload)
   * gives up now, with a retriable error. Called before the group hand-over too: the member's stop waits for the
   * assignment under way, which would otherwise wait on that read past the stop's deadline.
   */
  endWaitingReads (): void {
    for (const store of this.#waitingReads) store.close()
  }

  /**
   * Stops fetching, lets in-flight writes finish, stores progress and offset syncs, closes every client. MM2's
   * offset syncs still queued are waited for SYNC_DRAIN_MS at most, and not past DRAIN_BY (epoch ms) when given: the
   * process's stop deadline. Once the member left its group (its lease gate closed, so nothing more goes out) only
   * the send under way is waited for: a stop in a group whose offset-syncs topic cannot be written ends soon after
   * its hand-over.
   */
  async stop (drainBy?: number): Promise<void> {
    this.#stopping = true
    this.#stopped.abort(new Error('kmirror is stopping'))
    this.endWaitingReads()
    await this.#scheduler.stop()
    this.#replicator?.stop()
    try {
      await this.#running
    } finally {
      // (a member that left its group, or whose lease ended, sends nothing more: only its send under way is waited for)
      const gated = (this.#options.fence?.() ?? null) !== null
      await this.#outbox?.drain(drainBy === undefined ? SYNC_DRAIN_MS : Math.max(0, Math.min(SYNC_DRAIN_MS, drainBy - Date.now())), gated)
      await Promise.all(this.#closers.map(close => close()))
    }
  }

  /** For health (health.ts): whether the data path runs, and when it last completed a round. */
  progress (): FlowProgress {
    return { name: this.config.name, started: this.#replicator !== null, lastRoundAt: this.#replicator?.lastRoundAt ?? null, stallThresholdMs: this.config.healthStallThresholdMs }
  }

  status (): FlowStatus {
    return {
      name: this.config.name,
      partitions: this.#replicator?.status() ?? [],
      stepFailure: this.#replicator?.stepFailure() ?? null,
      jobs: this.#scheduler.status(),
      membership: this.#membership(),
      // Only the instance that runs the job knows how current the checkpoints are.
      ...(this.#checkpoints !== null && this.owned().jobs.includes(JobNames.EMIT_CHECKPOINTS) ? { checkpoints: this.#checkpoints.currentSince() } : {}),
      ...(this.#remoteTopics !== null && this.owned().jobs.includes(JobNames.REFRESH_TOPICS) ? { remoteTopicProblems: this.#remoteTopics.problems } : {}),
      ...(this.#outbox === null ? {} : { offsetSyncs: this.#outbox.status() }),
      ...(this.#transactions === null ? {} : { exactlyOnce: this.#transactions.status() }),
      ...heldReadsOf(this.#heldReads.status())
    }
  }

  /** Where `status().membership` comes from (the group wiring sets it); null (no group) by default. */
  setMembershipProvider (provider: MembershipProvider): void {
    this.#membership = provider
  }

  /** What this instance owns now (before start: nothing). */
  owned (): { partitions: string[], jobs: string[] } {
    return this.#work?.owned() ?? { partitions: [], jobs: [] }
  }

  async listWork (): Promise<WorkItem[]> {
    const items = await this.#started().listWork()
    // The leader's list is what the next topic refresh here is compared with: a source topic that appeared between
    // the two makes the group rebalance, so its partitions are assigned.
    const counts = new Map<string, number>()
    for (const item of items) if (item.kind === 'partition') counts.set(item.topic, Math.max(counts.get(item.topic) ?? 0, item.partition + 1))
    this.#refreshed.listed([...counts].map(([source, partitions]) => ({ source, partitions })))
    return items
  }

  async assign (items: readonly WorkItem[]): Promise<void> {
    if (items.some(i => i.kind === 'job' && i.job === JobNames.REFRESH_TOPICS)) {
      this.#refreshed.jobAssigned()
      this.#refreshRanSinceAssigned = false
    }
    await this.#started().assign(items)
  }

  async revoke (items: readonly WorkItem[], by?: number): Promise<void> {
    await this.#started().revoke(items, by)
  }

  lose (): void {
    this.#work?.lose()
  }

  #started (): FlowWork {
    if (this.#work === null) throw new KmirrorError(ErrorCodes.INTERNAL, `flow ${this.config.name} was given work before it started`)
    return this.#work
  }
}

/** The `heldReads` of a flow's status: present only while a read is held. */
function heldReadsOf (held: readonly HeldReadStatus[]): { heldReads?: readonly HeldReadStatus[] } {
  return held.length === 0 ? {} : { heldReads: held }
}
