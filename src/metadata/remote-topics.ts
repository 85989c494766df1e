/**
 * The topic refresh of one flow (MM2's refreshTopicPartitions + computeAndCreateTopicPartitions): finds the source
 * topics it replicates and makes sure each has its remote topic on the target, created with the source's
 * partition count, `replication.factor` and topic configs, or grown to the source's partition count.
 *
 * Invariants:
 * - A refresh costs one metadata read per cluster, plus DescribeConfigs of the source topics being created only.
 * - One topic's problem (creation refused, configs unreadable) is reported and never stops the others; a problem is
 *   logged once, again when it changes, and at info level when it is gone (refresh-reports.ts).
 * - A remote topic with more partitions than its source is replicated (partitions 0 to the source's count - 1), with
 *   a warning logged once, again when the counts change. A source topic read with fewer partitions than replicated
 *   (a broker's metadata behind after a growth) keeps its count (partition-count-hold.ts): nothing is released.
 * - A replicated source topic counts as deleted only when the source answered that it does not exist, asked by
 *   name, at two consecutive refreshes (deletion-proof.ts): a topic kmirror may no longer describe vanishes from
 *   listings too, and is kept replicated with its remote topic, and a warning naming the ACL to grant. A deleted
 *   topic is reported (log and metric), its partitions are released by the data path before anything else, and
 *   its remote topic is deleted only with `sync.topic.deletions.enabled`, and never when the deletion was proven over
 *   a mass absence (most replicated topics absent at once: another cluster reached looks the same, for good): kept
 *   on purpose, with one error line saying how to delete them by hand. Deletions are never inferred across
 *   restarts, nor across two stays of the refresh job on this instance (`acquired`). One back with the topic id it
 *   had was never deleted (stale metadata) and resumes from its stored positions, unless its remote topic was
 *   deleted for it: then it is `returned`, copied again from its log start.
 * - A replicated topic that became a problem, was deleted, or was re-created (new topic id) is listed in
 *   `removed`, so the data path lets go of its partitions; a re-created one is then replicated afresh.
 * - A remote topic missing from the target's metadata while its source topic was replicated is created again; only
 *   the creation's outcome says whether it was deleted (a broker's metadata lags behind its controller). Deleted
 *   (by hand): logged at error level, and copied again from the source's log start, so the records that were in
 *   it are not lost silently: by every owner of a partition of it, which sees the new topic id at its next write
 *   (ARCHITECTURE invariant 37), or, on a target without topic ids, by this instance (`recopy`). Still there:
 *   kept replicated, nothing copied again.
 * - The work a group leader lists (`replicable`) is what the refresh replicates, never a plan: a plan lists what the
 *   target may refuse to create or grow, and a refresh that keeps finding other work than the group holds makes it
 *   rebalance at every run (ARCHITECTURE invariant 31).
 */
import { partitionKey } from '../topic-partition.ts'
import type { FlowConfig } from '../config/types.ts'
import type { Logger } from '../logger.ts'
import { noMetrics, type Metrics } from '../metrics/metrics.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import { applyTopicSyncPlan, type TopicSyncResult, type TopicWriter } from './topic-sync-apply.ts'
import { planTopicSync, type DeletedTopic, type ReplicatedTopic, type TopicProblem, type TopicSyncPlan } from './topic-sync-plan.ts'
import { ConfigReads, describeTopicState, type TopicReader, type TopicState } from './topic-state.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import { DeletionProof, MissingVerdicts, type MissingTopic } from './deletion-proof.ts'
import { PartitionCountHold } from './partition-count-hold.ts'
import { estimateGroupWork, WorkEstimateMemory, type ListedTopic } from './group-work.ts'
import { remoteDeletedMessage } from './missing-topic-messages.ts'
import { RefreshReports } from './refresh-reports.ts'

/** What the refresh reads from the source: the topic state, and topics asked for by name. */
export type SourceTopicReader = TopicReader & Pick<AdminClient, 'probeTopics'>

