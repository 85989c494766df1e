/**
 * A flow's exact offset history and replicated partitions, read from its TARGET only (so failover works with
 * the source gone), for translation in both directions and for mapping remote topics back to their sources.
 */
import { OffsetHistoryStore } from '../checkpoint/offset-history-store.ts'
import type { PartitionOffsetHistory, Translation } from '../checkpoint/offset-history.ts'
import type { FlowConfig } from '../config/types.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import { ProgressStore } from '../replication/progress-store.ts'
import { parsePartitionKey, partitionKey } from '../topic-partition.ts'

export interface SourcePartition {
  readonly topic: string
  readonly remoteTopic: string
  readonly partition: number
}

export interface FlowHistory {
  /** Source commit → target offset; undefined when the partition is not replicated by this flow. */
  toTarget: (topic: string, partition: number, committed: number) => Translation | undefined
  /** Target commit (on the remote topic) → source offset; undefined when not replicated by this flow. */
  toSource: (topic: string, partition: number, committed: number) => Translation | undefined
  /** The source topic of a remote topic of this flow, or undefined. */
  sourceTopicOf: (remoteTopic: string) => string | undefined
  /** The runs of a source partition (`kmirror verify` pairs ranges with them), or undefined. */
  historyOf: (topic: string, partition: number) => PartitionOffsetHistory | undefined
  /** The flow's stored position of a source partition (the next offset to copy), or undefined. */
  positionOf: (topic: string, partition: number) => number | undefined
  readonly partitions: readonly SourcePartition[]
}

export async function loadFlowHistory (flow: FlowConfig, policy: ReplicationPolicy, targetAdmin: AdminClient, targetReader: RecordFetcher): Promise<FlowHistory> {
  const history = new OffsetHistoryStore(flow, targetAdmin, targetReader, null)
  await history.load({ readOnly: true })
  const positions = await new ProgressStore(flow, targetAdmin, targetReader, null).load({ readOnly: true })
  const partitions: SourcePartition[] = []
  const sourceOf = new Map<string, string>()
  for (const [tp, stored] of positions) {
    const { topic, partition } = parsePartitionKey(tp)
    history.history(topic, partition)?.markConsumedTo(stored + 1)
    const remoteTopic = policy.formatRemoteTopic(flow.source.alias, topic)
    sourceOf.set(remoteTopic, topic)
    partitions.push({ topic, remoteTopic, partition })
  }
  return {
    toTarget: (topic, partition, committed) => history.history(topic, partition)?.toTarget(committed),
    toSource: (topic, partition, committed) => history.history(topic, partition)?.toSource(committed),
    sourceTopicOf: remoteTopic => sourceOf.get(remoteTopic),
    historyOf: (topic, partition) => history.history(topic, partition),
    positionOf: (topic, partition) => {
      const stored = positions.get(partitionKey(topic, partition))
      return stored === undefined ? undefined : stored + 1
    },
    partitions
  }
}
