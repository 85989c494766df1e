/**
 * ACL sync of a flow, in three steps so that `kmirror plan` can run the first two and change nothing:
 * `describeAclState` reads both clusters, `planAclSync` (pure) decides which bindings the target lacks, and
 * `applyAclSync` creates them. The `sync-acls` job runs the three every `sync.topic.acls.interval.seconds`.
 *
 * Invariants:
 * - Only bindings missing on the target are sent. A binding is deleted from the target only when this flow
 *   created it (acl-ownership.ts) and no current source binding translates to it any more (removed on the source,
 *   narrowed by a new DENY, or no longer replicated); bindings made by people are never touched. MM2 never deletes.
 * - No copied binding grants more than READ, DESCRIBE or DESCRIBE_CONFIGS (rules in acl-rules.ts).
 * - No ALLOW is copied that a source DENY narrows unless that DENY is copied whole (acl-narrowing.ts).
 * - A cluster without authorizer is not an error: the plan names it and nothing is synced.
 */
import { offsetHistoryTopic } from '../checkpoint/offset-history-store.ts'
import type { ClusterClientConfig, FlowConfig } from '../config/types.ts'
import { ErrorCodes, isKmirrorError, KmirrorError } from '../errors.ts'
import { aclKey, type AclBinding, type AclResourceType } from '../kafka/acls.ts'
import { clusterContext } from '../kafka/connection-hints.ts'
import { principalArg, toolCommand } from '../kafka/tool-command.ts'
import { internalTopicHeads, type ReplicationPolicy } from '../policy/replication-policy.ts'
import { shouldReplicateTopic } from '../policy/should-replicate.ts'
import { createTopicFilter } from '../policy/topic-filter.ts'
import { offsetSyncsTopicName } from '../replication/offset-sync-emitter.ts'
import { describePrincipal, targetPrincipals } from './acl-principal.ts'
import { aclOwnershipTopic, AclOwnershipStore } from './acl-ownership.ts'
import { narrowingDeny, uncopiedDeny, type UncopiedDeny } from './acl-narrowing.ts'
import { formatAcl, logNewSkips, logRemoval, skipsByCopy, withWarning } from './acl-reports.ts'
import { AclSkipReasons, translateAcl, type AclPattern, type AclRuleContext, type AclTranslation, type SkippedAcl } from './acl-rules.ts'
import type { FlowContext, MetadataJob } from './flow-context.ts'

export { AclSkipReasons, type AclSkipReason, type SkippedAcl } from './acl-rules.ts'

export interface AclState {
  /** Topic bindings (and group bindings when `sync.group.acls.enabled`) of the source; null: no authorizer. */
  readonly sourceAcls: readonly AclBinding[] | null
  /** The same resource types on the target; null: no authorizer. */
  readonly targetAcls: readonly AclBinding[] | null
  /** Source topic names, to tell whether a prefix covers a replicated topic (empty when no prefix needs it). */
  readonly sourceTopics: readonly string[]
}

export interface AclPlanInput extends AclState {
  readonly flow: FlowConfig
  readonly policy: ReplicationPolicy
  /** Target bindings this flow created (acl-ownership.ts); none when not known. */
  readonly owned?: readonly AclBinding[]
}

export type AclCluster = 'source' | 'target'

export interface AclSyncPlan {
  /** Bindings to create on the target, sorted, each once. */
  readonly create: readonly AclBinding[]
  /** Source bindings that are not copied, with the reason. */
  readonly skipped: readonly SkippedAcl[]
  /**
   * Bindings this flow created on the target that no source binding is copied to any more (gone, or skipped: the
   * skip whose `copy` it is says why): to delete, sorted.
   */
  readonly remove: readonly AclBinding[]
  /** Bindings this flow created that are gone from the target too: only forgotten. */
  readonly forget: readonly AclBinding[]
  /** Copies that the target already holds. */
  readonly inSync: number
  /** Clusters without authorizer; when not empty, nothing is synced (and that is not an error). */
  readonly noAuthorizer: readonly AclCluster[]
}

