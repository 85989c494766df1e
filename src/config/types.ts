/**
 * The resolved, validated and frozen configuration that the rest of kmirror consumes.
 * Nothing outside src/config/ reads raw property keys: it gets these types.
 */
import type { SecretValues } from '../redactor.ts'

/** Client properties for one client role, merged exactly as MM2 merges them (mm2-spec §1.1 clusterProps, §1.8). */
export type ClientProps = Readonly<Record<string, string>>

/** How kmirror connects to one cluster in one role of one flow. */
export interface ClusterClientConfig {
  /** The cluster alias as written in `clusters`. */
  readonly alias: string
  /** `bootstrap.servers` of that cluster, split on commas and trimmed: `host:port` entries. */
  readonly bootstrapServers: readonly string[]
  /** Java-client style properties for each role, with the role prefix removed (`max.poll.records`, `security.protocol`, ...). */
  readonly consumer: ClientProps
  readonly producer: ClientProps
  readonly admin: ClientProps
}

export const ReplicationPolicyClasses = {
  DEFAULT: 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy',
  IDENTITY: 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy'
} as const
export type ReplicationPolicyClass = (typeof ReplicationPolicyClasses)[keyof typeof ReplicationPolicyClasses]

export interface ReplicationPolicyConfig {
  readonly className: ReplicationPolicyClass
  /** `replication.policy.separator`, default ".". */
  readonly separator: string
  /** `replication.policy.internal.topic.separator.enabled`, default true. */
  readonly internalTopicSeparatorEnabled: boolean
  /** The flow's source alias: IdentityReplicationPolicy reads `source.cluster.alias`. */
  readonly sourceClusterAlias: string
}

