/**
 * Opt-in group offset sync (`sync.group.offsets.enabled`, KIP-545, mm2-spec §6.5): commits the exactly
 * translated offsets of the source's consumer groups to the same groups on the target, so consumers that fail
 * over resume where they left off.
 *
 * Invariants (MM2's rules, with exact offsets):
 * - A target group is written only while it has no active members (state Empty, or Dead = absent), checked
 *   immediately before the write; the broker refusing the write because a member joined meanwhile is a skip.
 * - Only forward: a partition whose target commit is at or beyond the translated offset is left alone. That
 *   is also MM2's rule for groups a consumer on the target already moved on its own: they are never rewound.
 * - Only exact translations are written; a commit beyond what was replicated waits for the copy to catch up.
 * - Every skipped group and partition is logged at debug with why, and counted by reason.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { FlowConfig } from '../config/types.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import { isConsumerProtocol, isInactive, type CommittedOffset, type GroupState } from '../kafka/group-admin.ts'
import type { Logger } from '../logger.ts'
import type { MetricKey } from '../metrics/definitions.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import { partitionKey } from '../topic-partition.ts'
import { createTopicFilter } from '../policy/topic-filter.ts'
import { createGroupFilter, translateCommits, type TranslatedCommit, type Translator } from './checkpoint-emitter.ts'

export const GroupSyncSkipReasons = {
  /** The target group has members: consumers there own its offsets. */
  ACTIVE: 'active',
  /** A transaction holds commits of the target group open: an application commits for it there (counted as active). */
  IN_TRANSACTION: 'in-transaction',
  /** The translation is not exact (beyond what was replicated, before the history). */
  INEXACT: 'inexact',
  /** The target group already committed beyond the translated offset (a consumer there moved it on its own). */
  NOT_FORWARD: 'not-forward'
} as const
export type GroupSyncSkipReason = (typeof GroupSyncSkipReasons)[keyof typeof GroupSyncSkipReasons]

export interface OffsetWrite {
  readonly topic: string
  readonly partition: number
  readonly offset: number
}

export interface SkippedPartition {
  readonly topic: string
  readonly partition: number
  readonly reason: GroupSyncSkipReason
  readonly detail: string
}

export interface GroupSyncPlan {
  readonly writes: readonly OffsetWrite[]
  readonly skipped: readonly SkippedPartition[]
  /** Set when the whole group is skipped. */
  readonly groupSkipped?: GroupSyncSkipReason
}

const key = partitionKey

/** Why a whole group was left alone, as its debug line says. */
const GROUP_SKIPPED: Partial<Record<GroupSyncSkipReason, string>> = {
  [GroupSyncSkipReasons.ACTIVE]: 'the target group has active members',
  [GroupSyncSkipReasons.IN_TRANSACTION]: 'a transaction holds commits of the target group open (an application commits offsets for it there)'
}

const SKIP_METRICS = {
  [GroupSyncSkipReasons.ACTIVE]: 'groupOffsetSyncSkippedActive',
  [GroupSyncSkipReasons.IN_TRANSACTION]: 'groupOffsetSyncSkippedActive',
  [GroupSyncSkipReasons.INEXACT]: 'groupOffsetSyncSkippedInexact',
  [GroupSyncSkipReasons.NOT_FORWARD]: 'groupOffsetSyncSkippedNotForward'
} as const satisfies Record<GroupSyncSkipReason, MetricKey>

/**
 * What to write to one target group: pure. `targetCommitted` are the group's current commits on the target
 * (remote topic names). Example: source commit 120 translates exactly to 100; target at 90 → write 100;
 * target at 100 → nothing to do; target at 130 → skip (not forward: never rewound); translation not exact →
 * skip; target group Stable → skip all.
 */
export function planGroupSync (state: GroupState, translated: readonly TranslatedCommit[], targetCommitted: readonly CommittedOffset[]): GroupSyncPlan {
  if (!isInactive(state)) return { writes: [], skipped: [], groupSkipped: GroupSyncSkipReasons.ACTIVE }
  const current = new Map(targetCommitted.map(c => [key(c.topic, c.partition), c.offset]))
  const writes: OffsetWrite[] = []
  const skipped: SkippedPartition[] = []
  for (const t of translated) {
    const { remoteTopic: topic, partition, translation } = t
    if (!translation.exact) {
      skipped.push({ topic, partition, reason: GroupSyncSkipReasons.INEXACT, detail: translation.reason ?? 'not exact' })
      continue
    }
    const now = current.get(key(topic, partition))
    if (now === translation.offset) continue
    if (now !== undefined && now > translation.offset) {
      skipped.push({ topic, partition, reason: GroupSyncSkipReasons.NOT_FORWARD, detail: `target committed ${now}, translated ${translation.offset}` })
      continue
    }
    writes.push({ topic, partition, offset: translation.offset })
  }
  return { writes, skipped }
}

export interface GroupOffsetSyncDeps {
  readonly flow: FlowConfig
  readonly policy: ReplicationPolicy
  readonly sourceAdmin: Pick<AdminClient, 'groups'>
  readonly targetAdmin: Pick<AdminClient, 'groups'>
  readonly translator: Translator
  readonly log: Logger
  readonly metrics: Metrics
}

export interface GroupSyncResult {
  readonly group: string
  readonly written: readonly OffsetWrite[]
  readonly skipped: readonly SkippedPartition[]
  readonly groupSkipped?: GroupSyncSkipReason
}

