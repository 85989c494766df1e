/**
 * Reads MM2's offset syncs of a flow (`mm2-offset-syncs.<alias>.internal`, on the cluster
 * `offset-syncs.topic.location` names) for `kmirror verify`, read-only: a missing topic means no syncs.
 * Only the syncs of `topics` are kept, in the order they were written.
 */
import type { FlowConfig } from '../config/types.ts'
import { decodeOffsetSync, type OffsetSyncValue } from '../formats/offset-sync.ts'
import type { ClusterClients } from '../kafka/cluster-clients.ts'
import { readTopicToEnd } from '../kafka/topic-reader.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import { offsetSyncsTopicName } from '../replication/offset-sync-emitter.ts'
import { partitionKey } from '../topic-partition.ts'

export async function readOffsetSyncs (flow: FlowConfig, policy: ReplicationPolicy, clients: { source: ClusterClients, target: ClusterClients }, topics: ReadonlySet<string>): Promise<Map<string, OffsetSyncValue[]>> {
  const topic = offsetSyncsTopicName(flow, policy)
  const holder = flow.offsetSyncsTopicLocation === 'target' ? clients.target : clients.source
  const syncs = new Map<string, OffsetSyncValue[]>()
  const described = (await holder.admin.describeTopics([topic])).get(topic)
  if (described === undefined) return syncs
  await readTopicToEnd(holder.reader, topic, described.partitions, (_, record) => {
    if (record.key === null || record.value === null) return
    const sync = decodeOffsetSync(record.key, record.value)
    if (!topics.has(sync.topic)) return
    const tp = partitionKey(sync.topic, sync.partition)
    const list = syncs.get(tp) ?? []
    list.push({ upstreamOffset: sync.upstreamOffset, downstreamOffset: sync.downstreamOffset })
    syncs.set(tp, list)
  })
  return syncs
}
