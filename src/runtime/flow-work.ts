/**
 * The work of one flow and which of it this instance owns: source partitions (the data path copies them) and
 * periodic jobs (the scheduler runs them). Alone (no group), a flow owns everything from its start. In a group,
 * it owns what the group assigned, and the group revokes or loses it again (`WorkOwner`).
 *
 * Invariants:
 * - A partition is written only while owned: `revoke` resolves after its in-flight writes ended and its offset
 *   syncs, history and position are stored; `lose` stops it at once and stores nothing.
 * - A newly assigned partition resumes from the progress stored on the target read again at assignment (another
 *   instance may have copied it since this one started), with its offset history read again too.
 * - The offset history of partitions this instance does not own follows the history topic (`followHistory`),
 *   so checkpoints and group offset syncs translate every partition exactly, whoever copies it.
 * - A job runs only while owned; `revoke` waits for its run in progress; `lose` aborts it (the signal each run is
 *   given, which the jobs look at before each write) and does not wait.
 * - A job is told when it comes to this instance (`FlowJob.assigned`, before its run at assignment) and when it
 *   leaves (`FlowJob.stopped`, once its run ended), never on a rebalance that leaves it here.
 */
import type { OffsetHistoryStore } from '../checkpoint/offset-history-store.ts'
import type { WorkOwner } from '../cluster/work-owner.ts'
import type { WorkItem } from '../cluster/work.ts'
import { errorMessage, ErrorCodes, KmirrorError } from '../errors.ts'
import type { FlowConfig } from '../config/types.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import type { Logger } from '../logger.ts'
import { createTopicSelector } from '../metadata/topic-state.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import type { FlowReplicator, PartitionRef } from '../replication/flow-replicator.ts'
import { SETTLE_RESERVE_MS } from '../replication/progress-flusher.ts'
import type { ProgressStore } from '../replication/progress-store.ts'
import { partitionKey } from '../topic-partition.ts'
import type { PairJob } from './heartbeats.ts'
import { JobNames, type FlowJob } from './job-registry.ts'
import type { Scheduler } from './scheduler.ts'

/** Why a job run of a membership that ended is aborted. */
export const MEMBERSHIP_ENDED = 'the group membership that owned it ended (lost, or a stop that could not hand it over in time): another instance may run it now'

/** How soon a job whose run at assignment failed runs again (then the scheduler's back-off: 2, 4, 8 ... s). */
const RETRY_AFTER_FAILED_RUN_MS = 2000
/** The longest wait between retries of a job that runs once (the topic refresh when not periodic). */
const ONE_SHOT_RETRY_CAP_MS = 60_000

/** Alone, a flow owns all its work from its start; in a group, only what is assigned to it. */
export const Ownerships = { ALL: 'all', ASSIGNED: 'assigned' } as const
export type Ownership = (typeof Ownerships)[keyof typeof Ownerships]

export interface FlowWorkParts {
  readonly config: FlowConfig
  readonly policy: ReplicationPolicy
  readonly sourceAdmin: Pick<AdminClient, 'describeAllTopics'>
  readonly replicator: FlowReplicator
  readonly progress: Pick<ProgressStore, 'load'>
  readonly history: Pick<OffsetHistoryStore, 'follow'>
  readonly scheduler: Scheduler
  readonly jobs: readonly FlowJob[]
  /**
   * The source topics whose partitions are work, as the topic refresh replicates them (`RemoteTopics.replicable`);
   * without it, every replicated source topic.
   */
  readonly replicable?: () => Promise<readonly { source: string, partitions: number }[]>
  /** The pair's heartbeat job, when it is part of this flow's work. */
  readonly heartbeats: PairJob | null
  /**
   * Exactly-once: ends the transaction a lost membership left open (InitProducerId under the new lease, after the
   * round in flight). Absent in at-least-once mode.
   */
  readonly endLostTransaction?: () => Promise<void>
  /** Told at once when the membership is lost (the internal writer drops what it still retries: `RecordWriter.renew`). */
  readonly membershipLost?: () => void
  readonly log: Logger
}

/** Why a revoked job's run in progress stops: the job runs on the instance it was handed to. */
export const JOB_REVOKED = 'revoked: the group handed it to another instance, which runs it from now on'

export class FlowWork implements WorkOwner {
  readonly #parts: FlowWorkParts
  readonly #ownership: Ownership
  readonly #partitions = new Set<string>()
  /** A membership was lost since partitions were last added (see `endLostTransaction`). */
  #lostSinceAssigned = false
  /**
   * Partitions being revoked: owned no more, but their last offset syncs and history are this instance's to write
   * until the release completes, so following the history must not read them back from the topic meanwhile (it
   * would replace what this instance knows with the last extent stored, and translate too early as exact).
   */
  readonly #releasing = new Set<string>()
  readonly #jobs = new Set<string>()
  /** Aborted by `lose`: the runs at assignment of the membership that ended write nothing more. */
  #membership = new AbortController()

