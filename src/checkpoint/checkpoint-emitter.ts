/**
 * Translates the committed offsets of the source's consumer groups and writes MM2-compatible Checkpoint
 * records to `<source>.checkpoints.internal` on the target (mm2-spec §2.3, §6), so that consumers (and MM2's
 * own RemoteClusterUtils.translateOffsets) can resume on the target.
 *
 * Invariants:
 * - Translation uses the exact offset history (OffsetHistoryStore), never MM2's approximate sync search.
 * - A checkpoint is written only when it moves on from the last one stored for that group and partition (read from
 *   the topic, whoever wrote it, and kept as written), as MM2 decides: the first, a group reset back on the
 *   source, or a later target offset. A quiet group costs nothing, and checkpoints never go back when this job
 *   moves to another instance or restarts with a history that knows less (extents not yet stored). Except past
 *   the end: a stored checkpoint beyond its remote partition's end (the remote topic created again) is replaced.
 * - A translation that may skip (a commit before the first offset the history maps) is never checkpointed.
 * - A commit beyond what was replicated is checkpointed conservatively at the end of the replicated data: a
 *   consumer resuming there re-reads nothing it has not read on the target and skips nothing.
 * - A group's checkpoints are "current" (`currentSince`) once a pass wrote its changed checkpoints, or found none
 *   changed; a group the source no longer lists (or the filter no longer selects) is forgotten.
 */
import type { FlowConfig } from '../config/types.ts'
import { decodeCheckpointRecord, encodeCheckpointKey, encodeCheckpointValue } from '../formats/checkpoint.ts'
import type { AdminClient } from '../kafka/admin-client.ts'
import { isConsumerProtocol, type CommittedOffset } from '../kafka/group-admin.ts'
import type { RecordFetcher } from '../kafka/record-fetcher.ts'
import type { OutRecord, RecordWriter } from '../kafka/record-writer.ts'
import { readTopicFrom } from '../kafka/topic-reader.ts'
import type { Logger } from '../logger.ts'
import { errorMessage } from '../errors.ts'
import { compileJavaRegexList } from '../policy/java-regex.ts'
import { createTopicFilter } from '../policy/topic-filter.ts'
import type { ReplicationPolicy } from '../policy/replication-policy.ts'
import type { Translation } from './offset-history.ts'
import { partitionKey } from '../topic-partition.ts'

export interface GroupFilterConfig {
  readonly groups: readonly string[]
  readonly groupsExclude: readonly string[]
}

/** MM2's DefaultGroupFilter: a whole-string match of `groups`, minus `groups.exclude` (which wins). */
export function createGroupFilter (config: GroupFilterConfig): (group: string) => boolean {
  const include = compileJavaRegexList(config.groups)
  const exclude = compileJavaRegexList(config.groupsExclude)
  return group => include !== null && include.test(group) && !(exclude?.test(group) ?? false)
}

export interface TranslatedCommit {
  readonly group: string
  readonly topic: string
  readonly remoteTopic: string
  readonly partition: number
  readonly upstreamOffset: number
  readonly metadata: string
  readonly translation: Translation
}

/** The part of the flow that knows how far each partition has been copied, and how to translate. */
export interface Translator {
  /** Undefined when the partition is not replicated by this flow. */
  translate: (topic: string, partition: number, committed: number) => Translation | undefined
}

/** Translates one group's commits; partitions this flow does not replicate are left out. */
export function translateCommits (group: string, commits: readonly CommittedOffset[], translator: Translator, remoteTopicOf: (topic: string) => string): TranslatedCommit[] {
  const out: TranslatedCommit[] = []
  for (const c of commits) {
    const translation = translator.translate(c.topic, c.partition, c.offset)
    if (translation === undefined || translation.offset < 0) continue
    out.push({ group, topic: c.topic, remoteTopic: remoteTopicOf(c.topic), partition: c.partition, upstreamOffset: c.offset, metadata: c.metadata, translation })
  }
  return out
}

export interface CheckpointEmitterDeps {
  readonly flow: FlowConfig
  readonly policy: ReplicationPolicy
  readonly sourceAdmin: Pick<AdminClient, 'groups'>
  readonly targetAdmin: Pick<AdminClient, 'createTopic'>
  readonly writer: Pick<RecordWriter, 'write'>
  /** Reads the checkpoints stored so far (by any instance, or by MM2); absent in tests that start empty. */
  readonly reader?: Pick<RecordFetcher, 'fetch' | 'listOffsets'>
  readonly translator: Translator
  readonly log: Logger
}

