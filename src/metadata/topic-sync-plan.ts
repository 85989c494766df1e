/**
 * What the next topic sync of a flow does on the target, decided from described state alone (no I/O):
 * remote topics to create, partitions to add, config keys to change, topics that cannot be replicated and why,
 * and source topics that disappeared. `applyTopicSyncPlan` (topic-sync-apply.ts) carries a plan out;
 * `kmirror plan` prints it.
 */
import type { FlowConfig } from '../config/types.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import { configSyncRules, planTopicConfigChanges, selectTopicConfigs, type ConfigChange, type ConfigSyncRules } from './topic-config-plan.ts'
import type { RemoteTopicState, SourceTopicState, TopicState } from './topic-state.ts'

export interface ReplicatedTopic {
  readonly source: string
  readonly remote: string
  readonly partitions: number
}

export interface TopicProblem {
  readonly topic: string
  readonly remoteTopic: string
  readonly message: string
}

export interface CreateTopicAction {
  readonly topic: string
  readonly remoteTopic: string
  readonly partitions: number
  /** -1 = the target broker's default. */
  readonly replicationFactor: number
  readonly configs: Readonly<Record<string, string>>
}

export interface AddPartitionsAction {
  readonly topic: string
  readonly remoteTopic: string
  readonly from: number
  readonly to: number
}

export interface AlterConfigsAction {
  readonly topic: string
  readonly remoteTopic: string
  readonly changes: readonly ConfigChange[]
}

export interface DeletedTopic {
  readonly topic: string
  readonly remoteTopic: string
  /** True when `sync.topic.deletions.enabled` asks for the remote topic to go too, and it exists. */
  readonly deleteRemote: boolean
  /**
   * Set when `sync.topic.deletions.enabled` would delete the remote topic but its source topic's deletion was proven
   * over a mass absence (deletion-proof.ts): `bootstrap.servers` reaching another cluster looks the same, for good,
   * so the remote topic is kept on purpose, for the operator to delete by hand.
   */
  readonly remoteKeptOnPurpose?: true
}

export interface TopicSyncPlan {
  readonly flow: string
  /** Every topic replicated once the plan is carried out, with the number of partitions replicated. */
  readonly topics: readonly ReplicatedTopic[]
  readonly create: readonly CreateTopicAction[]
  readonly addPartitions: readonly AddPartitionsAction[]
  readonly alterConfigs: readonly AlterConfigsAction[]
  /** Topics that are not replicated, each with the reason and the fix. */
  readonly problems: readonly TopicProblem[]
  /** Topics replicated with something the operator should know: a remote topic with more partitions than its source. */
  readonly warnings: readonly TopicProblem[]
  /** Replicated topics whose configs (source or remote) were refused: they are copied, their configs not synced. */
  readonly configsUnread: readonly TopicProblem[]
  /** Previously replicated source topics that no longer exist. */
  readonly deletedOnSource: readonly DeletedTopic[]
  /** Previously replicated source topics deleted and created again (new topic id): replicated again from their start. */
  readonly recreatedOnSource: readonly ReplicatedTopic[]
}

export interface TopicSyncInput {
  readonly state: TopicState
  readonly flow: FlowConfig
  readonly policy: ReplicationPolicy
  /** Source topics replicated until now, name → topic id. Without it, no deletion or re-creation is reported. */
  readonly previouslyKnown?: ReadonlyMap<string, string>
  /**
   * Replicated topics missing from the source's listing without proof that they were deleted (not described,
   * or absent at one refresh only: deletion-proof.ts). They stay replicated as they are, and are not deleted.
   */
  readonly missingUnproven?: readonly ReplicatedTopic[]
  /**
   * Replicated topics read with fewer partitions than replicated until now that are not believed yet, with the count
   * to keep (partition-count-hold.ts: a broker's metadata behind after a growth). Planned with that count.
   */
  readonly heldPartitions?: ReadonlyMap<string, number>
  /**
   * Replicated topics whose deletion was proven over a mass absence (deletion-proof.ts): deleted, but their remote
   * topics are never deleted, whatever `sync.topic.deletions.enabled` says.
   */
  readonly deletedInMassAbsence?: ReadonlySet<string>
}

/** Kafka's "no id" (older brokers): ids are only compared when both are real. */
const ZERO_UUID = /^[0-]*$/

interface PlanBuilder {
  topics: ReplicatedTopic[]
  create: CreateTopicAction[]
  addPartitions: AddPartitionsAction[]
  alterConfigs: AlterConfigsAction[]
  problems: TopicProblem[]
  warnings: TopicProblem[]
  configsUnread: TopicProblem[]
}

