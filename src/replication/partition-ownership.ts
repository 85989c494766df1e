/**
 * The data path's side of ownership (flow-replicator.ts): partitions added (topics found, an assignment), released
 * (revoked), all lost with the membership, and topics removed. Each change is queued on the partition set and
 * applied between two fetch rounds, never during one (partition-set.ts), at once when no round loop runs.
 *
 * Invariants (ARCHITECTURE invariants 27 and 41):
 * - An add admits, when applied, only the partitions still owned under the grant it was asked under
 *   (ownership-grants.ts): a revoke or a loss meanwhile must not leave two writers, nor a start read before another
 *   owner stored its progress.
 * - A released partition is fetched no more at once; the writes of the round in flight finish, then its offset syncs
 *   and its position are stored, and only then does the release resolve: another instance may then take it. Other
 *   partitions keep copying throughout. A loss of the membership before the store is done ends it (nothing stored).
 * - After a loss nothing of any partition is written or stored any more (records, positions, offset syncs,
 *   history): another instance may own it already, even if this instance holds a new membership by the time the
 *   round would write. Its syncs and history pending or queued are dropped too: written late, after the new
 *   owners', they would rewind translation.
 * - A partition that leaves the set leaves nothing behind: its sync run, failure, write state, waits, source
 *   re-creation and the target writer's state of it are forgotten, so a partition added again starts afresh.
 */
import { partitionKey } from '../topic-partition.ts'
import type { Logger } from '../logger.ts'
import type { OffsetSyncTracker } from './offset-sync-tracker.ts'
import type { OwnershipGrants } from './ownership-grants.ts'
import type { PartitionChange, PartitionRef, PartitionSet, PartitionState, Resolved } from './partition-set.ts'
import type { Owns } from './pending-starts.ts'
import { positionsOf } from './progress-flusher.ts'
import type { ReplicatorParts } from './replicator-parts.ts'
import type { OffsetSyncSink, TargetWriter } from './replicator-ports.ts'
import type { ReplicatedTopic } from '../metadata/remote-topics.ts'

export interface PartitionOwnershipDeps {
  readonly partitions: PartitionSet
  readonly tracker: OffsetSyncTracker
  readonly parts: Pick<ReplicatorParts, 'pendingStarts' | 'failing' | 'writer' | 'waiting' | 'unread' | 'sourceRecreated' | 'flusher' | 'eos' | 'grants'>
  readonly target: TargetWriter
  readonly syncs: OffsetSyncSink | null
  readonly log: Logger
  /** Whether the round loop runs: it applies queued changes between two rounds; when it does not, they apply at once. */
  readonly looping: () => boolean
  /** Whether the flow stops: a release stops retrying its store then. */
  readonly stopping: () => boolean
}

export class PartitionOwnership {
  readonly #deps: PartitionOwnershipDeps
  /** When ownership last changed: a queued add asked for under an ended grant adds nothing. */
  readonly #grants: OwnershipGrants

  constructor (deps: PartitionOwnershipDeps) {
    this.#deps = deps
    this.#grants = deps.parts.grants
  }

