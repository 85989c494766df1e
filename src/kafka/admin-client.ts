/**
 * The admin operations kmirror needs, over the Kafka library's Admin client: topics, ACLs, and on the same
 * connection topic configs (topic-config-admin.ts) and consumer groups (group-admin.ts).
 */
import { Admin, AclOperations, AclPermissionTypes, ResourcePatternTypes, type Connection } from '@platformatic/kafka'
import { fromLibraryAcl, toLibraryAcl, type AclBinding, type AclResourceType } from './acls.ts'
import { GroupAdmin } from './group-admin.ts'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { clientInt } from '../config/client-settings.ts'
import { withApiDeadline } from './api-deadline.ts'
import { toConnectOptions } from './client-options.ts'
import type { ClusterContext } from './connection-hints.ts'
import { withGrant } from './acl-grant.ts'
import { kafkaErrorInfo, KafkaErrorKinds, kafkaErrorName, kafkaErrorNames, kafkaResponseError, toKmirrorError } from './errors.ts'
import { describePrincipal } from './principal.ts'
import { noteOutcome, suspectsLast } from './broker-suspects.ts'
import { addressKey, inPreferredOrder } from './same-broker.ts'
import { MetadataApi } from './protocol/metadata.ts'
import { sendRequest } from './protocol/negotiation.ts'
import { watchedLibraryClient } from './answering-first.ts'
import { createTopicsOnce, type BatchCreateResult } from './topic-batch-create.ts'
import { TopicConfigAdmin, type TopicConfigChange, type TopicConfigEntry, type TopicConfigsRead } from './topic-config-admin.ts'

export { ConfigSourceKinds, type ConfigSourceKind, type TopicConfigChange, type TopicConfigEntry, type TopicConfigsRead } from './topic-config-admin.ts'

/** The id of a topic on a broker without topic ids (before Kafka 2.8), as the library reports it too. */
const NO_TOPIC_ID = '00000000-0000-0000-0000-000000000000'

export interface TopicDescription {
  readonly name: string
  /** All zeros on brokers without topic ids (before Kafka 2.8). */
  readonly id: string
  readonly partitions: number
}

export interface NewTopic {
  readonly name: string
  readonly partitions: number
  /** -1 = the broker's default. */
  readonly replicationFactor: number
  readonly configs: Readonly<Record<string, string>>
  /** The configuration key the replication factor came from, named in the error if the cluster refuses it. */
  readonly replicationFactorKey?: string
}

/**
 * What a cluster says about a topic named in a Metadata request: only ABSENT (UNKNOWN_TOPIC_OR_PARTITION in an
 * authorized answer) says it does not exist; a topic the principal may not DESCRIBE is UNAUTHORIZED, and is
 * missing from listings just as a deleted one is.
 */
export const TopicPresences = { EXISTS: 'exists', ABSENT: 'absent', UNAUTHORIZED: 'unauthorized', OTHER_ERROR: 'other-error' } as const
export type TopicPresence = (typeof TopicPresences)[keyof typeof TopicPresences]

export interface TopicProbe {
  readonly presence: TopicPresence
  /** The Kafka error name of the answer (absent for EXISTS). */
  readonly error?: string
}

export const CreateOutcomes = { CREATED: 'created', EXISTS: 'exists' } as const
export type CreateOutcome = (typeof CreateOutcomes)[keyof typeof CreateOutcomes]

export class AdminClient {
  readonly #admin: Admin
  /** Made on first use (stable group reads, topics created together): the same options, no retries of the library's own. */
  #singleAttempt: Admin | undefined
  readonly #makeSingleAttempt: () => Admin
  #closed = false
  readonly #cluster: ClusterContext
  readonly #principal: string
  /** `default.api.timeout.ms`: the bound of each operation, its retries included. */
  readonly #apiTimeoutMs: number
  readonly #configs: TopicConfigAdmin
  /** `bootstrap.servers` as `addressKey`s, in their order. */
  readonly #bootstrap: readonly string[]

  /** Consumer-group operations on the same connection. */
  readonly groups: GroupAdmin