export class GroupOffsetSync {
  readonly #deps: GroupOffsetSyncDeps
  readonly #shouldSyncGroup: (group: string) => boolean
  readonly #replicated: (topic: string) => boolean

  constructor (deps: GroupOffsetSyncDeps) {
    this.#deps = deps
    this.#shouldSyncGroup = createGroupFilter(deps.flow)
    this.#replicated = createTopicFilter(deps.flow)
  }

  /**
 * One pass over every selected source group. A group that fails does not stop the others; it is logged with its
 * cause, and the pass then fails with one error naming the groups (not repeating the causes). SIGNAL aborted (this
 * instance no longer owns the job: another may sync these groups now) ends the pass with its reason, before the
 * next group and right before each write: a commit written after the new owner's could move a group backwards.
 */
  async sync (signal?: AbortSignal): Promise<GroupSyncResult[]> {
    const listed = await this.#deps.sourceAdmin.groups.listGroups()
    const results: GroupSyncResult[] = []
    const failed: { group: string, err: unknown }[] = []
    for (const group of listed.filter(g => isConsumerProtocol(g.protocolType)).map(g => g.groupId).filter(this.#shouldSyncGroup).sort()) {
      signal?.throwIfAborted()
      try {
        const result = await this.syncGroup(group, signal)
        if (result !== null) results.push(result)
      } catch (err) {
        if (signal?.aborted === true) throw signal.reason
        this.#deps.log.warn({ group, err }, 'group offsets not synced')
        failed.push({ group, err })
      }
    }
    if (failed.length > 0) throw passFailure(failed)
    return results
  }

  /** Syncs one group; null when it has no commits on partitions this flow replicates. SIGNAL: as for `sync`. */
  async syncGroup (group: string, signal?: AbortSignal): Promise<GroupSyncResult | null> {
    const { flow, policy, sourceAdmin, targetAdmin, translator } = this.#deps
    // As MM2: only topics the flow's topic filter passes (one excluded since keeps its history, not its syncs).
    const commits = (await sourceAdmin.groups.listCommittedOffsets(group)).filter(c => this.#replicated(c.topic))
    const translated = translateCommits(group, commits, translator, topic => policy.formatRemoteTopic(flow.source.alias, topic))
    if (translated.length === 0) return null
    // Stable: a plain read can lag just after the target's coordinator moved, and a sync planned on a lagging
    // commit could move the group backwards.
    const asked = new Map([[group, translated.map(t => ({ topic: t.remoteTopic, partition: t.partition }))]])
    const target = (await targetAdmin.groups.stableCommittedOffsetsOf([group], 'READ', { partitions: asked, busyOffsets: false })).get(group)
    // The state is read last, right before the write: a consumer that joined since is seen.
    const state = (await targetAdmin.groups.describeGroups([group], 'READ')).get(group)?.state ?? 'Dead'
    // A transaction holding commits of the group open: an application commits for it there, as a member would.
    const plan = target?.inTransaction === true
      ? { writes: [], skipped: [], groupSkipped: GroupSyncSkipReasons.IN_TRANSACTION }
      : planGroupSync(state, translated, target?.offsets ?? [])
    let result: GroupSyncResult = { group, written: plan.writes, skipped: plan.skipped, ...(plan.groupSkipped === undefined ? {} : { groupSkipped: plan.groupSkipped }) }
    if (plan.writes.length > 0) {
      signal?.throwIfAborted()
      try {
        await targetAdmin.groups.alterCommittedOffsets(group, plan.writes)
      } catch (err) {
        // The broker refuses commits from outside the group once a member joined (MM2 logs the same case);
        // any other failure is the job's.
        const now = (await targetAdmin.groups.describeGroups([group], 'READ')).get(group)?.state ?? 'Dead'
        if (isInactive(now)) throw err
        this.#deps.log.debug({ group, err }, 'target group offsets not written: a consumer joined the group on the target')
        result = { group, written: [], skipped: plan.skipped, groupSkipped: GroupSyncSkipReasons.ACTIVE }
      }
    }
    this.#report(result, state)
    return result
  }

  #report (result: GroupSyncResult, state: GroupState): void {
    const { flow, log, metrics } = this.#deps
    if (result.groupSkipped !== undefined) {
      log.debug({ group: result.group, state, reason: result.groupSkipped }, `group offsets not synced: ${GROUP_SKIPPED[result.groupSkipped] ?? 'skipped'}`)
      metrics.inc(SKIP_METRICS[result.groupSkipped], { flow: flow.name })
      return
    }
    for (const s of result.skipped) {
      log.debug({ group: result.group, topic: s.topic, partition: s.partition, reason: s.reason, detail: s.detail }, 'partition offset not synced')
      metrics.inc(SKIP_METRICS[s.reason], { flow: flow.name })
    }
    if (result.written.length > 0) {
      log.debug({ group: result.group, partitions: result.written.length }, 'group offsets synced to the target')
      metrics.inc('groupOffsetsSynced', { flow: flow.name }, result.written.length)
    }
  }
}

/** The error of a pass in which FAILED groups could not be synced: their causes were logged, each once. */
function passFailure (failed: readonly { group: string, err: unknown }[]): KmirrorError {
  const first = failed[0]!.err
  const code = first instanceof KmirrorError ? first.code : ErrorCodes.INTERNAL
  const groups = failed.map(f => f.group)
  return new KmirrorError(code, `offsets of ${groups.length} group(s) not synced, each refused or failed as its warning "group offsets not synced" says: ${groups.join(', ')}`, {
    retriable: true, details: { groups }
  })
}
