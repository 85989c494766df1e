/**
 * Carries out a TopicSyncPlan on the target, one topic at a time: a topic whose action fails becomes a problem
 * and never stops the others. Actions done are logged and counted here; problems (the plan's and failed
 * actions', and the remote topics it could not delete) are returned, not logged, so that a caller running every few
 * seconds can report each once. The plan's config changes are not applied here: the topic refresh reads no
 * remote configs, so its plans hold none (the config sync job applies them, `applyTopicConfigChanges`).
 *
 * A SIGNAL (the job run's, aborted once its membership ended or the job was revoked: runtime/scheduler.ts) is
 * looked at right before each write (a deletion, a creation, a growth): once aborted, nothing more is sent, and
 * the apply returns what it did until then with `aborted` (the reason, and the topics whose action was skipped),
 * so that its caller records what went out before it rejects. A write already sent is not undone.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { errorMessage, isKmirrorError } from '../errors.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { BatchCreateResult } from '../kafka/topic-batch-create.ts'
import { CREATE_RECORD_BUDGET, createBatches } from './create-batches.ts'
import type { AlterConfigsAction, CreateTopicAction, ReplicatedTopic, TopicProblem, TopicSyncPlan } from './topic-sync-plan.ts'

/**
 * The longest one refresh waits, from its first throttled request, for a controller mutation quota to let its
 * remote topics be created: kmirror's refresh runs every 5 s by default, and the topics created meanwhile reach the
 * data path only when the refresh ends.
 */
export const THROTTLED_WAIT_MS = 10_000
/** A throttled request is sent again no sooner than this (doubling up to 1 s while the broker gives no throttle time). */
const THROTTLED_MIN_PAUSE_MS = 100
const THROTTLED_MAX_PAUSE_MS = 1_000
const THROTTLED = 'THROTTLING_QUOTA_EXCEEDED'

/** What applying a plan writes with; `AdminClient` fits. */
export type TopicWriter = Pick<AdminClient, 'createTopic' | 'createPartitions' | 'alterTopicConfigs' | 'deleteTopics'> & Partial<Pick<AdminClient, 'createTopics'>>

/** A remote topic the plan deleted with its source topic that the target did not delete (refused, timed out). */
export interface RemoteNotDeleted {
  readonly topic: string
  readonly remoteTopic: string
  readonly error: unknown
  /**
   * The target answered a refusal (a Kafka error, not a timeout): the remote topic surely still holds its records.
   * Otherwise the deletion may have gone through after all (a request given up on, REQUEST_TIMED_OUT).
   */
  readonly refused: boolean
}

/** An apply stopped by its aborted signal: why, and the source topics whose planned action was not carried out. */
export interface AbortedApply {
  readonly reason: unknown
  readonly skipped: ReadonlySet<string>
}

export interface TopicSyncResult {
  /** Topics replicated now, with the partitions that exist on both sides. */
  readonly topics: readonly ReplicatedTopic[]
  /** Remote topics created, grown and deleted by this run. */
  readonly created: readonly string[]
  readonly grown: readonly string[]
  readonly deletedRemotes: readonly string[]
  /**
   * Topics not (fully) replicated now, each with its cause and fix: not created (the plan's: the source configs
   * refused), creation failed, or growth failed.
   */
  readonly problems: readonly TopicProblem[]
  /**
   * Remote topics of deleted source topics whose deletion failed: no problem of a topic copied (nothing is copied into
   * them any more), and not tried again (their source topic is no longer replicated).
   */
  readonly remotesNotDeleted: readonly RemoteNotDeleted[]
  /** Set when the signal was aborted: the rest of the result is what was done before. */
  readonly aborted?: AbortedApply
}

/**
 * Where an apply stops once its run is aborted: every planned action from then on is skipped (not even reported),
 * and its topic named.
 */
class AbortPoint {
  readonly #signal: AbortSignal | undefined
  readonly #skipped = new Set<string>()