export class CheckpointEmitter {
  readonly topic: string
  readonly #deps: CheckpointEmitterDeps
  readonly #shouldCheckpointGroup: (group: string) => boolean
  /** The flow's topic filter: as MM2, only commits on topics it passes are checkpointed. */
  readonly #replicated: (topic: string) => boolean
  /** The last checkpoint stored, per group, remote topic and partition: read from the topic, and written here. */
  readonly #last = new Map<string, { upstream: number, downstream: number }>()
  /** Where the next read of the checkpoints topic goes on; null before the first. */
  #next: number | null = null
  /** The last read of the checkpoints topic failed (warned once until one succeeds). */
  #readRefused = false
  /** Date.now() time each group's checkpoints were last brought up to date. */
  readonly #current = new Map<string, number>()

  constructor (deps: CheckpointEmitterDeps) {
    this.#deps = deps
    this.topic = deps.policy.checkpointsTopic(deps.flow.source.alias)
    this.#shouldCheckpointGroup = createGroupFilter(deps.flow)
    this.#replicated = createTopicFilter(deps.flow)
  }

  async init (): Promise<void> {
    await this.#deps.targetAdmin.createTopic({
      name: this.topic, partitions: 1, replicationFactor: this.#deps.flow.checkpointsTopicReplicationFactor, replicationFactorKey: 'checkpoints.topic.replication.factor', configs: { 'cleanup.policy': 'compact' }
    })
  }

  /** The consumer groups of the source this flow checkpoints (as MM2's listConsumerGroups: other programs' groups have no consumer offsets). */
  async groups (): Promise<string[]> {
    const listed = await this.#deps.sourceAdmin.groups.listGroups()
    return listed.filter(g => isConsumerProtocol(g.protocolType)).map(g => g.groupId).filter(this.#shouldCheckpointGroup).sort()
  }

  /**
   * Translates every selected group's commits and writes the checkpoints that changed. Returns how many. A group
   * whose commits cannot be read (e.g. no DESCRIBE on it) is warned about and skipped; the others are written.
   * SIGNAL aborted (this instance no longer owns the job: another may write checkpoints now) writes nothing: it is
   * looked at right before the write, and throws its reason.
   */
  async emit (signal?: AbortSignal): Promise<number> {
    await this.#readStored()
    const groups = await this.groups()
    const read: string[] = []
    const candidates: Candidate[] = []
    for (const group of groups) {
      let commits: CommittedOffset[]
      try {
        commits = await this.#deps.sourceAdmin.groups.listCommittedOffsets(group)
      } catch (err) {
        this.#deps.log.warn({ err, group }, `cannot read the committed offsets of group ${group} on cluster ${this.#deps.flow.source.alias} (${errorMessage(err)}): its checkpoints are not brought up to date; the other groups' are`)
        continue
      }
      read.push(group)
      candidates.push(...this.#candidatesOf(group, commits))
    }
    const behind = candidates.filter(c => c.behind)
    const overshooting = behind.filter(c => this.#overshoots(c))
    const chosen = [...candidates.filter(c => !c.behind), ...overshooting, ...await this.#pastRemoteEnd(behind.filter(c => !overshooting.includes(c)))]
    signal?.throwIfAborted()
    // The signal goes with the write too: a run of a membership lost meanwhile sends nothing more (record-writer.ts).
    if (chosen.length > 0) await this.#deps.writer.write([{ topic: this.topic, partition: 0, records: chosen.map(c => c.record) }], { until: signal })
    for (const c of chosen) this.#last.set(c.key, c.checkpoint)
    this.#noteCurrent(groups, read, Date.now())
    return chosen.length
  }

  /** GROUP's checkpoints that differ from the stored ones; `behind` when only a remote topic created again can justify them. */
  #candidatesOf (group: string, commits: readonly CommittedOffset[]): Candidate[] {
    const { flow, policy, translator } = this.#deps
    const timestamp = BigInt(Date.now())
    const out: Candidate[] = []
    for (const t of translateCommits(group, commits.filter(c => this.#replicated(c.topic)), translator, topic => policy.formatRemoteTopic(flow.source.alias, topic))) {
      // Before the first offset the history maps, the history's start may be past records the group has not
      // read: a checkpoint there could skip them (MM2 writes none either).
      if (t.translation.maySkip === true) continue
      const key = `${group}\u0000${t.remoteTopic}\u0000${t.partition}`
      const last = this.#last.get(key)
      if (last !== undefined && last.upstream === t.upstreamOffset && last.downstream === t.translation.offset) continue
      out.push({
        key,
        source: { topic: t.topic, partition: t.partition },
        remote: { topic: t.remoteTopic, partition: t.partition },
        checkpoint: { upstream: t.upstreamOffset, downstream: t.translation.offset },
        stored: last,
        behind: !moves(last, t.upstreamOffset, t.translation.offset),
        record: {
          key: encodeCheckpointKey({ group, topic: t.remoteTopic, partition: t.partition }),
          value: encodeCheckpointValue({ upstreamOffset: t.upstreamOffset, downstreamOffset: t.translation.offset, metadata: t.metadata }),
          headers: [],
          timestamp
        }
      })
      if (!t.translation.exact) this.#deps.log.debug({ group, topic: t.topic, partition: t.partition, reason: t.translation.reason }, 'checkpoint is conservative')
    }
    return out
  }

  /**
   * Whether the stored checkpoint of C points past where its own source offset maps now, exactly: target offsets
   * were written again since it was stored (the remote topic created again, a target log truncated), so it is no
   * position at all. A history that knows more maps it further, never less: within one copy of the target
   * offsets, an exact translation is never below a stored one.
   */
  #overshoots (c: Candidate): boolean {
    if (c.stored === undefined) return false
    const now = this.#deps.translator.translate(c.source.topic, c.source.partition, c.stored.upstream)
    return now !== undefined && now.exact && now.offset < c.stored.downstream
  }

  /**
   * Of the checkpoints that would move back, those whose stored one points past its remote partition's end: the
   * remote topic was created again (or its log truncated), so the stored one is no position at all and the new
   * one replaces it. The others are dropped, as MM2 drops them. Unknown ends keep them dropped.
   */
  async #pastRemoteEnd (behind: readonly Candidate[]): Promise<Candidate[]> {
    const reader = this.#deps.reader
    if (behind.length === 0 || reader === undefined) return []
    let ends: Map<string, number>
    try {
      ends = await reader.listOffsets([...new Map(behind.map(c => [partitionKey(c.remote.topic, c.remote.partition), c.remote])).values()], 'latest')
    } catch {
      return []
    }
    return behind.filter(c => (c.stored?.downstream ?? 0) > (ends.get(partitionKey(c.remote.topic, c.remote.partition)) ?? Number.POSITIVE_INFINITY))
  }

  /**
   * Reads the checkpoints stored since the last read (all of them the first time): what another instance that ran
   * this job, or MM2 before a hand-over, wrote last is the baseline a new checkpoint must move from.
   */
  async #readStored (): Promise<void> {
    const reader = this.#deps.reader
    if (reader === undefined) return
    try {
      await this.#readFrom(reader)
      this.#readRefused = false
    } catch (err) {
      // As MM2, which goes on with an empty store: the checkpoints are written all the same, only not held to the
      // ones other writers stored. Said once per outage.
      if (!this.#readRefused) this.#deps.log.warn({ err }, `cannot read ${this.topic} on cluster ${this.#deps.flow.target.alias} (${errorMessage(err)}): checkpoints are written without comparing them with the ones stored by other instances or MM2, and may go back; grant READ on that topic`)
      this.#readRefused = true
    }
  }

  async #readFrom (reader: Pick<RecordFetcher, 'fetch' | 'listOffsets'>): Promise<void> {
    const ends = await readTopicFrom(reader as RecordFetcher, this.topic, 1, new Map(this.#next === null ? [] : [[0, this.#next]]), (_, record) => {
      const checkpoint = decodeCheckpointRecord(record)
      if (checkpoint === null) return
      this.#last.set(`${checkpoint.group}\u0000${checkpoint.topic}\u0000${checkpoint.partition}`, { upstream: checkpoint.upstreamOffset, downstream: checkpoint.downstreamOffset })
    })
    this.#next = ends.get(0) ?? this.#next
  }

  /** LISTED: the groups selected; READ: those brought up to date now (a group that failed keeps its time). */
  #noteCurrent (listed: readonly string[], read: readonly string[], now: number): void {
    const selected = new Set(listed)
    for (const group of this.#current.keys()) if (!selected.has(group)) this.#current.delete(group)
    for (const group of read) this.#current.set(group, now)
  }

  /** Per group, when its checkpoints were last brought up to date (Date.now() time), by group name. */
  currentSince (): { group: string, at: number }[] {
    return [...this.#current].map(([group, at]) => ({ group, at })).sort((a, b) => a.group.localeCompare(b.group))
  }
}

/**
 * Whether a checkpoint (UPSTREAM, DOWNSTREAM) moves on from the last one stored, as MM2's checkpoint task decides:
 * the first one; a group that went back on the source (it was reset there); or a later target offset. A lower or
 * equal target offset for the same or a later source offset is dropped: a translation that knows less than the one
 * before (another instance's history not yet read, extents not yet stored) never moves a checkpoint back.
 */
function moves (last: { upstream: number, downstream: number } | undefined, upstream: number, downstream: number): boolean {
  return last === undefined || upstream < last.upstream || downstream > last.downstream
}

/** A checkpoint that differs from the one stored for its group and remote partition. */
interface Candidate {
  readonly key: string
  readonly source: { readonly topic: string, readonly partition: number }
  readonly remote: { readonly topic: string, readonly partition: number }
  readonly checkpoint: { readonly upstream: number, readonly downstream: number }
  readonly stored: { readonly upstream: number, readonly downstream: number } | undefined
  /** It would move the stored checkpoint back (see `moves`). */
  readonly behind: boolean
  readonly record: OutRecord
}
