/**
 * The run of a flow's topic refresh job (ARCHITECTURE invariant 29): one `RemoteTopics.refresh`, then what this
 * instance's data path makes of it. Runs never overlap: a run at assignment may meet one still under way from a
 * membership lost just before (`lose` does not wait for its jobs), and two at once could count one absence of a
 * source topic twice. So the first run after the job came back (`RemoteTopics.acquired`) begins after that one
 * ended, and drops what it counted.
 *
 * The run's SIGNAL (membership ended, job revoked) is looked at before each write on the target (the refresh's
 * own, the forget of the positions of a remote topic copied again without topic ids, then of returned topics'),
 * never before a change of this instance's data path: a
 * revoked JOB leaves this instance its partitions, and a remote topic created again must be copied again by the
 * owner of each partition of it. What is no longer owned (a lost membership owns nothing) is never added: the
 * data path adds only partitions `owns` names, under the grant it held when asked (partition-ownership.ts).
 */
import type { Logger } from '../logger.ts'
import type { RefreshResult, RemoteTopics, ReplicatedTopic } from '../metadata/remote-topics.ts'
import { oneAtATime } from '../one-at-a-time.ts'
import type { FlowReplicator } from '../replication/flow-replicator.ts'
import type { ProgressStore } from '../replication/progress-store.ts'
import { partitionKey } from '../topic-partition.ts'

export interface TopicRefreshJobParts {
  readonly topics: Pick<RemoteTopics, 'refresh' | 'returnedHandled'>
  readonly replicator: Pick<FlowReplicator, 'addTopics' | 'addPartitions' | 'removeTopics'>
  readonly progress: Pick<ProgressStore, 'forget' | 'load' | 'topic'>
  /** The target cluster's alias, where the progress is stored (for the log). */
  readonly target: string
  /** Whether this instance copies the partition `partitionKey(topic, partition)` now (`FlowWork.ownsPartition`). */
  readonly owns: (tp: string) => boolean
  /** Alone (no group): the refresh adds and removes the topics of the data path itself. */
  readonly alone: boolean
  /** Waited for before each run: the refresh made while joining (`Flow.#createRemotesWhileJoining`). */
  readonly before: Promise<void> | null
  /** Told the result of each run that was not aborted. */
  readonly refreshed: (result: RefreshResult) => void
  readonly log: Logger
}

/** Forgets the stored positions of every partition of TOPICS (copied again from the log start); a failure is told. */
async function forgetPositions (topics: readonly ReplicatedTopic[], { progress, target, log }: Pick<TopicRefreshJobParts, 'progress' | 'target' | 'log'>): Promise<void> {
  try {
    await progress.forget(topics.flatMap(t => Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.source, partition }))))
  } catch (err) {
    log.warn({ err, topics: topics.map(t => t.source), cluster: target }, `could not forget the stored positions of ${topics.map(t => t.source).join(', ')} ` +
      `in ${progress.topic} on cluster ${target}, copied again ` +
      'from the log start into its remote topic created again: a partition of it that changes owner (or a restart) before its new copy\'s ' +
      'progress is stored resumes at its old position, and the remote topic lacks the records before it')
  }
}

export function topicRefreshJob (parts: TopicRefreshJobParts): (signal: AbortSignal) => Promise<void> {
  const { topics, replicator, progress, owns, alone } = parts
  return oneAtATime(async (signal: AbortSignal) => {
    await parts.before
    const result = await topics.refresh({
      stopReplicating: async names => { await replicator.removeTopics(names) },
      // A remote topic deleted by hand and created again on a target without topic ids: the partitions of it this
      // instance owns are copied again from the log start, also in a run aborted since. Their stored positions (of the
      // deleted remote topic) are forgotten first, every partition's, as a returned topic's are: a partition assigned
      // here at this rebalance (added once this run ends), or resumed after a crash before the new copy's progress
      // is stored, starts at the log start too, never at its old position in the empty new topic. A write: not once
      // the run is aborted; a failed one is told and does not hold back the copy of the partitions owned.
      copyAgain: async again => {
        if (!signal.aborted) await forgetPositions(again, parts)
        await replicator.addTopics(again, new Set(again.map(t => t.source)), owns)
      },
      // Let go of for a deletion an aborted run did not carry out: the partitions of them this instance owns are
      // taken back from the positions stored since (read again: the data path forgot them when it let go).
      keepReplicating: async kept => {
        const refs = kept.flatMap(t => Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.source, partition, remoteTopic: t.remote })))
          .filter(r => owns(partitionKey(r.topic, r.partition)))
        if (refs.length > 0) await replicator.addPartitions(refs, await progress.load({ readOnly: true, waitForTransactions: true, forgotten: true }), owns)
      },
      ...(alone ? {} : { owns }),
      signal
    })
    if (result.returned.length > 0) {
      // Before their partitions are handed out: a topic back after its deletion starts at its log start, never
      // at the deleted topic's stored position (its offsets start again).
      signal.throwIfAborted()
      await progress.forget(result.returned.flatMap(t => Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.source, partition }))))
      topics.returnedHandled(result.returned)
    }
    if (alone) await replicator.addTopics(result.topics, new Set(result.returned.map(t => t.source)), owns)
    // The group hears of this run's topics from the instance that runs the job now, or from a new membership.
    signal.throwIfAborted()
    parts.refreshed(result)
  })
}