export type AclSyncContext = Pick<FlowContext, 'flow' | 'policy' | 'sourceAdmin' | 'targetAdmin' | 'log' | 'metrics' | 'targetReader' | 'internalWriter'>

/** Bindings per CreateAcls request. */
const CREATE_CHUNK = 500

/** Reads what the plan needs from both clusters. Permission errors name the ACL to grant. */
export async function describeAclState (context: Pick<FlowContext, 'flow' | 'sourceAdmin' | 'targetAdmin'>): Promise<AclState> {
  const { flow, sourceAdmin, targetAdmin } = context
  const types: AclResourceType[] = flow.syncGroupAclsEnabled ? ['topic', 'group'] : ['topic']
  const [sourceAcls, targetAcls] = await Promise.all([
    sourceAdmin.describeAcls(types).catch(err => { throw explainPermission(err, flow, flow.source, 'read ACLs', 'DESCRIBE') }),
    targetAdmin.describeAcls(types).catch(err => { throw explainPermission(err, flow, flow.target, 'read ACLs', 'DESCRIBE') })
  ])
  const needsTopics = sourceAcls?.some(b => b.resourceType === 'topic' && (b.patternType === 'prefixed' || b.resourceName === '*')) ?? false
  const sourceTopics = needsTopics ? await sourceAdmin.listTopics() : []
  return { sourceAcls, targetAcls, sourceTopics }
}

/** What the next sync would do. Pure. */
export function planAclSync (input: AclPlanInput): AclSyncPlan {
  const { sourceAcls, targetAcls } = input
  const noAuthorizer: AclCluster[] = []
  if (sourceAcls === null) noAuthorizer.push('source')
  if (targetAcls === null) noAuthorizer.push('target')
  if (sourceAcls === null || targetAcls === null) return { create: [], remove: [], forget: [], skipped: [], inSync: 0, noAuthorizer }
  const rules = ruleContext(input)
  const onTarget = new Set(targetAcls.map(aclKey))
  const create = new Map<string, AclBinding>()
  const inSync = new Set<string>()
  const skipped: SkippedAcl[] = []
  const translated = sourceAcls.map(binding => ({ binding, result: translateAcl(binding, rules) }))
  const uncopied = translated.map(t => uncopiedDeny(t.binding, t.result) ?? unrenamedDeny(t.binding, t.result, rules)).filter(d => d !== null)
  const copiedAllows: { source: AclBinding, copied: AclBinding }[] = []
  const keep = (b: AclBinding): void => {
    const key = aclKey(b)
    if (onTarget.has(key)) inSync.add(key)
    else create.set(key, b)
  }
  for (const { binding, result } of translated) {
    if ('skip' in result) {
      skipped.push({ binding, reason: result.skip, ...(result.copy === undefined ? {} : { copy: result.copy }) })
      continue
    }
    const narrowedBy = binding.permission === 'allow' ? narrowingDeny(binding, result.binding, uncopied) : undefined
    if (narrowedBy !== undefined) {
      skipped.push({ binding, reason: AclSkipReasons.NARROWED_BY_UNCOPIED_DENY, narrowedBy, copy: result.binding })
      continue
    }
    if (binding.permission === 'allow') copiedAllows.push({ source: binding, copied: result.binding })
    keep(result.binding)
  }
  // A DENY of a topic the flow does not replicate (excluded, perhaps for what it holds) still narrows a copied
  // prefix or wildcard ALLOW on its remote name, which stays on the target: copied too, a DENY never widens.
  for (const deny of coveredDenies(skipped, copiedAllows, rules)) {
    skipped.splice(skipped.findIndex(s => s.binding === deny.source), 1)
    keep(deny.copied)
  }
  const desired = new Set([...create.keys(), ...inSync])
  const stale = (input.owned ?? []).filter(b => !desired.has(aclKey(b)))
  const ownedKeys = new Set((input.owned ?? []).map(aclKey))
  return {
    create: [...create.values()].sort(denyFirst),
    remove: stale.filter(b => onTarget.has(aclKey(b))).sort(byKey),
    forget: stale.filter(b => !onTarget.has(aclKey(b))),
    skipped: skipped.map(s => withWarning(s, rules, input.flow.target.alias, s.copy !== undefined && onTarget.has(aclKey(s.copy)) && !ownedKeys.has(aclKey(s.copy))))
      .sort((a, b) => byKey(a.binding, b.binding)),
    inSync: inSync.size,
    noAuthorizer
  }
}

