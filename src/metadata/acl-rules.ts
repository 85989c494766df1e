/**
 * How one source ACL binding becomes a target binding, or why it is not copied. Pure: no I/O.
 *
 * MM2 (MirrorSourceConnector.syncTopicAcls) copies LITERAL topic ACLs of replicated topics, renamed with
 * formatRemoteTopic, drops ALLOW WRITE, turns ALLOW ALL into ALLOW READ and copies DENY unchanged. kmirror keeps
 * that and goes further in three ways:
 *
 * 1. Grants are read-only. On a remote topic kmirror copies ALLOW READ, DESCRIBE and DESCRIBE_CONFIGS, and ALLOW
 *    ALL becomes READ (READ implies DESCRIBE in Kafka's authorizer). Every other ALLOW (WRITE, CREATE, DELETE,
 *    ALTER, ALTER_CONFIGS, ...) is skipped: only kmirror writes and manages remote topics. MM2 only drops WRITE.
 * 2. PREFIXED topic ACLs are mapped through the replication policy: prefix `orders` becomes `A.orders` with the
 *    default policy (every remote name of a topic under `orders` starts with `A.orders`, and nothing else does),
 *    `orders` with the identity policy. A literal `*` (every topic) becomes PREFIXED `A.`; with the identity
 *    policy it would cover every topic of the target, so it is skipped.
 *    A prefix is copied when the prefix itself, taken as a topic name, passes the flow's topic filter, or when
 *    some source topic under it is replicated. The filter decides what is copied, not who may read it: the
 *    target prefix may also cover remote names of source topics the filter leaves out, which kmirror never
 *    creates and which, if someone else copied them there, hold data the principal may read on the source.
 *    With the identity policy the target prefix also covers the target's own topics of that prefix, exactly as
 *    MM2's literal sync covers the target's own topic of the same name. A prefix ALLOW whose target prefix covers a
 *    topic kept on the target that is no copy is not copied: it would widen access. Those are the flow's own
 *    (`check` → `A.check` covers `A.checkpoints.internal`, every consumer group's positions) and, under a policy
 *    that keeps names, any flow's MM2 and kmirror internal topics (`mm2-` covers `mm2-offsets.X.internal`, and
 *    `mm2-configs.X.internal` holds MM2's connector settings). The wildcard is copied: it covers every source
 *    topic, the internal ones too.
 * 3. Consumer-group ACLs (ALLOW READ and DESCRIBE, ALL becoming READ; every DENY) of groups passing `groups` /
 *    `groups.exclude`, literal or prefixed (a prefix is copied when it passes the filter as a group name), so that
 *    consumers can fail over. Group names are not renamed: MM2's checkpoints keep group ids.
 *
 * One guard MM2 lacks: a topic DENY that applies to the principal kmirror writes with on the target (its SASL
 * PLAIN/SCRAM user, User:ANONYMOUS on PLAINTEXT, or `User:*`) would stop replication of that topic. Of such a
 * binding only its READ part is copied (DENY ALL becomes DENY READ); DENY WRITE, DESCRIBE and the other
 * operations kmirror needs are skipped. A non-super-user kmirror would otherwise lose the topic's data path.
 * Nothing of it is copied when its target prefix covers a topic kept on the target that is no copy (`mm2-` under
 * the identity policy covers kmirror's progress, `check` → `A.check` the checkpoints consumers fail over with).
 * Likewise a group DENY of READ, DESCRIBE or ALL for those principals is not copied (it would stop group offset
 * sync and failover for the group).
 * Copying the ALLOWs such a DENY narrows would widen access, so those ALLOWs are not copied (acl-narrowing.ts).
 */
import type { AclBinding, AclOp } from '../kafka/acls.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'

