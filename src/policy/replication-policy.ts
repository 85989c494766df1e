import { ReplicationPolicyClasses, type ReplicationPolicyConfig } from '../config/types.ts'

/**
 * MM2's ReplicationPolicy (mm2-spec §3.1): how remote topics are named and how a name is traced back upstream.
 * Both implementations behave exactly like Kafka 4.1.1's DefaultReplicationPolicy and IdentityReplicationPolicy
 * (golden-tested against the jars in test/fixtures/policy-golden.json).
 */
export interface ReplicationPolicy {
  /** The name `topic` of cluster `sourceAlias` gets on the target. */
  formatRemoteTopic (sourceAlias: string, topic: string): string
  /** The alias of the cluster a remote topic came from, or null when the name does not look remote. */
  topicSource (topic: string): string | null
  /** The topic's name on the immediate upstream cluster, or null. */
  upstreamTopic (topic: string): string | null
  /** Follows `upstreamTopic` until it returns null or the same name. */
  originalTopic (topic: string): string
  heartbeatsTopic (): string
  offsetSyncsTopic (clusterAlias: string): string
  checkpointsTopic (clusterAlias: string): string
  isHeartbeatsTopic (topic: string): boolean
  isCheckpointsTopic (topic: string): boolean
  /** Starts with "mm2" and ends with the internal suffix (`mm2-offsets.A.internal`, offset syncs), or is a checkpoints topic. */
  isMM2InternalTopic (topic: string): boolean
  /** An MM2 internal topic, or a Kafka internal one (starting with `__` or `.`); never replicated. */
  isInternalTopic (topic: string): boolean
}

const HEARTBEATS_TOPIC = 'heartbeats'
const OFFSET_SYNCS_TOPIC_PREFIX = 'mm2-offset-syncs'

/**
 * How the internal topics MM2 and kmirror keep on a cluster begin, a cluster alias and `.internal` following
 * (`mm2-offsets.A.internal`): Connect's offsets (a flow's progress), configs (connector settings, credentials
 * among them) and status topics of MM2's dedicated mode, MM2's offset syncs, kmirror's offset history and ACL
 * record. Every flow of kmirror or MM2 keeps its own beside the others' on the clusters it uses, so they hold no
 * copy of a replicated topic. The one list of them (config/resolve.ts, below this layer, spells Connect's three
 * defaults itself): `internalTopicHeads` adds the offset syncs' head under a policy whose internal topics take its
 * own separator (`mm2-offset-syncs_A_internal`).
 */
export const InternalTopicHeads = {
  OFFSETS: 'mm2-offsets.',
  CONFIGS: 'mm2-configs.',
  STATUS: 'mm2-status.',
  OFFSET_SYNCS: `${OFFSET_SYNCS_TOPIC_PREFIX}.`,
  OFFSET_HISTORY: 'mm2-offset-history.',
  ACLS: 'mm2-acls.'
} as const

/** Every head of `InternalTopicHeads`, and the head of POLICY's offset-syncs topics when it differs. */
export function internalTopicHeads (policy: ReplicationPolicy): readonly string[] {
  const probe = '\u0000'
  const offsetSyncs = policy.offsetSyncsTopic(probe)
  return [...new Set<string>([...Object.values(InternalTopicHeads), offsetSyncs.slice(0, offsetSyncs.indexOf(probe))])]
}

export function createReplicationPolicy (config: ReplicationPolicyConfig): ReplicationPolicy {
  switch (config.className) {
    case ReplicationPolicyClasses.DEFAULT: return createDefaultPolicy(config)
    case ReplicationPolicyClasses.IDENTITY: return createIdentityPolicy(config)
    default: throw new RangeError(`unknown replication policy class ${String(config.className)}`)
  }
}

