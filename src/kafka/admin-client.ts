/**
 * The admin operations kmirror needs, over the Kafka library's Admin client.
 */
import { Admin, AclOperations, AclPermissionTypes, ConfigResourceTypes, ConfigSources, IncrementalAlterConfigOperationTypes, ResourcePatternTypes } from '@platformatic/kafka'
import { fromLibraryAcl, toLibraryAcl, type AclBinding, type AclResourceType } from './acls.ts'
import { GroupAdmin } from './group-admin.ts'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { clientInt } from '../config/client-settings.ts'
import { withApiDeadline } from './api-deadline.ts'
import { toConnectOptions } from './client-options.ts'
import type { ClusterContext } from './connection-hints.ts'
import { withGrant } from './acl-grant.ts'
import { searchErrorTree } from './error-tree.ts'
import { isUnsupportedApi, kafkaErrorInfo, KafkaErrorKinds, kafkaErrorName, kafkaErrorNames, kafkaResponseError, toKmirrorError } from './errors.ts'
import { describePrincipal } from './principal.ts'
import { MetadataApi } from './protocol/metadata.ts'
import { sendRequest } from './protocol/negotiation.ts'

/** The id of a topic on a broker without topic ids (before Kafka 2.8), as the library reports it too. */
const NO_TOPIC_ID = '00000000-0000-0000-0000-000000000000'

export interface TopicDescription {
  readonly name: string
  /** All zeros on brokers without topic ids (before Kafka 2.8). */
  readonly id: string
  readonly partitions: number
}

export const ConfigSourceKinds = {
  TOPIC: 'topic',
  DYNAMIC_BROKER: 'dynamic-broker',
  STATIC_BROKER: 'static-broker',
  DEFAULT: 'default',
  OTHER: 'other'
} as const
export type ConfigSourceKind = (typeof ConfigSourceKinds)[keyof typeof ConfigSourceKinds]

export interface TopicConfigEntry {
  readonly name: string
  readonly value: string | null
  readonly source: ConfigSourceKind
  readonly readOnly: boolean
  readonly sensitive: boolean
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

/** What `readTopicConfigs` got: configs by topic, and the topics whose configs the cluster refused, with the error. */
export interface TopicConfigsRead {
  readonly configs: Map<string, TopicConfigEntry[]>
  readonly refused: Map<string, KmirrorError>
}

export type TopicConfigChange =
  | { readonly op: 'set', readonly name: string, readonly value: string }
  | { readonly op: 'delete', readonly name: string }

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
  readonly #cluster: ClusterContext
  readonly #principal: string
  /** `default.api.timeout.ms`: the bound of each operation, its retries included. */
  readonly #apiTimeoutMs: number
  /** Set once the cluster answered that it has no IncrementalAlterConfigs (before Kafka 2.3). */
  #legacyAlterConfigs = false

  /** Consumer-group operations on the same connection. */
  readonly groups: GroupAdmin

