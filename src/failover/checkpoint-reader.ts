/**
 * The newest checkpoint of each group and remote partition in `<source>.checkpoints.internal` on the target:
 * what failover relies on when the source cluster is unreachable (as MM2's RemoteClusterUtils does).
 */
import { decodeCheckpointRecord, type Checkpoint } from '../formats/checkpoint.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import { readTopicToEnd } from '../kafka/topic-reader.ts'
import { partitionKey } from '../topic-partition.ts'

export interface StoredCheckpoint extends Checkpoint {
  /** When it was written (the record timestamp), ms since the epoch. */
  readonly writtenAt: number
}

/** group → (remote topic, partition) key → newest checkpoint. A missing topic means no checkpoints. */
export async function readLastCheckpoints (topic: string, admin: AdminClient, reader: RecordFetcher): Promise<Map<string, Map<string, StoredCheckpoint>>> {
  const out = new Map<string, Map<string, StoredCheckpoint>>()
  if (!(await admin.describeTopics([topic])).has(topic)) return out
  await readTopicToEnd(reader, topic, 1, (_, record) => {
    const checkpoint = decodeCheckpointRecord(record)
    if (checkpoint === null) return
    const byPartition = out.get(checkpoint.group) ?? new Map<string, StoredCheckpoint>()
    out.set(checkpoint.group, byPartition)
    byPartition.set(partitionKey(checkpoint.topic, checkpoint.partition), { ...checkpoint, writtenAt: Number(record.timestamp) })
  })
  return out
}