  /**
   * Adds partitions not replicated yet; existing ones keep their position. Those of `fromLogStart` topics start at
   * the source's log start whatever `startAt` says (their remote topic was created again).
   */
  async addTopics (topics: readonly ReplicatedTopic[], fromLogStart: ReadonlySet<string>, owns: Owns): Promise<void> {
    const stamp = this.#grants.stamp()
    const refs = topics.flatMap(t => Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.source, partition, remoteTopic: t.remote })))
    await this.#add(await this.#deps.partitions.resolve(refs.filter(r => owns(partitionKey(r.topic, r.partition))), fromLogStart), fromLogStart, owns, stamp)
  }

  /**
   * Starts copying these partitions (assigned to this instance), each from `stored` (the stored progress read again
   * just now: another instance may have copied it since) + 1, else from `startAt`. Partitions already copied keep
   * their position. Resolves once they are in the fetch rounds.
   */
  async addPartitions (partitions: readonly PartitionRef[], stored: ReadonlyMap<string, number>, owns: Owns): Promise<void> {
    const stamp = this.#grants.stamp()
    this.#deps.partitions.mergeStored(stored, partitions.map(p => partitionKey(p.topic, p.partition)))
    await this.#add(await this.#deps.partitions.resolve(partitions), new Set(), owns, stamp)
  }

  /** Adds the partitions whose start is known; holds the others until it is (pending-starts.ts). */
  async #add (resolved: Resolved, fromLogStart: ReadonlySet<string>, owns: Owns, stamp: number): Promise<void> {
    const states = this.#deps.parts.pendingStarts.admit(resolved, fromLogStart, owns)
    if (states.length > 0) await this.#change(done => ({ kind: 'add', states, done, admit: s => owns(s.key) && this.#grants.holds(s.key, stamp) }))
  }

  /**
   * Stops copying these partitions (revoked from this instance) and resolves once their progress is stored (true),
   * or false when the membership was lost first. This instance never writes them again (unless they are added
   * again). Unknown partitions are ignored. BY (epoch ms): a stop's hand-over deadline (progress-flusher.ts
   * `settleSyncs`).
   */
  async releasePartitions (partitions: readonly { topic: string, partition: number }[], by?: number): Promise<boolean> {
    const revoked = partitions.map(p => partitionKey(p.topic, p.partition))
    // Taken now: a loss of the membership before the round in flight ends must end the store too.
    const lost = this.#grants.untilLost
    this.#grants.released(revoked)
    this.#deps.parts.pendingStarts.drop(revoked)
    const keys = new Set<string>()
    for (const p of partitions) {
      const state = this.#deps.partitions.get(partitionKey(p.topic, p.partition))
      if (state === undefined || state.lost) continue
      state.releasing = true
      keys.add(partitionKey(p.topic, p.partition))
    }
    if (keys.size === 0) return true
    let released: PartitionState[] = []
    await this.#change<PartitionState[]>(done => ({ kind: 'release', keys, done }), r => { released = r })
    return await this.#storeReleased(released, lost, by)
  }

  /**
   * Membership lost: every partition is fetched no more at once and leaves at the end of the round in flight. In
   * exactly-once mode the transactional producer of that membership ends with it (exactly-once-round.ts).
   */
  loseAll (): void {
    const { parts, partitions, tracker } = this.#deps
    this.#grants.lost()
    // A write under way sends nothing more (exactly-once mode ends the producer with it).
    if (parts.eos === null) this.#deps.target.endMembership?.()
    else parts.eos.membershipLost()
    parts.pendingStarts.clear()
    for (const state of partitions.values()) {
      state.lost = true
      tracker.reset(partitionKey(state.topic, state.partition))
    }
    tracker.dropAll()
    parts.flusher.dropRewound()
    this.#deps.syncs?.dropQueued?.()
    void this.#change(done => ({ kind: 'drop-lost', done }))
  }

  /**
   * Stops replicating the named source topics (deleted or re-created on the source, or whose remote topic became
   * unusable) and forgets their positions, so a topic added again later starts afresh. Resolves once applied.
   */
  removeTopics (topics: readonly string[]): Promise<void> {
    if (topics.length === 0) return Promise.resolve()
    this.#deps.parts.pendingStarts.dropTopics(new Set(topics))
    return this.#change(done => ({ kind: 'remove-topics', topics: new Set(topics), done }))
  }

  /** Applies the queued changes; the round loop calls it between two rounds, and once more when it ends. */
  applyChanges (): void {
    const { parts, target } = this.#deps
    this.#deps.partitions.applyChanges((key, state) => {
      this.#deps.tracker.reset(key)
      parts.failing.forget(key)
      parts.writer.forget(key)
      parts.waiting.forget(state)
      parts.unread.forget(state)
      parts.sourceRecreated.forget(key)
      parts.flusher.forgetRewound([key])
      target.forgetPartition?.(state.remoteTopic, state.partition)
    })
  }

  /** Queues a change of the partition set for the end of the round (at once when no round runs). */
  #change<T = void> (make: (done: (value: T) => void) => PartitionChange, onDone?: (value: T) => void): Promise<void> {
    const applied = new Promise<void>(resolve => {
      this.#deps.partitions.enqueue(make(value => { onDone?.(value); resolve() }))
    })
    if (!this.#deps.looping()) this.applyChanges()
    return applied
  }

  /**
   * Stores the offset syncs (pending and delayed) and the positions of released partitions, retrying until stored
   * (true) or until the membership is lost (LOST aborted: false) or the flow stops; then forgets them.
   */
  async #storeReleased (released: readonly PartitionState[], lost: AbortSignal, by?: number): Promise<boolean> {
    // (none left to release: they were lost with the membership before the round in flight ended, and stored nothing)
    if (released.length === 0) {
      if (lost.aborted) this.#deps.log.info('revoked partitions were lost with the membership before their release: their progress stored before stands')
      return !lost.aborted
    }
    const { parts, tracker } = this.#deps
    const positions = positionsOf(released)
    // Released, it is no longer this instance's to report as failing, stored or not, nor to wait for; and the
    // source topic id it was copied from is learnt afresh if it comes back (the topic may be created again meanwhile).
    for (const key of positions.keys()) {
      parts.failing.forget(key)
      parts.sourceRecreated.forget(key)
    }
    for (const p of released) {
      parts.waiting.forget(p)
      parts.unread.forget(p)
    }
    // Exactly-once mode: the last committed round stored these positions with their data (MM2's syncs of the rounds,
    // queued after each commit, are waited for all the same). A loss meanwhile may have aborted the last round: what
    // is stored is then the round before, and the release is not told as stored.
    if (parts.eos === null) {
      if (!await parts.flusher.storeReleased(positions, () => this.#deps.stopping(), lost, by)) return false
    } else {
      await parts.flusher.settleSyncs(positions, lost, by)
      if (lost.aborted) {
        this.#deps.log.info({ partitions: [...positions.keys()] }, 'the membership was lost during the release of revoked partitions: their progress is what ' +
          'the last committed round stored (a round in flight is aborted; their next owner copies it again)')
        return false
      }
    }
    // (a rewound position not stored yet is behind the one just stored, and no longer this instance's to store)
    parts.flusher.forgetRewound(positions.keys())
    for (const key of positions.keys()) {
      tracker.reset(key)
      parts.writer.forget(key)
    }
    for (const p of released) this.#deps.target.forgetPartition?.(p.remoteTopic, p.partition)
    this.#deps.log.debug({ partitions: [...positions.keys()] }, 'revoked partitions released with their progress stored')
    return true
  }
}
