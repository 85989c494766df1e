/**
 * What topic sync decides from: the source topics a flow replicates and their remote topics on the target,
 * read with as few requests as the admin client allows. `describeTopicState` gathers it; `planTopicSync`
 * (topic-sync-plan.ts) decides from it alone, so `kmirror plan` shows a decision without making it.
 */
import type { FlowConfig } from '../config/types.ts'
import type { KmirrorError } from '../errors.ts'
import type { AdminClient, TopicConfigEntry, TopicDescription } from '../kafka/admin-client.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import { shouldReplicateTopic } from '../policy/should-replicate.ts'
import { createTopicFilter } from '../policy/topic-filter.ts'

export interface SourceTopicState {
  readonly partitions: number
  /** Kafka's topic id: a topic deleted and created again under the same name gets a new one. */
  readonly id: string
  /** The topic's configs; absent when they were not read (see `ConfigReads`). */
  readonly configs?: readonly TopicConfigEntry[]
}

export interface RemoteTopicState {
  readonly partitions: number
  /** Kafka's topic id; null from brokers without topic ids (before Kafka 2.8), absent when not read. */
  readonly id?: string | null
  /** The topic's configs; absent when they were not read (see `ConfigReads`). */
  readonly configs?: readonly TopicConfigEntry[]
}

export interface TopicState {
  /** The source topics the flow replicates (they pass its filters), by name. */
  readonly source: ReadonlyMap<string, SourceTopicState>
  /** The remote topics that exist on the target, of those source topics and of the previously known ones, by remote name. */
  readonly remote: ReadonlyMap<string, RemoteTopicState>
  /**
   * The topics whose configs were asked for and refused (DESCRIBE_CONFIGS missing, for one), by source name and
   * by remote name, with the error naming the grant. Their `configs` are absent; no other topic is affected.
   */
  readonly configsRefused: { readonly source: ReadonlyMap<string, KmirrorError>, readonly remote: ReadonlyMap<string, KmirrorError> }
}

/** Which topic configs `describeTopicState` reads: every DescribeConfigs costs, so each caller asks only for what it uses. */
export const ConfigReads = {
  /** None: partition counts only. */
  NONE: 'none',
  /** The source configs of topics whose remote topic is missing: what creating them needs (the periodic refresh). */
  CREATION: 'creation',
  /** Both sides of every replicated topic: what config sync and `kmirror plan` need. */
  ALL: 'all'
} as const
export type ConfigRead = (typeof ConfigReads)[keyof typeof ConfigReads]

/**
 * What topic sync reads from a cluster; `AdminClient` fits. `describeAllTopics`, when the admin client has it,
 * returns every topic with its partition count from one metadata request; without it, a refresh costs a
 * list plus a describe per cluster.
 */
export interface TopicReader extends Pick<AdminClient, 'listTopics' | 'describeTopics' | 'readTopicConfigs'> {
  describeAllTopics?: () => Promise<Map<string, TopicDescription>>
}

export interface DescribeTopicStateOptions {
  readonly configs: ConfigRead
  /** Source topics replicated until now: their remote topics are described too, so a deletion can be acted on. */
  readonly previouslyKnown?: Iterable<string>
}

/** MirrorSourceConnector.shouldReplicateTopic for one flow: its filters, internal topics and cycles. */
export function createTopicSelector (flow: FlowConfig, policy: ReplicationPolicy): (topic: string) => boolean {
  const filter = createTopicFilter({ topics: flow.topics, topicsExclude: flow.topicsExclude })
  const context = { filter, policy, targetAlias: flow.target.alias, heartbeatsReplicationEnabled: flow.heartbeatsReplicationEnabled }
  return topic => shouldReplicateTopic(topic, context)
}

/** Reads the topic state of one flow: one metadata read per cluster, plus DescribeConfigs as `options.configs` asks. */
export async function describeTopicState (
  flow: FlowConfig,
  policy: ReplicationPolicy,
  admins: { readonly source: TopicReader, readonly target: TopicReader },
  options: DescribeTopicStateOptions
): Promise<TopicState> {
  const shouldReplicate = createTopicSelector(flow, policy)
  const remoteName = (topic: string): string => policy.formatRemoteTopic(flow.source.alias, topic)
  const sources = await describeSelected(admins.source, shouldReplicate)
  const wanted = new Set([...sources.keys(), ...(options.previouslyKnown ?? [])].map(remoteName))
  const remotes = await describeSelected(admins.target, name => wanted.has(name), [...wanted])
  const sourceConfigNames = options.configs === ConfigReads.NONE
    ? []
    : [...sources.keys()].filter(n => options.configs === ConfigReads.ALL || !remotes.has(remoteName(n)))
  const remoteConfigNames = options.configs === ConfigReads.ALL ? [...sources.keys()].map(remoteName).filter(n => remotes.has(n)) : []
  const [sourceConfigs, remoteConfigs] = await Promise.all([
    admins.source.readTopicConfigs(sourceConfigNames),
    admins.target.readTopicConfigs(remoteConfigNames)
  ])
  const source = new Map<string, SourceTopicState>()
  for (const [name, d] of sources) source.set(name, withConfigs({ partitions: d.partitions, id: d.id }, sourceConfigs.configs.get(name)))
  const remote = new Map<string, RemoteTopicState>()
  for (const [name, d] of remotes) remote.set(name, withConfigs({ partitions: d.partitions, id: /^[0-]*$/.test(d.id) ? null : d.id }, remoteConfigs.configs.get(name)))
  return { source, remote, configsRefused: { source: sourceConfigs.refused, remote: remoteConfigs.refused } }
}

function withConfigs<T extends object> (state: T, configs: readonly TopicConfigEntry[] | undefined): T & { configs?: readonly TopicConfigEntry[] } {
  return configs === undefined ? state : { ...state, configs }
}

/** The topics of one cluster that pass `select`, with partition counts; `names` narrows the fallback describe. */
async function describeSelected (admin: TopicReader, select: (topic: string) => boolean, names?: readonly string[]): Promise<Map<string, TopicDescription>> {
  const out = new Map<string, TopicDescription>()
  if (admin.describeAllTopics !== undefined) {
    for (const [name, d] of await admin.describeAllTopics()) if (select(name)) out.set(name, d)
    return out
  }
  const selected = names ?? (await admin.listTopics()).filter(select)
  for (const [name, d] of await admin.describeTopics(selected)) if (select(name)) out.set(name, d)
  return out
}
