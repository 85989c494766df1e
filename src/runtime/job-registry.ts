/**
 * Every periodic job of a flow, in one list: their names (the work items a flow's group assigns, and the `job`
 * label of logs and metrics) and which of them a flow runs with its configuration. A job runs on the flow's
 * scheduler, isolated: a failure is logged, counted and retried with back-off, and never stops replication.
 * To add a job: name it in `JobNames`, build it (in its own module, from the `FlowContext`), list it here.
 */
import { checkpointIntervalMs, groupOffsetSyncIntervalMs } from '../config/job-intervals.ts'
import { createAclSyncJobs } from '../metadata/acl-sync.ts'
import type { FlowContext, MetadataJob } from '../metadata/flow-context.ts'
import { createTopicConfigSyncJobs } from '../metadata/topic-config-sync.ts'

/** The names as the scheduler, logs and metrics have always shown them (MM2's task names differ). */
export const JobNames = {
  REFRESH_TOPICS: 'refresh-topics',
  SYNC_TOPIC_CONFIGS: 'sync-topic-configs',
  SYNC_TOPIC_ACLS: 'sync-acls',
  EMIT_CHECKPOINTS: 'emit-checkpoints',
  TRIM_OFFSET_HISTORY: 'trim-offset-history',
  SYNC_GROUP_OFFSETS: 'sync-group-offsets',
  EMIT_HEARTBEATS: 'heartbeats'
} as const
export type JobName = (typeof JobNames)[keyof typeof JobNames]

/** Every job name, in the order a flow schedules its jobs. */
export const JOB_NAMES: readonly JobName[] = Object.values(JobNames)

/** How often runs below the source log start are removed from the offset history. */
export const HISTORY_TRIM_INTERVAL_MS = 5 * 60 * 1000

export interface FlowJob extends MetadataJob {
  readonly name: JobName
  /**
   * False for the topic refresh when `refresh.topics.enabled` is off (or its interval is not positive): it still
   * runs once where it is assigned (it creates the remote topics), and never again.
   */
  readonly periodic: boolean
  /**
   * Told when the job is assigned to this instance and it does not run it already (never for a job it keeps through
   * a rebalance), before its run at assignment: state kept from an earlier stay here is stale, whether or not
   * `stopped` was told yet (the stop of a lost membership's job does not wait for its run, and tells it after).
   */
  readonly assigned?: () => void
  /** Told when this instance stops running the job (revoked, its membership lost): state kept for its runs goes stale. */
  readonly stopped?: () => void
}

/**
 * The runs of the jobs the flow itself builds (the others come from `FlowContext`). SIGNAL is aborted once the
 * membership that owns the job is lost: a run looks at it before each write.
 */
export interface FlowJobRuns {
  readonly refreshTopics: (signal: AbortSignal) => Promise<void>
  /** The topic refresh came to this instance (`FlowJob.assigned`). */
  readonly refreshTopicsAssigned?: () => void
  /** The topic refresh left this instance (`FlowJob.stopped`). */
  readonly refreshTopicsStopped?: () => void
  readonly emitCheckpoints: (signal: AbortSignal) => Promise<void>
  readonly trimOffsetHistory: (signal: AbortSignal) => Promise<void>
  readonly syncGroupOffsets: (signal: AbortSignal) => Promise<void>
}

/**
 * The flow's jobs that its configuration enables, in scheduling order. The topic refresh is always listed (see
 * `periodic`); its first periodic run comes one interval after the refresh of the start. Heartbeats are the
 * pair's (runtime/heartbeats.ts): named here, run by their own emitter.
 */
export function flowJobs (context: FlowContext, runs: FlowJobRuns): FlowJob[] {
  const { flow } = context
  const jobs: FlowJob[] = []
  const refreshMs = flow.refreshTopicsEnabled && flow.refreshTopicsIntervalSeconds > 0 ? flow.refreshTopicsIntervalSeconds * 1000 : 0
  const { refreshTopicsAssigned: assigned, refreshTopicsStopped: stopped } = runs
  jobs.push({ name: JobNames.REFRESH_TOPICS, intervalMs: refreshMs, firstDelayMs: refreshMs, run: runs.refreshTopics, periodic: refreshMs > 0, ...(assigned === undefined ? {} : { assigned }), ...(stopped === undefined ? {} : { stopped }) })
  for (const job of [...createTopicConfigSyncJobs(context), ...createAclSyncJobs(context)]) jobs.push({ ...job, name: job.name as JobName, periodic: true })
  const checkpointMs = checkpointIntervalMs(flow)
  if (checkpointMs !== null) jobs.push(periodicJob(JobNames.EMIT_CHECKPOINTS, checkpointMs, runs.emitCheckpoints))
  // Bounded history: runs entirely below the source's log start can never be asked for again.
  jobs.push(periodicJob(JobNames.TRIM_OFFSET_HISTORY, HISTORY_TRIM_INTERVAL_MS, runs.trimOffsetHistory))
  const groupSyncMs = groupOffsetSyncIntervalMs(flow)
  if (groupSyncMs !== null) jobs.push(periodicJob(JobNames.SYNC_GROUP_OFFSETS, groupSyncMs, runs.syncGroupOffsets))
  return jobs
}

function periodicJob (name: JobName, intervalMs: number, run: (signal: AbortSignal) => Promise<void>): FlowJob {
  return { name, intervalMs, firstDelayMs: intervalMs, run, periodic: true }
}
