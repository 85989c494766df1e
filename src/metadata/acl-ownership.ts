/**
 * Which ACL bindings on the target a flow created: the durable record that lets ACL sync remove a copy whose
 * source binding is gone without ever touching a binding a person made (even an identical one).
 *
 * Invariants:
 * - One compacted topic per flow on the TARGET, `mm2-acls.<source>.internal` (MM2's internal shape, so neither MM2
 *   nor kmirror replicates it), one partition. Key: the binding (JSON array of its seven fields); value: the flow
 *   that created it; a tombstone when the flow removed it or stopped owning it.
 * - A binding is recorded BEFORE it is created, and forgotten only AFTER it is deleted: a crash between the two
 *   leaves a record of a binding that may be absent (the next run deletes nothing, or re-creates it), never a
 *   created binding kmirror does not know it owns.
 * - A binding that already exists on the target when kmirror would copy it is never recorded: it was made by
 *   someone else. Bindings created by a kmirror without this store (before it existed) are not known either, and stay.
 * - Read again, whole, at every sync: the `sync-acls` job may have run on another instance of the flow since
 *   (several instances share a flow), so memory alone is not the truth.
 * - Created at the first binding the flow creates, not before: no topic where ACL sync has nothing to do.
 */
import type { FlowConfig } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { aclKey, type AclBinding } from '../kafka/acls.ts'
import { CreateOutcomes, type AdminClient } from '../kafka/admin-client.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import type { RecordWriter } from '../kafka/record-writer.ts'
import { readTopicToEnd } from '../kafka/topic-reader.ts'
import { InternalTopicHeads } from '../policy/replication-policy.ts'

export function aclOwnershipTopic (sourceAlias: string): string {
  return `${InternalTopicHeads.ACLS}${sourceAlias}.internal`
}

const FIELDS = ['resourceType', 'patternType', 'resourceName', 'principal', 'host', 'operation', 'permission'] as const

export function encodeOwnedAcl (b: AclBinding): Buffer {
  return Buffer.from(JSON.stringify(FIELDS.map(f => b[f])))
}

export function decodeOwnedAcl (key: Buffer): AclBinding {
  const parsed: unknown = JSON.parse(key.toString('utf8'))
  if (!Array.isArray(parsed) || parsed.length !== FIELDS.length || !parsed.every(v => typeof v === 'string')) {
    throw new KmirrorError(ErrorCodes.PROGRESS, `unreadable key in an ACL ownership topic: ${key.toString('utf8').slice(0, 200)}`)
  }
  const [resourceType, patternType, resourceName, principal, host, operation, permission] = parsed as string[]
  return { resourceType, patternType, resourceName, principal, host, operation, permission } as AclBinding
}

export interface AclOwnershipIo {
  readonly admin: Pick<AdminClient, 'createTopic' | 'describeTopics'>
  readonly fetcher: Pick<RecordFetcher, 'fetch' | 'listOffsets'>
  /** Null for commands that change nothing (`kmirror plan`). */
  readonly writer: Pick<RecordWriter, 'write'> | null
}

export class AclOwnershipStore {
  readonly topic: string
  readonly #flow: FlowConfig
  readonly #io: AclOwnershipIo
  readonly #owned = new Map<string, AclBinding>()
  #exists = false

  constructor (flow: FlowConfig, io: AclOwnershipIo) {
    this.#flow = flow
    this.#io = io
    this.topic = aclOwnershipTopic(flow.source.alias)
  }

  /**
   * Reads what is recorded, whoever recorded it. A missing topic
   * means nothing is owned: the topic is created only when the flow first creates a binding, so a flow between
   * clusters without authorizer (or with nothing to copy) leaves no topic.
   */
  async load (): Promise<void> {
    if (!this.#exists) this.#exists = (await this.#io.admin.describeTopics([this.topic])).has(this.topic)
    if (this.#exists) await this.#read()
  }

  /**
   * Reads the whole record again (it is small): compaction may have removed a binding's record and its tombstone
   * since the last read, which an incremental read would never see.
   */
  async #read (): Promise<void> {
    const owned = new Map<string, AclBinding>()
    await readTopicToEnd(this.#io.fetcher as RecordFetcher, this.topic, 1, (_, record) => {
      if (record.key === null) return
      const binding = decodeOwnedAcl(record.key)
      if (record.value === null) owned.delete(aclKey(binding))
      else owned.set(aclKey(binding), binding)
    })
    this.#owned.clear()
    for (const [key, binding] of owned) this.#owned.set(key, binding)
  }

  async #ensureTopic (): Promise<void> {
    if (this.#exists) return
    const outcome = await this.#io.admin.createTopic({
      name: this.topic, partitions: 1, replicationFactor: this.#flow.checkpointsTopicReplicationFactor, replicationFactorKey: 'checkpoints.topic.replication.factor', configs: { 'cleanup.policy': 'compact' }
    })
    // Someone (a previous run whose listing did not show it yet) created it: its records count.
    if (outcome === CreateOutcomes.EXISTS) await this.#read()
    this.#exists = true
  }

  owned (): AclBinding[] {
    return [...this.#owned.values()]
  }

  isOwned (b: AclBinding): boolean {
    return this.#owned.has(aclKey(b))
  }

  /** Records bindings about to be created (before the CreateAcls request). */
  async record (bindings: readonly AclBinding[]): Promise<void> {
    const fresh = bindings.filter(b => !this.isOwned(b))
    await this.#write(fresh, Buffer.from(JSON.stringify({ flow: this.#flow.name })))
    for (const b of fresh) this.#owned.set(aclKey(b), b)
  }

  /** Forgets bindings that were deleted (after the DeleteAcls request). */
  async forget (bindings: readonly AclBinding[]): Promise<void> {
    const known = bindings.filter(b => this.isOwned(b))
    await this.#write(known, null)
    for (const b of known) this.#owned.delete(aclKey(b))
  }

  async #write (bindings: readonly AclBinding[], value: Buffer | null): Promise<void> {
    if (bindings.length === 0) return
    if (this.#io.writer === null) throw new KmirrorError(ErrorCodes.PROGRESS, `${this.topic} is open read-only`)
    await this.#ensureTopic()
    const timestamp = BigInt(Date.now())
    await this.#io.writer.write([{ topic: this.topic, partition: 0, records: bindings.map(b => ({ key: encodeOwnedAcl(b), value, headers: [], timestamp })) }])
  }
}
