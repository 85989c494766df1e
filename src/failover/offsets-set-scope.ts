/**
 * The partitions of one group that `kmirror offsets set` plans, from its flags (pure): `--topic T` (every partition),
 * `--topic T:0,2`, `--from-file` lines, or `--all-topics` (the partitions the group has committed offsets for).
 *
 * A topic the operator named (`--topic`, a file line) that does not exist, or a partition beyond its count, is a
 * usage error (exit 2). A topic `--all-topics` found only among the group's committed offsets that the cluster does
 * not list (deleted during the scan, or one the principal may not DESCRIBE) is left out with a note naming the group,
 * the topic and the fix: refusing would leave `--all-groups --all-topics` unusable whenever one such topic exists.
 * (Brokers drop a deleted topic's committed offsets themselves, so a deleted topic is only met in a race.)
 * Likewise committed partitions beyond the count of a topic re-created with fewer partitions.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { shellWord, toolCommand, type ToolCluster } from '../kafka/tool-command.ts'
import { parsePartitionKey } from '../topic-partition.ts'
import type { OffsetSpec } from './offset-spec.ts'

export interface TopicScope {
  readonly topic: string
  /** Undefined: every partition of the topic. */
  readonly partitions?: readonly number[]
}

/** What one group's scope is made of: the topics and partitions asked for (undefined: every partition). */
export interface WantedScope {
  readonly topics: ReadonlyMap<string, readonly number[] | undefined>
  /** True for `--all-topics`: the topics came from the group's committed offsets, not from the operator. */
  readonly fromCommits: boolean
}

export interface GroupScope {
  /** Partitions to plan, per topic, sorted. */
  readonly partitions: Map<string, number[]>
  /** Notes for the operator (committed offsets of deleted topics left alone). */
  readonly notes: string[]
}

/** The topics and partitions GROUP's scope names, before they are checked against the cluster. */
export function wantedScope (spec: OffsetSpec, topics: readonly TopicScope[] | undefined, group: string, committed: ReadonlyMap<string, number>): WantedScope {
  const wanted = new Map<string, number[] | undefined>()
  if (spec.kind === 'file') {
    for (const p of spec.positions.filter(p => p.group === undefined || p.group === group)) wanted.set(p.topic, [...(wanted.get(p.topic) ?? []), p.partition])
    return { topics: wanted, fromCommits: false }
  }
  if (topics !== undefined) {
    for (const t of topics) wanted.set(t.topic, t.partitions === undefined ? undefined : [...(wanted.get(t.topic) ?? []), ...t.partitions])
    return { topics: wanted, fromCommits: false }
  }
  for (const key of committed.keys()) {
    const { topic, partition } = parsePartitionKey(key)
    wanted.set(topic, [...(wanted.get(topic) ?? []), partition])
  }
  return { topics: wanted, fromCommits: true }
}

/**
 * WANTED checked against the partition counts of the cluster's topics (`counts`: absent for a topic that does not
 * exist). Throws USAGE for a named topic that does not exist or a partition beyond the count.
 */
export function checkScope (wanted: WantedScope, counts: ReadonlyMap<string, number>, group: string, cluster: ToolCluster & { readonly alias: string }): GroupScope {
  const alias = cluster.alias
  const partitions = new Map<string, number[]>()
  const notes: string[] = []
  for (const [topic, asked] of wanted.topics) {
    const count = counts.get(topic)
    if (count === undefined && wanted.fromCommits) {
      notes.push(`group ${group} has committed offsets for topic ${topic}, which cluster ${alias} does not list (deleted since, or not visible to ` +
        `kmirror's principal: grant it DESCRIBE on the topic to plan it): left as they are (to remove them, as a principal allowed to delete the group's offsets: ${toolCommand('kafka-consumer-groups.sh', cluster, `--delete-offsets --group ${shellWord(group)} --topic ${shellWord(topic)}`, 'ADMIN')})`)
      continue
    }
    if (count === undefined) throw new KmirrorError(ErrorCodes.USAGE, `topic ${topic} does not exist on cluster ${alias}`)
    const bad = (asked ?? []).filter(p => p >= count)
    if (bad.length > 0 && !wanted.fromCommits) throw new KmirrorError(ErrorCodes.USAGE, `topic ${topic} on cluster ${alias} has partitions 0..${count - 1}, not ${bad.join(', ')}`)
    if (bad.length > 0) {
      notes.push(`group ${group} has committed offsets for partition(s) ${bad.join(', ')} of topic ${topic}, which has partitions 0..${count - 1} on cluster ${alias} ` +
        '(re-created with fewer partitions): those are left as they are')
    }
    const kept = asked?.filter(p => p < count)
    partitions.set(topic, kept === undefined ? Array.from({ length: count }, (_, p) => p) : [...new Set(kept)].sort((a, b) => a - b))
  }
  return { partitions, notes }
}