/** The skipped literal DENYs of topics not replicated that a copied ALLOW covers, each with its target binding. */
function coveredDenies (skipped: readonly SkippedAcl[], allows: readonly { source: AclBinding, copied: AclBinding }[], rules: AclRuleContext): { source: AclBinding, copied: AclBinding }[] {
  const out: { source: AclBinding, copied: AclBinding }[] = []
  for (const { binding, reason } of skipped) {
    if (reason !== AclSkipReasons.TOPIC_NOT_REPLICATED || binding.permission !== 'deny' || !renamed(binding, rules)) continue
    const deny = [{ binding, operations: new Set([binding.operation]) }]
    if (!allows.some(a => narrowingDeny(a.source, a.copied, deny) !== undefined)) continue
    out.push({ source: binding, copied: { ...binding, resourceName: rules.policy.formatRemoteTopic(rules.sourceAlias, binding.resourceName) } })
  }
  return out
}

/** Whether the replication policy gives the topic of B another name on the target (not so with the identity policy). */
function renamed (b: AclBinding, rules: AclRuleContext): boolean {
  return rules.policy.formatRemoteTopic(rules.sourceAlias, b.resourceName) !== b.resourceName
}

/**
 * A DENY of a topic the flow does not replicate whose name the policy keeps (identity policy): on the target that
 * name is a topic of the target's own, which kmirror does not manage, so the DENY is not copied; it then narrows
 * like any DENY that cannot be copied (the ALLOWs it overlaps stay off the target).
 */
function unrenamedDeny (b: AclBinding, result: AclTranslation, rules: AclRuleContext): UncopiedDeny | null {
  if (b.permission !== 'deny' || !('skip' in result) || result.skip !== AclSkipReasons.TOPIC_NOT_REPLICATED || renamed(b, rules)) return null
  return { binding: b, operations: new Set([b.operation]) }
}

/** DENYs first (a DENY and the ALLOW it narrows may go in different requests), then by key. */
function denyFirst (a: AclBinding, b: AclBinding): number {
  if (a.permission !== b.permission) return a.permission === 'deny' ? -1 : 1
  return byKey(a, b)
}

function byKey (a: AclBinding, b: AclBinding): number {
  return aclKey(a) < aclKey(b) ? -1 : aclKey(a) > aclKey(b) ? 1 : 0
}

function ruleContext ({ flow, policy, sourceTopics }: AclPlanInput): AclRuleContext {
  const filter = createTopicFilter({ topics: flow.topics, topicsExclude: flow.topicsExclude })
  const shouldReplicate = (topic: string): boolean => shouldReplicateTopic(topic, {
    filter, policy, targetAlias: flow.target.alias, heartbeatsReplicationEnabled: flow.heartbeatsReplicationEnabled
  })
  // MM2's DefaultGroupFilter is the same include/exclude test as its topic filter, over `groups` / `groups.exclude`.
  const groupFilter = createTopicFilter({ topics: flow.groups, topicsExclude: flow.groupsExclude })
  return {
    sourceAlias: flow.source.alias,
    policy,
    shouldReplicateTopic: shouldReplicate,
    shouldSyncGroup: flow.syncGroupAclsEnabled ? groupFilter : null,
    replicatedTopics: sourceTopics.filter(shouldReplicate).sort(),
    kmirrorPrincipals: targetPrincipals(flow),
    kmirrorGroup: flow.groupId,
    kmirrorTopics: kmirrorTopics(flow, policy)
  }
}