  /** `cluster` names the cluster in messages (`cluster B`) and its alias in the keys of hints (`B.bootstrap.servers`). */
  constructor (props: ClientProps, clientId: string, cluster: ClusterContext) {
    this.#admin = new Admin(toConnectOptions(props, clientId))
    this.#cluster = cluster
    this.#principal = describePrincipal(props, cluster.alias ?? clientId)
    this.#apiTimeoutMs = clientInt(props, 'default.api.timeout.ms')
    this.groups = new GroupAdmin(this.#admin, cluster, this.#apiTimeoutMs, this.#principal)
  }

  async listTopics (): Promise<string[]> {
    return this.#call('list topics', () => this.#admin.listTopics({ includeInternals: false }))
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

  /** Partition counts and ids of the named topics that exist; missing ones are simply absent from the map. */
  async describeTopics (names: readonly string[]): Promise<Map<string, TopicDescription>> {
    if (names.length === 0) return new Map()
    // Metadata for an unknown topic fails the whole request, so ask only for topics that exist.
    const existing = new Set(await this.#call('list topics', () => this.#admin.listTopics({ includeInternals: true })))
    const wanted = names.filter(n => existing.has(n))
    if (wanted.length === 0) return new Map()
    const metadata = await this.#call('describe topics', () => this.#admin.metadata({ topics: wanted, forceUpdate: true }))
    const asked = new Set(wanted)
    const out = new Map<string, TopicDescription>()
    for (const [name, topic] of metadata.topics) {
      if (asked.has(name)) out.set(name, { name, id: topic.id, partitions: topic.partitionsCount })
    }
    return out
  }

  /** The configs of the named topics; rejects when any of them could not be read (`readTopicConfigs` sorts them). */
  async describeTopicConfigs (names: readonly string[]): Promise<Map<string, TopicConfigEntry[]>> {
    const read = await this.readTopicConfigs(names)
    const refusal = read.refused.values().next().value
    if (refusal !== undefined) throw refusal
    return read.configs
  }

  /**
   * The configs of the named topics from one DescribeConfigs request, and apart from them the topics whose configs
   * the cluster refused (one resource's error fails no other): a refused authorization names the DESCRIBE_CONFIGS
   * grant. Rejects only when the request itself failed.
   */
  async readTopicConfigs (names: readonly string[]): Promise<TopicConfigsRead> {
    const read: TopicConfigsRead = { configs: new Map(), refused: new Map() }
    if (names.length === 0) return read
    let results: readonly DescribedConfigs[]
    try {
      results = await this.#admin.describeConfigs({
        resources: names.map(name => ({ resourceType: ConfigResourceTypes.TOPIC, resourceName: name }))
      })
    } catch (err) {
      const partial = describedConfigsOf(err)
      if (partial === undefined) throw toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `describe topic configs on ${this.#cluster.label}`, this.#cluster)
      results = partial
    }
    for (const resource of results) {
      const errorCode = resource.errorCode ?? 0
      if (errorCode === 0) {
        read.configs.set(resource.resourceName, resource.configs.map(toConfigEntry))
        continue
      }
      const name = resource.resourceName
      const refused = kafkaResponseError(errorCode, ErrorCodes.CLUSTER_UNREACHABLE, `describe configs of topic ${name} on ${this.#cluster.label}`, this.#cluster)
      read.refused.set(name, withGrant(refused, `reading the configs of topic ${name} on ${this.#cluster.label}`, { operation: 'DESCRIBE_CONFIGS', resourceType: 'topic', names: [name] }, this.#principal, this.#cluster.alias))
    }
    return read
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
      throw withGrant(refused, `creating topic ${topic.name} on ${this.#cluster.label}`, { operation: 'CREATE', resourceType: 'topic', names: [topic.name] }, this.#principal, this.#cluster.alias)
    }
  }

  /**
   * Creates topics that share partitions, replication factor and configs in ONE request (a controller round
   * trip per topic made 500 topics take 15 s). Any error fails the whole call: callers fall back to
   * `createTopic` per topic, which sorts out topics that already exist or were refused.
   */
  async createTopics (topics: readonly NewTopic[]): Promise<void> {
    const first = topics[0]
    if (first === undefined) return
    await this.#call(`create ${topics.length} topics`, () => this.#admin.createTopics({
      topics: topics.map(t => t.name),
      partitions: first.partitions,
      replicas: first.replicationFactor,
      configs: Object.entries(first.configs).map(([name, value]) => ({ name, value }))
    }))
  }

  async createPartitions (topic: string, count: number): Promise<void> {
    await this.#call(`grow ${topic} to ${count} partitions`, () => this.#admin.createPartitions({ topics: [{ name: topic, count }] }))
  }

  /** Deletes topics; topics that no longer exist are not an error. */
  async deleteTopics (names: readonly string[]): Promise<void> {
    if (names.length === 0) return
    try {
      await this.#admin.deleteTopics({ topics: [...names] })
    } catch (err) {
      if (kafkaErrorNames(err).every(n => n === 'UNKNOWN_TOPIC_OR_PARTITION' || n === 'UNKNOWN_TOPIC_ID') && kafkaErrorNames(err).length > 0) return
      throw toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `delete topics ${names.join(', ')} on ${this.#cluster.label}`, this.#cluster)
    }
  }

  /**
   * Sets and deletes topic configs with IncrementalAlterConfigs (Kafka 2.3+). A cluster without it gets the legacy
   * AlterConfigs, as MirrorMaker 2 3.x did: that request replaces the topic's whole config, so it carries every
   * topic-level config the topic has now with the changes applied, and the end state is the same. Read and write
   * are two requests: a change someone makes to the same topic in between is overwritten.
   */
  async alterTopicConfigs (topic: string, changes: readonly TopicConfigChange[]): Promise<void> {
    if (changes.length === 0) return
    if (!this.#legacyAlterConfigs) {
      try {
        await this.#admin.incrementalAlterConfigs({
          resources: [{
            resourceType: ConfigResourceTypes.TOPIC,
            resourceName: topic,
            configs: changes.map(c => c.op === 'set'
              ? { name: c.name, configOperation: IncrementalAlterConfigOperationTypes.SET, value: c.value }
              : { name: c.name, configOperation: IncrementalAlterConfigOperationTypes.DELETE })
          }]
        })
        return
      } catch (err) {
        if (!isUnsupportedApi(err, 'IncrementalAlterConfigs')) throw toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `alter configs of topic ${topic} on ${this.#cluster.label}`, this.#cluster)
        this.#legacyAlterConfigs = true
      }
    }
    await this.#replaceTopicConfigs(topic, changes)
  }

  async #replaceTopicConfigs (topic: string, changes: readonly TopicConfigChange[]): Promise<void> {
    const current = (await this.describeTopicConfigs([topic])).get(topic)
    // Without the topic's current configs, AlterConfigs would reset every one the changes do not name.
    if (current === undefined) throw new KmirrorError(ErrorCodes.TOPIC_SYNC, `cannot change configs of topic ${topic} on ${this.#cluster.label}: its current configs could not be read, and AlterConfigs (the cluster has no IncrementalAlterConfigs) replaces them all`, { retriable: true })
    const own = current.filter(c => c.source === ConfigSourceKinds.TOPIC)
    const hidden = own.find(c => c.value === null)
    if (hidden !== undefined) {
      throw new KmirrorError(ErrorCodes.TOPIC_SYNC, `cannot change configs of topic ${topic} on ${this.#cluster.label}: it has no IncrementalAlterConfigs (Kafka 2.3+), and AlterConfigs would clear ${hidden.name}, whose value the cluster does not show; set sync.topic.configs.enabled = false for this flow or upgrade the cluster`)
    }
    const full = new Map(own.map(c => [c.name, c.value!]))
    for (const c of changes) {
      if (c.op === 'set') full.set(c.name, c.value)
      else full.delete(c.name)
    }
    await this.#call(`alter configs of topic ${topic} (AlterConfigs: the cluster has no IncrementalAlterConfigs)`, () => this.#admin.alterConfigs({
      resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configs: [...full].map(([name, value]) => ({ name, value })) }]
    }))
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
    await this.#admin.close().catch(() => undefined)
  }

  /**
   * A connection to the first broker of the cluster that takes one. Not the library's connectToBrokers() for all
   * brokers: it fails when any one is down, and a cluster with one broker of three down must still be described.
   */
  async #anyConnection () {
    const { brokers } = await this.#admin.metadata({ topics: [] })
    let last: unknown
    for (const nodeId of brokers.keys()) {
      try {
        const connection = (await this.#admin.connectToBrokers([nodeId])).values().next().value
        if (connection !== undefined) return connection
      } catch (err) {
        last = err
      }
    }
    throw new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `no broker of ${this.#cluster.label} could be reached`, { retriable: true, cause: last })
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

