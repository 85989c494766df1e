/**
 * Typed, frozen FlowConfigs from resolved properties, and `--clusters` selection.
 * Runs only after validation passed, so every value read here parses; defaults come from the schema table.
 */
import { ConfigError, type ConfigProblem } from '../errors.ts'
import { identityRelays } from '../policy/identity-routes.ts'
import { defaultValue } from './schema.ts'
import { ClientRoles, connectorConfig, roleClientProps, workerConfig, type Side } from './resolve.ts'
import { freezeProps, IntegerWidths, parseConfigBoolean, parseJavaBoolean, parseJavaInteger, splitList, type IntegerWidth } from './values.ts'
import {
  ReplicationPolicyClasses,
  type ClusterClientConfig, type FlowConfig, type KmirrorConfig, type ReplicationPolicyClass, type ReplicationPolicyConfig
} from './types.ts'

type Props = Readonly<Record<string, string>>

/** Every ordered pair of distinct aliases, in the order of `clusters`. */
export function buildFlows (raw: Props, clusters: readonly string[]): FlowConfig[] {
  const flows: FlowConfig[] = []
  for (const source of clusters) {
    for (const target of clusters) {
      if (source !== target) flows.push(buildFlow(raw, source, target))
    }
  }
  const identityFlows = flows.filter(f => f.enabled && f.replicationPolicy.className === ReplicationPolicyClasses.IDENTITY)
  const relays = identityRelays(clusters, identityFlows.map(f => ({ source: f.source.alias, target: f.target.alias })))
  return flows.map(f => Object.freeze({ ...f, identityMesh: Object.freeze({ clusters: Object.freeze([...clusters]), relays: Object.freeze(relays.get(f.name) ?? []) }) }))
}

