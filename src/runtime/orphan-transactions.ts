/**
 * Exactly-once in a group: the open transactions on the target of members gone from the flow's group, for its
 * first leader to fence (kafka/group-leader.ts `membersBeforeJoin`). The case it covers: a lone instance killed
 * (kill -9, a crashed host) and started again after its session ended. The group is empty then, no assignment
 * remembers the dead member, and its open transaction would hold every read_committed reader of the partitions it
 * wrote back until the transaction timeout (60 s).
 *
 * Which transactions are the group's: a member writes under `<group id>-<member name>`, the member name being
 * `host:pid:start` (group-member-options.ts `defaultMemberName`). A transaction is taken as a member's when
 * - its id is the group id, a dash and a name of that form, and
 * - every partition it holds is of a topic the flow writes in its transactions (its remote topics, its offset
 *   syncs, offset history and progress topics).
 * The second condition keeps another group whose id merely starts with this one's (`kmirror-A-B` and
 * `kmirror-A-B-dr` on one target) from having its live transactions fenced, unless it copies the same source into
 * the same remote topics, which no two flows may do anyway. Members of this group that are alive stay unfenced
 * whatever is found: the leader fences only members missing from the generation it leads (sticky-assignor.ts).
 */
import type { PreviousMember } from '../cluster/sticky-assignor.ts'
import { offsetHistoryTopic } from '../checkpoint/offset-history-store.ts'
import type { FlowConfig } from '../config/types.ts'
import { ClusterClients } from '../kafka/cluster-clients.ts'
import type { OpenTransaction } from '../kafka/open-transactions.ts'
import type { Logger } from '../logger.ts'
import { createReplicationPolicy } from '../policy/replication-policy.ts'
import { offsetSyncsTopicName } from '../replication/offset-sync-emitter.ts'

/** `host:pid:start`, as `defaultMemberName` makes it. */
const MEMBER_NAME = /^.+:\d+:\d+$/

/** The open transactions of members gone, as members to fence (name from the id). */
export async function openTransactionsOfGone (config: FlowConfig, log: Logger): Promise<PreviousMember[]> {
  const target = new ClusterClients(config.target, `${config.name}|group-fencer`, 'target')
  try {
    const open = await target.openTransactions(`${config.groupId}-`)
    if (open === null) {
      log.info({ group: config.groupId, cluster: target.label }, 'the target cannot list open transactions (Kafka before 3.0): a transaction of an instance that died before this one started ends at its transaction timeout')
      return []
    }
    const gone = membersOfFlow(config, open)
    for (const t of gone) {
      log.info({ group: config.groupId, cluster: target.label, transactionalId: t.transactionalId, openSince: new Date(t.startedAt).toISOString(), topics: t.topics },
        'found a transaction left open by a member gone from the group: the first leader fences it')
    }
    return gone.map(t => ({ name: t.transactionalId.slice(config.groupId.length + 1), transactionalId: t.transactionalId }))
  } finally {
    await target.close()
  }
}

/** Those of OPEN that a member of the flow's group left (see the module comment). */
export function membersOfFlow (config: FlowConfig, open: readonly OpenTransaction[]): OpenTransaction[] {
  const policy = createReplicationPolicy(config.replicationPolicy)
  const own = new Set([config.offsetStorageTopic, offsetHistoryTopic(config.source.alias), offsetSyncsTopicName(config, policy)])
  const written = (topic: string): boolean => own.has(topic) || (policy.topicSource(topic) === config.source.alias && !policy.isInternalTopic(topic))
  const prefix = `${config.groupId}-`
  return open.filter(t => t.transactionalId.startsWith(prefix) && MEMBER_NAME.test(t.transactionalId.slice(prefix.length)) &&
    t.topics.length > 0 && t.topics.every(written))
}
