/**
 * The `sync-topic-configs` job (MM2's syncTopicConfigs): at start, then every `sync.topic.configs.interval.seconds`,
 * makes the configs of every replicated topic's remote topic follow the source's (rules in topic-config-plan.ts),
 * with incremental changes only, so keys it does not manage, and excluded keys, are never touched. Topic creation
 * and growth are left to the topic refresh; this job only changes configs of remote topics that exist.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { FlowContext, MetadataJob } from './flow-context.ts'
import { applyTopicConfigChanges, type TopicWriter } from './topic-sync-apply.ts'
import { planTopicSync } from './topic-sync-plan.ts'
import { ConfigReads, describeTopicState, type TopicReader } from './topic-state.ts'

export const SYNC_TOPIC_CONFIGS_JOB = 'sync-topic-configs'

/** The job, or none when `sync.topic.configs.enabled` is false or the interval is not positive (MM2: disabled). */
export function createTopicConfigSyncJobs (context: FlowContext): MetadataJob[] {
  const { flow } = context
  if (!flow.syncTopicConfigsEnabled || flow.syncTopicConfigsIntervalSeconds <= 0) return []
  return [{
    name: SYNC_TOPIC_CONFIGS_JOB,
    intervalMs: flow.syncTopicConfigsIntervalSeconds * 1000,
    firstDelayMs: 0,
    run: async signal => { await syncTopicConfigs(context, signal) }
  }]
}

/** What one config sync uses of a flow's context. */
export interface TopicConfigSyncContext extends Pick<FlowContext, 'flow' | 'policy' | 'log' | 'metrics'> {
  readonly sourceAdmin: TopicReader
  readonly targetAdmin: TopicReader & Pick<TopicWriter, 'alterTopicConfigs'>
}

/**
 * One config sync of every replicated topic whose remote topic exists; returns the number of keys changed.
 * A topic whose configs cannot be read or changed stops no other: each is logged with its cause (a refusal names
 * the ACL to grant), the `topicConfigsUnsynced` gauge counts them, and after trying every topic the sync rejects
 * with one error naming them (the scheduler counts and retries it, /status shows it). Once SIGNAL is aborted (the
 * run's membership ended, or the job was revoked) no config change is sent: the sync rejects with its reason.
 */
export async function syncTopicConfigs (context: TopicConfigSyncContext, signal?: AbortSignal): Promise<number> {
  const { flow, policy, sourceAdmin, targetAdmin, log, metrics } = context
  const state = await describeTopicState(flow, policy, { source: sourceAdmin, target: targetAdmin }, { configs: ConfigReads.ALL })
  const plan = planTopicSync({ state, flow, policy })
  const result = await applyTopicConfigChanges(flow.name, plan.alterConfigs, targetAdmin, log, metrics, signal)
  const problems = [...plan.configsUnread, ...result.problems]
  metrics.set('topicConfigsUnsynced', { flow: flow.name }, problems.length)
  for (const p of problems) log.warn({ topic: p.topic, remoteTopic: p.remoteTopic }, p.message)
  if (problems.length > 0) {
    const refused = [...state.configsRefused.source.values(), ...state.configsRefused.remote.values()]
    const code = refused.length === problems.length && refused.every(e => e.code === ErrorCodes.NOT_AUTHORIZED) ? ErrorCodes.NOT_AUTHORIZED : ErrorCodes.TOPIC_SYNC
    throw new KmirrorError(code, `cannot sync the configs of ${problems.length} remote topic(s): ${problems.map(p => p.remoteTopic).join(', ')}`,
      { retriable: true, details: { topics: problems.map(p => p.remoteTopic) } })
  }
  return result.changed
}