/** One ordered pair `source->target`, with every key resolved as MM2 resolves the MirrorSourceConnector's config. */
export interface FlowConfig {
  /** `A->B` */
  readonly name: string
  readonly source: ClusterClientConfig
  readonly target: ClusterClientConfig
  /** `A->B.enabled`; flows are off unless set to true. */
  readonly enabled: boolean
  /** `topics`, `topics.exclude`: lists of Java regexes, each matched against the whole topic name. */
  readonly topics: readonly string[]
  readonly topicsExclude: readonly string[]
  readonly replicationPolicy: ReplicationPolicyConfig
  /**
   * With IdentityReplicationPolicy: the clusters of the configuration and the origins whose records this flow
   * relays (policy/identity-routes.ts), so each record reaches every cluster of a mesh once.
   */
  readonly identityMesh: { readonly clusters: readonly string[], readonly relays: readonly string[] }
  /** `replication.factor` for remote topics; -1 = the target broker's default. */
  readonly replicationFactor: number
  /** `config.properties.exclude`: Java regexes of topic config names never copied. */
  readonly configPropertiesExclude: readonly string[]
  readonly refreshTopicsEnabled: boolean
  readonly refreshTopicsIntervalSeconds: number
  readonly emitOffsetSyncsEnabled: boolean
  /** `offset-syncs.topic.location`: the cluster holding `mm2-offset-syncs.<target>.internal`. */
  readonly offsetSyncsTopicLocation: 'source' | 'target'
  readonly offsetSyncsTopicReplicationFactor: number
  /** `offset.lag.max`: how far a partition may drift before an offset sync is forced. */
  readonly offsetLagMax: number
  readonly heartbeatsReplicationEnabled: boolean
  /** `groups`, `groups.exclude`: Java regexes of consumer groups (checkpoints, group ACLs, group offset sync). */
  readonly groups: readonly string[]
  readonly groupsExclude: readonly string[]
  /** `sync.topic.configs.*` and `use.defaults.from` (per flow only, as in MM2). */
  readonly syncTopicConfigsEnabled: boolean
  readonly syncTopicConfigsIntervalSeconds: number
  readonly useDefaultsFrom: 'source' | 'target'
  /** `sync.topic.acls.*`, and kmirror's `sync.group.acls.enabled`. */
  readonly syncTopicAclsEnabled: boolean
  readonly syncTopicAclsIntervalSeconds: number
  readonly syncGroupAclsEnabled: boolean
  /** kmirror's `sync.topic.deletions.enabled`: delete remote topics whose source topic was deleted. */
  readonly syncTopicDeletionsEnabled: boolean
  /** `emit.heartbeats.*` and `heartbeats.topic.replication.factor`. */
  readonly emitHeartbeatsEnabled: boolean
  readonly emitHeartbeatsIntervalSeconds: number
  readonly heartbeatsTopicReplicationFactor: number
  /** Checkpoints and group offsets: `emit.checkpoints.*`, `refresh.groups.*`, `sync.group.offsets.*`. */
  readonly emitCheckpointsEnabled: boolean
  readonly emitCheckpointsIntervalSeconds: number
  readonly checkpointsTopicReplicationFactor: number
  readonly refreshGroupsEnabled: boolean
  readonly refreshGroupsIntervalSeconds: number
  readonly syncGroupOffsetsEnabled: boolean
  readonly syncGroupOffsetsIntervalSeconds: number
  /** `admin.timeout.ms`: bound of each admin step. */
  readonly adminTimeoutMs: number
  /** kmirror's `start.retry.timeout.ms`: how long start-up waits out transient faults. */
  readonly startRetryTimeoutMs: number
  /** kmirror's `health.stall.threshold.ms`: no completed round for this long makes `/healthz` 503. */
  readonly healthStallThresholdMs: number
  /** kmirror's `health.transaction.hang.threshold.ms`: a source partition an open transaction holds this long is failing. */
  readonly transactionHangThresholdMs: number
  /** kmirror's `metrics.partition.level.enabled`: export the per-partition lag series. */
  readonly partitionMetrics: boolean
  /** The flow's group on its target cluster (`A->B.group.id`, default `kmirror-<source>-<target>`) and its timeouts. */
  readonly groupId: string
  readonly sessionTimeoutMs: number
  readonly heartbeatIntervalMs: number
  readonly rebalanceTimeoutMs: number
  /**
   * The Connect worker group of MM2's herder for this flow on the target (`B.group.id`, default `<source>-mm2`:
   * MirrorMakerConfig.workerConfig). kmirror never joins it; it looks there for a live MM2 at start.
   */
  readonly mm2WorkerGroupId: string
  /** Connect worker keys of the herder for this flow (taken from the target cluster's properties, as MM2 does). */
  readonly offsetStorageTopic: string
  readonly offsetStoragePartitions: number
  readonly offsetStorageReplicationFactor: number
  readonly offsetFlushIntervalMs: number
  /**
   * `exactly.once.source.support = enabled` for this flow's target (worker key `B.exactly.once.source.support`,
   * else top level): every round is a target transaction. `preparing` and `disabled` are at-least-once.
   */
  readonly exactlyOnce: boolean
  /** Every connector-level property of this flow after MM2's resolution (mm2-spec §1.1 steps 1-7), for later features. */
  readonly properties: Readonly<Record<string, string>>
}

export interface KmirrorConfig {
  /** The file the configuration came from, for messages. */
  readonly sourceFile: string
  readonly clusters: readonly string[]
  /** Every ordered pair of distinct clusters, enabled or not, in the order of `clusters`. */
  readonly flows: readonly FlowConfig[]
  /** Non-fatal findings: unknown keys (with a did-you-mean), keys kmirror reads but ignores, and so on. */
  readonly warnings: readonly { key?: string, message: string }[]
  /**
   * Every secret value of the file (passwords, JAAS secrets, values from config providers; src/config/secrets.ts),
   * for the Redactor: whatever prints text hides these. Never print them.
   */
  readonly secrets: SecretValues
  /** Where values came from `${provider:[path:]key}` references, so that output can show those instead. */
  readonly references: ConfigReferences
}

export interface ConfigReferences {
  /** The keys as written whose value holds references, with the value as written. */
  readonly keys: ReadonlyMap<string, string>
  /**
   * `flows` resolved from the values as written (references left in): a flow setting or client property that
   * differs from its counterpart in `flows` came from a reference. The same objects as `flows` when there is none.
   */
  readonly flows: readonly FlowConfig[]
}