/** Why a source binding is not copied; each value is the sentence logs and `kmirror plan` show. */
export const AclSkipReasons = {
  OPERATION_NOT_GRANTED: 'kmirror copies only READ, DESCRIBE and DESCRIBE_CONFIGS grants on topics (ALL becomes READ): it never grants write or management rights on a remote topic',
  GROUP_OPERATION_NOT_GRANTED: 'kmirror copies only READ and DESCRIBE grants on consumer groups (ALL becomes READ)',
  TOPIC_NOT_REPLICATED: 'the topic is not replicated by this flow (topics, topics.exclude, an internal topic or a cycle)',
  PREFIX_NOT_REPLICATED: 'no topic under this prefix is replicated by this flow, and the prefix itself does not pass topics / topics.exclude',
  INVALID_TOPIC_NAME: 'not a valid topic name or prefix, so it covers no topic',
  PREFIX_COVERS_KMIRROR_TOPIC: 'on the target this prefix would also cover a topic kept there that is no copy: the flow\'s checkpoints (every consumer group\'s positions) or an internal topic of kmirror or MM2 (progress, offset syncs, connector configs): grant the remote topics under it by name, or a narrower prefix, on the target by hand',
  PREFIX_NOT_MAPPABLE: 'the replication policy does not rename every topic under this prefix the same way',
  WILDCARD_NOT_MAPPABLE: 'with this replication policy a wildcard would cover every topic of the target, not only the replicated ones: grant it on the target if you mean it',
  DENY_WOULD_BLOCK_KMIRROR: 'this DENY applies to the principal kmirror uses on the target (or to User:*): copied, it would stop the replication of the topic or, its pattern covering a topic kept there that is no copy, kmirror\'s reading of its progress or consumers\' reading of their checkpoints',
  GROUP_DENY_WOULD_BLOCK_KMIRROR: 'this DENY applies to the principal kmirror uses on the target (or to User:*): copied, it would stop group offset sync and failover for the group',
  NARROWED_BY_UNCOPIED_DENY: 'a DENY on the source narrows this ALLOW and cannot be copied whole: the ALLOW alone would grant on the target what the source refuses',
  GROUP_NOT_SYNCED: 'the group does not pass groups / groups.exclude',
  GROUP_PATTERN_TOO_WIDE: 'on the target this would cover groups the flow does not sync: kmirror\'s own group of instances, and for the wildcard every group of the target (its Connect and console groups too): grant it on the target by hand if you mean it',
  GROUP_ACLS_DISABLED: 'sync.group.acls.enabled is false',
  RESOURCE_NOT_SYNCED: 'only topic and consumer-group ACLs are synced'
} as const
export type AclSkipReason = (typeof AclSkipReasons)[keyof typeof AclSkipReasons]

/** ALLOW operations copied as they are, per resource type. ALLOW ALL is copied as READ. */
const GRANTED_TOPIC_OPS: ReadonlySet<AclOp> = new Set(['read', 'describe', 'describe-configs'])
const GRANTED_GROUP_OPS: ReadonlySet<AclOp> = new Set(['read', 'describe'])
/** A DENY on a remote topic of any of these would stop kmirror (write, metadata, creation, growth, config sync, deletion sync). */
const KMIRROR_TOPIC_OPS: ReadonlySet<AclOp> = new Set(['write', 'describe', 'create', 'alter', 'alter-configs', 'describe-configs', 'delete'])
/** A DENY on a target group of any of these would stop kmirror writing the group's offsets (OffsetCommit, DescribeGroups). */
const KMIRROR_GROUP_OPS: ReadonlySet<AclOp> = new Set(['all', 'read', 'describe'])

const WILDCARD = '*'
const WILDCARD_PRINCIPAL = 'User:*'
/** Kafka's legal topic characters (Topic.validate); a prefix obeys the same alphabet. */
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/

export interface AclRuleContext {
  readonly sourceAlias: string
  readonly policy: ReplicationPolicy
  /** shouldReplicateTopic of the flow (filter, internal topics, cycles, heartbeats). */
  readonly shouldReplicateTopic: (topic: string) => boolean
  /** The flow's group filter, or null when group ACLs are not synced. */
  readonly shouldSyncGroup: ((group: string) => boolean) | null
  /** Source topics this flow replicates, sorted (to tell whether a prefix covers one). */
  readonly replicatedTopics: readonly string[]
  /** Principals kmirror itself uses on the target, as Kafka names them (`User:admin`). */
  readonly kmirrorPrincipals: ReadonlySet<string>
  /** The group kmirror's instances of the flow coordinate in on the target (group.id). */
  readonly kmirrorGroup: string
  /**
   * Topics kept on the target that are no copy of a source topic, as literal names and prefixes: the flow's own
   * (checkpoints, progress, offset history, ACL ownership, offset syncs when they are on the target) and the heads
   * of every flow's MM2 and kmirror internal topics (`mm2-offsets.`, ...). A copied prefix ALLOW must not cover them.
   */
  readonly kmirrorTopics: readonly AclPattern[]
}

/** A binding's resource pattern alone. */
export type AclPattern = Pick<AclBinding, 'resourceName' | 'patternType'>

/**
 * The target binding of a source binding, or why it has none; then `copy` is the binding it would be but for the
 * rule that skips it, when that rule comes after its renaming (a topic left out, a pattern too wide, a narrowing DENY).
 */
export type AclTranslation = { readonly binding: AclBinding } | { readonly skip: AclSkipReason, readonly copy?: AclBinding }