/** `source + sep + topic`; the internal-topic names use `sep` too unless the internal separator flag is off (then "."). */
function createDefaultPolicy (config: ReplicationPolicyConfig): ReplicationPolicy {
  const sep = config.separator
  const isep = config.internalTopicSeparatorEnabled ? sep : '.'
  const internalSuffix = `${isep}internal`
  const checkpointsSuffix = `${isep}checkpoints${internalSuffix}`
  const topicSource = (topic: string): string | null => {
    const parts = javaSplit(topic, sep)
    return parts.length < 2 ? null : parts[0] as string
  }
  const policy: ReplicationPolicy = {
    formatRemoteTopic: (sourceAlias, topic) => `${sourceAlias}${sep}${topic}`,
    topicSource,
    upstreamTopic: topic => {
      const source = topicSource(topic)
      return source === null ? null : topic.slice(source.length + sep.length)
    },
    originalTopic: topic => originalTopic(policy, topic),
    heartbeatsTopic: () => HEARTBEATS_TOPIC,
    offsetSyncsTopic: alias => `${OFFSET_SYNCS_TOPIC_PREFIX}${isep}${alias}${internalSuffix}`,
    checkpointsTopic: alias => `${alias}${checkpointsSuffix}`,
    isHeartbeatsTopic: topic => policy.originalTopic(topic) === HEARTBEATS_TOPIC,
    isCheckpointsTopic: topic => topic.endsWith(checkpointsSuffix),
    isMM2InternalTopic: topic => (topic.startsWith('mm2') && topic.endsWith(internalSuffix)) || policy.isCheckpointsTopic(topic),
    isInternalTopic: topic => isInternalTopic(policy, topic)
  }
  return policy
}

/**
 * Topics keep their names, except heartbeat topics (names ending in "heartbeats"), which are renamed as by
 * the default policy so that heartbeats still trace the topology. Every non-heartbeat topic is taken to come
 * from the configured source alias and to be its own upstream, which is why cycles cannot be detected.
 */
function createIdentityPolicy (config: ReplicationPolicyConfig): ReplicationPolicy {
  const base = createDefaultPolicy(config)
  const looksLikeHeartbeat = (topic: string): boolean => topic.endsWith(HEARTBEATS_TOPIC)
  const policy: ReplicationPolicy = {
    ...base,
    formatRemoteTopic: (sourceAlias, topic) => looksLikeHeartbeat(topic) ? base.formatRemoteTopic(sourceAlias, topic) : topic,
    topicSource: topic => looksLikeHeartbeat(topic) ? base.topicSource(topic) : config.sourceClusterAlias,
    upstreamTopic: topic => looksLikeHeartbeat(topic) ? base.upstreamTopic(topic) : topic,
    originalTopic: topic => originalTopic(policy, topic),
    isHeartbeatsTopic: topic => policy.originalTopic(topic) === HEARTBEATS_TOPIC,
    isInternalTopic: topic => isInternalTopic(policy, topic)
  }
  return policy
}

/** The interface's default method; the "same topic" stop is what keeps IdentityReplicationPolicy from looping. */
function originalTopic (policy: ReplicationPolicy, topic: string): string {
  let current = topic
  for (;;) {
    const upstream = policy.upstreamTopic(current)
    if (upstream === null || upstream === current) return current
    current = upstream
  }
}

/**
 * The interface's default method as compiled in Kafka 4.1.1: MM2's own topics or Kafka's (`__`, `.`).
 * Not Connect's other `-internal` / `.internal` topics (mm2-spec §3.1 says otherwise; the jar decides):
 * the default `topics.exclude` is what keeps those from being replicated.
 */
function isInternalTopic (policy: ReplicationPolicy, topic: string): boolean {
  return policy.isMM2InternalTopic(topic) || topic.startsWith('__') || topic.startsWith('.')
}

/**
 * Java's `Pattern.compile(Pattern.quote(sep)).split(text)` (limit 0), used by DefaultReplicationPolicy.topicSource:
 * - no match: `[text]`;
 * - a separator at index 0 gives a leading "" (".x" → ["", "x"]);
 * - trailing empty parts are dropped ("a." → ["a"], "." → []);
 * - an empty separator matches between every two UTF-16 units ("abc" → ["a", "b", "c"]).
 */
export function javaSplit (text: string, sep: string): string[] {
  if (sep === '') return text === '' ? [''] : text.split('')
  if (!text.includes(sep)) return [text]
  const parts = text.split(sep)
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  return parts
}