  /** `cluster` names the cluster in messages (`cluster B`) and its alias in the keys of hints (`B.bootstrap.servers`). */
  constructor (props: ClientProps, clientId: string, cluster: ClusterContext) {
    this.#admin = watchedLibraryClient(new Admin(toConnectOptions(props, clientId)), cluster.label)
    this.#cluster = cluster
    this.#principal = describePrincipal(props, cluster.alias ?? clientId)
    this.#apiTimeoutMs = clientInt(props, 'default.api.timeout.ms')
    this.#bootstrap = (props['bootstrap.servers'] ?? '').split(',').map(s => s.trim()).filter(s => s.length > 0).map(addressKey)
    const connections = { any: () => this.#anyConnection(), broker: (node: number) => this.#brokerConnection(node) }
    this.#makeSingleAttempt = () => watchedLibraryClient(new Admin({ ...toConnectOptions(props, clientId), retries: 0 }), cluster.label)
    this.groups = new GroupAdmin(this.#admin, connections, cluster, this.#apiTimeoutMs, this.#principal, () => this.#singleAttemptAdmin())
    this.#configs = new TopicConfigAdmin(this.#admin, cluster, this.#principal, (action, fn) => this.#call(action, fn))
  }

  #singleAttemptAdmin (): Admin {
    // A request answered after close (a caller's deadline gave up on it) must not open a client nobody closes.
    if (this.#closed) throw new KmirrorError(ErrorCodes.INTERNAL, `the admin client of ${this.#cluster.label} is closed`)
    return (this.#singleAttempt ??= this.#makeSingleAttempt())
  }

  /**
   * The names of every non-internal topic, sorted. Kmirror's own Metadata request, not the library's listing: that
   * fails as a whole when any partition of any topic has no leader (one offline partition of an unrelated topic).
   */
  async listTopics (): Promise<string[]> {
    return [...(await this.describeAllTopics()).keys()].sort()
  }

  async brokerCount (): Promise<number> {
    const metadata = await this.#call('read cluster metadata', () => this.#admin.metadata({ topics: [] }))
    return metadata.brokers.size
  }

  /**
   * Every non-internal topic with its id and partition count, from ONE Metadata request for all topics (the
   * library's own listing discards partitions, and describing a list costs another request). Topic refresh
   * runs every few seconds, so this is what keeps it cheap with thousands of topics.
   */
  async describeAllTopics (): Promise<Map<string, TopicDescription>> {
    return this.#call('describe all topics', async () => {
      const response = await sendRequest(await this.#anyConnection(), MetadataApi, { topics: null }, this.#cluster.label)
      const out = new Map<string, TopicDescription>()
      for (const topic of response.topics.values()) {
        if (topic.isInternal || topic.errorCode !== 0) continue
        out.set(topic.name, { name: topic.name, id: topic.id ?? NO_TOPIC_ID, partitions: topic.partitions.length })
      }
      return out
    })
  }

  /**
   * Asks the cluster about each named topic with one Metadata request naming them (never auto-created): whether
   * it exists, is unknown, or may not be described. A topic the answer leaves out counts as OTHER_ERROR.
   */
  async probeTopics (names: readonly string[]): Promise<Map<string, TopicProbe>> {
    const out = new Map<string, TopicProbe>()
    if (names.length === 0) return out
    const response = await this.#call('describe topics', async () =>
      sendRequest(await this.#anyConnection(), MetadataApi, { topics: [...names] }, this.#cluster.label))
    for (const name of names) {
      const topic = response.topics.get(name)
      out.set(name, topic === undefined ? { presence: TopicPresences.OTHER_ERROR, error: 'NO_ANSWER' } : toProbe(topic.errorCode))
    }
    return out
  }

  /**
   * Partition counts and ids of the named topics that exist; missing ones (and ones this principal may not
   * describe, as a listing leaves them out) are simply absent from the map. One Metadata request naming them: a
   * partition without a leader is part of the answer, not a failure of it. A topic the cluster answers for with
   * another error (LEADER_NOT_AVAILABLE while it is being created) rejects the call, retriable: counting its
   * partitions as none would be wrong, and leaving it out would have it created again.
   */
  async describeTopics (names: readonly string[]): Promise<Map<string, TopicDescription>> {
    const out = new Map<string, TopicDescription>()
    if (names.length === 0) return out
    const wanted = [...new Set(names)]
    const response = await this.#call('describe topics', async () =>
      sendRequest(await this.#anyConnection(), MetadataApi, { topics: wanted }, this.#cluster.label))
    for (const name of wanted) {
      const topic = response.topics.get(name)
      if (topic === undefined) continue
      if (topic.errorCode === 0) {
        out.set(name, { name, id: topic.id ?? NO_TOPIC_ID, partitions: topic.partitions.length })
        continue
      }
      const probe = toProbe(topic.errorCode)
      if (probe.presence === TopicPresences.OTHER_ERROR) {
        throw kafkaResponseError(topic.errorCode, ErrorCodes.CLUSTER_UNREACHABLE, `describe topic ${name} on ${this.#cluster.label}`, this.#cluster)
      }
    }
    return out
  }

  /** The configs of the named topics; rejects when any of them could not be read (`readTopicConfigs` sorts them). */
  describeTopicConfigs (names: readonly string[]): Promise<Map<string, TopicConfigEntry[]>> {
    return this.#configs.describe(names)
  }

  /** The configs of the named topics, and apart from them the topics whose configs the cluster refused (TopicConfigAdmin.read). */
  readTopicConfigs (names: readonly string[]): Promise<TopicConfigsRead> {
    return this.#configs.read(names)
  }

  /** Sets and deletes configs of a topic (TopicConfigAdmin.alter: incrementally, or whole on clusters before Kafka 2.3). */
  alterTopicConfigs (topic: string, changes: readonly TopicConfigChange[]): Promise<void> {
    return this.#configs.alter(topic, changes)
  }

  async createTopic (topic: NewTopic): Promise<CreateOutcome> {
    try {
      await this.#admin.createTopics({
        topics: [topic.name],
        partitions: topic.partitions,
        replicas: topic.replicationFactor,
        configs: Object.entries(topic.configs).map(([name, value]) => ({ name, value }))
      })
      return CreateOutcomes.CREATED
    } catch (err) {
      const names = kafkaErrorNames(err)
      if (names.includes('TOPIC_ALREADY_EXISTS')) return CreateOutcomes.EXISTS
      if (names.includes('INVALID_REPLICATION_FACTOR')) {
        const brokers = await this.brokerCount().catch(() => undefined)
        const key = topic.replicationFactorKey ?? 'the replication factor key of this topic'
        const count = brokers === undefined ? '' : `: the cluster has ${brokers} broker(s)`
        // -1 asks for the broker's default.replication.factor, which brokers before Kafka 2.4 (CreateTopics v3 and
        // older) do not have: they refuse -1 itself.
        const message = topic.replicationFactor === -1
          ? `cannot create topic ${topic.name} on ${this.#cluster.label} with replication factor -1 (the broker default)${count}; brokers before Kafka 2.4 have no default and the broker's default.replication.factor may exceed the brokers: set ${key} to a number`
          : `cannot create topic ${topic.name} on ${this.#cluster.label} with replication factor ${topic.replicationFactor}${count}; set ${key} to at most that, or to -1 for the broker default (Kafka 2.4+)`
        throw new KmirrorError(ErrorCodes.TOPIC_CREATE, message, { cause: err, details: { topic: topic.name, kafkaErrors: names } })
      }
      const refused = toKmirrorError(err, ErrorCodes.TOPIC_CREATE, `create topic ${topic.name} on ${this.#cluster.label}`, this.#cluster)
      throw withGrant(refused, `creating topic ${topic.name} on ${this.#cluster.label}`, { operation: 'CREATE', resourceType: 'topic', names: [topic.name] }, this.#principal, this.#cluster)
    }
  }

  /**
   * Creates topics that share configs in ONE request, each with its own partitions and replication factor (a
   * controller round trip per topic made 500 topics take 15 s), and says what the broker answered for each
   * (topic-batch-create.ts: one attempt, so "created" is exact). Rejects only when the answer is unknown; callers
   * then ask topic by topic (`createTopic`), which also words each refusal with its fix.
   */
  async createTopics (topics: readonly NewTopic[]): Promise<BatchCreateResult> {
    return this.#call(`create ${topics.length} topics`, async () => createTopicsOnce(this.#singleAttemptAdmin(), topics))
  }

  async createPartitions (topic: string, count: number): Promise<void> {
    const action = `grow ${topic} to ${count} partitions`
    try {
      await this.#call(action, () => this.#admin.createPartitions({ topics: [{ name: topic, count }] }))
    } catch (err) {
      // CreatePartitions needs ALTER on the topic (ALTER_CONFIGS is another grant): the refusal names it.
      const refused = toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `${action} on ${this.#cluster.label}`, this.#cluster)
      throw withGrant(refused, `growing topic ${topic} to ${count} partitions on ${this.#cluster.label}`, { operation: 'ALTER', resourceType: 'topic', names: [topic] }, this.#principal, this.#cluster)
    }
  }

  /** Deletes topics; topics that no longer exist are not an error. */
  async deleteTopics (names: readonly string[]): Promise<void> {
    if (names.length === 0) return
    try {
      await this.#admin.deleteTopics({ topics: [...names] })
    } catch (err) {
      if (kafkaErrorNames(err).every(n => n === 'UNKNOWN_TOPIC_OR_PARTITION' || n === 'UNKNOWN_TOPIC_ID') && kafkaErrorNames(err).length > 0) return
      const refused = toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `delete topics ${names.join(', ')} on ${this.#cluster.label}`, this.#cluster)
      throw withGrant(refused, `deleting ${names.length === 1 ? 'topic' : 'topics'} ${names.join(', ')} on ${this.#cluster.label}`, { operation: 'DELETE', resourceType: 'topic', names }, this.#principal, this.#cluster)
    }
  }

  /**
   * Every ACL binding of the given resource types, or `null` when the cluster has no authorizer
   * (SECURITY_DISABLED): ACL sync then has nothing to do, which is not an error.
   */
  async describeAcls (resourceTypes: readonly AclResourceType[]): Promise<AclBinding[] | null> {
    const out: AclBinding[] = []
    for (const type of resourceTypes) {
      let resources
      try {
        resources = await this.#admin.describeAcls({
          filter: {
            resourceType: toLibraryAcl({ resourceType: type, resourceName: '', patternType: 'literal', principal: '', host: '', operation: 'all', permission: 'allow' }).resourceType,
            resourceName: null,
            resourcePatternType: ResourcePatternTypes.ANY,
            principal: null,
            host: null,
            operation: AclOperations.ANY,
            permissionType: AclPermissionTypes.ANY
          }
        })
      } catch (err) {
        if (kafkaErrorNames(err).includes('SECURITY_DISABLED')) return null
        throw toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `describe ${type} ACLs on ${this.#cluster.label}`, this.#cluster)
      }
      for (const resource of resources) {
        for (const permission of resource.acls) {
          const binding = fromLibraryAcl({ ...resource, ...permission })
          if (binding !== undefined) out.push(binding)
        }
      }
    }
    return out
  }

  async createAcls (bindings: readonly AclBinding[]): Promise<void> {
    if (bindings.length === 0) return
    await this.#call(`create ${bindings.length} ACL(s)`, () => this.#admin.createAcls({ creations: bindings.map(toLibraryAcl) }))
  }

  /** Deletes exactly these bindings (each filter matches one binding; an absent one matches nothing). */
  async deleteAcls (bindings: readonly AclBinding[]): Promise<void> {
    if (bindings.length === 0) return
    await this.#call(`delete ${bindings.length} ACL(s)`, () => this.#admin.deleteAcls({ filters: bindings.map(toLibraryAcl) }))
  }

  async close (): Promise<void> {
    this.#closed = true
    await Promise.all([this.#admin.close().catch(() => undefined), this.#singleAttempt?.close().catch(() => undefined)])
  }

  /**
   * A connection to the first broker of the cluster that takes one. Not the library's connectToBrokers() for all
   * brokers: it fails when any one is down, and a cluster with one broker of three down must still be described.
   * Brokers are tried in `bootstrap.servers` order (the start check puts the brokers that answered it first), the
   * others after them, brokers that lately failed a request last (broker-suspects.ts): a broker that accepts
   * connections and never answers is not asked first again and again.
   */
  async #anyConnection (): Promise<Connection> {
    const { brokers } = await this.#admin.metadata({ topics: [] })
    const ordered = suspectsLast(inPreferredOrder(brokers, this.#bootstrap).map(nodeId => ({ nodeId, ...brokers.get(nodeId)! })))
    let last: unknown
    for (const broker of ordered) {
      try {
        const connection = (await this.#admin.connectToBrokers([broker.nodeId])).values().next().value
        if (connection !== undefined) return connection
      } catch (err) {
        noteOutcome(broker, err)
        last = err
      }
    }
    throw new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `no broker of ${this.#cluster.label} could be reached`, { retriable: true, cause: last })
  }

  /** A connection to broker NODE, named by the cluster's answers (a coordinator). */
  async #brokerConnection (node: number): Promise<Connection> {
    let connection = (await this.#admin.connectToBrokers([node])).get(node)
    if (connection === undefined) {
      // The library keeps the broker list it read first: a broker added or replaced since is read afresh.
      await this.#admin.metadata({ topics: [], forceUpdate: true })
      connection = (await this.#admin.connectToBrokers([node])).get(node)
    }
    if (connection === undefined) throw new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `broker ${node} of ${this.#cluster.label} is not in its metadata`, { retriable: true })
    return connection
  }

  async #call<T> (action: string, fn: () => Promise<T>): Promise<T> {
    const described = `${action} on ${this.#cluster.label}`
    try {
      return await withApiDeadline(fn, this.#apiTimeoutMs, described, this.#cluster)
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, described, this.#cluster)
    }
  }
}

function toProbe (errorCode: number): TopicProbe {
  if (errorCode === 0) return { presence: TopicPresences.EXISTS }
  const error = kafkaErrorName(errorCode)
  if (kafkaErrorInfo(error).kind === KafkaErrorKinds.UNKNOWN_TOPIC) return { presence: TopicPresences.ABSENT, error }
  if (error === 'TOPIC_AUTHORIZATION_FAILED') return { presence: TopicPresences.UNAUTHORIZED, error }
  return { presence: TopicPresences.OTHER_ERROR, error }
}
