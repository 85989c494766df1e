import type { ReplicationPolicy } from './replication-policy.ts'
import type { TopicFilter } from './topic-filter.ts'

export interface ShouldReplicateTopicContext {
  readonly filter: TopicFilter
  readonly policy: ReplicationPolicy
  /** The flow's target cluster alias. */
  readonly targetAlias: string
  /** `heartbeats.replication.enabled`: heartbeat topics are replicated even when the filter excludes them. */
  readonly heartbeatsReplicationEnabled: boolean
}

/**
 * Whether `topic` has already passed through the target cluster, following its upstream names (mm2-spec §3.4).
 * Example, flow source->target: `target.topic1` and `source.target.topic1` are cycles; `source.topic1` is not.
 * The "upstream equals itself" stop ends the walk for IdentityReplicationPolicy, which therefore sees no cycles.
 */
export function isCycle (policy: ReplicationPolicy, targetAlias: string, topic: string): boolean {
  let current = topic
  for (;;) {
    const source = policy.topicSource(current)
    if (source === null) return false
    if (source === targetAlias) return true
    const upstream = policy.upstreamTopic(current)
    if (upstream === null || upstream === current) return false
    current = upstream
  }
}

/**
 * MirrorSourceConnector.shouldReplicateTopic, term for term:
 * (filter(t) || (heartbeatsReplicationEnabled && isHeartbeatsTopic(t))) && !isInternalTopic(t) && !isCycle(t).
 */
export function shouldReplicateTopic (topic: string, context: ShouldReplicateTopicContext): boolean {
  const { filter, policy, targetAlias, heartbeatsReplicationEnabled } = context
  return (filter(topic) || (heartbeatsReplicationEnabled && policy.isHeartbeatsTopic(topic))) &&
    !policy.isInternalTopic(topic) &&
    !isCycle(policy, targetAlias, topic)
}