export type { ReplicatedTopic, TopicProblem } from './topic-sync-plan.ts'
export { selectTopicConfigs } from './topic-config-plan.ts'

export interface RefreshResult extends TopicSyncResult {
  /** Source topics whose partitions the data path must stop replicating (deleted, re-created, or now a problem). */
  readonly removed: readonly string[]
  /** Source topics found deleted by this refresh. */
  readonly deleted: readonly string[]
  /**
   * Source topics whose remote topic was deleted on the target and created again, on a target without topic ids
   * (before Kafka 2.8): the data path of this instance stopped replicating them; copy them from the log start.
   */
  readonly recopy: readonly string[]
  /**
   * Source topics back after this instance found them deleted (a refresh at least): new topics, whose partitions
   * must not start from the stored progress of the deleted ones. Their stored positions are to be forgotten before
   * their partitions are handed out.
   */
  readonly returned: readonly ReplicatedTopic[]
}

export interface RefreshOptions {
  /**
   * Called with `removed` before any remote topic is deleted; resolves once the data path stopped replicating
   * those topics.
   */
  readonly stopReplicating?: (topics: readonly string[]) => Promise<void>
  /**
   * Called with the topics of `recopy` once `stopReplicating` let go of them, also in a run aborted after their remote
   * topic was created again (the refresh then rejects): the data path copies the partitions of them this instance
   * owns again from the source's log start. A change of this instance's data path, not a write on the target.
   */
  readonly copyAgain?: (topics: readonly ReplicatedTopic[]) => Promise<void>
  /**
   * Called with topics `stopReplicating` let go of whose deletion a run aborted since did not carry out: they stay
   * replicated until a later refresh proves their deletion again (`DeletionProof.notActedOn`), so the data path takes
   * back the partitions of them this instance owns, from their stored positions. Without it they would stay owned
   * and uncopied, unreported.
   */
  readonly keepReplicating?: (topics: readonly ReplicatedTopic[]) => Promise<void>
  /**
   * Whether this instance copies the partition `partitionKey(topic, partition)` (in a group, the partitions it was
   * assigned); absent: all. On a target without topic ids only these are copied again after their remote topic was
   * deleted by hand (`recopy`), and the error line names the others.
   */
  readonly owns?: (tp: string) => boolean
  /**
   * The job run's signal (runtime/scheduler.ts): once aborted, the refresh writes nothing more on the target (no
   * creation, growth or deletion), records what it did until then (as a refresh that ended there, its remaining
   * actions left to the next refresh) and rejects with its reason. Its reads may finish.
   */
  readonly signal?: AbortSignal
}

/** A source topic a refresh found deleted: its topic id then, and whether its remote topic was deleted (or planned to be) for it. */
interface DeletedSourceTopic {
  readonly id: string | undefined
  readonly remoteDeleted: boolean
}

/** The id of a topic on a broker without topic ids (before Kafka 2.8): says nothing of which topic it is. */
const ZERO_UUID = /^[0-]*$/

export class RemoteTopics {
  readonly #flow: FlowConfig
  readonly #policy: ReplicationPolicy
  readonly #source: SourceTopicReader
  readonly #target: TopicReader & TopicWriter
  readonly #log: Logger
  readonly #metrics: Metrics
  /** Topics replicated after the last refresh, and their source topic ids. */
  #replicated: readonly ReplicatedTopic[] = []
  #knownIds = new Map<string, string>()
  /** The work this instance last listed as its group's leader (`replicable`), with source topic ids when known. */
  #listed = new Map<string, ListedTopic>()
  /** What this instance's estimates of the work (group-work.ts) found missing or deleted, from one to the next. */
  readonly #estimates = new WorkEstimateMemory()
  /** Replicated topics whose remote topic was missing and could not be created: still suspected at the next refresh. */
  readonly #missingRemotes = new Map<string, ReplicatedTopic>()
  /** Whether the target gives topic ids (Kafka 2.8+); null until a remote topic was described. */
  #targetHasIds: boolean | null = null
  readonly #reports: RefreshReports
  readonly #countHold = new PartitionCountHold()
  readonly #deletionProof = new DeletionProof()
  /** The refresh job came to this instance since the last refresh began (`acquired`): the next one starts afresh. */
  #acquiredSinceRefresh = false
  /**
   * Source topics found deleted, with their topic id then and whether this instance deleted (or planned to delete)
   * their remote topic, until they come back (`returned`); what this instance saw, not stored.
   */
  readonly #deleted = new Map<string, DeletedSourceTopic>()
  /** The warning of each topic `returned` names, logged once its stored positions are forgotten (`returnedHandled`). */
  readonly #returnLines = new Map<string, { readonly fields: Record<string, unknown>, readonly msg: string }>()

