/**
 * The periodic metadata jobs of a flow, in one list. Each job is named, runs on the flow's scheduler, and is
 * isolated: a failure is logged, counted and retried with back-off, and never stops record replication.
 * To add a job: write a `create…Job(context)` in its own module and add it to `createMetadataJobs`.
 */
import type { FlowConfig } from '../config/types.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import type { RecordWriter } from '../kafka/record-writer.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import { createAclSyncJobs } from './acl-sync.ts'
import type { RemoteTopics } from './remote-topics.ts'
import { createTopicConfigSyncJobs } from './topic-config-sync.ts'

export interface MetadataJob {
  readonly name: string
  readonly intervalMs: number
  /** Delay of the first run; 0 runs it at once (MM2 syncs configs and ACLs right at start). */
  readonly firstDelayMs: number
  readonly run: () => Promise<void>
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

export function createMetadataJobs (context: FlowContext): MetadataJob[] {
  const jobs: MetadataJob[] = []
  jobs.push(...createTopicConfigSyncJobs(context))
  jobs.push(...createAclSyncJobs(context))
  return jobs
}
