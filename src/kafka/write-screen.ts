/**
 * Which partitions of one write of batch-writer.ts may be sent, from fresh metadata: the screen between reading the
 * target's leaders and topic ids and handing batches to produce requests (which name the topic, not its id).
 *
 * Invariants:
 * - A partition whose topic's metadata the target refused fails with that refusal; one whose remote topic has another
 *   topic id than at its partition's last write (deleted and created again) fails with REMOTE_TOPIC_RECREATED and is
 *   sent nothing (the data path copies it again from the source's log start); one whose broker answered a retired
 *   topic id (its metadata lags behind a re-creation) waits "not now".
 * - A write whose producer id or AddPartitionsToTxn took longer than RECHECK_IDS_AFTER_MS after its metadata read
 *   (a coordinator busy right after a commit, one loading, a producer id asked again) reads leaders and ids again
 *   before it produces (`checkAgain`): a topic deleted and created again meanwhile is never written at the old
 *   position. What remains is the window of one metadata read before a produce request.
 */
import type { ClusterContext } from './connection-hints.ts'
import type { Failure } from './broker-produce.ts'
import type { PartitionSend } from './partition-send.ts'
import type { RemoteTopicIds } from './remote-topic-ids.ts'
import type { ByLeader, TargetLeaders } from './target-leaders.ts'
import { metadataRefused, topicRecreated } from './write-failures.ts'
import type { PartitionWrite } from './batch-writer-types.ts'

/** How long after its metadata read a write checks the topic ids again before it produces (`checkAgain`). */
export const RECHECK_IDS_AFTER_MS = 500

export interface WriteScreenDeps {
  readonly topicIds: RemoteTopicIds
  readonly leaders: Pick<TargetLeaders, 'byLeader'>
  readonly cluster: ClusterContext
}

/** One write's state the screen updates: each write's send, and the refused partitions' failures. */
export interface ScreenedWrite {
  readonly writes: readonly PartitionWrite[]
  readonly sends: Map<number, PartitionSend<PartitionWrite>>
  readonly failures: Failure[]
}

/** LEADERS without the writes set aside (failed into `failures`, or moved to its `leaderless`: see the invariants). */
export function setAside (deps: WriteScreenDeps, write: ScreenedWrite, leaders: ByLeader<number>): ByLeader<number> {
  const { writes, sends, failures } = write
  const { byLeader, refused, ids } = leaders
  for (const { item, errorCode } of refused) {
    sends.get(item)!.refuse(0, false)
    failures.push(metadataRefused(item, writes[item]!, errorCode, deps.cluster))
  }
  const stale: number[] = []
  deps.topicIds.holdRecreated(byLeader, ids, i => writes[i]!, (i, before) => {
    sends.get(i)!.refuse(0, false)
    failures.push(topicRecreated(i, writes[i]!, before, ids.get(writes[i]!.topic), deps.cluster))
  }, i => { stale.push(i) })
  return stale.length === 0 ? leaders : { ...leaders, leaderless: [...leaders.leaderless, ...stale] }
}

/**
 * The leaders and topic ids of the writes in BYLEADER read again, screened as by `setAside`; those without a leader
 * now join NOT_NOW.
 */
export async function checkAgain (deps: WriteScreenDeps, write: ScreenedWrite, byLeader: ReadonlyMap<number, readonly number[]>, notNow: number[]): Promise<Pick<ByLeader<number>, 'brokers' | 'byLeader'>> {
  const again = setAside(deps, write, await deps.leaders.byLeader([...byLeader.values()].flat(), i => write.writes[i]!))
  notNow.push(...again.leaderless)
  return again
}