  constructor (flow: FlowConfig, policy: ReplicationPolicy, sourceAdmin: SourceTopicReader, targetAdmin: TopicReader & TopicWriter, log: Logger, metrics: Metrics = noMetrics) {
    this.#flow = flow
    this.#policy = policy
    this.#source = sourceAdmin
    this.#target = targetAdmin
    this.#log = log
    this.#metrics = metrics
    this.#reports = new RefreshReports(flow, topic => policy.formatRemoteTopic(flow.source.alias, topic), log)
  }

  /** The last refresh's problems: topics not (fully) replicated now (remote topic not created or not grown), each with its cause and fix. */
  get problems (): readonly TopicProblem[] {
    return this.#reports.problems
  }

  /**
   * The refresh job came to this instance, which did not run it (`FlowJob.assigned`): what a stay here before counted
   * and found is stale, so the next refresh counts absences from zero and shows only the problems it finds. Done as
   * that refresh begins, not now: the run of a membership lost just before is aborted, not waited for, and may still
   * count an absence after this call (or keep a proof it did not act on, `DeletionProof.notActedOn`). Runs never
   * overlap (runtime/topic-refresh-job.ts), so the next one begins once that run ended: no count made before the job
   * came back outlives it, however late `released` is told.
   */
  acquired (): void {
    this.#acquiredSinceRefresh = true
  }

  /**
   * The refresh job left this instance (revoked, membership lost): its problems are no longer shown here (/status and
   * the gauge count only the instance that runs the job). Its absences stay, unused while it runs elsewhere: the first
   * refresh after it came back drops them (`acquired`). Not here: this is told once the aborted run ended, so a drop
   * here would depend on that timing, and told after the next stay's first refresh it would drop what that counted.
   */
  released (): void {
    this.#reports.forgetProblems()
  }

  /** The topics replicated after the last refresh. */
  get replicated (): readonly ReplicatedTopic[] {
    return this.#replicated
  }

