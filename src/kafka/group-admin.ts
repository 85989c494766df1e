/**
 * Consumer-group operations kmirror needs for checkpoints, group offset sync and failover, over the Kafka
 * library's Admin client; groups are described with kmirror's own DescribeGroups (group-describer.ts), whatever
 * their protocol. Offsets are kmirror numbers; states are normalised to MM2/Java spellings.
 */
import type { Admin } from '@platformatic/kafka'
import { ErrorCodes } from '../errors.ts'
import { withApiDeadline } from './api-deadline.ts'
import type { ClusterContext } from './connection-hints.ts'
import { toKmirrorError } from './errors.ts'
import type { TopicPartition } from '../topic-partition.ts'
import { readStable, type CommittedOffset, type StableCommits, type StableRequest } from './stable-commits.ts'
import { withGrant, type AclGrant } from './acl-grant.ts'
import { describeAnyGroups, type GroupConnections } from './group-describer.ts'
import { toOffset } from './offsets.ts'

/** Java's ConsumerGroupState names; 'Empty' and 'Dead' are the only states without active members. */
export type GroupState = 'Empty' | 'Stable' | 'PreparingRebalance' | 'CompletingRebalance' | 'Dead' | 'Assigning' | 'Reconciling' | 'Unknown'

export interface GroupListing {
  readonly groupId: string
  readonly state: GroupState
  /** 'consumer' for consumer groups; Connect workers and others use other protocol types. */
  readonly protocolType: string
}

export interface GroupDescription {
  readonly groupId: string
  readonly state: GroupState
  readonly members: number
  /** 'consumer' for consumer groups, '' for a group with no protocol yet (one only committed to); others use others. */
  readonly protocolType: string
}

/** Whether a group's offsets are consumer offsets kmirror may translate and write: a consumer group, or one only committed to. */
export function isConsumerProtocol (protocolType: string): boolean {
  return protocolType === 'consumer' || protocolType === ''
}

export type { CommittedOffset, StableCommits } from './stable-commits.ts'

/** How `stableCommittedOffsetsOf` reads (see there). */
export interface StableReadOptions {
  readonly partitions?: ReadonlyMap<string, readonly TopicPartition[]>
  readonly busyOffsets?: boolean
}

const STATES: Record<string, GroupState> = {
  EMPTY: 'Empty', STABLE: 'Stable', PREPARING_REBALANCE: 'PreparingRebalance', COMPLETING_REBALANCE: 'CompletingRebalance', DEAD: 'Dead', ASSIGNING: 'Assigning', RECONCILING: 'Reconciling'
}

export function normalizeGroupState (state: string): GroupState {
  const upper = state.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()
  return STATES[upper] ?? 'Unknown'
}

/** True when no consumer is active in the group, so its offsets can be written safely. */
export function isInactive (state: GroupState): boolean {
  return state === 'Empty' || state === 'Dead'
}

/** The group operation a refused read names: DESCRIBE reads it; READ, which implies DESCRIBE, also commits. */
export type GroupGrant = 'DESCRIBE' | 'READ'

/** Groups asked about in one DescribeGroups or OffsetFetch request. */
const GROUPS_PER_REQUEST = 100

type FetchedTopics = Awaited<ReturnType<Admin['listConsumerGroupOffsets']>>[number]['topics']

function committedOffsetsOf (topics: FetchedTopics): CommittedOffset[] {
  const out: CommittedOffset[] = []
  for (const topic of topics) {
    for (const p of topic.partitions) {
      if (p.committedOffset < 0n) continue
      out.push({ topic: topic.name, partition: p.partitionIndex, offset: toOffset(p.committedOffset), metadata: p.metadata ?? '' })
    }
  }
  return out
}

export class GroupAdmin {
  readonly #admin: Admin
  /** The same cluster's library Admin without retries of its own, for reads that retry by their own rules. */
  readonly #singleAttempt: () => Admin
  readonly #connections: GroupConnections
  readonly #cluster: ClusterContext
  readonly #apiTimeoutMs: number
  /** Named in the grant a refused request needs. */
  readonly #principal: string