  constructor (signal: AbortSignal | undefined) {
    this.#signal = signal
  }

  get signal (): AbortSignal | undefined {
    return this.#signal
  }

  /** Whether the action on TOPICS goes ahead: false once the signal is aborted, and they are skipped. */
  goesOn (...topics: string[]): boolean {
    if (this.#signal?.aborted !== true) return true
    for (const topic of topics) this.#skipped.add(topic)
    return false
  }

  get aborted (): AbortedApply | undefined {
    return this.#signal?.aborted === true ? { reason: this.#signal.reason, skipped: this.#skipped } : undefined
  }
}

export async function applyTopicSyncPlan (
  plan: TopicSyncPlan,
  admins: {
    readonly target: TopicWriter
    /**
     * Source topics whose remote topic is replicated but missing from the target's metadata: one found existing is
     * the metadata behind, which the refresh tells once (refresh-reports.ts), so it is logged here at debug level.
     */
    readonly behind?: ReadonlySet<string>
    /** The target's alias, named in the problem of a topic its controller mutation quota held back. */
    readonly targetAlias?: string
  },
  log: Logger,
  metrics: Metrics,
  signal?: AbortSignal
): Promise<TopicSyncResult> {
  const run = new AbortPoint(signal)
  const problems: TopicProblem[] = [...plan.problems]
  const { deleted: deletedRemotes, notDeleted: remotesNotDeleted } = await reportDeletions(plan, admins.target, log, metrics, run)
  const { created, notReady } = await createRemotes(plan, admins, log, metrics, problems, run)
  const { grown, partitions } = await growRemotes(plan, admins.target, log, problems, run)
  const topics = plan.topics.filter(t => !notReady.has(t.source)).map(t => ({ ...t, partitions: partitions.get(t.source) ?? t.partitions }))
  const aborted = run.aborted
  return { topics, created, grown, deletedRemotes, problems, remotesNotDeleted, ...(aborted === undefined ? {} : { aborted }) }
}

/** What creating remote topics records: each created one logged and counted, each found existing left for later. */
interface CreationsDone {
  created (action: CreateTopicAction): void
  appeared (action: CreateTopicAction): void
  /** A request of TOPICS answered so (a debug line). */
  batch (topics: number, answer: BatchCreateResult): void
}

/** Creates the planned remote topics; `notReady` holds the source topics whose remote topic is not known to be usable yet. */
async function createRemotes (plan: TopicSyncPlan, { target, behind, targetAlias }: { target: TopicWriter, behind?: ReadonlySet<string>, targetAlias?: string }, log: Logger, metrics: Metrics, problems: TopicProblem[], run: AbortPoint) {
  const created: string[] = []
  const notReady = new Set<string>()
  const done: CreationsDone = {
    created: action => {
      log.info({ topic: action.topic, remoteTopic: action.remoteTopic, partitions: action.partitions, configs: action.configs }, 'created remote topic')
      created.push(action.remoteTopic)
      metrics.inc('remoteTopicsCreated', { flow: plan.flow })
    },
    appeared: action => {
      notReady.add(action.topic)
      const level = behind?.has(action.topic) === true ? 'debug' : 'info'
      log[level]({ topic: action.topic, remoteTopic: action.remoteTopic }, 'remote topic appeared meanwhile; it is checked at the next refresh')
    },
    batch: (topics, answer) => {
      log.debug({ topics, created: answer.created.length, existed: answer.exists.length, refused: Object.fromEntries(answer.failed), throttleMs: answer.throttleMs }, 'remote topics created together')
    }
  }
  const { pending, throttled, skipped } = await createInGroups(plan, target, log, done, run)
  for (const action of skipped) notReady.add(action.topic)
  for (const action of throttled) {
    notReady.add(action.topic)
    problems.push({ topic: action.topic, remoteTopic: action.remoteTopic, message: throttledMessage(action.remoteTopic, targetAlias) })
  }
  for (const action of pending) {
    if (!run.goesOn(action.topic)) {
      notReady.add(action.topic)
      continue
    }
    try {
      const outcome = await target.createTopic({ name: action.remoteTopic, partitions: action.partitions, replicationFactor: action.replicationFactor, replicationFactorKey: 'replication.factor', configs: action.configs })
      if (outcome === 'created') done.created(action)
      else done.appeared(action)
    } catch (err) {
      notReady.add(action.topic)
      problems.push({ topic: action.topic, remoteTopic: action.remoteTopic, message: errorMessage(err) })
    }
  }
  return { created, notReady }
}

/**
 * Creates remote topics in batches (create-batches.ts: same configs, within the controller's record budget), one
 * request each. Each topic's own answer counts: created ones are done, ones that existed already are left to the
 * next refresh as on the one-by-one path, and the rest (refused, or the whole answer unknown) are returned to be
 * created one by one, which sorts them out with a message and fix each (a topic alone in its configs is a batch
 * of one: sent so too, a second request only when refused). The signal is looked at before each request: a batch
 * sent is counted, the ones after it are skipped.
 *
 * Topics refused with THROTTLING_QUOTA_EXCEEDED (a controller mutation quota, KIP-599, spent part way through the
 * request) are sent again as a batch once the broker's throttle time has passed, for at most THROTTLED_WAIT_MS from
 * the first throttled request; the ones still refused then are problems (the refresh knows them not created: never
 * "known to exist") and are tried at the next refresh. Never one by one: each would meet the same quota, and the
 * library's retries of each would stretch a refresh by seconds per topic.
 */
async function createInGroups (plan: TopicSyncPlan, target: TopicWriter, log: Logger, done: CreationsDone, run: AbortPoint): Promise<BatchOutcome> {
  const out: BatchOutcome = { pending: [], throttled: [], skipped: [] }
  if (target.createTopics === undefined) return { ...out, pending: [...plan.create] }
  const quota = new QuotaWait()
  for (const batch of createBatches(plan.create)) {
    let sending: readonly CreateTopicAction[] = batch
    while (sending.length > 0) {
      if (!run.goesOn(...sending.map(a => a.topic))) {
        // A first request's topics go where the one-by-one path skips them too; the quota's leftovers were not created
        if (sending === batch) out.pending.push(...sending)
        else out.skipped.push(...sending)
        break
      }
      const answer = await sendBatch(sending, target, log)
      if (answer === null) {
        out.pending.push(...sending)
        break
      }
      const again = sortBatchAnswer(sending, answer, done, out.pending)
      if (again.length > 0 && !(await quota.waited(answer.throttleMs, run))) {
        out.throttled.push(...again)
        break
      }
      sending = again
    }
  }
  return out
}

/** Where createInGroups leaves the topics it did not settle. */
interface BatchOutcome {
  /** To create one by one: refused for another reason than the quota, answer unknown, or the run aborted first. */
  readonly pending: CreateTopicAction[]
  /** Still refused by the quota after THROTTLED_WAIT_MS: problems, tried again at the next refresh. */
  readonly throttled: CreateTopicAction[]
  /** Throttled, then the run was aborted before they were sent again (named in the apply's `aborted.skipped`). */
  readonly skipped: CreateTopicAction[]
}

/** The waits of one apply for a controller mutation quota: bounded in all, from the first throttled request. */
class QuotaWait {
  #until: number | undefined
  #pauseMs = THROTTLED_MIN_PAUSE_MS