  constructor (parts: FlowWorkParts, ownership: Ownership) {
    this.#parts = parts
    this.#ownership = ownership
  }

  get ownership (): Ownership {
    return this.#ownership
  }

  /** Whether this instance copies the partition `partitionKey(topic, partition)`. */
  ownsPartition (tp: string): boolean {
    return this.#ownership === Ownerships.ALL || this.#partitions.has(tp)
  }

  /** Whether this instance writes the partition's offset history: it copies it, or is releasing it. */
  #writesHistory (tp: string): boolean {
    return this.#partitions.has(tp) || this.#releasing.has(tp)
  }

  /** Alone: schedules every periodic job, as a flow always did (the topic refresh of the start ran already). */
  startAllJobs (): void {
    for (const job of this.#parts.jobs) {
      if (job.periodic) this.#parts.scheduler.every(job.name, job.intervalMs, job.run, job.firstDelayMs)
    }
  }

  /** The offset history of partitions this instance does not copy, read again (before each translation round). */
  async followHistory (): Promise<void> {
    if (this.#ownership === Ownerships.ASSIGNED) await this.#parts.history.follow(tp => this.#writesHistory(tp))
  }

  async listWork (): Promise<WorkItem[]> {
    const { config, policy, sourceAdmin, jobs, heartbeats, replicable } = this.#parts
    const replicated = createTopicSelector(config, policy)
    const topics = replicable !== undefined
      ? (await replicable()).map(t => ({ name: t.source, partitions: t.partitions })).sort((a, b) => a.name.localeCompare(b.name))
      : [...(await sourceAdmin.describeAllTopics()).values()].filter(t => replicated(t.name)).sort((a, b) => a.name.localeCompare(b.name))
    const items: WorkItem[] = []
    for (const t of topics) for (let partition = 0; partition < t.partitions; partition++) items.push({ kind: 'partition', topic: t.name, partition })
    for (const job of jobs) items.push({ kind: 'job', job: job.name })
    if (heartbeats !== null) items.push({ kind: 'job', job: JobNames.EMIT_HEARTBEATS })
    return items
  }

  async assign (items: readonly WorkItem[]): Promise<void> {
    const { jobs, partitions } = split(items)
    // The membership this assignment belongs to, taken before anything is awaited: a loss meanwhile (a new
    // controller) must abort the refresh's run below, not let it run under the next one.
    const membership = this.#membership.signal
    this.#tellAssigned(jobs)
    // A lost membership's open transaction first: the next owners' progress and history reads wait for it, and a
    // topic refresh (many topics, a slow cluster) would keep it open that much longer.
    await this.#endLostTransaction(items.length === 0)
    // Then the topic refresh: it creates the remote topics the partitions are written to.
    const refreshFailed = jobs.includes(JobNames.REFRESH_TOPICS) && !await this.#runOnce(JobNames.REFRESH_TOPICS, membership)
    if (items.length === 0) return
    if (partitions.length > 0) await this.#addPartitions(partitions)
    for (const name of jobs) this.#startJob(name, refreshFailed && name === JobNames.REFRESH_TOPICS)
    this.#parts.log.info({ partitions: partitions.length, jobs }, 'work assigned')
  }

  /**
   * Exactly-once, after a lost membership: its transaction may still be open (its producer was dropped, not ended),
   * holding back read_committed readers of the partitions it wrote, and the progress and history reads of whoever
   * takes them next (they wait for open transactions; `#addPartitions` here too). Ended at the next assignment, also
   * one bringing nothing: a member back under its name in the group's next generation is not fenced by the leader,
   * which fences only members gone. With NOTHING_ASSIGNED a failure (the transaction coordinator out of reach) is
   * told and tried again at the next assignment, rather than failing this one (which would make the member leave and
   * the whole group rebalance for work it was not given).
   */
  async #endLostTransaction (nothingAssigned: boolean): Promise<void> {
    if (!this.#lostSinceAssigned) return
    try {
      await this.#parts.endLostTransaction?.()
      this.#lostSinceAssigned = false
    } catch (err) {
      if (!nothingAssigned) throw err
      const cluster = this.#parts.config.target.alias
      this.#parts.log.warn({ err, cluster }, `could not end the transaction of the lost group membership on cluster ${cluster}; tried again at the next ` +
        'assignment (until then, or its transaction timeout, read_committed readers of the partitions it wrote wait for it)')
    }
  }

  async #addPartitions (partitions: readonly { topic: string, partition: number }[]): Promise<void> {
    const { config, policy, progress, history, replicator } = this.#parts
    const fresh = partitions.filter(p => !this.#partitions.has(partitionKey(p.topic, p.partition)))
    if (fresh.length === 0) return
    // Read again now: the instance that owned them before stored their progress and history when it let go. (A lost
    // membership's own open transaction, which the reads would wait for, was ended first: `assign`.) The follow must
    // come before they are added: it rebuilds what a lost membership left stale in memory only for partitions it
    // finds not owned (offset-history-store.ts `membershipLost`).
    const [stored] = await Promise.all([progress.load({ readOnly: true, waitForTransactions: true, forgotten: true }), history.follow(tp => this.#writesHistory(tp), { waitForTransactions: true })])
    for (const p of fresh) this.#partitions.add(partitionKey(p.topic, p.partition))
    const refs: PartitionRef[] = fresh.map(p => ({ ...p, remoteTopic: policy.formatRemoteTopic(config.source.alias, p.topic) }))
    await replicator.addPartitions(refs, stored, key => this.ownsPartition(key))
  }

  /**
   * The job's run at assignment, outside the scheduler, under SIGNAL (the membership of the assignment); false when
   * it failed (then retried soon: `#startJob`). A run aborted by a loss meanwhile is no failure (as on the
   * scheduler): told at info; the loss stops the job. Lost before it began, it does not run.
   */
  async #runOnce (name: string, signal: AbortSignal): Promise<boolean> {
    const job = this.#parts.jobs.find(j => j.name === name)
    if (job === undefined || signal.aborted) return true
    try {
      await job.run(signal)
      return true
    } catch (err) {
      if (signal.aborted) {
        this.#parts.log.info({ job: name, reason: errorMessage(signal.reason) }, 'job run stopped before its end: it writes nothing more')
        return true
      }
      this.#parts.log.warn({ err, job: name }, `job ${name} failed in its run at assignment; it runs again in ${RETRY_AFTER_FAILED_RUN_MS / 1000} s, then with back-off until it succeeds${job.periodic ? ', then on its schedule' : ' (once: the periodic refresh is off)'}`)
      return false
    }
  }

  /**
   * Tells each job of NAMES that this instance does not run already that it came here (`FlowJob.assigned`), at once:
   * a job lost with the membership left `#jobs` at `lose`, but its `stopped` comes only after its aborted run ended,
   * maybe after this assignment's run. A job kept through the rebalance is not told: what it holds is current.
   */
  #tellAssigned (names: readonly string[]): void {
    for (const name of names) {
      if (!this.#jobs.has(name)) this.#parts.jobs.find(j => j.name === name)?.assigned?.()
    }
  }

  /** Starts the job NAME on the scheduler; RETRY_SOON: its run at assignment failed, so its next run comes soon. */
  #startJob (name: string, retrySoon = false): void {
    if (this.#jobs.has(name)) return
    this.#jobs.add(name)
    if (name === JobNames.EMIT_HEARTBEATS) {
      this.#parts.heartbeats?.start()
      return
    }
    const job = this.#parts.jobs.find(j => j.name === name)
    if (job === undefined) {
      this.#parts.log.warn({ job: name }, 'assigned a job this flow does not run (another kmirror version, or another configuration?): ignored')
      return
    }
    if (this.#parts.scheduler.has(name)) return
    // Without the retry, a failed first refresh would leave topics new since the start without remote topics for a
    // whole refresh.topics.interval.seconds (600 s in many MM2 files), or until the next assignment when it does not
    // run periodically.
    if (job.periodic) this.#parts.scheduler.every(job.name, job.intervalMs, job.run, retrySoon ? Math.min(RETRY_AFTER_FAILED_RUN_MS, job.firstDelayMs) : job.firstDelayMs)
    else if (retrySoon) this.#parts.scheduler.every(job.name, ONE_SHOT_RETRY_CAP_MS, job.run, RETRY_AFTER_FAILED_RUN_MS, { untilSuccess: true })
  }

  async revoke (items: readonly WorkItem[], by?: number): Promise<void> {
    const { jobs, partitions } = split(items)
    // Not owned from now on, before the release completes: a topic refresh adding partitions meanwhile (a remote
    // topic created again) must not take them back (partition-ownership.ts checks ownership when it adds). Their
    // history is still this instance's to write until the release stored it (`#writesHistory`).
    const keys = partitions.map(p => partitionKey(p.topic, p.partition))
    for (const key of keys) {
      this.#partitions.delete(key)
      this.#releasing.add(key)
    }
    let stored: boolean
    try {
      [stored] = await Promise.all([
        this.#parts.replicator.releasePartitions(partitions, by),
        // A run in progress is aborted, not waited for: were the membership lost (or the stop's hand-over cut) while
        // it runs, `lose` would no longer find the job to abort, and the run would write under no lease at all.
        // An aborted run still ends the request it sent (an admin request): not waited for past the hand-over's
        // deadline, which would cut the hand-over and tell the partitions' stored progress as not stored.
        this.#stopJobsBy(jobs, by)
      ])
    } finally {
      for (const key of keys) this.#releasing.delete(key)
    }
    // Not stored: the membership ended first, and the release said so.
    if (stored) this.#parts.log.info({ partitions: partitions.length, jobs }, 'work revoked: progress stored')
  }

  /** Stops the revoked JOBS; by BY (epoch ms) less SETTLE_RESERVE_MS at the latest, when given (see `revoke`). */
  async #stopJobsBy (jobs: readonly string[], by: number | undefined): Promise<void> {
    const stopping = Promise.all(jobs.map(name => this.#stopJob(name, JOB_REVOKED)))
    if (by === undefined || jobs.length === 0) return void await stopping
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>(resolve => { timer = setTimeout(resolve, Math.max(0, by - SETTLE_RESERVE_MS - Date.now()), 'late') })
    const stopped = stopping.then(() => 'stopped' as const)
    // (a failure before the deadline is the revoke's; one after it is logged below, never left unhandled)
    stopped.catch(() => undefined)
    try {
      if (await Promise.race([stopped, late]) === 'late') {
        this.#parts.log.info({ jobs }, 'revoked jobs: an aborted run still ends a request it sent; the hand-over does not wait for it')
        stopping.catch((err: unknown) => { this.#parts.log.warn({ err, jobs }, 'stopping a revoked job failed') })
      }
    } finally {
      clearTimeout(timer)
    }
  }

  /** Stops the job NAME; with ABORT (why), its run in progress is aborted rather than waited for to finish. */
  async #stopJob (name: string, abort?: string): Promise<void> {
    if (!this.#jobs.delete(name)) return
    if (name === JobNames.EMIT_HEARTBEATS) await this.#parts.heartbeats?.stop(abort)
    else await this.#parts.scheduler.cancel(name, abort)
    this.#parts.jobs.find(j => j.name === name)?.stopped?.()
  }

  lose (): void {
    this.#lostSinceAssigned = true
    // The data path first: its loss signal fires whatever the writers' renewal does (a store or sync send of the lost
    // membership then starts no request more, even on a producer not renewed; one the library already holds is
    // ended by the renewal, which closes the old producer).
    this.#parts.replicator.loseAll()
    try {
      this.#parts.membershipLost?.()
    } catch (err) {
      this.#parts.log.warn({ err }, 'cannot renew the internal producers of a lost membership: the progress stores and offset syncs under way start no request more, but a request the client library retries may still go out')
    }
    this.#membership.abort(new KmirrorError(ErrorCodes.FENCED, `not running jobs of flow ${this.#parts.config.name} any more: ${MEMBERSHIP_ENDED}`, { retriable: true }))
    this.#membership = new AbortController()
    const partitions = this.#partitions.size
    this.#partitions.clear()
    this.#releasing.clear()
    const jobs = [...this.#jobs]
    for (const name of jobs) {
      this.#stopJob(name, MEMBERSHIP_ENDED).catch(err => this.#parts.log.warn({ err, job: name }, 'cannot stop a job of a lost membership'))
    }
    if (partitions > 0 || jobs.length > 0) this.#parts.log.warn({ partitions, jobs }, 'membership lost: every partition and job of this flow stopped at once, nothing stored')
  }

  /** What this instance owns: partition count and job names (its member metadata, and status). */
  owned (): { partitions: string[], jobs: string[] } {
    // Alone, every job is this instance's (`startAllJobs`), the topic refresh too though it may not run periodically.
    const jobs = this.#ownership === Ownerships.ALL ? this.#parts.jobs.map(j => j.name) : [...this.#jobs]
    return { partitions: [...this.#partitions], jobs }
  }
}

function split (items: readonly WorkItem[]): { jobs: string[], partitions: { topic: string, partition: number }[] } {
  const jobs: string[] = []
  const partitions: { topic: string, partition: number }[] = []
  for (const item of items) {
    if (item.kind === 'job') jobs.push(item.job)
    else partitions.push({ topic: item.topic, partition: item.partition })
  }
  return { jobs, partitions }
}
