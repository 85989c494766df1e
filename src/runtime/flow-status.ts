/**
 * What a running flow reports (`/status`, the progress log lines): its partitions, the failure of its data path,
 * its jobs, and, when it shares its work with other instances through its group, the group's members.
 */
import type { TopicProblem } from '../metadata/topic-sync-plan.ts'
import type { PartitionStatus, StepFailure } from '../replication/flow-replicator.ts'
import type { OffsetSyncsStatus } from '../replication/sync-outbox.ts'
import type { ExactlyOnceStatus } from '../replication/transaction-tally.ts'
import type { JobStatus } from './scheduler.ts'

export interface FlowStatus {
  readonly name: string
  readonly partitions: readonly PartitionStatus[]
  /** The failure of the whole data path while it lasts (every partition waits), else null. */
  readonly stepFailure: StepFailure | null
  readonly jobs: readonly JobStatus[]
  /** The flow's group as this instance last saw it; null when the flow runs alone (no group). */
  readonly membership: MembershipStatus | null
  /**
   * Per consumer group, when its checkpoints were last brought up to date on the target (written, or found
   * current); absent when this instance does not run the checkpoint job (disabled, or another member owns it).
   */
  readonly checkpoints?: readonly GroupCheckpoints[]
  /**
   * MM2's offset syncs written beside the data path (at-least-once mode with offset syncs on): how many wait, how
   * many were thinned, and the failure of their writes while it lasts. Absent otherwise.
   */
  readonly offsetSyncs?: OffsetSyncsStatus
  /**
   * The last topic refresh's problems (a remote topic that cannot be created, or grown to the source's partition
   * count), each naming the cluster, the cause and the fix; absent when this instance does not run the topic refresh
   * (another member of its group does). Any makes /healthz degraded: such a topic, or its new partitions, is not
   * copied. Not here: configs not synced (the config sync job's), a remote topic not deleted with its source topic
   * (an error line; nothing is copied into it).
   */
  readonly remoteTopicProblems?: readonly TopicProblem[]
  /** Exactly-once mode: this instance's transactions (transaction-tally.ts). Absent in at-least-once mode. */
  readonly exactlyOnce?: ExactlyOnceStatus
  /**
   * The reads of its internal topics on the target (progress, history) that a start or an assignment waits on,
   * held by a transaction open there (held-reads.ts), longest held first. Absent when none.
   */
  readonly heldReads?: readonly HeldReadStatus[]
}

/** A read of an internal topic held by an open transaction: where (the transaction's first offset) and since when. */
export interface HeldReadStatus {
  readonly topic: string
  /** The alias of the cluster it is read from (the flow's target). */
  readonly cluster: string
  /**
   * Each partition held (5 s or longer) now: the read's position (the open transaction's first offset) and the end
   * it must reach. A read that moved on is no longer listed, though it may not have ended.
   */
  readonly partitions: readonly { readonly partition: number, readonly offset: number, readonly end: number }[]
  /** ISO time since which the first of those partitions is held. */
  readonly since: string
  /** How long the read may take in all before it gives up (and is tried again). */
  readonly timeoutMs: number
}

export interface GroupCheckpoints {
  readonly group: string
  /** Date.now() time of the last pass that brought the group's checkpoints up to date. */
  readonly at: number
}

export interface MembershipStatus {
  /** The group id on the flow's target cluster. */
  readonly group: string
  readonly generation: number
  /** The leader's member name. */
  readonly leader: string
  /** This instance's member name. */
  readonly self: string
  readonly members: readonly MemberStatus[]
  /**
   * This instance's own lease (the running process's `/status` only, not `kmirror status`): whether it may write
   * now, the membership's last error (while the work is held past a lease that ran out, since when and why), and
   * while it does not hold, since when (ISO; a flow stalls once that outlasts health.stall.threshold.ms).
   */
  readonly lease?: { readonly valid: boolean, readonly lastError: string | null, readonly invalidSince?: string }
}

export interface MemberStatus {
  /** `host:pid:startTime`. */
  readonly name: string
  /** How many source partitions the member owns. */
  readonly partitions: number
  /** The jobs it owns, by name. */
  readonly jobs: readonly string[]
}

/** Supplies the membership of a flow's group when status is asked (set by the group wiring); null without a group. */
export type MembershipProvider = () => MembershipStatus | null
