/**
 * The source topics a flow's group leader lists as work when it does not run the topic refresh itself (the refresh
 * job is another member's, or this one's refresh has not run since it got the job): read from the clusters, and
 * decided as the refresh decides, so that the work listed is what the refresh replicates and a steady state makes no
 * rebalance (ARCHITECTURE invariant 31). A leader that runs the refresh lists its last result instead
 * (`RemoteTopics.replicable`).
 *
 * Invariants:
 * - A source topic is work once its remote topic exists, with the partitions both sides have (the fewer of the
 *   two): a remote topic whose creation was refused, or a growth that was refused, is what the refresh leaves out
 *   too, and no member is given a partition it has nowhere to write.
 * - A topic listed before under the same topic id keeps the count listed then when the source reads fewer (a broker
 *   behind a growth; Kafka never removes partitions), as the refresh does (partition-count-hold.ts).
 * - A topic listed before (or replicated by this instance's last refresh) that the source's listing leaves out stays
 *   work with its count unless the source, asked by name, answered that it does not exist at two estimates in a row
 *   (twelve over a mass absence), counted as the refresh counts (deletion-proof.ts): a topic kmirror may no longer
 *   DESCRIBE stays in the flow (invariant 23), and so does every topic while one source broker answers from an
 *   empty cache (dropped at the first answer, every member released every partition at that rebalance, and the
 *   refresh, which kept them, made the group rebalance again). Asked only when such topics exist; a failed ask keeps
 *   them, counts unchanged. One found deleted stays out until the source lists it again.
 * - A topic listed before whose remote topic the target's metadata leaves out stays work as listed: a lagging broker
 *   leaves out a topic that exists, and the refresh keeps it too (invariant 37).
 */
import type { TopicProbe } from '../kafka/admin-client.ts'
import { DeletionProof, MissingVerdicts } from './deletion-proof.ts'
import type { ReplicatedTopic } from './topic-sync-plan.ts'
import type { TopicState } from './topic-state.ts'

/** A topic of the work listed before, with its source topic id when known. */
export interface ListedTopic extends ReplicatedTopic {
  readonly id?: string
}

/** What a leader's estimates remember from one to the next. */
export class WorkEstimateMemory {
  /** The absences of missing topics, counted from estimate to estimate. */
  readonly proof = new DeletionProof()
  /**
   * Topics found deleted, left out until the source lists them again: the proof forgets a topic once it is proven,
   * and the work listed or replicated before may still hold it.
   */
  readonly deleted = new Set<string>()
}

/** Kafka's "no id" (brokers before 2.8). */
const NO_ID = /^[0-]*$/

/**
 * The work from STATE (source topics passing the flow's filters, their remote topics), PREVIOUS (what was listed or
 * replicated before, by source name), PROBE (asks the source for topics by name) and MEMORY (what the estimates
 * before this one found; a fresh one counts this estimate alone).
 */
export async function estimateGroupWork (
  state: TopicState,
  remoteName: (topic: string) => string,
  previous: ReadonlyMap<string, ListedTopic>,
  probe: (names: readonly string[]) => Promise<ReadonlyMap<string, TopicProbe>>,
  memory = new WorkEstimateMemory()
): Promise<ListedTopic[]> {
  const work: ListedTopic[] = []
  for (const [name, source] of state.source) {
    memory.deleted.delete(name)
    const remote = remoteName(name)
    const remoteState = state.remote.get(remote)
    const before = previous.get(name)
    if (remoteState === undefined) {
      if (before !== undefined) work.push(before)
      continue
    }
    const sameTopic = before?.id !== undefined && before.id === source.id && !NO_ID.test(source.id)
    const sourcePartitions = sameTopic ? Math.max(source.partitions, before.partitions) : source.partitions
    work.push({ source: name, remote, partitions: Math.min(sourcePartitions, remoteState.partitions), id: source.id })
  }
  for (const name of memory.deleted) if (!previous.has(name)) memory.deleted.delete(name)
  const missing = [...previous.values()].filter(t => !state.source.has(t.source) && !memory.deleted.has(t.source))
  work.push(...await stillThere(missing, probe, memory, previous.size - memory.deleted.size))
  return work.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))
}

/**
 * The MISSING topics (of REPLICATED listed or replicated before) not proven deleted; all of them when the source
 * cannot be asked. Always checked, with none missing too: a topic listed again starts its count again.
 */
async function stillThere (missing: readonly ListedTopic[], probe: (names: readonly string[]) => Promise<ReadonlyMap<string, TopicProbe>>, memory: WorkEstimateMemory, replicated: number): Promise<ListedTopic[]> {
  const verdicts = await memory.proof.check(missing.map(t => t.source), probe, replicated).catch(() => null)
  if (verdicts === null) return [...missing]
  const kept: ListedTopic[] = []
  for (const t of missing) {
    if (verdicts.get(t.source)?.verdict === MissingVerdicts.DELETED) memory.deleted.add(t.source)
    else kept.push(t)
  }
  return kept
}