function buildFlow (raw: Props, source: string, target: string): FlowConfig {
  const props = connectorConfig(raw, source, target)
  const worker = workerConfig(raw, source, target)
  const get = (key: string): string => props[key] ?? defaultValue(key, source) ?? ''
  const workerValue = (key: string): string => worker[key] ?? defaultValue(key, source) ?? ''
  return Object.freeze({
    name: `${source}->${target}`,
    source: clientConfig(props, source, 'source'),
    target: clientConfig(props, target, 'target'),
    enabled: isFlowEnabled(raw, props, source, target),
    topics: listOf(get('topics')),
    topicsExclude: listOf(props['topics.exclude'] ?? props['topics.blacklist'] ?? get('topics.exclude')),
    replicationPolicy: policyConfig(get),
    identityMesh: { clusters: [], relays: [] },
    replicationFactor: integer(get('replication.factor'), IntegerWidths.INT),
    configPropertiesExclude: listOf(props['config.properties.exclude'] ?? props['config.properties.blacklist'] ?? get('config.properties.exclude')),
    refreshTopicsEnabled: bool(get('refresh.topics.enabled')),
    refreshTopicsIntervalSeconds: integer(get('refresh.topics.interval.seconds'), IntegerWidths.LONG),
    emitOffsetSyncsEnabled: bool(get('emit.offset-syncs.enabled')),
    offsetSyncsTopicLocation: get('offset-syncs.topic.location') === 'target' ? 'target' : 'source',
    offsetSyncsTopicReplicationFactor: integer(get('offset-syncs.topic.replication.factor'), IntegerWidths.SHORT),
    offsetLagMax: integer(get('offset.lag.max'), IntegerWidths.LONG),
    heartbeatsReplicationEnabled: bool(get('heartbeats.replication.enabled')),
    groups: listOf(get('groups')),
    groupsExclude: listOf(props['groups.exclude'] ?? props['groups.blacklist'] ?? get('groups.exclude')),
    syncTopicConfigsEnabled: bool(get('sync.topic.configs.enabled')),
    syncTopicConfigsIntervalSeconds: integer(get('sync.topic.configs.interval.seconds'), IntegerWidths.LONG),
    // MM2's DefaultConfigPropertyFilter treats anything but "source" as "target".
    useDefaultsFrom: get('use.defaults.from').trim() === 'source' ? 'source' : 'target',
    syncTopicAclsEnabled: bool(get('sync.topic.acls.enabled')),
    syncTopicAclsIntervalSeconds: integer(get('sync.topic.acls.interval.seconds'), IntegerWidths.LONG),
    syncGroupAclsEnabled: bool(get('sync.group.acls.enabled')),
    syncTopicDeletionsEnabled: bool(get('sync.topic.deletions.enabled')),
    emitHeartbeatsEnabled: bool(get('emit.heartbeats.enabled')),
    emitHeartbeatsIntervalSeconds: integer(get('emit.heartbeats.interval.seconds'), IntegerWidths.LONG),
    heartbeatsTopicReplicationFactor: integer(get('heartbeats.topic.replication.factor'), IntegerWidths.SHORT),
    emitCheckpointsEnabled: bool(get('emit.checkpoints.enabled')),
    emitCheckpointsIntervalSeconds: integer(get('emit.checkpoints.interval.seconds'), IntegerWidths.LONG),
    checkpointsTopicReplicationFactor: integer(get('checkpoints.topic.replication.factor'), IntegerWidths.SHORT),
    refreshGroupsEnabled: bool(get('refresh.groups.enabled')),
    refreshGroupsIntervalSeconds: integer(get('refresh.groups.interval.seconds'), IntegerWidths.LONG),
    syncGroupOffsetsEnabled: bool(get('sync.group.offsets.enabled')),
    syncGroupOffsetsIntervalSeconds: integer(get('sync.group.offsets.interval.seconds'), IntegerWidths.LONG),
    adminTimeoutMs: integer(get('admin.timeout.ms'), IntegerWidths.LONG),
    startRetryTimeoutMs: integer(get('start.retry.timeout.ms'), IntegerWidths.LONG),
    healthStallThresholdMs: integer(get('health.stall.threshold.ms'), IntegerWidths.LONG),
    transactionHangThresholdMs: integer(get('health.transaction.hang.threshold.ms'), IntegerWidths.LONG),
    partitionMetrics: bool(get('metrics.partition.level.enabled')),
    groupId: props['group.id'] ?? `kmirror-${source}-${target}`,
    sessionTimeoutMs: integer(get('session.timeout.ms'), IntegerWidths.INT),
    heartbeatIntervalMs: integer(get('heartbeat.interval.ms'), IntegerWidths.INT),
    rebalanceTimeoutMs: integer(get('rebalance.timeout.ms'), IntegerWidths.INT),
    mm2WorkerGroupId: worker['group.id'] ?? `${source}-mm2`,
    offsetStorageTopic: workerValue('offset.storage.topic'),
    offsetStoragePartitions: integer(workerValue('offset.storage.partitions'), IntegerWidths.INT),
    offsetStorageReplicationFactor: integer(workerValue('offset.storage.replication.factor'), IntegerWidths.SHORT),
    // kmirror extension: a top-level value applies when the target's worker config has none.
    offsetFlushIntervalMs: integer(worker['offset.flush.interval.ms'] ?? raw['offset.flush.interval.ms'] ?? workerValue('offset.flush.interval.ms'), IntegerWidths.LONG),
    // MM2 reads it from the target's worker config (`B.exactly.once.source.support`); kmirror also takes it at top level.
    exactlyOnce: (worker['exactly.once.source.support'] ?? raw['exactly.once.source.support'] ?? 'disabled').trim().toLowerCase() === 'enabled',
    properties: freezeProps(props)
  } satisfies FlowConfig)
}

/**
 * Whether MM2 would replicate S->T: its herder must exist and its connector must read `enabled` as true.
 * - The herder exists (`clusterPairs()`) if `Boolean.parseBoolean(S->T.enabled)`, or if heartbeats are on for
 *   the pair (`S->T.emit.heartbeats.enabled`, else top-level `emit.heartbeats.enabled`, else true).
 * - The connector reads the resolved `enabled` through ConfigDef (trimmed; anything but true/false fails it).
 * Worked cases: `S->T.enabled = yes` → false (the connector rejects it). `S->T.enabled = true ` (trailing space)
 * → true while heartbeats are on, since ConfigDef trims. Top-level `enabled = true` → every flow, as in MM2.
 */
function isFlowEnabled (raw: Props, props: Props, source: string, target: string): boolean {
  const prefix = `${source}->${target}.`
  const heartbeatsKey = 'emit.heartbeats.enabled'
  const heartbeats = raw[prefix + heartbeatsKey] ?? raw[heartbeatsKey]
  const herderExists = parseJavaBoolean(raw[`${prefix}enabled`]) || (heartbeats === undefined || parseJavaBoolean(heartbeats))
  return herderExists && parseConfigBoolean(props.enabled ?? 'false') === true
}

