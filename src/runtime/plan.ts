/**
 * What the next metadata sync of each flow would do on its target, computed from the clusters' current state
 * and changing nothing: the engine behind `kmirror plan`.
 */
import type { FlowConfig } from '../config/types.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { describeAclState, planAclSync, type AclSyncPlan } from '../metadata/acl-sync.ts'
import { ConfigReads, describeTopicState } from '../metadata/topic-state.ts'
import { isTopicSyncPlanEmpty, planTopicSync, type TopicSyncPlan } from '../metadata/topic-sync-plan.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'

export interface FlowPlan {
  readonly flow: string
  readonly topics: TopicSyncPlan
  /** Null when ACL sync is off for the flow. */
  readonly acls: AclSyncPlan | null
}

export function hasDrift (plan: FlowPlan): boolean {
  return !isTopicSyncPlanEmpty(plan.topics) || (plan.acls !== null && plan.acls.create.length > 0)
}

export async function planFlow (flow: FlowConfig): Promise<FlowPlan> {
  const source = new ClusterClients(flow.source, `${flow.name}|plan`, 'source')
  const target = new ClusterClients(flow.target, `${flow.name}|plan`, 'target')
  try {
    await Promise.all([source.checkBrokers(), target.checkBrokers()])
    const [sourceAdmin, targetAdmin] = [source.admin, target.admin]
    const policy = createReplicationPolicy(flow.replicationPolicy)
    const state = await describeTopicState(flow, policy, { source: sourceAdmin, target: targetAdmin }, { configs: flow.syncTopicConfigsEnabled ? ConfigReads.ALL : ConfigReads.CREATION })
    const topics = planTopicSync({ state, flow, policy })
    const acls = flow.syncTopicAclsEnabled
      ? planAclSync({ ...(await describeAclState({ flow, sourceAdmin, targetAdmin })), flow, policy })
      : null
    return { flow: flow.name, topics: flow.syncTopicConfigsEnabled ? topics : { ...topics, alterConfigs: [] }, acls }
  } finally {
    await Promise.all([source.close(), target.close()])
  }
}
