/**
 * What the next metadata sync of each flow would do on its target, computed from the clusters' current state
 * and changing nothing: the engine behind `kmirror plan`.
 */
import type { FlowConfig } from '../config/types.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { AclOwnershipStore } from '../metadata/acl-ownership.ts'
import { describeAclState, planAclSync, type AclSyncPlan } from '../metadata/acl-sync.ts'
import { ConfigReads, describeTopicState } from '../metadata/topic-state.ts'
import { isTopicSyncPlanEmpty, planTopicSync, type TopicSyncPlan } from '../metadata/topic-sync-plan.ts'
import { createReplicationPolicy, type ReplicationPolicy } from '../policy/replication-policy.ts'

export interface FlowPlan {
  readonly flow: string
  readonly topics: TopicSyncPlan
  /** Null when ACL sync is off for the flow. */
  readonly acls: AclSyncPlan | null
}

export function hasDrift (plan: FlowPlan): boolean {
  return !isTopicSyncPlanEmpty(plan.topics) || (plan.acls !== null && (plan.acls.create.length > 0 || plan.acls.remove.length > 0))
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
    const acls = flow.syncTopicAclsEnabled ? await planAcls(flow, policy, source, target) : null
    return { flow: flow.name, topics: flow.syncTopicConfigsEnabled ? topics : { ...topics, alterConfigs: [] }, acls }
  } finally {
    await Promise.all([source.close(), target.close()])
  }
}

/** The ACL sync plan, with the bindings this flow created (read, never created: the plan changes nothing). */
async function planAcls (flow: FlowConfig, policy: ReplicationPolicy, source: ClusterClients, target: ClusterClients): Promise<AclSyncPlan> {
  const ownership = new AclOwnershipStore(flow, { admin: target.admin, fetcher: target.reader, writer: null })
  const [state] = await Promise.all([describeAclState({ flow, sourceAdmin: source.admin, targetAdmin: target.admin }), ownership.load()])
  return planAclSync({ ...state, flow, policy, owned: ownership.owned() })
}