export function planTopicSync (input: TopicSyncInput): TopicSyncPlan {
  const { state, flow, policy } = input
  const known = input.previouslyKnown ?? new Map<string, string>()
  const rules = configSyncRules(flow)
  const remoteName = (topic: string): string => policy.formatRemoteTopic(flow.source.alias, topic)
  const plan: PlanBuilder = { topics: [], create: [], addPartitions: [], alterConfigs: [], problems: [], warnings: [], configsUnread: [] }
  const recreatedOnSource: ReplicatedTopic[] = []
  for (const name of [...state.source.keys()].sort()) {
    const read = state.source.get(name)!
    const held = input.heldPartitions?.get(name)
    const source = held !== undefined && held > read.partitions ? { ...read, partitions: held } : read
    const remote = remoteName(name)
    const refusal = state.configsRefused.source.get(name) ?? state.configsRefused.remote.get(remote)
    if (refusal !== undefined && !state.remote.has(remote)) plan.problems.push({ topic: name, remoteTopic: remote, message: notCreatedMessage(flow, name, remote, refusal) })
    else planTopic(plan, flow, rules, name, source, remote, state.remote.get(remote))
    if (refusal !== undefined && state.remote.has(remote)) plan.configsUnread.push({ topic: name, remoteTopic: remote, message: configsUnreadMessage(flow, name, remote, refusal) })
    const knownId = known.get(name)
    if (knownId !== undefined && knownId !== source.id && !ZERO_UUID.test(knownId) && !ZERO_UUID.test(source.id)) {
      const replicated = plan.topics.find(t => t.source === name)
      if (replicated !== undefined) recreatedOnSource.push(replicated)
    }
  }
  const unproven = new Set((input.missingUnproven ?? []).map(t => t.source))
  plan.topics.push(...(input.missingUnproven ?? []).filter(t => known.has(t.source) && !state.source.has(t.source)))
  plan.topics.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))
  const deletedOnSource = [...known.keys()].filter(n => !state.source.has(n) && !unproven.has(n)).sort().map((topic): DeletedTopic => {
    const remoteTopic = remoteName(topic)
    const deleteRemote = flow.syncTopicDeletionsEnabled && state.remote.has(remoteTopic)
    if (deleteRemote && input.deletedInMassAbsence?.has(topic) === true) return { topic, remoteTopic, deleteRemote: false, remoteKeptOnPurpose: true }
    return { topic, remoteTopic, deleteRemote }
  })
  return { flow: flow.name, ...plan, deletedOnSource, recreatedOnSource }
}

function planTopic (
  plan: PlanBuilder,
  flow: FlowConfig,
  rules: ConfigSyncRules,
  topic: string,
  source: SourceTopicState,
  remoteTopic: string,
  remote: RemoteTopicState | undefined
): void {
  if (remote === undefined) {
    if (source.configs === undefined) {
      throw new KmirrorError(ErrorCodes.INTERNAL, `the configs of source topic ${topic} were not read, but its remote topic ${remoteTopic} must be created`)
    }
    const configs = selectTopicConfigs(source.configs, rules.exclude, rules.useDefaultsFrom)
    plan.create.push({ topic, remoteTopic, partitions: source.partitions, replicationFactor: flow.replicationFactor, configs })
    plan.topics.push({ source: topic, remote: remoteTopic, partitions: source.partitions })
    return
  }
  // Each record keeps its partition number, which needs only as many remote partitions as source ones (MM2 copies
  // such a topic too): the remote topic's extra partitions receive nothing.
  if (remote.partitions > source.partitions) {
    plan.warnings.push({ topic, remoteTopic, message: morePartitionsMessage(flow, topic, source.partitions, remoteTopic, remote.partitions) })
  } else if (remote.partitions < source.partitions) {
    plan.addPartitions.push({ topic, remoteTopic, from: remote.partitions, to: source.partitions })
  }
  plan.topics.push({ source: topic, remote: remoteTopic, partitions: source.partitions })
  if (!flow.syncTopicConfigsEnabled || source.configs === undefined || remote.configs === undefined) return
  const changes = planTopicConfigChanges(source.configs, remote.configs, rules)
  if (changes.length > 0) plan.alterConfigs.push({ topic, remoteTopic, changes })
}

/**
 * A topic whose source configs cannot be read is not created: created without them, its remote topic would get the
 * target's defaults (retention, cleanup.policy), and `replication.factor` and configs are only set at creation.
 */
function notCreatedMessage (flow: FlowConfig, topic: string, remoteTopic: string, refusal: KmirrorError): string {
  return `source topic ${topic} on ${flow.source.alias} is not replicated yet: ${refusal.message}. ` +
    `Its remote topic ${remoteTopic} on ${flow.target.alias} is not created without the source's configs (it would get ${flow.target.alias}'s defaults); ` +
    'every other topic is replicated, and it joins the flow at the first topic refresh after the grant'
}

function configsUnreadMessage (flow: FlowConfig, topic: string, remoteTopic: string, refusal: KmirrorError): string {
  return `the configs of remote topic ${remoteTopic} on ${flow.target.alias} are not synced from ${topic} on ${flow.source.alias}: ${refusal.message}. ` +
    'Its records are still copied, and every other topic\'s configs are synced'
}

function morePartitionsMessage (flow: FlowConfig, topic: string, partitions: number, remoteTopic: string, remotePartitions: number): string {
  const source = flow.source.alias
  const target = flow.target.alias
  return `remote topic ${remoteTopic} on ${target} has ${remotePartitions} partitions but source topic ${topic} on ${source} has ${partitions}: ` +
    `${partitionRange(0, partitions)} ${partitions === 1 ? 'is' : 'are'} replicated, each record to the partition of its number (as MirrorMaker 2 does), ` +
    `and ${partitionRange(partitions, remotePartitions)} of ${remoteTopic} receive${remotePartitions - partitions === 1 ? 's' : ''} nothing ` +
    `(the source topic was created again with fewer partitions, or the remote topic was created with more)`
}

/** `partition 3` or `partitions 3-5`: the partitions FROM to TO (exclusive). */
function partitionRange (from: number, to: number): string {
  return to - from === 1 ? `partition ${from}` : `partitions ${from}-${to - 1}`
}

/** True when applying the plan would change nothing on the target and no topic has a problem. */
export function isTopicSyncPlanEmpty (plan: TopicSyncPlan): boolean {
  return plan.create.length === 0 && plan.addPartitions.length === 0 && plan.alterConfigs.length === 0 &&
    plan.problems.length === 0 && !plan.deletedOnSource.some(d => d.deleteRemote)
}
