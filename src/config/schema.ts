/**
 * Every key kmirror knows, in one table: its type, MM2's default, where it may be written, and what it means.
 * Validation, resolution defaults, warnings and the generated docs/config.md all read this table.
 * Source of truth for names and defaults: mm2-spec §1.2–1.8 (Apache Kafka 4.0 trunk).
 */

export const KeyTypes = {
  BOOLEAN: 'boolean',
  SHORT: 'short',
  INT: 'int',
  LONG: 'long',
  DOUBLE: 'double',
  STRING: 'string',
  PASSWORD: 'password',
  LIST: 'list',
  CLASS: 'class',
  ENUM: 'enum'
} as const
export type KeyType = (typeof KeyTypes)[keyof typeof KeyTypes]

/** Where a key is written in mm2.properties. */
export const Scopes = {
  /** Only at top level: `clusters = A, B`. */
  TOP_LEVEL: 'top-level',
  /** A connector setting: top level (default for every flow) or per flow as `A->B.<key>`. */
  CONNECTOR: 'connector',
  /** A Connect worker setting of the flows whose target is A: `A.<key>` (some also at top level). */
  WORKER: 'worker',
  /** How to reach a cluster: `A.<key>`, or top level as the default for every cluster. */
  CLUSTER: 'cluster',
  /** A Java client setting of one client role: `A.consumer.<key>`, `A.producer.<key>`, `A.admin.<key>` (see `roles`). */
  CLIENT_ROLE: 'client-role'
} as const
export type Scope = (typeof Scopes)[keyof typeof Scopes]

export const Origins = {
  MM2: 'mm2',
  CONNECT: 'connect',
  CLIENT: 'kafka-client',
  KMIRROR: 'kmirror'
} as const
export type Origin = (typeof Origins)[keyof typeof Origins]

export interface KeySpec {
  readonly name: string
  readonly type: KeyType
  /** kmirror's default, written as a user would write the value; null when there is none. */
  readonly default: string | null
  /** MM2's (or Connect's) default, only where kmirror's differs. */
  readonly mm2Default?: string
  readonly scope: Scope
  readonly origin: Origin
  readonly doc: string
  /** ENUM: the accepted values. */
  readonly values?: readonly string[]
  readonly caseInsensitive?: boolean
  /** ENUM read leniently by MM2 (a plain string): any other value means this one, so it only warns. */
  readonly otherValuesMean?: string
  /** Smallest accepted number, apart from -1 when `minusOneMeans` is set. */
  readonly min?: number
  /** Largest accepted number (Java's `ConfigDef.Range.between`). */
  readonly max?: number
  readonly minusOneMeans?: string
  /** LIST of Java regexes (validated by compiling them). */
  readonly regexList?: boolean
  /** A connector key that is not in MM2's ConfigDefs: MM2 drops it at top level, so it only works per flow. */
  readonly perFlowOnly?: boolean
  /** Accepted for compatibility but not used by kmirror; the text says why. Setting it gives a warning. */
  readonly ignored?: string
  /** The key was renamed; MM2 3.x still honours the old name, 4.0 does not. */
  readonly renamedTo?: string
  /** kmirror also reads this worker key at top level (MM2 does not). */
  readonly topLevelExtension?: boolean
  /** CLIENT_ROLE keys: the client roles that read it. */
  readonly roles?: readonly ClientRoleName[]
}

export type ClientRoleName = 'consumer' | 'producer' | 'admin'

/** The SASL mechanisms kmirror speaks (`sasl.mechanism`). */
export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const
/** The key and trust store types kmirror reads (`ssl.keystore.type`, `ssl.truststore.type`). */
export const STORE_TYPES = ['JKS', 'PKCS12', 'PEM'] as const

const { BOOLEAN, SHORT, INT, LONG, DOUBLE, STRING, PASSWORD, LIST, CLASS, ENUM } = KeyTypes
const { TOP_LEVEL, CONNECTOR, WORKER, CLUSTER, CLIENT_ROLE } = Scopes
const { MM2, CONNECT, CLIENT, KMIRROR } = Origins
const MIRROR = 'org.apache.kafka.connect.mirror.'
const NO_REST = 'kmirror has no Connect REST server'
const NO_PLUGINS = 'kmirror cannot load Java plugin classes; the built-in behaviour applies'
const NO_CONNECT = 'kmirror does not run Kafka Connect'