/**
 * The topics kept on the flow's target that are no copy: the flow's own by name (offset syncs only when they are
 * there), and every flow's MM2 and kmirror internal topics by their heads. Only a policy that keeps names maps a
 * prefix onto a head (identity: `mm2-` stays `mm2-`); a renaming one's start with the source alias and its separator.
 */
function kmirrorTopics (flow: FlowConfig, policy: ReplicationPolicy): AclPattern[] {
  const alias = flow.source.alias
  // Every cluster's checkpoints topic: under the identity policy a prefix `p` also covers `prod-west.checkpoints.internal`
  // of another flow into the same target (the configuration's clusters: identityMesh).
  const clusters = new Set([alias, flow.target.alias, ...flow.identityMesh.clusters])
  const own = [...[...clusters].map(c => policy.checkpointsTopic(c)), flow.offsetStorageTopic, offsetHistoryTopic(alias), aclOwnershipTopic(alias)]
  if (flow.offsetSyncsTopicLocation === 'target') own.push(offsetSyncsTopicName(flow, policy))
  return [
    ...own.map(resourceName => ({ resourceName, patternType: 'literal' }) as const),
    ...internalTopicHeads(policy).map(resourceName => ({ resourceName, patternType: 'prefixed' }) as const)
  ]
}

/**
 * Creates the plan's bindings on the target and logs each at info. Returns how many were created. When a
 * request fails for another reason than permissions, the bindings are sent one by one so that one bad binding
 * does not hold back the others; the failures are then reported together. Once SIGNAL (the job run's) is aborted,
 * no request more is sent, ownership record or CreateAcls: it rejects with the signal's reason.
 */
export async function applyAclSync (plan: AclSyncPlan, context: Pick<FlowContext, 'flow' | 'targetAdmin' | 'log' | 'metrics'>, ownership: AclOwnershipStore | null = null, signal?: AbortSignal): Promise<number> {
  // Recorded before they exist: a crash in between leaves a record of an absent binding, never an unknown copy.
  signal?.throwIfAborted()
  await ownership?.record(plan.create)
  // Every DENY before any ALLOW, in requests of their own: an ALLOW created while a DENY that narrows it was
  // refused would grant what the source refuses. The ALLOWs a refused DENY overlaps are held back; the others go.
  const denies = await createSettled(plan.create.filter(b => b.permission === 'deny'), context, signal)
  const refusedDenies = denies.failed.map(f => ({ binding: f.binding, operations: new Set([f.binding.operation]) }))
  const allowsWanted = plan.create.filter(b => b.permission !== 'deny')
  const heldBack = allowsWanted.filter(a => narrowingDeny(a, a, refusedDenies) !== undefined)
  const allows = await createSettled(allowsWanted.filter(a => !heldBack.includes(a)), context, signal)
  const failed = [...denies.failed, ...allows.failed]
  if (failed.length > 0) throw creationFailure(failed, heldBack, plan.create.length, context.flow)
  return denies.created + allows.created
}

interface FailedAcl { readonly binding: AclBinding, readonly err: unknown }

/**
 * Creates BINDINGS in chunks, one by one when a chunk fails; the ones refused are returned. A permission error
 * throws, and so does SIGNAL's reason before any request once it is aborted.
 */
async function createSettled (bindings: readonly AclBinding[], context: Pick<FlowContext, 'flow' | 'targetAdmin' | 'log' | 'metrics'>, signal?: AbortSignal): Promise<{ created: number, failed: FailedAcl[] }> {
  let created = 0
  const failed: FailedAcl[] = []
  for (let i = 0; i < bindings.length; i += CREATE_CHUNK) {
    const chunk = bindings.slice(i, i + CREATE_CHUNK)
    signal?.throwIfAborted()
    try {
      await createAndLog(chunk, context)
      created += chunk.length
    } catch (err) {
      if (isPermissionError(err)) throw err
      if (chunk.length === 1) {
        failed.push({ binding: chunk[0]!, err })
        continue
      }
      for (const b of chunk) {
        signal?.throwIfAborted()
        try {
          await createAndLog([b], context)
          created++
        } catch (one) {
          if (isPermissionError(one)) throw one
          failed.push({ binding: b, err: one })
        }
      }
    }
  }
  return { created, failed }
}