  /** `apiTimeoutMs`: `default.api.timeout.ms`, the bound of each operation. */
  constructor (admin: Admin, connections: GroupConnections, cluster: ClusterContext, apiTimeoutMs: number, principal: string, singleAttempt: () => Admin = () => admin) {
    this.#admin = admin
    this.#singleAttempt = singleAttempt
    this.#connections = connections
    this.#cluster = cluster
    this.#apiTimeoutMs = apiTimeoutMs
    this.#principal = principal
  }

  /**
   * Every group of the cluster, classic and KIP-848 consumer groups alike: the library lists classic groups only
   * unless told (ListGroups v5's types filter, Kafka 3.8+; older brokers list every group anyway).
   */
  async listGroups (): Promise<GroupListing[]> {
    const groups = await this.#call('list consumer groups', () => this.#admin.listGroups({ types: ['classic', 'consumer'] }))
    return [...groups.values()].map(g => ({ groupId: g.id, state: normalizeGroupState(g.state), protocolType: g.protocolType }))
  }

  /** `grant`: the group operation a refusal names, DESCRIBE unless the caller goes on to commit (READ implies it). */
  async describeGroups (groupIds: readonly string[], grant: GroupGrant = 'DESCRIBE', grantPrefix?: string): Promise<Map<string, GroupDescription>> {
    if (groupIds.length === 0) return new Map()
    // A second before the operation's own deadline: a describe still retrying ends with its own TIMEOUT, naming the groups.
    const deadlineAt = Date.now() + Math.max(0, this.#apiTimeoutMs - 1000)
    // GRANT_PREFIX: a refusal names the one prefixed grant that covers every group of its kind, not the groups asked.
    const names = grantPrefix === undefined ? groupIds : [grantPrefix]
    const groups = await this.#call('describe groups', () => describeAnyGroups(this.#connections, groupIds, this.#cluster, deadlineAt), { group: { operation: grant, resourceType: 'group', names, prefixed: grantPrefix !== undefined } })
    return new Map([...groups.values()].map(g => [g.groupId, { groupId: g.groupId, state: normalizeGroupState(g.state), members: g.members.length, protocolType: g.protocolType }]))
  }

  /** The committed offsets of a group; partitions without a commit are left out. */
  async listCommittedOffsets (groupId: string, grant: GroupGrant = 'DESCRIBE'): Promise<CommittedOffset[]> {
    return (await this.listCommittedOffsetsOf([groupId], grant)).get(groupId) ?? []
  }

  /**
   * The committed offsets of several groups, by group: one OffsetFetch per coordinator for up to GROUPS_PER_REQUEST
   * groups (Kafka 3.0+, OffsetFetch v8; the library asks group by group on older brokers).
   */
  async listCommittedOffsetsOf (groupIds: readonly string[], grant: GroupGrant = 'DESCRIBE'): Promise<Map<string, CommittedOffset[]>> {
    const out = new Map<string, CommittedOffset[]>()
    for (let i = 0; i < groupIds.length; i += GROUPS_PER_REQUEST) {
      const chunk = groupIds.slice(i, i + GROUPS_PER_REQUEST)
      const action = chunk.length === 1 ? `read committed offsets of group ${chunk[0]}` : `read committed offsets of ${chunk.length} groups`
      const result = await this.#call(action, () => this.#admin.listConsumerGroupOffsets({ groups: [...chunk] }), { group: { operation: grant, resourceType: 'group', names: chunk } })
      for (const group of result) out.set(group.groupId, committedOffsetsOf(group.topics))
    }
    return out
  }

  /**
   * The commits of several groups read stable (stable-commits.ts), by group: for decisions that compare with them.
   * OPTIONS.partitions: per group, the partitions the caller will write, asked for by name (an open transaction on
   * any of them is seen); every partition with a commit for the others. OPTIONS.busyOffsets (default true): a group
   * told in use gets its last committed offsets read plainly (a plan shows them), else none.
   */
  async stableCommittedOffsetsOf (groupIds: readonly string[], grant: GroupGrant = 'DESCRIBE', options: StableReadOptions = {}): Promise<Map<string, StableCommits>> {
    const out = new Map<string, StableCommits>()
    for (let i = 0; i < groupIds.length; i += GROUPS_PER_REQUEST) {
      const deadlineAt = Date.now() + this.#apiTimeoutMs
      const requests = groupIds.slice(i, i + GROUPS_PER_REQUEST).map(groupId => stableRequest(groupId, options.partitions?.get(groupId)))
      const read = await readStable(requests, {
        fetchOnce: async (asked, timeoutMs) => await this.#fetchStableOnce(asked, grant, timeoutMs),
        ...(options.busyOffsets === false ? {} : { plain: async (groupId: string) => await this.listCommittedOffsets(groupId, grant) })
      }, deadlineAt)
      for (const [group, commits] of read) out.set(group, commits)
    }
    return out
  }

  async #fetchStableOnce (requests: readonly StableRequest[], grant: GroupGrant, timeoutMs: number): Promise<Map<string, CommittedOffset[]>> {
    const names = requests.map(r => r.groupId)
    const action = names.length === 1 ? `read committed offsets of group ${names[0]}` : `read committed offsets of ${names.length} groups`
    const groups = requests.map(r => (r.topics === undefined ? r.groupId : { groupId: r.groupId, topics: r.topics }))
    // Partitions asked by name need DESCRIBE on their topics (a refusal names it); an all-partitions read leaves such topics out.
    const topics = [...new Set(requests.flatMap(r => r.topics?.map(t => t.name) ?? []))]
    const topicGrant: AclGrant = { operation: 'DESCRIBE', resourceType: 'topic', names: topics }
    const grants = { group: { operation: grant, resourceType: 'group', names } satisfies AclGrant, ...(topics.length === 0 ? {} : { topic: topicGrant }) }
    const result = await this.#call(action, () => this.#singleAttempt().listConsumerGroupOffsets({ groups, requireStable: true }), grants, timeoutMs)
    return new Map(result.map(g => [g.groupId, committedOffsetsOf(g.topics)]))
  }