type DescribedConfigs = Awaited<ReturnType<Admin['describeConfigs']>>[number] & { readonly errorCode?: number }

/** The per-topic results of a DescribeConfigs answer that carried errors, from the library's ResponseError. */
function describedConfigsOf (err: unknown): DescribedConfigs[] | undefined {
  return searchErrorTree(err, e => {
    const results = (e as { response?: { results?: unknown } }).response?.results
    return Array.isArray(results) ? results as DescribedConfigs[] : undefined
  })
}

function toConfigEntry (c: DescribedConfigs['configs'][number]): TopicConfigEntry {
  return { name: c.name, value: c.value ?? null, source: sourceKind(c.configSource), readOnly: c.readOnly, sensitive: c.isSensitive }
}

function sourceKind (source: number): ConfigSourceKind {
  switch (source) {
    case ConfigSources.DYNAMIC_TOPIC_CONFIG: return ConfigSourceKinds.TOPIC
    case ConfigSources.DYNAMIC_BROKER_CONFIG:
    case ConfigSources.DYNAMIC_DEFAULT_BROKER_CONFIG: return ConfigSourceKinds.DYNAMIC_BROKER
    case ConfigSources.STATIC_BROKER_CONFIG: return ConfigSourceKinds.STATIC_BROKER
    case ConfigSources.DEFAULT_CONFIG: return ConfigSourceKinds.DEFAULT
    default: return ConfigSourceKinds.OTHER
  }
}