  async refresh (options: RefreshOptions = {}): Promise<RefreshResult> {
    if (this.#acquiredSinceRefresh) this.#startStay()
    const state = await describeTopicState(this.#flow, this.#policy, { source: this.#source, target: this.#target },
      { configs: ConfigReads.CREATION, previouslyKnown: this.#knownIds.keys() })
    const missing = [...this.#knownIds.keys()].filter(name => !state.source.has(name))
    const verdicts = await this.#deletionProof.check(missing, names => this.#source.probeTopics(names), this.#replicated.length)
    const missingUnproven = this.#replicated.filter(t => verdicts.has(t.source) && verdicts.get(t.source)!.verdict !== MissingVerdicts.DELETED)
    const deletedInMassAbsence = new Set([...verdicts].filter(([, v]) => v.verdict === MissingVerdicts.DELETED && v.massAbsence === true).map(([topic]) => topic))
    const heldPartitions = this.#countHold.held(this.#replicated, state.source, this.#knownIds)
    const plan = planTopicSync({ state, flow: this.#flow, policy: this.#policy, previouslyKnown: this.#knownIds, missingUnproven, heldPartitions, deletedInMassAbsence })
    this.#noteTopicIds(state)
    const suspects = this.#remoteMissing(plan)
    const removed = this.#removedBy(plan)
    if (options.signal?.aborted === true) {
      // Nothing acted on: the deletions proven now are proven again later (notActedOn), never carried out on this proof
      this.#deletionProof.notActedOn(verdicts)
      options.signal.throwIfAborted()
    }
    if (removed.length > 0) await options.stopReplicating?.(removed)
    // Its plan holds no config change (the refresh reads no remote configs): the config sync job makes them.
    const { aborted, ...applied } = await applyTopicSyncPlan(plan, { target: this.#target, behind: new Set(suspects.keys()), targetAlias: this.#flow.target.alias }, this.#log, this.#metrics, options.signal)
    // Aborted: recorded as a refresh that ended where the apply stopped, so the next refresh does the rest only.
    const skipped = aborted?.skipped ?? new Set<string>()
    const { deletedOnSource, stillReplicated } = this.#deletionsActedOn(plan, verdicts, skipped)
    const { recopy, ...settled } = await this.#settleMissingRemotes(plan, suspects, applied, skipped, options)
    const topics = [...settled.topics, ...stillReplicated]
    this.#replicated = topics
    const idsBefore = this.#knownIds
    this.#knownIds = new Map(topics.map(t => [t.source, state.source.get(t.source)?.id ?? this.#knownIds.get(t.source)!]))
    this.#reports.report(this.#problemsAfter(applied.problems, skipped))
    this.#reports.warn(plan.warnings)
    this.#reports.reportMissing(verdicts, this.#deletionProof.massAbsence)
    this.#reports.reportRemotesKept(deletedOnSource)
    this.#reports.reportRemotesNotDeleted(applied.remotesNotDeleted)
    const refused = new Set(applied.remotesNotDeleted.filter(r => r.refused).map(r => r.remoteTopic))
    const returned = this.#returned(deletedOnSource.map(d => refused.has(d.remoteTopic) ? { ...d, deleteRemote: false } : d), topics, idsBefore)
    // After everything is recorded: taking them back reads the stored progress, which may fail.
    if (stillReplicated.length > 0) await options.keepReplicating?.(stillReplicated)
    options.signal?.throwIfAborted()
    return { ...applied, topics, removed: [...removed, ...recopy], deleted: deletedOnSource.map(d => d.topic), recopy, returned }
  }

  /** The first refresh since the job came here (`acquired`): nothing counted or found before is carried over. */
  #startStay (): void {
    this.#acquiredSinceRefresh = false
    this.#deletionProof.forget()
    // (not the problems: this refresh reports its own, and those told already stay told; `released` forgets them
    // when the job leaves, so a stay after another instance ran the job tells them again. The first stay, after the
    // refresh made while joining, does not tell them twice.)
    // What an earlier stay found deleted: the instances that ran the refresh since may have seen it back and copied
    // it; returned now, its positions (theirs) would be forgotten under them.
    this.#deleted.clear()
    this.#returnLines.clear()
  }

  /**
   * The plan's deletions an apply acted on (all but those it SKIPPED, aborted first), and the replicated topics whose
   * deletion it did not act on: they stay replicated, as if not proven deleted yet, until a refresh proves their
   * deletion again (`DeletionProof.notActedOn`: in kmirror one of the job's next stay, after the usual number of
   * absent answers), which lets go of their partitions (let go already) again.
   */
  #deletionsActedOn (plan: TopicSyncPlan, verdicts: ReadonlyMap<string, MissingTopic>, skipped: ReadonlySet<string>) {
    if (skipped.size === 0) return { deletedOnSource: plan.deletedOnSource, stillReplicated: [] }
    const notActedOn = new Set(plan.deletedOnSource.filter(d => skipped.has(d.topic)).map(d => d.topic))
    this.#deletionProof.notActedOn(new Map([...verdicts].filter(([topic]) => notActedOn.has(topic))))
    return { deletedOnSource: plan.deletedOnSource.filter(d => !notActedOn.has(d.topic)), stillReplicated: this.#replicated.filter(t => notActedOn.has(t.source)) }
  }

  /** A refresh's PROBLEMS; after an aborted apply, with the problems before of the topics it SKIPPED (not tried, not solved). */
  #problemsAfter (problems: readonly TopicProblem[], skipped: ReadonlySet<string>): readonly TopicProblem[] {
    if (skipped.size === 0) return problems
    const now = new Set(problems.map(p => p.topic))
    return [...problems, ...this.#reports.problems.filter(p => skipped.has(p.topic) && !now.has(p.topic))]
  }

  /**
   * The topics returned by a refresh were handled (their stored positions forgotten): told at warn level now (once,
   * whatever the runs that named them before), and a later refresh does not name them again. Until then every
   * refresh does, so a failed forget is tried again.
   */
  returnedHandled (topics: readonly ReplicatedTopic[]): void {
    for (const t of topics) {
      const told = this.#returnLines.get(t.source)
      if (told !== undefined) this.#log.warn(told.fields, told.msg)
      this.#returnLines.delete(t.source)
      this.#deleted.delete(t.source)
    }
  }

  /**
   * The replicated topics back after a refresh found them deleted on the source; notes those found deleted now (with
   * their ids before, IDS_BEFORE, and whether their remote topic goes). One back with the topic id it had was never
   * deleted (the source answered from stale metadata): it is not returned, so its stored positions stay and it is
   * copied on from them, unless this instance deleted its remote topic for that deletion (sync.topic.deletions.enabled):
   * the remote topic a refresh then creates again is empty, and copied on from the stored positions it would lack
   * every record before them (invariant 37: the partitions forgot their remote topic id when removed). That one is
   * returned, copied again from the log start.
   */
  #returned (deletedOnSource: readonly DeletedTopic[], topics: readonly ReplicatedTopic[], idsBefore: ReadonlyMap<string, string>): ReplicatedTopic[] {
    const back = topics.filter(t => this.#deleted.has(t.source))
    for (const d of deletedOnSource) this.#deleted.set(d.topic, { id: idsBefore.get(d.topic), remoteDeleted: d.deleteRemote })
    const returned: ReplicatedTopic[] = []
    for (const t of back) {
      const { id, remoteDeleted } = this.#deleted.get(t.source)!
      const sameId = id !== undefined && !ZERO_UUID.test(id) && id === this.#knownIds.get(t.source)
      if (sameId && !remoteDeleted) {
        this.#deleted.delete(t.source)
        this.#log.warn({ topic: t.source, remoteTopic: t.remote, topicId: id },
          `source topic ${t.source} on ${this.#flow.source.alias}, counted as deleted, is back with the same topic id ${id}: it was never deleted ` +
          `(the cluster answered from stale metadata); it is copied on into ${t.remote} from its stored positions`)
        continue
      }
      returned.push(t)
      // Told once handled (`returnedHandled`): a run that rejects after this names it again at the next.
      this.#returnLines.set(t.source, { fields: { topic: t.source, remoteTopic: t.remote, ...(sameId ? { topicId: id } : {}) }, msg: sameId
        ? `source topic ${t.source} on ${this.#flow.source.alias}, counted as deleted, is back with the same topic id ${id}: it was never deleted ` +
          `(the cluster answered from stale metadata), but its remote topic ${t.remote} on ${this.#flow.target.alias} was deleted for it ` +
          `(sync.topic.deletions.enabled) and is created again empty: it is copied again from its log start into ${t.remote} (its stored positions are forgotten)`
        : `source topic ${t.source} was deleted on cluster ${this.#flow.source.alias} and is back: a new topic, copied from its log start into ${t.remote} ` +
          '(the stored positions of the deleted topic are forgotten)' })
    }
    return returned
  }

  /**
   * The work a flow's group leader lists: the source topics and their partition counts, as the refresh replicates
   * them, so that the refresh finds the work it was given and a steady state makes no rebalance (a refused creation
   * or growth, a topic that can no longer be described: each would otherwise make the group rebalance at every
   * refresh). FROM_LAST_REFRESH (this instance runs the refresh job, and its refresh ran since it got it): the last
   * refresh's result, exactly. Otherwise read from the clusters and decided as a refresh decides (group-work.ts).
   * Applies and logs nothing.
   */
  async replicable (options: { readonly fromLastRefresh?: boolean } = {}): Promise<readonly ReplicatedTopic[]> {
    const fromLastRefresh = options.fromLastRefresh === true
    const topics = fromLastRefresh
      ? this.#replicated.map(t => ({ ...t, id: this.#knownIds.get(t.source) }))
      : await this.#estimateWork()
    // A topic the last refresh returned is handed out again only once its stored positions are forgotten
    // (`returnedHandled`): listed by a rebalance in between, its partitions would start at the deleted topic's. Only
    // while this instance runs the refresh: otherwise what it found deleted is stale (the refresh moved on, and the
    // instance running it now never returns that topic), and would keep the topic out of the work for good. A
    // partition handed out from a deleted topic's stored position is then told apart by its source topic id at its
    // first fetch (invariant 46).
    const listed = !fromLastRefresh || this.#deleted.size === 0 ? topics : topics.filter(t => !this.#deleted.has(t.source))
    this.#listed = new Map(listed.map(t => [t.source, t]))
    return listed.map(({ source, remote, partitions }) => ({ source, remote, partitions }))
  }

  /** The work read from the clusters, remembering what this instance listed or replicated before (group-work.ts). */
  async #estimateWork (): Promise<ListedTopic[]> {
    const state = await describeTopicState(this.#flow, this.#policy, { source: this.#source, target: this.#target }, { configs: ConfigReads.NONE })
    const previous = new Map<string, ListedTopic>(this.#replicated.map(t => [t.source, { ...t, id: this.#knownIds.get(t.source) }]))
    for (const [name, t] of this.#listed) previous.set(name, t)
    return await estimateGroupWork(state, topic => this.#policy.formatRemoteTopic(this.#flow.source.alias, topic), previous, names => this.#source.probeTopics(names), this.#estimates)
  }

  /** Whether the target gives topic ids (Kafka 2.8+), from the remote topics it described; kept when none was. */
  #noteTopicIds (state: TopicState): void {
    for (const remote of state.remote.values()) {
      if (remote.id !== undefined) this.#targetHasIds = remote.id !== null
    }
  }

  /**
   * Replicated topics whose remote topic the plan creates: missing from the target's metadata. Only suspected of
   * having been deleted: a broker whose metadata lags behind its controller (just created, or loaded) leaves out
   * a topic that exists. The creation's outcome decides (`#settleMissingRemotes`).
   */
  #remoteMissing (plan: TopicSyncPlan): Map<string, ReplicatedTopic> {
    const replicated = new Map(this.#replicated.map(t => [t.source, t]))
    const recreatedOnSource = new Set(plan.recreatedOnSource.map(t => t.source))
    const out = new Map<string, ReplicatedTopic>()
    for (const c of plan.create) {
      const known = replicated.get(c.topic) ?? this.#missingRemotes.get(c.topic)
      if (known !== undefined && !recreatedOnSource.has(c.topic)) out.set(c.topic, known)
    }
    return out
  }

  /**
   * What the creation of a missing remote topic proves. Created (the controller did not have it): it was deleted
   * on the target. Logged at error level; on a target with topic ids each owner of one of its partitions sees the
   * new id at its next write and copies that partition again from the source's log start (BatchWriter,
   * FlowReplicator), so nothing is listed here; without topic ids (before Kafka 2.8) its topic is listed in
   * `recopy`, once the data path of this instance stopped replicating it. Already there: only the target's
   * metadata was behind, nothing was deleted: kept replicated as it was, nothing copied again. Not created (a
   * problem): decided at a later refresh.
   * A planned topic that was not a suspect and whose creation found it there already (another instance created it
   * first, or the target's metadata was behind) is replicated once a refresh sees it, but is known to exist now:
   * a later refresh that finds it missing takes it for deleted, never for new, since other instances may have
   * copied records into it, which a silent creation would lose on a target without topic ids.
   */
  async #settleMissingRemotes (plan: TopicSyncPlan, suspects: ReadonlyMap<string, ReplicatedTopic>, applied: TopicSyncResult, skipped: ReadonlySet<string>, options: RefreshOptions): Promise<{ topics: readonly ReplicatedTopic[], recopy: string[] }> {
    const created = new Set(applied.created)
    // Not created, or not tried (the run was aborted first): still suspected, or to create
    const failed = new Set([...applied.problems.map(p => p.topic), ...skipped])
    const listed = new Set(applied.topics.map(t => t.source))
    const topics = [...applied.topics]
    const recopy: string[] = []
    const behind: { topic: string, remoteTopic: string }[] = []
    this.#missingRemotes.clear()
    const recreated = [...suspects.values()].filter(t => created.has(t.remote))
    if (recreated.length > 0 && this.#targetHasIds === null) await this.#learnTopicIds(recreated.map(t => t.remote))
    for (const [topic, known] of suspects) {
      if (created.has(known.remote)) {
        const elsewhere = this.#targetHasIds === false ? partitionsNotOwned(topic, known.partitions, options.owns) : []
        this.#log.error({ topic, remoteTopic: known.remote, ...(elsewhere.length > 0 ? { notCopiedAgain: elsewhere } : {}) },
          remoteDeletedMessage(this.#flow, topic, known.remote, this.#targetHasIds, elsewhere))
        if (this.#targetHasIds === false) recopy.push(topic)
      } else if (failed.has(topic)) {
        this.#missingRemotes.set(topic, known)
      } else {
        behind.push({ topic, remoteTopic: known.remote })
        if (!listed.has(topic)) topics.push(known)
      }
    }
    this.#reports.reportRemotesBehind(behind, skipped)
    const planned = new Map(plan.topics.map(t => [t.source, t]))
    for (const c of plan.create) {
      const known = planned.get(c.topic)
      if (known !== undefined && !created.has(c.remoteTopic) && !failed.has(c.topic) && !listed.has(c.topic) && !suspects.has(c.topic)) this.#missingRemotes.set(c.topic, known)
    }
    if (recopy.length > 0) {
      await options.stopReplicating?.(recopy)
      await options.copyAgain?.(topics.filter(t => recopy.includes(t.source)))
    }
    return { topics, recopy }
  }

  /** Describes topics just created, only to learn whether the target gives topic ids; unknown stays null. */
  async #learnTopicIds (remoteTopics: readonly string[]): Promise<void> {
    const described = await this.#target.describeTopics(remoteTopics).catch(() => new Map<string, { id: string }>())
    for (const d of described.values()) this.#targetHasIds = !ZERO_UUID.test(d.id)
  }

  /**
   * The topics replicated no more. Not those deleted and created again on the source: their partitions stay in the
   * data path, whose owners (on any instance) restart each at the new topic's log start when a fetch answer carries
   * the new topic id (replication/source-recreated.ts); dropped here, an instance in a group would never add them
   * back (its work, the same partitions, did not change).
   */
  #removedBy (plan: TopicSyncPlan): string[] {
    const next = new Set(plan.topics.map(t => t.source))
    return this.#replicated.map(t => t.source).filter(name => !next.has(name))
  }
}

/** The partitions of TOPIC (of COUNT) this instance does not copy, by OWNS (none without it: alone, it copies all). */
function partitionsNotOwned (topic: string, count: number, owns: ((tp: string) => boolean) | undefined): number[] {
  if (owns === undefined) return []
  return Array.from({ length: count }, (_, partition) => partition).filter(partition => !owns(partitionKey(topic, partition)))
}
