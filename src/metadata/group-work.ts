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
 *   work with its count unless the source, asked by name, answers that it does not exist: a topic kmirror may no
 *   longer DESCRIBE stays in the flow (invariant 23). Asked only when such topics exist; a failed ask keeps them.
 */
import { TopicPresences, type TopicProbe } from '../kafka/admin-client.ts'
import type { ReplicatedTopic } from './topic-sync-plan.ts'
import type { TopicState } from './topic-state.ts'

/** A topic of the work listed before, with its source topic id when known. */
export interface ListedTopic extends ReplicatedTopic {
  readonly id?: string
}

/** Kafka's "no id" (brokers before 2.8). */
const NO_ID = /^[0-]*$/

/**
 * The work from STATE (source topics passing the flow's filters, their remote topics), PREVIOUS (what was listed or
 * replicated before, by source name) and PROBE (asks the source for topics by name).
 */
export async function estimateGroupWork (
  state: TopicState,
  remoteName: (topic: string) => string,
  previous: ReadonlyMap<string, ListedTopic>,
  probe: (names: readonly string[]) => Promise<ReadonlyMap<string, TopicProbe>>
): Promise<ListedTopic[]> {
  const work: ListedTopic[] = []
  for (const [name, source] of state.source) {
    const remote = remoteName(name)
    const remoteState = state.remote.get(remote)
    if (remoteState === undefined) continue
    const before = previous.get(name)
    const sameTopic = before?.id !== undefined && before.id === source.id && !NO_ID.test(source.id)
    const sourcePartitions = sameTopic ? Math.max(source.partitions, before.partitions) : source.partitions
    work.push({ source: name, remote, partitions: Math.min(sourcePartitions, remoteState.partitions), id: source.id })
  }
  const missing = [...previous.values()].filter(t => !state.source.has(t.source))
  work.push(...await stillThere(missing, probe))
  return work.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0))
}

/** The MISSING topics the source does not answer "does not exist" for; all of them when it cannot be asked. */
async function stillThere (missing: readonly ListedTopic[], probe: (names: readonly string[]) => Promise<ReadonlyMap<string, TopicProbe>>): Promise<ListedTopic[]> {
  if (missing.length === 0) return []
  const answers = await probe(missing.map(t => t.source)).catch(() => null)
  return answers === null ? [...missing] : missing.filter(t => answers.get(t.source)?.presence !== TopicPresences.ABSENT)
}
