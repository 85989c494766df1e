/**
 * What one cluster's topic names say about the clusters upstream of it, computed as MM2's MirrorClient does
 * (mm2-spec §7.2): only the NAMES of heartbeat topics are used, never their contents.
 *
 * Worked example, chain A->B->C with the default policy: C holds `heartbeats`, `B.heartbeats` and
 * `B.A.heartbeats`. Walking `B.A.heartbeats` gives sources B (1 hop), then A (2 hops); `B.heartbeats` gives
 * B (1 hop); `heartbeats` has no source. So C's upstream clusters are {A, B}, A at 2 hops and B at 1.
 */
import type { ReplicationPolicy } from '../policy/replication-policy.ts'

export interface UpstreamCluster {
  readonly alias: string
  /** MirrorClient.replicationHops: the fewest hops over every heartbeat topic that names this alias. */
  readonly hops: number
  /** A heartbeat topic giving that number of hops (the shortest name, then the first by name, when several do). */
  readonly via: string
}

/** MirrorClient.heartbeatTopics: every topic the policy takes for a heartbeat topic, sorted. */
export function heartbeatTopics (policy: ReplicationPolicy, topics: readonly string[]): string[] {
  return topics.filter(t => policy.isHeartbeatsTopic(t)).sort()
}

/**
 * MirrorClient.allSources: the sources met walking a topic upstream, stopping at a source seen before
 * (IdentityReplicationPolicy and custom policies can name a cycle).
 */
export function topicSources (policy: ReplicationPolicy, topic: string): string[] {
  const sources: string[] = []
  let current: string | null = topic
  let source = policy.topicSource(current)
  while (source !== null && !sources.includes(source)) {
    sources.push(source)
    current = policy.upstreamTopic(current)
    if (current === null) break
    source = policy.topicSource(current)
  }
  return sources
}

/**
 * MirrorClient.countHopsForTopic: 1 + the number of upstream steps until the topic's source is `alias`;
 * -1 when the walk ends (no source) or comes back to a source already seen without meeting `alias`.
 * `A.heartbeats` → 1 for A; `B.A.heartbeats` → 2 for A, 1 for B; `heartbeats` → -1 for anything.
 */
export function countHops (policy: ReplicationPolicy, topic: string, alias: string): number {
  const visited = new Set<string>()
  let current: string | null = topic
  for (let hops = 1; current !== null; hops++) {
    const source = policy.topicSource(current)
    if (source === null) return -1
    if (source === alias) return hops
    if (visited.has(source)) return -1
    visited.add(source)
    current = policy.upstreamTopic(current)
  }
  return -1
}

/** MirrorClient.upstreamClusters: every source named along any heartbeat topic's upstream walk, sorted. */
export function upstreamClusters (policy: ReplicationPolicy, topics: readonly string[]): string[] {
  const all = new Set<string>()
  for (const topic of heartbeatTopics(policy, topics)) for (const source of topicSources(policy, topic)) all.add(source)
  return [...all].sort()
}

/** MirrorClient.replicationHops: the fewest hops from `alias` over the heartbeat topics, or -1 if none leads there. */
export function replicationHops (policy: ReplicationPolicy, topics: readonly string[], alias: string): number {
  return fewestHops(policy, heartbeatTopics(policy, topics), alias)?.hops ?? -1
}

/** Each upstream cluster with its hop count, nearest first, then by alias. */
export function describeUpstream (policy: ReplicationPolicy, topics: readonly string[]): UpstreamCluster[] {
  const heartbeats = heartbeatTopics(policy, topics)
  const out: UpstreamCluster[] = []
  for (const alias of upstreamClusters(policy, heartbeats)) {
    const found = fewestHops(policy, heartbeats, alias)
    if (found !== undefined) out.push({ alias, ...found })
  }
  return out.sort((a, b) => a.hops - b.hops || (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0))
}

function fewestHops (policy: ReplicationPolicy, heartbeats: readonly string[], alias: string): { hops: number, via: string } | undefined {
  let best: { hops: number, via: string } | undefined
  for (const topic of heartbeats) {
    const hops = countHops(policy, topic, alias)
    if (hops === -1) continue
    if (best === undefined || hops < best.hops || (hops === best.hops && topic.length < best.via.length)) best = { hops, via: topic }
  }
  return best
}