  /** Waits THROTTLE_MS (the broker's throttle time, or a growing pause without one) unless that passes the bound. */
  async waited (throttleMs: number, run: AbortPoint): Promise<boolean> {
    const now = Date.now()
    this.#until ??= now + THROTTLED_WAIT_MS
    const ms = Math.max(throttleMs, this.#pauseMs)
    if (now + ms > this.#until) return false
    this.#pauseMs = throttleMs > 0 ? THROTTLED_MIN_PAUSE_MS : Math.min(this.#pauseMs * 2, THROTTLED_MAX_PAUSE_MS)
    try {
      await delay(ms, undefined, run.signal === undefined ? {} : { signal: run.signal })
    } catch { /* aborted: the caller's next goesOn finds it */ }
    return true
  }
}

/** One request for BATCH; null when its answer is unknown (logged: its topics go one by one). */
async function sendBatch (batch: readonly CreateTopicAction[], target: TopicWriter, log: Logger): Promise<BatchCreateResult | null> {
  try {
    return await target.createTopics!(batch.map(a => ({ name: a.remoteTopic, partitions: a.partitions, replicationFactor: a.replicationFactor, replicationFactorKey: 'replication.factor', configs: a.configs })))
  } catch (err) {
    log.info({ topics: batch.length, err: errorMessage(err) }, 'creating remote topics together failed; creating them one by one')
    return null
  }
}

/** Records each topic's answer; returns the ones the quota refused, to send again. */
function sortBatchAnswer (batch: readonly CreateTopicAction[], answer: BatchCreateResult, done: CreationsDone, pending: CreateTopicAction[]): CreateTopicAction[] {
  const exists = new Set(answer.exists)
  const created = new Set(answer.created)
  const again: CreateTopicAction[] = []
  for (const a of batch) {
    if (created.has(a.remoteTopic)) done.created(a)
    else if (exists.has(a.remoteTopic)) done.appeared(a)
    else if (answer.failed.get(a.remoteTopic) === THROTTLED) again.push(a)
    else pending.push(a)
  }
  done.batch(batch.length, answer)
  return again
}

/** The problem of a remote topic the target's controller mutation quota kept from being created in this refresh. */
function throttledMessage (remoteTopic: string, targetAlias: string | undefined): string {
  const cluster = targetAlias === undefined ? 'the target cluster' : `cluster ${targetAlias}`
  return `remote topic ${remoteTopic} is not created yet: ${cluster} throttles kmirror's topic creations (THROTTLING_QUOTA_EXCEEDED: a controller_mutation_rate quota, KIP-599) past ${THROTTLED_WAIT_MS / 1000} s of waiting in this refresh; the next refresh tries again. To create remote topics faster, raise or remove the quota of kmirror's admin client on ${cluster} (the throttle warning names its client id and the kafka-configs.sh line)`
}

/** Grows the planned remote topics; `partitions` holds the count to replicate of those that could not grow. */
async function growRemotes (plan: TopicSyncPlan, target: TopicWriter, log: Logger, problems: TopicProblem[], run: AbortPoint) {
  const grown: string[] = []
  const partitions = new Map<string, number>()
  for (const action of plan.addPartitions) {
    if (!run.goesOn(action.topic)) {
      partitions.set(action.topic, action.from)
      continue
    }
    let at = action.from
    try {
      // In steps a KRaft controller takes (a record a partition, at most 10,000 a request: create-batches.ts).
      while (at < action.to) {
        // (a refresh stopped between steps takes no more: the partitions grown so far are replicated)
        if (at > action.from && !run.goesOn(action.topic)) break
        const next = Math.min(action.to, at + CREATE_RECORD_BUDGET)
        await target.createPartitions(action.remoteTopic, next)
        at = next
      }
      if (at < action.to) {
        partitions.set(action.topic, at)
        log.info({ topic: action.topic, remoteTopic: action.remoteTopic, from: action.from, to: at, planned: action.to }, 'grew remote topic in part: the refresh stopped; the rest at the next refresh')
        continue
      }
      log.info({ topic: action.topic, remoteTopic: action.remoteTopic, from: action.from, to: action.to }, 'grew remote topic')
      grown.push(action.remoteTopic)
    } catch (err) {
      // The partitions that exist on both sides (those of the steps taken too) keep replicating; the new ones wait
      // for the next refresh.
      partitions.set(action.topic, at)
      problems.push({ topic: action.topic, remoteTopic: action.remoteTopic, message: `cannot grow to ${action.to} partitions${at > action.from ? ` (grown to ${at} so far)` : ''}: ${errorMessage(err)}` })
    }
  }
  return { grown, partitions }
}

/**
 * Reports every deleted or re-created source topic, and deletes the remote topics the plan marks for deletion;
 * returns those deleted and those whose deletion failed.
 */
async function reportDeletions (plan: TopicSyncPlan, target: TopicWriter, log: Logger, metrics: Metrics, run: AbortPoint) {
  const deleted: string[] = []
  const notDeleted: RemoteNotDeleted[] = []
  for (const d of plan.deletedOnSource) {
    if (!run.goesOn(d.topic)) continue
    metrics.inc('sourceTopicsDeleted', { flow: plan.flow })
    if (d.remoteKeptOnPurpose === true) {
      // Told at error level once for all of them, with how to delete them by hand (remote-topics.ts).
      log.warn({ topic: d.topic, remoteTopic: d.remoteTopic }, `source topic ${d.topic} was deleted; its remote topic ${d.remoteTopic} is kept on purpose: the deletion was proven while most replicated topics were absent at once`)
      continue
    }
    if (!d.deleteRemote) {
      log.warn({ topic: d.topic, remoteTopic: d.remoteTopic }, `source topic ${d.topic} was deleted; its remote topic ${d.remoteTopic} is kept (set sync.topic.deletions.enabled = true to delete it too)`)
      continue
    }
    try {
      await target.deleteTopics([d.remoteTopic])
      deleted.push(d.remoteTopic)
      log.warn({ topic: d.topic, remoteTopic: d.remoteTopic }, `source topic ${d.topic} was deleted; deleted its remote topic ${d.remoteTopic} (sync.topic.deletions.enabled)`)
    } catch (err) {
      notDeleted.push({ topic: d.topic, remoteTopic: d.remoteTopic, error: err, refused: isRefusal(err) })
    }
  }
  for (const r of plan.recreatedOnSource) {
    log.warn({ topic: r.source, remoteTopic: r.remote }, `source topic ${r.source} was deleted and created again; copying the new topic from its start into ${r.remote}`)
  }
  return { deleted, notDeleted }
}

/** Whether ERR is the target's answer refusing the deletion: Kafka errors, none of them a timeout. */
function isRefusal (err: unknown): boolean {
  const names = isKmirrorError(err) ? err.details['kafkaErrors'] : undefined
  return Array.isArray(names) && names.length > 0 && !names.includes('REQUEST_TIMED_OUT')
}

/**
 * Sends each topic's config changes in one incremental request; a topic that fails becomes a problem. Nothing more
 * is sent once SIGNAL is aborted (the apply rejects with its reason).
 */
export async function applyTopicConfigChanges (
  flow: string,
  actions: readonly AlterConfigsAction[],
  target: Pick<TopicWriter, 'alterTopicConfigs'>,
  log: Logger,
  metrics: Metrics,
  signal?: AbortSignal
): Promise<{ changed: number, problems: TopicProblem[] }> {
  let changed = 0
  const problems: TopicProblem[] = []
  for (const action of actions) {
    signal?.throwIfAborted()
    try {
      await target.alterTopicConfigs(action.remoteTopic, action.changes.map(c => c.op === 'set' ? { op: 'set', name: c.name, value: c.newValue! } : { op: 'delete', name: c.name }))
      changed += action.changes.length
      metrics.inc('topicConfigsChanged', { flow }, action.changes.length)
      log.info({ topic: action.topic, remoteTopic: action.remoteTopic, changes: action.changes }, 'synced remote topic configs')
    } catch (err) {
      problems.push({ topic: action.topic, remoteTopic: action.remoteTopic, message: `cannot sync configs: ${errorMessage(err)}` })
    }
  }
  return { changed, problems }
}