/** One error naming every binding the target refused, and the ALLOWs held back because a DENY they overlap was. */
function creationFailure (failed: readonly FailedAcl[], heldBack: readonly AclBinding[], wanted: number, flow: FlowConfig): KmirrorError {
  const first = failed[0]!.err
  const held = heldBack.length === 0 ? '' : `; held back until those DENYs exist (they narrow them): ${heldBack.map(formatAcl).join('; ')}`
  return new KmirrorError(isKmirrorError(first) ? first.code : ErrorCodes.CLUSTER_UNREACHABLE,
    `ACL sync could not create ${failed.length} of ${wanted} ACL(s) on cluster ${flow.target.alias}: ` +
    failed.map(f => `${formatAcl(f.binding)} (${f.err instanceof Error ? f.err.message : String(f.err)})`).join('; ') + held,
    { cause: first, retriable: true, details: { failed: failed.map(f => formatAcl(f.binding)), heldBack: heldBack.map(formatAcl) } })
}

/**
 * Deletes from the target the bindings this flow created that no source binding is copied to any more, each logged
 * with why (its source binding gone, or why it is skipped now), then forgets them (and the owned bindings someone
 * already deleted). Returns how many were deleted. The ALLOWs go first, in a request of their own, then the DENYs:
 * a ZooKeeper-mode broker applies a DeleteAcls resource by resource, so in one request a DENY could vanish a moment
 * before an ALLOW it narrows on another resource (access briefly wider than on the source); a failed ALLOW
 * deletion leaves every DENY in place. Nothing is deleted or forgotten once SIGNAL is aborted: it rejects with the
 * signal's reason.
 */
export async function removeStaleAcls (plan: AclSyncPlan, context: Pick<FlowContext, 'flow' | 'targetAdmin' | 'log' | 'metrics'>, ownership: AclOwnershipStore, signal?: AbortSignal): Promise<number> {
  const skips = skipsByCopy(plan.skipped)
  await deleteAndLog(plan.remove.filter(b => b.permission === 'allow'), skips, context, signal)
  await deleteAndLog(plan.remove.filter(b => b.permission !== 'allow'), skips, context, signal)
  signal?.throwIfAborted()
  await ownership.forget([...plan.remove, ...plan.forget])
  return plan.remove.length
}

async function deleteAndLog (bindings: readonly AclBinding[], skips: ReadonlyMap<string, SkippedAcl>, context: Pick<FlowContext, 'flow' | 'targetAdmin' | 'log' | 'metrics'>, signal?: AbortSignal): Promise<void> {
  const { flow, targetAdmin, log, metrics } = context
  if (bindings.length === 0) return
  signal?.throwIfAborted()
  try {
    await targetAdmin.deleteAcls(bindings)
  } catch (err) {
    throw explainPermission(err, flow, flow.target, 'delete ACLs', 'ALTER')
  }
  metrics.inc('aclsDeleted', { flow: flow.name }, bindings.length)
  for (const b of bindings) logRemoval(b, skips, log)
}

async function createAndLog (bindings: readonly AclBinding[], context: Pick<FlowContext, 'flow' | 'targetAdmin' | 'log' | 'metrics'>): Promise<void> {
  const { flow, targetAdmin, log, metrics } = context
  try {
    await targetAdmin.createAcls(bindings)
  } catch (err) {
    throw explainPermission(err, flow, flow.target, 'create ACLs', 'ALTER')
  }
  metrics.inc('aclsCreated', { flow: flow.name }, bindings.length)
  for (const b of bindings) log.info({ acl: formatAcl(b) }, 'created ACL on the target')
}

function isPermissionError (err: unknown): boolean {
  if (!isKmirrorError(err)) return false
  const names = err.details['kafkaErrors']
  return Array.isArray(names) && names.includes('CLUSTER_AUTHORIZATION_FAILED')
}