function clientConfig (props: Props, alias: string, side: Side): ClusterClientConfig {
  return Object.freeze({
    alias,
    bootstrapServers: Object.freeze(splitList(props[`${side}.cluster.bootstrap.servers`] ?? '')),
    consumer: freezeProps(roleClientProps(props, side, ClientRoles.CONSUMER)),
    producer: freezeProps(roleClientProps(props, side, ClientRoles.PRODUCER)),
    admin: freezeProps(roleClientProps(props, side, ClientRoles.ADMIN))
  })
}

function policyConfig (get: (key: string) => string): ReplicationPolicyConfig {
  return Object.freeze({
    className: normalizePolicyClass(get('replication.policy.class')) ?? ReplicationPolicyClasses.DEFAULT,
    separator: get('replication.policy.separator'),
    internalTopicSeparatorEnabled: bool(get('replication.policy.internal.topic.separator.enabled')),
    sourceClusterAlias: get('source.cluster.alias')
  })
}

/** The two supported policies, by fully qualified or simple class name; undefined for anything else. */
export function normalizePolicyClass (value: string): ReplicationPolicyClass | undefined {
  const name = value.trim()
  for (const className of Object.values(ReplicationPolicyClasses)) {
    if (name === className || name === className.slice(className.lastIndexOf('.') + 1)) return className
  }
  return undefined
}

function listOf (value: string): readonly string[] {
  return Object.freeze(splitList(value))
}

function bool (value: string): boolean {
  return parseConfigBoolean(value) ?? false
}

function integer (value: string, width: IntegerWidth): number {
  return parseJavaInteger(value, width) ?? Number.NaN
}

/**
 * The enabled flows, restricted with `clusters` (MM2's `--clusters`) to the flows whose TARGET is listed,
 * because MM2 runs each flow's herder on its target cluster.
 */
export function selectFlows (config: KmirrorConfig, clusters?: readonly string[]): FlowConfig[] {
  const problems: ConfigProblem[] = []
  for (const alias of clusters ?? []) {
    if (!config.clusters.includes(alias)) {
      problems.push({ message: `--clusters names ${JSON.stringify(alias)}, which is not in clusters = ${config.clusters.join(', ')}: use one of those aliases` })
    }
  }
  const flows = config.flows.filter(flow => flow.enabled && (clusters === undefined || clusters.includes(flow.target.alias)))
  if (problems.length === 0 && flows.length === 0) {
    const hint = clusters === undefined ? '' : ` with a target among --clusters ${clusters.join(' ')}`
    problems.push({ message: `no enabled source->target replication flows${hint} (set e.g. ${exampleFlow(config)}.enabled = true)${unreadableEnabled(config)}` })
  }
  if (problems.length > 0) throw new ConfigError(problems, config.sourceFile)
  return flows
}

/** The `enabled` values that were read as false because they are not true/false (their warnings name key and value). */
function unreadableEnabled (config: KmirrorConfig): string {
  const unread = config.warnings.filter(w => w.key !== undefined && ENABLED_KEY.test(w.key) && w.message.includes('is read as false'))
  return unread.map(w => `; ${w.key ?? ''}: ${w.message}`).join('')
}

const ENABLED_KEY = /^(?:[^.]+->[^.]+\.)?enabled$/

function exampleFlow (config: KmirrorConfig): string {
  const [a = 'A', b = 'B'] = config.clusters
  return `${a}->${b}`
}

/**
 * The pairs MM2 runs a herder for (`MirrorMakerConfig.clusterPairs`), restricted with `clusters` (MM2's
 * `--clusters`) to those whose TARGET is listed: each one's heartbeat connector creates `heartbeats` on the
 * target and, if `emit.heartbeats.enabled`, writes heartbeats there. A herder exists when the flow is enabled,
 * or when heartbeats are on for the pair (`S->T.emit.heartbeats.enabled`, else the top-level key, else true,
 * read with Boolean.parseBoolean), so by default every ordered pair has one, disabled flows included.
 * Unknown `clusters` aliases are reported by `selectFlows`; here they simply match nothing.
 */
export function selectHeartbeatFlows (config: KmirrorConfig, clusters?: readonly string[]): FlowConfig[] {
  return config.flows.filter(flow => {
    // The connector props hold `S->T.emit.heartbeats.enabled`, else the top-level key: what clusterPairs reads.
    const herderExists = flow.enabled || parseJavaBoolean(flow.properties['emit.heartbeats.enabled'] ?? 'true')
    return herderExists && (clusters === undefined || clusters.includes(flow.target.alias))
  })
}