  /** Commits offsets for a group without joining it. Callers must have checked the group is inactive. */
  async alterCommittedOffsets (groupId: string, offsets: readonly { topic: string, partition: number, offset: number }[]): Promise<void> {
    if (offsets.length === 0) return
    const byTopic = new Map<string, { partition: number, offset: bigint }[]>()
    for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), { partition: o.partition, offset: BigInt(o.offset) }])
    await this.#call(`write committed offsets of group ${groupId}`, () => this.#admin.alterConsumerGroupOffsets({
      groupId,
      topics: [...byTopic].map(([name, partitionOffsets]) => ({ name, partitionOffsets }))
    }), { group: { operation: 'READ', resourceType: 'group', names: [groupId] }, topic: { operation: 'READ', resourceType: 'topic', names: [...byTopic.keys()] } })
  }

  /**
   * Runs `fn`; an authorization refusal names the grant of `grants` its Kafka error points at (a topic's for
   * TOPIC_AUTHORIZATION_FAILED, else the group's).
   */
  async #call<T> (action: string, fn: () => Promise<T>, grants: { readonly group?: AclGrant, readonly topic?: AclGrant } = {}, timeoutMs = this.#apiTimeoutMs): Promise<T> {
    const described = `${action} on ${this.#cluster.label}`
    try {
      return await withApiDeadline(fn, timeoutMs, described, this.#cluster)
    } catch (err) {
      const refused = toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, described, this.#cluster)
      const names = refused.details['kafkaErrors']
      // A refusal of some groups names those (details.groups), not every group asked about.
      const refusedGroups = refused.details['groups']
      const groupGrant = grants.group !== undefined && grants.group.prefixed !== true && Array.isArray(refusedGroups) ? { ...grants.group, names: refusedGroups as string[] } : grants.group
      const grant = Array.isArray(names) && names.includes('TOPIC_AUTHORIZATION_FAILED') ? grants.topic : groupGrant
      throw grant === undefined ? refused : withGrant(refused, described, grant, this.#principal, this.#cluster)
    }
  }
}

function stableRequest (groupId: string, partitions: readonly TopicPartition[] | undefined): StableRequest {
  if (partitions === undefined || partitions.length === 0) return { groupId }
  const byTopic = new Map<string, number[]>()
  for (const p of partitions) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition])
  return { groupId, topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })) }
}