/** A CLUSTER_AUTHORIZATION_FAILED turned into the grant that fixes it; other errors are returned unchanged. */
function explainPermission (err: unknown, flow: FlowConfig, cluster: ClusterClientConfig, action: string, operation: 'DESCRIBE' | 'ALTER'): unknown {
  if (!isKmirrorError(err) || !isPermissionError(err)) return err
  const principal = describePrincipal(cluster.admin, cluster.alias)
  const tools = clusterContext(cluster.alias, cluster.admin)
  return new KmirrorError(err.code,
    `ACL sync cannot ${action} on cluster ${cluster.alias}: grant ${operation} on the cluster resource of ${cluster.alias} to ${principal} ` +
    `(${toolCommand('kafka-acls.sh', tools, `--add --allow-principal ${principalArg(principal, tools)} --operation ${operation === 'ALTER' ? 'Alter' : 'Describe'} --cluster`)}), ` +
    `or set ${flow.name}.sync.topic.acls.enabled = false. Replication goes on; the sync is retried.`,
    { cause: err, retriable: true, details: err.details })
}

/**
 * The `sync-acls` job of a flow: none when `sync.topic.acls.enabled` is false or the interval is not positive
 * (MM2: a negative interval disables it). Group ACLs ride on the same job. First run at start.
 */
export function createAclSyncJobs (context: AclSyncContext): MetadataJob[] {
  const { flow } = context
  if (!flow.syncTopicAclsEnabled || flow.syncTopicAclsIntervalSeconds <= 0) return []
  const log = context.log.child({ job: 'sync-acls' })
  const { targetReader, internalWriter } = context
  const ownership = targetReader === undefined || internalWriter === undefined
    ? null
    : new AclOwnershipStore(flow, { admin: context.targetAdmin, fetcher: targetReader, writer: internalWriter })
  let reportedNoAuthorizer = ''
  let reportedSkips = new Set<string>()
  const run = async (signal: AbortSignal): Promise<void> => {
    const state = await describeAclState(context)
    if (state.sourceAcls !== null && state.targetAcls !== null) await ownership?.load()
    const plan = planAclSync({ ...state, flow, policy: context.policy, owned: ownership?.owned() ?? [] })
    const noAuthorizer = plan.noAuthorizer.join(',')
    if (noAuthorizer !== '' && noAuthorizer !== reportedNoAuthorizer) {
      const clusters = plan.noAuthorizer.map(c => (c === 'source' ? flow.source.alias : flow.target.alias)).join(' and ')
      log.info({ clusters: plan.noAuthorizer }, `no ACL authorizer is configured on cluster ${clusters}: ACL sync has nothing to do`)
    }
    reportedNoAuthorizer = noAuthorizer
    reportedSkips = logNewSkips(plan.skipped, reportedSkips, log)
    // Creations first: a DENY replaced by another is removed only once its successor exists. A binding the target
    // refuses to create holds back no revocation: the stale ALLOWs go all the same (removing a grant never widens
    // access), the stale DENYs wait for a run whose creations all succeed.
    let created = 0
    let refused: unknown
    try {
      created = await applyAclSync(plan, { ...context, log }, ownership, signal)
    } catch (err) {
      refused = err
    }
    const removable = refused === undefined ? plan : { ...plan, remove: plan.remove.filter(b => b.permission === 'allow'), forget: plan.forget.filter(b => b.permission === 'allow') }
    // Aborted (membership ended, job revoked): nothing is removed either; the run ends with the abort's reason.
    const removed = ownership === null ? 0 : await removeStaleAcls(removable, { ...context, log }, ownership, signal)
    if (refused !== undefined) throw refused
    log.debug({ created, removed, inSync: plan.inSync, skipped: plan.skipped.length }, 'ACL sync done')
  }
  return [{ name: 'sync-acls', intervalMs: flow.syncTopicAclsIntervalSeconds * 1000, firstDelayMs: 0, run }]
}
