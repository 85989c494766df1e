/**
 * Writes OffsetSync records, byte-compatible with MM2, to `mm2-offset-syncs.<alias>.internal` partition 0 on
 * the cluster `offset-syncs.topic.location` names (the source by default, named after the target; on the
 * target it is named after the source).
 */
import type { FlowConfig } from '../config/types.ts'
import { encodeOffsetSyncKey, encodeOffsetSyncValue } from '../formats/offset-sync.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import type { AckedChunk, RecordWriter } from '../kafka/record-writer.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import type { OffsetSyncEntry } from './offset-sync-tracker.ts'

export function offsetSyncsTopicName (flow: FlowConfig, policy: ReplicationPolicy): string {
  const alias = flow.offsetSyncsTopicLocation === 'source' ? flow.target.alias : flow.source.alias
  return policy.offsetSyncsTopic(alias)
}

export class OffsetSyncEmitter {
  readonly topic: string
  readonly #flow: FlowConfig
  readonly #admin: AdminClient
  readonly #writer: Pick<RecordWriter, 'write'>

  /** `admin` and `writer` are clients of the cluster that holds the offset-syncs topic. */
  constructor (flow: FlowConfig, policy: ReplicationPolicy, admin: AdminClient, writer: Pick<RecordWriter, 'write'>) {
    this.#flow = flow
    this.#admin = admin
    this.#writer = writer
    this.topic = offsetSyncsTopicName(flow, policy)
  }

  async init (): Promise<void> {
    await this.#admin.createTopic({
      name: this.topic,
      partitions: 1,
      replicationFactor: this.#flow.offsetSyncsTopicReplicationFactor,
      replicationFactorKey: 'offset-syncs.topic.replication.factor',
      configs: { 'cleanup.policy': 'compact' }
    })
  }

  /**
   * Writes ENTRIES in order; ONACKED, when given, hears how many more of them (from the front) were acknowledged
   * each time a produce request of the write is (a write larger than one request is split).
   */
  async send (entries: readonly OffsetSyncEntry[], onAcked?: (count: number) => void): Promise<void> {
    if (entries.length === 0) return
    const timestamp = BigInt(Date.now())
    const acked = onAcked === undefined ? {} : { onAcked: (chunks: readonly AckedChunk[]): void => { onAcked(chunks.reduce((n, c) => n + c.end - c.start, 0)) } }
    await this.#writer.write([{
      topic: this.topic,
      partition: 0,
      records: entries.map(e => ({
        key: encodeOffsetSyncKey({ topic: e.topic, partition: e.partition }),
        value: encodeOffsetSyncValue({ upstreamOffset: e.upstreamOffset, downstreamOffset: e.downstreamOffset }),
        headers: [],
        timestamp
      }))
    }], acked)
  }
}