/** A source binding that is not copied, and why. */
export interface SkippedAcl {
  /** The source binding. */
  readonly binding: AclBinding
  readonly reason: AclSkipReason
  /** For NARROWED_BY_UNCOPIED_DENY: the source DENY that is why. */
  readonly narrowedBy?: AclBinding
  /** The target binding it would be but for REASON, when known: a copy kmirror made of it is removed for REASON. */
  readonly copy?: AclBinding
  /** For a skip someone expects to see on the target (acl-reports.ts): what the log (once, WARN) and `kmirror plan` (`!`) say. */
  readonly warning?: string
}

export function translateAcl (b: AclBinding, context: AclRuleContext): AclTranslation {
  if (b.resourceType === 'topic') return translateTopicAcl(b, context)
  if (b.resourceType === 'group') return translateGroupAcl(b, context)
  return { skip: AclSkipReasons.RESOURCE_NOT_SYNCED }
}

function translateTopicAcl (b: AclBinding, context: AclRuleContext): AclTranslation {
  const operation = topicOperation(b, context)
  if (typeof operation === 'object') return operation
  const remote = remotePattern(b, context)
  if (remote.pattern === null) return { skip: remote.skip }
  const copy: AclBinding = { ...b, ...remote.pattern, operation }
  const skip = remote.skip ?? kmirrorTopicSkip(b, copy, context)
  return skip === null ? { binding: copy } : { skip, copy }
}

/** The operation the target binding gets, or why there is none. */
function topicOperation (b: AclBinding, context: AclRuleContext): AclOp | { skip: AclSkipReason } {
  if (b.permission === 'allow') {
    if (b.operation === 'all') return 'read'
    return GRANTED_TOPIC_OPS.has(b.operation) ? b.operation : { skip: AclSkipReasons.OPERATION_NOT_GRANTED }
  }
  if (!appliesToKmirror(b, context)) return b.operation
  if (b.operation === 'all') return 'read'
  return KMIRROR_TOPIC_OPS.has(b.operation) ? { skip: AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR } : b.operation
}

function appliesToKmirror (b: AclBinding, context: AclRuleContext): boolean {
  return b.principal === WILDCARD_PRINCIPAL || context.kmirrorPrincipals.has(b.principal)
}

/** The target pattern of a topic binding, or none; and why it is not copied when it is not. */
type RemotePattern = { readonly pattern: AclPattern, readonly skip: AclSkipReason | null } | { readonly pattern: null, readonly skip: AclSkipReason }

function remotePattern (b: AclBinding, context: AclRuleContext): RemotePattern {
  const { policy, sourceAlias, shouldReplicateTopic } = context
  if (b.patternType === 'literal' && b.resourceName !== WILDCARD) {
    if (!TOPIC_NAME.test(b.resourceName)) return { pattern: null, skip: AclSkipReasons.INVALID_TOPIC_NAME }
    const pattern = { resourceName: policy.formatRemoteTopic(sourceAlias, b.resourceName), patternType: 'literal' } as const
    return { pattern, skip: shouldReplicateTopic(b.resourceName) ? null : AclSkipReasons.TOPIC_NOT_REPLICATED }
  }
  const prefix = b.patternType === 'literal' ? '' : b.resourceName
  if (prefix !== '' && !TOPIC_NAME.test(prefix)) return { pattern: null, skip: AclSkipReasons.INVALID_TOPIC_NAME }
  const mapped = remotePrefix(policy, sourceAlias, prefix)
  if (mapped === null) return { pattern: null, skip: AclSkipReasons.PREFIX_NOT_MAPPABLE }
  if (mapped === '') return { pattern: null, skip: AclSkipReasons.WILDCARD_NOT_MAPPABLE }
  const replicated = shouldReplicateTopic(prefix) || coversAny(context.replicatedTopics, prefix)
  return { pattern: { resourceName: mapped, patternType: 'prefixed' }, skip: replicated ? null : AclSkipReasons.PREFIX_NOT_REPLICATED }
}

/**
 * Why COPY, otherwise due, must not go: its target prefix covers a topic kept on the target that is no copy
 * (`kmirrorTopics`). An ALLOW would widen access: a source prefix `check` gives no access to consumer groups'
 * positions, `A.check` would on the target (the wildcard may: on the source it covers every topic, the internal
 * ones too). A DENY for kmirror's principal or `User:*` would stop kmirror or those topics' readers, whatever its
 * operation: `DENY READ mm2-` (identity) keeps kmirror from loading its progress at the next start, `DENY READ
 * check` (`A.check`) keeps consumers that fail over from reading their checkpoints. Another principal's DENY goes.
 */
