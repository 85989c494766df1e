/**
 * Topic configs over the Kafka library's Admin client: read (DescribeConfigs, one refused topic failing no other)
 * and changed (IncrementalAlterConfigs, or the whole-config AlterConfigs of clusters before Kafka 2.3).
 * `AdminClient` (admin-client.ts) holds one for its connection.
 */
import { ConfigResourceTypes, ConfigSources, IncrementalAlterConfigOperationTypes, type Admin } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { withGrant } from './acl-grant.ts'
import type { ClusterContext } from './connection-hints.ts'
import { searchErrorTree } from './error-tree.ts'
import { isUnsupportedApi, kafkaResponseError, toKmirrorError } from './errors.ts'

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

/** What `read` got: configs by topic, and the topics whose configs the cluster refused, with the error. */
export interface TopicConfigsRead {
  readonly configs: Map<string, TopicConfigEntry[]>
  readonly refused: Map<string, KmirrorError>
}

export type TopicConfigChange =
  | { readonly op: 'set', readonly name: string, readonly value: string }
  | { readonly op: 'delete', readonly name: string }

/** Runs one admin operation within `default.api.timeout.ms`, its failure as a KmirrorError naming the cluster. */
export type AdminCall = <T>(action: string, fn: () => Promise<T>) => Promise<T>

export class TopicConfigAdmin {
  readonly #admin: Admin
  readonly #cluster: ClusterContext
  readonly #principal: string
  readonly #call: AdminCall
  /** Set once the cluster answered that it has no IncrementalAlterConfigs (before Kafka 2.3). */
  #legacyAlterConfigs = false

  constructor (admin: Admin, cluster: ClusterContext, principal: string, call: AdminCall) {
    this.#admin = admin
    this.#cluster = cluster
    this.#principal = principal
    this.#call = call
  }

  /** The configs of the named topics; rejects when any of them could not be read (`read` sorts them). */
  async describe (names: readonly string[]): Promise<Map<string, TopicConfigEntry[]>> {
    const read = await this.read(names)
    const refusal = read.refused.values().next().value
    if (refusal !== undefined) throw refusal
    return read.configs
  }

  /**
   * The configs of the named topics from one DescribeConfigs request, and apart from them the topics whose configs
   * the cluster refused (one resource's error fails no other): a refused authorization names the DESCRIBE_CONFIGS
   * grant. Rejects only when the request itself failed.
   */
  async read (names: readonly string[]): Promise<TopicConfigsRead> {
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
      read.refused.set(name, withGrant(refused, `reading the configs of topic ${name} on ${this.#cluster.label}`, { operation: 'DESCRIBE_CONFIGS', resourceType: 'topic', names: [name] }, this.#principal, this.#cluster))
    }
    return read
  }

  /**
   * Sets and deletes topic configs with IncrementalAlterConfigs (Kafka 2.3+). A cluster without it gets the legacy
   * AlterConfigs, as MirrorMaker 2 3.x did: that request replaces the topic's whole config, so it carries every
   * topic-level config the topic has now with the changes applied, and the end state is the same. Read and write
   * are two requests: a change someone makes to the same topic in between is overwritten.
   */
  async alter (topic: string, changes: readonly TopicConfigChange[]): Promise<void> {
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
        if (!isUnsupportedApi(err, 'IncrementalAlterConfigs')) throw this.#alterRefused(err, topic)
        this.#legacyAlterConfigs = true
      }
    }
    await this.#replace(topic, changes)
  }

  /** A failed config change as a KmirrorError; refused, it names the ALTER_CONFIGS grant both alter requests need. */
  #alterRefused (err: unknown, topic: string): KmirrorError {
    const failed = toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `alter configs of topic ${topic} on ${this.#cluster.label}`, this.#cluster)
    return withGrant(failed, `changing the configs of topic ${topic} on ${this.#cluster.label}`, { operation: 'ALTER_CONFIGS', resourceType: 'topic', names: [topic] }, this.#principal, this.#cluster)
  }

  async #replace (topic: string, changes: readonly TopicConfigChange[]): Promise<void> {
    const current = (await this.describe([topic])).get(topic)
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
    try {
      await this.#call(`alter configs of topic ${topic} (AlterConfigs: the cluster has no IncrementalAlterConfigs)`, () => this.#admin.alterConfigs({
        resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic, configs: [...full].map(([name, value]) => ({ name, value })) }]
      }))
    } catch (err) {
      throw this.#alterRefused(err, topic)
    }
  }
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