export const KEYS: readonly KeySpec[] = [
  // MirrorMakerConfig (§1.2)
  { name: 'clusters', type: LIST, default: null, scope: TOP_LEVEL, origin: MM2, doc: 'Required. The cluster aliases, e.g. `A, B`. Aliases are case-sensitive.' },
  { name: 'dedicated.mode.enable.internal.rest', type: BOOLEAN, default: 'false', scope: TOP_LEVEL, origin: MM2, doc: 'Starts MM2\'s internal REST server (KIP-710).', ignored: NO_REST },
  { name: 'config.providers', type: LIST, default: '', scope: TOP_LEVEL, origin: MM2, doc: 'Names of the config providers that resolve `${provider:[path:]key}` references in every other value, each declared with `config.providers.<name>.class` (FileConfigProvider, DirectoryConfigProvider or EnvVarConfigProvider) and `config.providers.<name>.param.<param>`. Top level only. See docs/operations.md, "Secrets and config providers".' },
  { name: 'listeners', type: LIST, default: 'http://:8083', scope: TOP_LEVEL, origin: MM2, doc: 'Internal REST listeners.', ignored: NO_REST },
  { name: 'rest.advertised.host.name', type: STRING, default: null, scope: TOP_LEVEL, origin: MM2, doc: 'Advertised internal REST host.', ignored: NO_REST },
  { name: 'rest.advertised.port', type: INT, default: null, scope: TOP_LEVEL, origin: MM2, doc: 'Advertised internal REST port.', ignored: NO_REST },
  { name: 'access.control.allow.origin', type: STRING, default: '', scope: TOP_LEVEL, origin: MM2, doc: 'CORS origin of the internal REST server.', ignored: NO_REST },
  { name: 'access.control.allow.methods', type: STRING, default: '', scope: TOP_LEVEL, origin: MM2, doc: 'CORS methods of the internal REST server.', ignored: NO_REST },
  { name: 'response.http.headers.config', type: STRING, default: '', scope: TOP_LEVEL, origin: MM2, doc: 'Response headers of the internal REST server.', ignored: NO_REST },
  { name: 'rest.advertised.listener', type: STRING, default: null, scope: TOP_LEVEL, origin: MM2, doc: 'Advertised internal REST listener.', ignored: NO_REST },

  // MirrorConnectorConfig: common to the three connectors (§1.3)
  { name: 'enabled', type: BOOLEAN, default: 'false', scope: CONNECTOR, origin: MM2, doc: 'Whether the flow replicates (the MM2 driver injects false unless set per flow). Write it per flow: `A->B.enabled = true`. Read with `Boolean.parseBoolean`: anything but `true` is false.' },
  { name: 'source.cluster.alias', type: STRING, default: null, scope: CONNECTOR, origin: MM2, doc: 'Alias of the source cluster; set per flow by MM2 (and kmirror) to the `A` of `A->B`.' },
  { name: 'target.cluster.alias', type: STRING, default: 'target', scope: CONNECTOR, origin: MM2, doc: 'Alias of the target cluster; set per flow to the `B` of `A->B`.' },
  { name: 'admin.timeout.ms', type: LONG, default: '60000', scope: CONNECTOR, origin: MM2, doc: 'MM2: timeout of its admin operations. kmirror: bounds the topic listing of `topology`; each admin request of a flow is bounded by `<alias>.admin.default.api.timeout.ms`.' },
  { name: 'replication.policy.class', type: CLASS, default: `${MIRROR}DefaultReplicationPolicy`, scope: CONNECTOR, origin: MM2, doc: 'How remote topics are named: `DefaultReplicationPolicy` (`A.topic`) or `IdentityReplicationPolicy` (same name). Custom classes are not supported.' },
  { name: 'replication.policy.separator', type: STRING, default: '.', scope: CONNECTOR, origin: MM2, doc: 'Separator between the source alias and the topic name in remote topic names.' },
  { name: 'replication.policy.internal.topic.separator.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Whether a custom separator is also used in checkpoint and offset-sync topic names (false keeps pre-3.1 names).' },
  { name: 'forwarding.admin.class', type: CLASS, default: 'org.apache.kafka.clients.admin.ForwardingAdmin', scope: CONNECTOR, origin: MM2, doc: 'Custom Admin used for all MM2 admin work (KIP-787).', ignored: NO_PLUGINS },
  { name: 'metric.reporters', type: LIST, default: 'org.apache.kafka.common.metrics.JmxReporter', scope: CONNECTOR, origin: MM2, doc: 'Reporters of MM2\'s metrics.', ignored: 'kmirror serves Prometheus metrics instead of JMX' },

  // Connect ConnectorConfig keys, in MM2's ConfigDefs (kept at top level)
  { name: 'name', type: STRING, default: null, scope: CONNECTOR, origin: CONNECT, doc: 'Connector name (MM2 uses the class\'s simple name).', ignored: NO_CONNECT },
  { name: 'connector.class', type: CLASS, default: null, scope: CONNECTOR, origin: CONNECT, doc: 'Connector class.', ignored: NO_CONNECT },
  { name: 'tasks.max', type: INT, default: '1', scope: CONNECTOR, origin: CONNECT, doc: 'Connect tasks per connector.', ignored: 'kmirror copies every partition of a flow in one process; there are no tasks to spread' },
  { name: 'key.converter', type: CLASS, default: 'org.apache.kafka.connect.converters.ByteArrayConverter', scope: CONNECTOR, origin: CONNECT, doc: 'Record key converter.', ignored: 'kmirror copies record bytes unchanged' },
  { name: 'value.converter', type: CLASS, default: 'org.apache.kafka.connect.converters.ByteArrayConverter', scope: CONNECTOR, origin: CONNECT, doc: 'Record value converter.', ignored: 'kmirror copies record bytes unchanged' },
  { name: 'header.converter', type: CLASS, default: 'org.apache.kafka.connect.converters.ByteArrayConverter', scope: CONNECTOR, origin: CONNECT, doc: 'Record header converter.', ignored: 'kmirror copies record bytes unchanged' },
  { name: 'transforms', type: LIST, default: '', scope: CONNECTOR, origin: CONNECT, doc: 'Single message transforms.', ignored: 'transforms are not supported: records are copied unchanged' },
  { name: 'predicates', type: LIST, default: '', scope: CONNECTOR, origin: CONNECT, doc: 'Predicates of transforms.', ignored: 'transforms are not supported' },
  { name: 'config.action.reload', type: ENUM, default: 'restart', values: ['none', 'restart'], caseInsensitive: true, scope: CONNECTOR, origin: CONNECT, doc: 'What Connect does when a config provider value changes.', ignored: NO_CONNECT },
  { name: 'errors.retry.timeout', type: LONG, default: '0', scope: CONNECTOR, origin: CONNECT, doc: 'Connect error-handling retry budget.', ignored: 'kmirror retries failed operations with its own back-off' },
  { name: 'errors.retry.delay.max.ms', type: LONG, default: '60000', scope: CONNECTOR, origin: CONNECT, doc: 'Connect error-handling retry delay.', ignored: 'kmirror retries failed operations with its own back-off' },
  { name: 'errors.tolerance', type: ENUM, default: 'none', values: ['none', 'all'], caseInsensitive: true, scope: CONNECTOR, origin: CONNECT, doc: 'Whether Connect skips records that fail conversion.', ignored: 'kmirror never converts records, so there is nothing to tolerate' },
  { name: 'errors.log.enable', type: BOOLEAN, default: 'false', scope: CONNECTOR, origin: CONNECT, doc: 'Log tolerated Connect errors.', ignored: NO_CONNECT },
  { name: 'errors.log.include.messages', type: BOOLEAN, default: 'false', scope: CONNECTOR, origin: CONNECT, doc: 'Include records in those logs.', ignored: NO_CONNECT },
  // Source-connector keys that are not in MM2's ConfigDefs: per flow only
  { name: 'exactly.once.support', type: ENUM, default: 'requested', values: ['requested', 'required'], caseInsensitive: true, perFlowOnly: true, scope: CONNECTOR, origin: CONNECT, doc: 'Connect exactly-once source support (KIP-618).', ignored: NO_CONNECT },
  { name: 'transaction.boundary', type: ENUM, default: 'poll', values: ['poll', 'interval', 'connector'], caseInsensitive: true, perFlowOnly: true, scope: CONNECTOR, origin: CONNECT, doc: 'Connect exactly-once transaction boundary.', ignored: NO_CONNECT },
  { name: 'transaction.boundary.interval.ms', type: LONG, default: null, perFlowOnly: true, scope: CONNECTOR, origin: CONNECT, doc: 'Transaction length when the boundary is `interval`.', ignored: NO_CONNECT },
  { name: 'offsets.storage.topic', type: STRING, default: null, perFlowOnly: true, scope: CONNECTOR, origin: CONNECT, doc: 'A connector-specific Connect offsets topic.', ignored: 'kmirror keeps progress in the worker\'s `offset.storage.topic`' },
  { name: 'topic.creation.groups', type: LIST, default: '', perFlowOnly: true, scope: CONNECTOR, origin: CONNECT, doc: 'Connect topic-creation groups.', ignored: 'remote topics are created as MM2 creates them' },

  // MirrorSourceConfig (§1.4)
  { name: 'topics', type: LIST, default: '.*', regexList: true, scope: CONNECTOR, origin: MM2, doc: 'Topics to replicate: Java regexes, each matched against the whole name.' },
  { name: 'topics.exclude', type: LIST, default: '.*[\\-\\.]internal, .*\\.replica, __.*', regexList: true, scope: CONNECTOR, origin: MM2, doc: 'Topics never replicated; wins over `topics`.' },
  { name: 'topics.blacklist', type: LIST, default: null, regexList: true, renamedTo: 'topics.exclude', scope: CONNECTOR, origin: MM2, doc: 'Old name of `topics.exclude` (removed in MM2 4.0); used only when `topics.exclude` is not set.' },
  { name: 'config.properties.exclude', type: LIST, default: 'follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas, message\\.timestamp\\.before\\.max\\.ms, message\\.timestamp\\.after\\.max\\.ms', regexList: true, scope: CONNECTOR, origin: MM2, doc: 'Topic config names never copied to remote topics (Java regexes). kmirror\'s default is MM2\'s plus `message\\.timestamp\\.before\\.max\\.ms` and `message\\.timestamp\\.after\\.max\\.ms`, the Kafka 3.6 successors (KIP-937) of `message.timestamp.difference.max.ms`, which MM2 excludes for the same reason: copied records keep their source timestamps, and a remote topic with them set would refuse a backfill or a lag past their bound (INVALID_TIMESTAMP). Keep `min\\.insync\\.replicas` in a custom list: Kafka reports a cluster-level value as a dynamic broker config, which would be copied as a topic override.' },
  { name: 'config.properties.blacklist', type: LIST, default: null, regexList: true, renamedTo: 'config.properties.exclude', scope: CONNECTOR, origin: MM2, doc: 'Old name of `config.properties.exclude` (removed in MM2 4.0).' },
  { name: 'use.defaults.from', type: ENUM, default: 'target', values: ['source', 'target'], otherValuesMean: 'target', perFlowOnly: true, scope: CONNECTOR, origin: MM2, doc: 'Topic configs that are defaults on the source: `target` leaves the target\'s default, `source` copies the value, when a remote topic is created and at config sync (KIP-894).' },
  { name: 'topic.filter.class', type: CLASS, default: `${MIRROR}DefaultTopicFilter`, scope: CONNECTOR, origin: MM2, doc: 'Topic filter plugin.', ignored: NO_PLUGINS },
  { name: 'config.property.filter.class', type: CLASS, default: `${MIRROR}DefaultConfigPropertyFilter`, scope: CONNECTOR, origin: MM2, doc: 'Topic-config filter plugin.', ignored: NO_PLUGINS },
  { name: 'consumer.poll.timeout.ms', type: LONG, default: '1000', scope: CONNECTOR, origin: MM2, doc: 'Poll timeout of the replication consumer.', ignored: 'kmirror has no poll loop: a fetch round waits at most <alias>.consumer.fetch.max.wait.ms for records' },
  { name: 'refresh.topics.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Periodically look for new or deleted topics and partitions.' },
  { name: 'refresh.topics.interval.seconds', type: LONG, default: '5', mm2Default: '600', scope: CONNECTOR, origin: MM2, doc: 'How often to look for new, grown and deleted source topics. kmirror defaults to 5 s (MM2: 600 s): a refresh is one metadata request per cluster, and topic configs are read only for topics being created. As in MM2 (3.9.1 and 4.1.1): a negative value turns the job off; 0 is refused, as the MM2 scheduler refuses a period of 0 and MirrorSourceConnector fails to start (with the job off, the value is not read).' },
  { name: 'sync.topic.configs.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Periodically copy topic configs to remote topics.' },
  { name: 'sync.topic.configs.interval.seconds', type: LONG, default: '30', mm2Default: '600', scope: CONNECTOR, origin: MM2, doc: 'Period of the topic config sync. kmirror defaults to 30 s (MM2: 600 s) so drift is put back quickly. As in MM2 (3.9.1 and 4.1.1): a negative value turns the job off; 0 is refused, as the MM2 scheduler refuses a period of 0 and MirrorSourceConnector fails to start (with the job off, the value is not read).' },
  { name: 'sync.topic.acls.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Periodic ACL sync: topic ACLs of replicated topics (literal and, unlike MM2, prefixed, renamed like topics) become read-only grants on the remote topics; with `sync.group.acls.enabled`, group READ/DESCRIBE ACLs too. WRITE is never granted.' },
  { name: 'sync.topic.acls.interval.seconds', type: LONG, default: '30', mm2Default: '600', scope: CONNECTOR, origin: MM2, doc: 'Period of the ACL sync. kmirror defaults to 30 s (MM2: 600 s) so drift is put back quickly. As in MM2 (3.9.1 and 4.1.1): a negative value turns the job off; 0 is refused, as the MM2 scheduler refuses a period of 0 and MirrorSourceConnector fails to start (with the job off, the value is not read).' },
  { name: 'replication.factor', type: INT, default: '2', min: 1, minusOneMeans: 'the target broker\'s default', scope: CONNECTOR, origin: MM2, doc: 'Replication factor of new remote topics; -1 = the target broker\'s default.' },
  { name: 'offset-syncs.topic.replication.factor', type: SHORT, default: '3', min: 1, minusOneMeans: 'the broker\'s default', scope: CONNECTOR, origin: MM2, doc: 'Replication factor of `mm2-offset-syncs.<target>.internal`.' },
  { name: 'offset-syncs.topic.location', type: ENUM, default: 'source', values: ['source', 'target'], scope: CONNECTOR, origin: MM2, doc: 'Cluster that holds the offset-syncs topic (KIP-716).' },
  { name: 'offset.lag.max', type: LONG, default: '100', scope: CONNECTOR, origin: MM2, doc: 'How far a remote partition may drift before an offset sync is forced.' },
  { name: 'emit.offset-syncs.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Write offset syncs (KIP-1031). false: MM2 then runs no checkpoints; kmirror checkpoints from its own offset history all the same, and warns.' },
  { name: 'heartbeats.replication.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Replicate heartbeats topics even when `topics` does not select them (KIP-1089).' },
  { name: 'sync.group.acls.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: KMIRROR, doc: 'kmirror: also copy the READ and DESCRIBE ACLs of consumer groups that pass `groups` / `groups.exclude`, so consumers can fail over. MM2 copies topic ACLs only.' },
  { name: 'sync.topic.deletions.enabled', type: BOOLEAN, default: 'false', scope: CONNECTOR, origin: KMIRROR, doc: 'kmirror: delete the remote topic when its source topic is deleted. Off by default: a deletion is only logged and counted, as MM2 never deletes remote topics. Never for a deletion proven while most replicated topics were absent at once (another cluster reached looks the same): those remote topics are kept, with an error line saying how to delete them by hand.' },
  { name: 'start.retry.timeout.ms', type: LONG, default: '600000', min: 0, scope: CONNECTOR, origin: KMIRROR, doc: 'kmirror: how long `kmirror run` keeps starting a flow again after a transient fault (connection refused or closed, a broker not answering in time, a coordinator loading, a leader moving), with back-off from 500 ms doubling to 15 s, logging each wait (cluster, brokers, cause, attempt, next delay). After this it exits with code 3. Faults waiting cannot fix (authentication, authorization, configuration, an incompatible broker) exit at once. 0 = never wait. (MM2 keeps retrying its tasks indefinitely.)' },
  { name: 'health.stall.threshold.ms', type: LONG, default: '120000', min: 1000, scope: CONNECTOR, origin: KMIRROR, doc: 'kmirror: `/healthz` answers 503 (stalled) once a flow has completed no fetch-and-write round for this long: a broker that does not answer, a frozen cluster, a flow still waiting to start; or once a flow\'s group lease has not held for this long (evicted and unable to join its group again, its coordinator unavailable), whatever its rounds. An idle flow (nothing to copy) completes rounds and stays healthy. A remote partition the target takes no records of for this long (offline, no leader), or a source partition the source gives nothing of for this long though it refuses nothing (no leader, its leader out of reach), is reported failing: a warning, `/status`, `kmirror_failing_partitions`, /healthz 503 `degraded`. Keep it above `request.timeout.ms`.' },
  { name: 'health.transaction.hang.threshold.ms', type: LONG, default: '900000', min: 1000, scope: CONNECTOR, origin: KMIRROR, doc: 'kmirror: a source partition that a transaction still open on the source has held this long is reported failing (a warning naming the transaction\'s first offset and the `kafka-transactions.sh` lines to find and abort it, `/status`, `kmirror_failing_partitions`, /healthz 503 `degraded`). kmirror reads read_committed, so it copies nothing past an open transaction\'s first record until it commits or aborts; the lag shows that meanwhile. Kafka aborts a transaction past its `transaction.timeout.ms`, at most the brokers\' `transaction.max.timeout.ms` (900000 by default): one held longer hangs. Set it to the source brokers\' `transaction.max.timeout.ms`, or lower to hear of long transactions sooner.' },
  { name: 'metrics.partition.level.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: KMIRROR, doc: 'kmirror: export the lag of each source partition this instance copies (`kmirror_partition_lag_seconds` and `kmirror_partition_lag_records`, labels flow, topic, partition: two series per partition, 10,000 for 5,000 partitions) besides the per-topic series. Set false for flows with very many partitions to keep `/metrics` small; the per-topic lag and `/status` stay. Like MM2\'s per-partition MirrorSourceMetrics.' },
  { name: 'use.incremental.alter.configs', type: ENUM, default: 'requested', values: ['requested', 'required', 'never'], caseInsensitive: true, scope: CONNECTOR, origin: MM2, doc: 'Removed in MM2 4.0.', ignored: 'removed in MM2 4.0; kmirror always uses IncrementalAlterConfigs' },
  { name: 'add.source.alias.to.metrics', type: BOOLEAN, default: 'false', scope: CONNECTOR, origin: MM2, doc: 'Removed in MM2 4.0.', ignored: 'removed in MM2 4.0; kmirror always labels metrics with the flow' },

  // MirrorCheckpointConfig (§1.5)
  { name: 'groups', type: LIST, default: '.*', regexList: true, scope: CONNECTOR, origin: MM2, doc: 'Consumer groups to checkpoint (Java regexes). Only consumer groups are listed (classic and KIP-848), as MM2 does: groups of another protocol (Connect workers, kmirror instances) are never checkpointed or synced.' },
  { name: 'groups.exclude', type: LIST, default: 'console-consumer-.*, connect-.*, __.*', regexList: true, scope: CONNECTOR, origin: MM2, doc: 'Groups never checkpointed; wins over `groups`.' },
  { name: 'groups.blacklist', type: LIST, default: null, regexList: true, renamedTo: 'groups.exclude', scope: CONNECTOR, origin: MM2, doc: 'Old name of `groups.exclude` (removed in MM2 4.0).' },
  { name: 'group.filter.class', type: CLASS, default: `${MIRROR}DefaultGroupFilter`, scope: CONNECTOR, origin: MM2, doc: 'Group filter plugin.', ignored: NO_PLUGINS },
  { name: 'refresh.groups.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Periodically look for new or removed groups.' },
  { name: 'refresh.groups.interval.seconds', type: LONG, default: '600', scope: CONNECTOR, origin: MM2, doc: 'Period of that refresh. As in MM2 (3.9.1 and 4.1.1): a negative value turns the refresh off; 0 is refused, as the MM2 scheduler refuses a period of 0 and MirrorCheckpointConnector fails to start (with refresh.groups.enabled = false, the value is not read). kmirror lists the groups on every checkpoint pass.' },
  { name: 'emit.checkpoints.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Write checkpoints to `<source>.checkpoints.internal` on the target. Off, MM2 starts no checkpoint task and so syncs no group offsets either (sync.group.offsets.enabled = true notwithstanding); kmirror syncs them all the same and warns.' },
  { name: 'emit.checkpoints.interval.seconds', type: LONG, default: '60', scope: CONNECTOR, origin: MM2, doc: 'Checkpoint period. As in MM2 (3.9.1 and 4.1.1): a negative value turns checkpoints off (MirrorCheckpointConnector starts no task). 0 makes MM2 checkpoint without any pause; kmirror then checkpoints every second and warns (in both, only a changed checkpoint is written).' },
  { name: 'sync.group.offsets.enabled', type: BOOLEAN, default: 'false', scope: CONNECTOR, origin: MM2, doc: 'Commit translated offsets to target groups that have no active members (KIP-545), never moving one backwards; a group whose commits a transaction holds open on the target (an application committing for it) is left alone as active.' },
  { name: 'sync.group.offsets.interval.seconds', type: LONG, default: '60', scope: CONNECTOR, origin: MM2, doc: 'Period of the group-offset sync. As in MM2 (3.9.1 and 4.1.1): a negative value turns the sync off, and so does 0 (the MM2 checkpoint task cannot schedule a period of 0: it logs an ERROR and runs on without the sync; kmirror warns).' },
  { name: 'checkpoints.topic.replication.factor', type: SHORT, default: '3', min: 1, minusOneMeans: 'the broker\'s default', scope: CONNECTOR, origin: MM2, doc: 'Replication factor of the checkpoints topic.' },

  // MirrorHeartbeatConfig (§1.6)
  { name: 'emit.heartbeats.enabled', type: BOOLEAN, default: 'true', scope: CONNECTOR, origin: MM2, doc: 'Write heartbeats to the target\'s `heartbeats` topic.' },
  { name: 'emit.heartbeats.interval.seconds', type: LONG, default: '1', scope: CONNECTOR, origin: MM2, doc: 'Heartbeat period. As in MM2 (3.9.1 and 4.1.1): a negative value turns emission off (MirrorHeartbeatConnector starts no task); 0 makes MM2 emit without any pause, kmirror one heartbeat per 100 ms (with a warning).' },
  { name: 'heartbeats.topic.replication.factor', type: SHORT, default: '3', min: 1, minusOneMeans: 'the broker\'s default', scope: CONNECTOR, origin: MM2, doc: 'Replication factor of the `heartbeats` topic.' },

  // Group membership of several kmirror instances (one group per flow on its target cluster; Connect's key names)
  { name: 'group.id', type: STRING, default: 'kmirror-<source>-<target>', mm2Default: '<source>-mm2', scope: CONNECTOR, perFlowOnly: true, origin: KMIRROR, doc: 'kmirror: the group on the target cluster through which the kmirror instances running flow `A->B` share its work (one group per flow, protocol type `kmirror`). Per flow only: `A->B.group.id`. MM2 reads `group.id` only as its Connect worker group (`B.group.id`, default `<source>-mm2`), which kmirror does not read, and ignores `A->B.group.id`: so an mm2.properties written for MM2 never puts kmirror into MM2\'s worker group. kmirror only describes that group at each flow\'s start, and waits (KMIRROR_ERR_MM2_RUNNING) while a live MM2 worker runs the flow\'s MirrorSourceConnector tasks. A group id used by another program fails with KMIRROR_ERR_GROUP_CONFLICT.' },
  { name: 'session.timeout.ms', type: INT, default: '10000', min: 1, scope: CONNECTOR, origin: CONNECT, doc: 'kmirror: how long the group waits for an instance that stopped heartbeating (killed, frozen, cut off) before its work goes to the others; that instance stops writing `heartbeat.interval.ms` before. Connect\'s key and default (MM2 reads it as `B.session.timeout.ms`, for its workers); kmirror reads it at top level and per flow. The target\'s brokers accept it only between their `group.min.session.timeout.ms` and `group.max.session.timeout.ms` (defaults 6000 and 1800000).' },
  { name: 'heartbeat.interval.ms', type: INT, default: '3000', min: 1, scope: CONNECTOR, origin: CONNECT, doc: 'kmirror: how often an instance heartbeats to its group; must be below `session.timeout.ms` (Connect\'s key and default; a third of the session timeout is usual).' },
  { name: 'rebalance.timeout.ms', type: INT, default: '60000', min: 1, scope: CONNECTOR, origin: CONNECT, doc: 'kmirror: how long a rebalance waits for every instance to rejoin, including the time an instance takes to stop the work it hands over (store its progress), and how long the leader has to compute the assignment; an instance that misses either stops its work. Must be above twice `heartbeat.interval.ms`. Connect\'s key and default.' },

  // Connect worker keys: `B.<key>` applies to every flow whose target is B (§1.1 "Worker config")
  { name: 'offset.storage.topic', type: STRING, default: 'mm2-offsets.<source>.internal', scope: WORKER, origin: CONNECT, doc: 'Topic on the target where replication progress is kept, in MM2\'s format, so MM2 and kmirror can take over from each other.' },
  { name: 'offset.storage.partitions', type: INT, default: '25', min: 1, scope: WORKER, origin: CONNECT, doc: 'Partitions of that topic when kmirror creates it.' },
  { name: 'offset.storage.replication.factor', type: SHORT, default: '3', min: 1, minusOneMeans: 'the broker\'s default', scope: WORKER, origin: CONNECT, doc: 'Replication factor of that topic when kmirror creates it.' },
  { name: 'offset.flush.interval.ms', type: LONG, default: '5000', mm2Default: '60000', min: 1, topLevelExtension: true, scope: WORKER, origin: CONNECT, doc: 'How often progress is committed. kmirror defaults to 5 s instead of Connect\'s 60 s: after a crash, fewer records are copied twice. kmirror also accepts it at top level.' },
  { name: 'config.storage.topic', type: STRING, default: 'mm2-configs.<source>.internal', scope: WORKER, origin: CONNECT, doc: 'Connect config topic.', ignored: 'kmirror has no Connect config topic' },
  { name: 'status.storage.topic', type: STRING, default: 'mm2-status.<source>.internal', scope: WORKER, origin: CONNECT, doc: 'Connect status topic.', ignored: 'kmirror has no Connect status topic' },
  { name: 'offset.flush.timeout.ms', type: LONG, default: '5000', scope: WORKER, origin: CONNECT, doc: 'Connect offset flush timeout.', ignored: NO_CONNECT },
  { name: 'plugin.discovery', type: ENUM, default: 'hybrid_warn', values: ['only_scan', 'hybrid_warn', 'hybrid_fail', 'service_load'], caseInsensitive: true, scope: WORKER, origin: CONNECT, doc: 'How Connect finds plugins (KIP-898, Kafka 3.6+); `service_load` makes MM2 start faster.', ignored: NO_PLUGINS },
  { name: 'exactly.once.source.support', type: ENUM, default: 'disabled', values: ['disabled', 'preparing', 'enabled'], caseInsensitive: true, topLevelExtension: true, scope: WORKER, origin: CONNECT, doc: '`enabled`: every flow into this cluster copies exactly once for read_committed consumers: each replication round (data, progress, offset syncs on the target, offset history) is one transaction on the target. Needs a read_committed source read (kmirror\'s default; `read_uncommitted` is refused) and WRITE on its transactional ids (docs/operations.md "Least-privilege ACLs", rows "exactly-once"); the transactions\' timeout is `<cluster>.producer.transaction.timeout.ms`. `preparing` reads as `disabled` (kmirror needs no rolling preparation).' },

  // Connection and security of every client (§1.1 clusterProps); at top level they are defaults for every cluster
  { name: 'bootstrap.servers', type: LIST, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Required for every cluster of an enabled flow: `host:port` list.' },
  { name: 'security.protocol', type: ENUM, default: 'PLAINTEXT', values: ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'], caseInsensitive: true, scope: CLUSTER, origin: CLIENT, doc: 'PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.' },
  { name: 'sasl.mechanism', type: STRING, default: 'GSSAPI', scope: CLUSTER, origin: CLIENT, doc: 'PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER. GSSAPI (Kerberos, the Java default) and AWS_MSK_IAM are not supported.' },
  { name: 'sasl.jaas.config', type: PASSWORD, default: null, scope: CLUSTER, origin: CLIENT, doc: 'JAAS login line: `username="..." password="..."` for PLAIN and SCRAM; for OAUTHBEARER `clientId="..." clientSecret="..." scope="..."` (and `extension_<name>="..."`), or Java\'s `unsecuredLogin*` options without a login callback handler.' },
  { name: 'sasl.login.callback.handler.class', type: CLASS, default: null, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler` (or its 3.1-3.3 name `...oauthbearer.secured.OAuthBearerLoginCallbackHandler`) fetches tokens from `sasl.oauthbearer.token.endpoint.url`; unset means Java\'s unsecured tokens. Other classes cannot be loaded.' },
  { name: 'sasl.oauthbearer.token.endpoint.url', type: STRING, default: null, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: the identity provider\'s token endpoint (http or https, client-credentials grant), or a `file:` URL of a file holding the token.' },
  { name: 'sasl.oauthbearer.client.credentials.client.id', type: STRING, default: null, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER client id (Kafka 4.1); wins over `clientId` in `sasl.jaas.config`.' },
  { name: 'sasl.oauthbearer.client.credentials.client.secret', type: PASSWORD, default: null, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER client secret (Kafka 4.1); wins over `clientSecret` in `sasl.jaas.config`.' },
  { name: 'sasl.oauthbearer.scope', type: STRING, default: null, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER scope sent to the token endpoint (Kafka 4.1); wins over `scope` in `sasl.jaas.config`.' },
  { name: 'sasl.oauthbearer.sub.claim.name', type: STRING, default: 'sub', scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: the token claim that names the principal; a token without it is refused, as by the Java client.' },
  { name: 'sasl.oauthbearer.header.urlencode', type: BOOLEAN, default: 'false', scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: URL-encode the client id and secret in the token request\'s Basic authorization header (RFC 6749 §2.3.1).' },
  { name: 'sasl.oauthbearer.jwt.retriever.class', type: CLASS, default: 'org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever', scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER token retriever (Kafka 4.1): the default, `ClientCredentialsJwtRetriever` and `FileJwtRetriever` are supported; the JWT-bearer grant is not.' },
  { name: 'sasl.login.refresh.window.factor', type: DOUBLE, default: '0.8', min: 0.5, max: 1.0, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: replace a token after this fraction of its lifetime (plus jitter), as the Java client does. 0.5 to 1.0.' },
  { name: 'sasl.login.refresh.window.jitter', type: DOUBLE, default: '0.05', min: 0, max: 0.25, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: random extra fraction of the lifetime added to the refresh time. 0 to 0.25.' },
  { name: 'sasl.login.refresh.min.period.seconds', type: SHORT, default: '60', min: 0, max: 900, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: least time between two token refreshes (ignored for tokens too short to allow it). 0 to 900.' },
  { name: 'sasl.login.refresh.buffer.seconds', type: SHORT, default: '300', min: 0, max: 3600, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: refresh at least this long before the token expires (ignored for tokens too short to allow it). 0 to 3600.' },
  { name: 'sasl.login.retry.backoff.ms', type: LONG, default: '100', min: 0, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: first wait before retrying a failed token request; doubles each time.' },
  { name: 'sasl.login.retry.backoff.max.ms', type: LONG, default: '10000', min: 0, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: total time spent retrying a token request. HTTP 4xx answers (bad credentials) are not retried.' },
  { name: 'sasl.login.connect.timeout.ms', type: INT, default: '10000', mm2Default: 'none', min: 0, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: how long a token request may take to connect, TLS handshake included. 0 = no limit, as in Java.' },
  { name: 'sasl.login.read.timeout.ms', type: INT, default: '30000', mm2Default: 'none', min: 0, scope: CLUSTER, origin: CLIENT, doc: 'OAUTHBEARER: how long a token request may take, once connected, to deliver its whole answer (Java: per read). 0 = no limit, as in Java; the answer is still capped at 1 MiB.' },
  { name: 'ssl.truststore.type', type: STRING, default: 'JKS', scope: CLUSTER, origin: CLIENT, doc: '`JKS`, `PKCS12` or `PEM`. As in Java (JDK 9+), JKS and PKCS12 files are told apart by their content, so either type reads either file.' },
  { name: 'ssl.truststore.location', type: STRING, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Truststore file (CA certificates of the brokers). Unset: the system\'s CAs.' },
  { name: 'ssl.truststore.certificates', type: PASSWORD, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Trusted CA certificates inline, in PEM (with `ssl.truststore.type = PEM`); `\\` line continuations are fine.' },
  { name: 'ssl.truststore.password', type: PASSWORD, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Password of a JKS/PKCS12 truststore; without it a JKS file is read without its integrity check, as in Java. Not allowed with PEM.' },
  { name: 'ssl.keystore.type', type: STRING, default: 'JKS', scope: CLUSTER, origin: CLIENT, doc: '`JKS`, `PKCS12` or `PEM` (mutual TLS). JKS and PKCS12 files are told apart by their content, as in Java.' },
  { name: 'ssl.keystore.location', type: STRING, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Keystore file with the client key and certificate chain (mutual TLS); a PEM keystore holds the key and the chain in one file.' },
  { name: 'ssl.keystore.certificate.chain', type: PASSWORD, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Client certificate chain inline, in PEM (with `ssl.keystore.type = PEM`).' },
  { name: 'ssl.keystore.key', type: PASSWORD, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Client private key inline, in PEM (PKCS#8, encrypted with `ssl.key.password` or not).' },
  { name: 'ssl.keystore.password', type: PASSWORD, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Password of a JKS/PKCS12 keystore (required for them; not allowed with PEM).' },
  { name: 'ssl.key.password', type: PASSWORD, default: null, scope: CLUSTER, origin: CLIENT, doc: 'Password of the private key: of an encrypted PEM key, or of a JKS key entry when it differs from the keystore password.' },
  { name: 'ssl.endpoint.identification.algorithm', type: STRING, default: 'https', scope: CLUSTER, origin: CLIENT, doc: '`https` checks the broker\'s host name; empty turns the check off.' },

  // Java client keys the data path reads, per role: `A.consumer.<key>`, `B.producer.<key>`, `A->B.source.consumer.<key>`,
  // `A->B.producer.override.<key>` (types, minimums and defaults of the 4.1 Java client unless said otherwise)
  { name: 'isolation.level', type: ENUM, default: 'read_committed', mm2Default: 'read_uncommitted', values: ['read_committed', 'read_uncommitted'], roles: ['consumer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Replication reads `read_committed` unless told otherwise: aborted transactions are not copied. `read_uncommitted` copies everything. MM2 leaves the Java default, `read_uncommitted`.' },
  { name: 'fetch.max.bytes', type: INT, default: '52428800', min: 0, roles: ['consumer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Bytes per fetch response from one broker.' },
  { name: 'max.partition.fetch.bytes', type: INT, default: '1048576', min: 0, roles: ['consumer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Bytes per partition per fetch. A larger first batch is still returned whole.' },
  { name: 'fetch.max.wait.ms', type: INT, default: '500', min: 0, roles: ['consumer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'How long a broker holds a fetch when there is nothing new.' },
  { name: 'auto.offset.reset', type: ENUM, default: 'earliest', values: ['earliest', 'latest'], caseInsensitive: true, otherValuesMean: 'earliest', roles: ['consumer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Where a partition without stored progress starts (MM2 sets `earliest` when it is not set). A partition whose stored position kmirror forgot (its source topic came back after a deletion) starts at the log start whatever this says.' },
  { name: 'compression.type', type: ENUM, default: null, mm2Default: 'none', values: ['none', 'gzip', 'snappy', 'lz4', 'zstd'], roles: ['producer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Not set: each source batch is forwarded with its own codec (an lz4 batch stays lz4), no recompression; MM2 would write uncompressed (the Java default `none`). Set (also to `none`): batches with another codec are decoded and re-encoded with this one.' },
  { name: 'max.in.flight.requests.per.connection', type: INT, default: '5', min: 1, roles: ['producer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Produce requests in flight per target broker; more than 5 (the idempotence window) counts as 5.' },
  { name: 'max.request.size', type: INT, default: '1048576', min: 0, roles: ['producer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'A produce request is closed at 4 times this many bytes of batches; a single batch is never split (the broker checks `max.message.bytes`).' },
  { name: 'transaction.timeout.ms', type: INT, default: '60000', min: 1000, roles: ['producer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Exactly-once mode: the timeout of kmirror\'s transactions on the target (sent with InitProducerId, also when a dead member\'s id is fenced). The target\'s coordinator aborts a transaction open longer, looking every 10 s (the brokers\' `transaction.abort.timed.out.transaction.cleanup.interval.ms`); a transaction left open by an instance that died is aborted then (sooner when kmirror can fence it: docs/operations.md "Exactly-once"), and read_committed readers of its partitions wait until then. A round that wrote anything and has run for 90 % of it (timed from its start, its fetch included) is aborted and written again, so keep it well above `request.timeout.ms` and `fetch.max.wait.ms`. At most the target brokers\' `transaction.max.timeout.ms` (900000 by default): a larger value stops the flow at start naming both. At least 1000 (Java accepts less; rounds that short could never commit).' },
  { name: 'transactional.id', type: STRING, default: null, roles: ['producer'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'The Java producer\'s transactional id.', ignored: 'in exactly-once mode kmirror names its own transactional ids, `<group id>-<member name>`, as Connect names its tasks\' (docs/operations.md "Exactly-once")' },
  { name: 'request.timeout.ms', type: INT, default: '30000', min: 1, roles: ['consumer', 'producer', 'admin'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Timeout of each request (also the broker-side timeout of produce requests); a timed-out produce request is sent again with the same producer id and sequences, so the broker keeps its batches once (a fresh producer id, which may duplicate and never skips, only when the broker forgot them; exactly-once mode aborts the round). At least 1: Java accepts 0, but its client then times out every request not answered within the millisecond it was sent, so kmirror refuses 0.' },
  { name: 'socket.connection.setup.timeout.ms', type: LONG, default: '10000', min: 0, roles: ['consumer', 'producer', 'admin'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Timeout of opening a connection to a broker (Java has no minimum; kmirror refuses negative values).' },
  { name: 'default.api.timeout.ms', type: INT, default: '60000', min: 1, roles: ['consumer', 'admin'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Bound of one whole admin operation (listing, describing or creating topics, group offsets, ACLs), every request and retry it takes included; past it the operation fails with KMIRROR_ERR_TIMEOUT naming it, the cluster and the brokers. Each request is still bounded by `request.timeout.ms`.' },
  { name: 'socket.connection.setup.timeout.max.ms', type: LONG, default: '30000', min: 0, roles: ['consumer', 'producer', 'admin'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Java grows the connection setup timeout after each failure up to this bound.', ignored: 'kmirror\'s client library uses one connection setup timeout, `socket.connection.setup.timeout.ms`, for every attempt' },
  { name: 'retry.backoff.ms', type: LONG, default: '100', min: 0, roles: ['consumer', 'producer', 'admin'], scope: CLIENT_ROLE, origin: CLIENT, doc: 'Pause before a failed request is retried.' }
]

/**
 * Every `ssl.*` and `sasl.*` key of the 4.1 Java client (SslConfigs, SaslConfigs; consumer, producer and admin
 * alike). MM2 copies exactly these between clusters and client roles; any other `ssl.*` or `sasl.*` key is
 * unknown (usually misspelt). The ones kmirror reads are also in KEYS.
 */
export const JAVA_SECURITY_KEYS: ReadonlySet<string> = new Set([
  'sasl.client.callback.handler.class', 'sasl.jaas.config', 'sasl.kerberos.kinit.cmd', 'sasl.kerberos.min.time.before.relogin',
  'sasl.kerberos.service.name', 'sasl.kerberos.ticket.renew.jitter', 'sasl.kerberos.ticket.renew.window.factor',
  'sasl.login.callback.handler.class', 'sasl.login.class', 'sasl.login.connect.timeout.ms', 'sasl.login.read.timeout.ms',
  'sasl.login.refresh.buffer.seconds', 'sasl.login.refresh.min.period.seconds', 'sasl.login.refresh.window.factor',
  'sasl.login.refresh.window.jitter', 'sasl.login.retry.backoff.max.ms', 'sasl.login.retry.backoff.ms', 'sasl.mechanism',
  'sasl.oauthbearer.assertion.algorithm', 'sasl.oauthbearer.assertion.claim.aud', 'sasl.oauthbearer.assertion.claim.exp.seconds',
  'sasl.oauthbearer.assertion.claim.iss', 'sasl.oauthbearer.assertion.claim.jti.include', 'sasl.oauthbearer.assertion.claim.nbf.seconds',
  'sasl.oauthbearer.assertion.claim.sub', 'sasl.oauthbearer.assertion.file', 'sasl.oauthbearer.assertion.private.key.file',
  'sasl.oauthbearer.assertion.private.key.passphrase', 'sasl.oauthbearer.assertion.template.file',
  'sasl.oauthbearer.client.credentials.client.id', 'sasl.oauthbearer.client.credentials.client.secret',
  'sasl.oauthbearer.clock.skew.seconds', 'sasl.oauthbearer.expected.audience', 'sasl.oauthbearer.expected.issuer',
  'sasl.oauthbearer.header.urlencode', 'sasl.oauthbearer.jwks.endpoint.refresh.ms', 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms',
  'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms', 'sasl.oauthbearer.jwks.endpoint.url', 'sasl.oauthbearer.jwt.retriever.class',
  'sasl.oauthbearer.jwt.validator.class', 'sasl.oauthbearer.scope', 'sasl.oauthbearer.scope.claim.name',
  'sasl.oauthbearer.sub.claim.name', 'sasl.oauthbearer.token.endpoint.url',
  'ssl.cipher.suites', 'ssl.enabled.protocols', 'ssl.endpoint.identification.algorithm', 'ssl.engine.factory.class',
  'ssl.key.password', 'ssl.keymanager.algorithm', 'ssl.keystore.certificate.chain', 'ssl.keystore.key', 'ssl.keystore.location',
  'ssl.keystore.password', 'ssl.keystore.type', 'ssl.protocol', 'ssl.provider', 'ssl.secure.random.implementation',
  'ssl.trustmanager.algorithm', 'ssl.truststore.certificates', 'ssl.truststore.location', 'ssl.truststore.password', 'ssl.truststore.type'
])

/** The Java client's PASSWORD-typed keys among them: their values are secrets. Certificates are public and not among them. */
export const JAVA_PASSWORD_KEYS: ReadonlySet<string> = new Set([
  'sasl.jaas.config', 'sasl.oauthbearer.assertion.private.key.passphrase', 'sasl.oauthbearer.client.credentials.client.secret',
  'ssl.key.password', 'ssl.keystore.key', 'ssl.keystore.password', 'ssl.truststore.password'
])

const BY_NAME: ReadonlyMap<string, KeySpec> = new Map(KEYS.map(spec => [spec.name, spec]))

export function findKey (name: string): KeySpec | undefined {
  return BY_NAME.get(name)
}

/** The default of a key with `<source>` filled in, or undefined when there is none. */
export function defaultValue (name: string, source?: string): string | undefined {
  const value = BY_NAME.get(name)?.default ?? undefined
  return source === undefined ? value : value?.replaceAll('<source>', source)
}
