/**
 * Reads the replication topology as seen from every cluster of a configuration: each cluster's topic names
 * are listed (read-only) and its upstream clusters computed as MM2's MirrorClient does (topology.ts).
 * A cluster that cannot be read is reported as unreachable with the reason; the others are still read.
 */
import type { FlowConfig, KmirrorConfig } from '../config/types.ts'
import { rejectAfter } from '../deadline.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { describeUpstream, heartbeatTopics, type UpstreamCluster } from './topology.ts'

export type ClusterTopology =
  | { readonly alias: string, readonly reachable: true, readonly upstream: readonly UpstreamCluster[], readonly heartbeatTopics: readonly string[] }
  | { readonly alias: string, readonly reachable: false, readonly error: string }

/** Lists the topics of one cluster; the port that tests replace. */
export type TopicLister = (flow: FlowConfig, side: 'source' | 'target') => Promise<string[]>

export async function readTopology (config: KmirrorConfig, listTopics: TopicLister = listWithAdmin): Promise<ClusterTopology[]> {
  return Promise.all(config.clusters.map(alias => readCluster(config, alias, listTopics)))
}

async function readCluster (config: KmirrorConfig, alias: string, listTopics: TopicLister): Promise<ClusterTopology> {
  // MM2's MirrorClient for a cluster uses its cluster properties and the replication policy: a flow into the
  // cluster carries both (any flow out of it when there is none).
  const flow = config.flows.find(f => f.target.alias === alias) ?? config.flows.find(f => f.source.alias === alias)
  if (flow === undefined) return { alias, reachable: false, error: `no flow names cluster ${alias}: list at least two clusters` }
  const side = flow.target.alias === alias ? 'target' : 'source'
  try {
    const topics = await rejectAfter(listTopics(flow, side), flow.adminTimeoutMs, () => new Error(`listing the topics of cluster ${alias} took more than admin.timeout.ms = ${flow.adminTimeoutMs} ms`))
    const policy = createReplicationPolicy(flow.replicationPolicy)
    return { alias, reachable: true, upstream: describeUpstream(policy, topics), heartbeatTopics: heartbeatTopics(policy, topics) }
  } catch (err) {
    return { alias, reachable: false, error: err instanceof Error ? err.message : String(err) }
  }
}

async function listWithAdmin (flow: FlowConfig, side: 'source' | 'target'): Promise<string[]> {
  const cluster = flow[side]
  const clients = new ClusterClients(cluster, 'topology')
  try {
    await clients.checkBrokers()
    return await clients.admin.listTopics()
  } finally {
    await clients.close()
  }
}