function kmirrorTopicSkip (b: AclBinding, copy: AclBinding, context: AclRuleContext): AclSkipReason | null {
  if (coveredKmirrorTopic(copy, context) === undefined) return null
  if (b.permission === 'allow') return b.patternType === 'literal' && b.resourceName === WILDCARD ? null : AclSkipReasons.PREFIX_COVERS_KMIRROR_TOPIC
  return appliesToKmirror(b, context) ? AclSkipReasons.DENY_WOULD_BLOCK_KMIRROR : null
}

/** The first of `kmirrorTopics` a target prefix covers or overlaps, or undefined; a literal copy covers none of them. */
export function coveredKmirrorTopic (target: AclPattern, context: Pick<AclRuleContext, 'kmirrorTopics'>): AclPattern | undefined {
  if (target.patternType !== 'prefixed') return undefined
  return context.kmirrorTopics.find(t => patternsOverlap(t, target))
}

/** Whether some resource name matches both patterns (a literal `*` matches every name). */
export function patternsOverlap (a: AclPattern, b: AclPattern): boolean {
  const isAll = (p: AclPattern): boolean => p.patternType === 'literal' && p.resourceName === WILDCARD
  if (isAll(a) || isAll(b)) return true
  if (a.patternType === 'literal' && b.patternType === 'literal') return a.resourceName === b.resourceName
  if (a.patternType === 'literal') return a.resourceName.startsWith(b.resourceName)
  if (b.patternType === 'literal') return b.resourceName.startsWith(a.resourceName)
  return a.resourceName.startsWith(b.resourceName) || b.resourceName.startsWith(a.resourceName)
}

/**
 * The prefix every remote name of a topic under `prefix` starts with, or null when the policy does not simply
 * put a fixed head before the name. Worked example, default policy, alias A: `orders` + probe `~` gives
 * `A.orders~`; the head before the probe is `A.orders`, which is also the remote name of `orders` itself.
 * Identity policy and prefix `heartbeats`: `heartbeats~` stays itself but `heartbeats` becomes `A.heartbeats`,
 * so no single target prefix exists.
 */
export function remotePrefix (policy: ReplicationPolicy, sourceAlias: string, prefix: string): string | null {
  const probe = 'kmirror-probe'
  const remoteProbe = policy.formatRemoteTopic(sourceAlias, prefix + probe)
  if (!remoteProbe.endsWith(probe)) return null
  const mapped = remoteProbe.slice(0, remoteProbe.length - probe.length)
  if (prefix !== '' && policy.formatRemoteTopic(sourceAlias, prefix) !== mapped) return null
  return mapped
}

/** Whether a sorted list holds a name starting with `prefix` (binary search for the first name >= prefix). */
function coversAny (sorted: readonly string[], prefix: string): boolean {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((sorted[mid] as string) < prefix) lo = mid + 1
    else hi = mid
  }
  return lo < sorted.length && (sorted[lo] as string).startsWith(prefix)
}

function translateGroupAcl (b: AclBinding, context: AclRuleContext): AclTranslation {
  const filter = context.shouldSyncGroup
  if (filter === null) return { skip: AclSkipReasons.GROUP_ACLS_DISABLED }
  let operation = b.operation
  if (b.permission === 'deny' && appliesToKmirror(b, context) && KMIRROR_GROUP_OPS.has(operation)) return { skip: AclSkipReasons.GROUP_DENY_WOULD_BLOCK_KMIRROR }
  if (b.permission === 'allow') {
    if (operation === 'all') operation = 'read'
    else if (!GRANTED_GROUP_OPS.has(operation)) return { skip: AclSkipReasons.GROUP_OPERATION_NOT_GRANTED }
  }
  // A literal `*` covers every group: it is copied when the filter lets every name through (the empty prefix).
  const name = b.patternType === 'literal' && b.resourceName === WILDCARD ? '' : b.resourceName
  const copy = { ...b, operation }
  if (!filter(name)) return { skip: AclSkipReasons.GROUP_NOT_SYNCED, copy }
  // An ALLOW must not reach groups the flow does not sync: the wildcard covers every group of the target (its own
  // Connect and console groups, kmirror's group of instances), a prefix or a name may cover kmirror's group (a
  // member of it could join it and take the flow's work). A DENY may: it never widens access.
  if (b.permission === 'allow' && (name === '' || (b.patternType === 'prefixed' ? context.kmirrorGroup.startsWith(name) : name === context.kmirrorGroup))) {
    return { skip: AclSkipReasons.GROUP_PATTERN_TOO_WIDE, copy }
  }
  return { binding: copy }
}
