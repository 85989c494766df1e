/**
 * What a flow's periodic jobs share: the flow's clients and settings (`FlowContext`), and the shape of one job
 * (`MetadataJob`). The list of a flow's jobs lives in one place, src/runtime/job-registry.ts; the modules that
 * build jobs (topic config sync, ACL sync, heartbeats) import only these types, so nothing imports back.
 */
import type { FlowConfig } from '../config/types.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import type { RecordWriter } from '../kafka/record-writer.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import type { RemoteTopics } from './remote-topics.ts'

/** One periodic job: named, run on a scheduler, isolated (a failure is logged, counted and retried with back-off). */
export interface MetadataJob {
  readonly name: string
  readonly intervalMs: number
  /** Delay of the first run; 0 runs it at once (MM2 syncs configs and ACLs right at start). */
  readonly firstDelayMs: number
  /** SIGNAL: aborted once this instance may no longer run it (runtime/scheduler.ts): the run writes nothing more. */
  readonly run: (signal: AbortSignal) => Promise<void>
}

export interface FlowContext {
  readonly flow: FlowConfig
  readonly policy: ReplicationPolicy
  readonly sourceAdmin: AdminClient
  readonly targetAdmin: AdminClient
  readonly remoteTopics: RemoteTopics
  readonly log: Logger
  readonly metrics: Metrics
  /** Reader and writer of the flow's internal topics on the target (ACL ownership); absent in unit tests. */
  readonly targetReader?: RecordFetcher
  readonly internalWriter?: RecordWriter
}
