/**
 * Partitions the data path was given (listed by the topic refresh, or assigned) without a stored position and
 * whose start offset the source did not give: no leader (its broker down, no replica in sync), or a leader that
 * could not be reached. They wait here, out of the partition set, while the others are copied.
 *
 * Invariants:
 * - A pending partition is never fetched, written or stored: it has no position yet, so nothing of it can be
 *   skipped or stored wrongly (a made-up start such as 0 would be stored as progress).
 * - It is reported like any partition the source refuses (partition-failures.ts): one warning naming it, the
 *   cluster, the error and the fix; failing in /status (side source) and `kmirror_failing_partitions`; retried with
 *   back-off, and a recovery line once its start is known and it joins the fetch rounds.
 * - Retries run beside the fetch rounds, one at a time, one ListOffsets try each: a source broker that does not
 *   answer never holds up the partitions being copied. What a retry found joins through the partition set's
 *   queue, so only between two rounds (never inside an exactly-once round's transaction).
 * - A partition joins only if it is still pending and still owned when the change is applied: released, removed
 *   or lost meanwhile (`drop`, `dropTopics`, `clear`), it is never added.
 * - A partition already copied (`taken`) is never held. One held while its add was still queued (a race of two
 *   adds) leaves at its next try, which finds it copied, with a recovery line.
 */
import { groupBy } from '../collections.ts'
import { errorMessage, isKmirrorError } from '../errors.ts'
import { kafkaErrorInfo } from '../kafka/errors.ts'
import { partitionKey } from '../topic-partition.ts'
import { FailureSides, type PartitionFailures } from './partition-failures.ts'
import type { Logger } from '../logger.ts'
import type { PartitionRef, PartitionState, Resolved, UnresolvedStart } from './partition-set.ts'
import type { PartitionStatus } from './replicator-ports.ts'

/** The least time between two tries of a pending partition. */
const RETRY_FLOOR_MS = 1000

/** Whether this instance copies the partition `partitionKey(topic, partition)` (always, alone). */
export type Owns = (key: string) => boolean

interface Pending {
  readonly ref: PartitionRef
  /** Its topic is copied from the log start (a remote topic re-created), not from `startAt`. */
  readonly fromLogStart: boolean
  readonly owns: Owns
  readonly retryAt: number
  /**
   * Which hold this is: kept while the partition stays held as it was, new after a drop or once it is to start
   * from the log start, so an answer asked for an earlier hold never joins a later one (it may be a start read
   * for the other reset, or of a topic deleted and created again since).
   */
  readonly hold: number
}

export interface PendingStartsDeps {
  readonly failing: PartitionFailures
  readonly sourceAlias: string
  /** Whether the partition is in the partition set, not leaving. */
  readonly taken: (key: string) => boolean
  /** Asks the source where these partitions start, once (PartitionSet's `resolve`). */
  readonly resolve: (refs: readonly PartitionRef[], fromLogStart: ReadonlySet<string>) => Promise<Resolved>
  /** Queues the states found for the next change between two rounds; `admit` decides, then, which join. */
  readonly enqueue: (states: PartitionState[], admit: (state: PartitionState) => boolean) => void
  readonly log: Logger
}

export class PendingStarts {
  readonly #deps: PendingStartsDeps
  readonly #pending = new Map<string, Pending>()
  #retrying = false
  #holds = 0
  /** No pending partition is due before this time: an idle round looks at none of them (invariant 36). */
  #nextDueAt = Infinity

  constructor (deps: PendingStartsDeps) {
    this.#deps = deps
  }

  get size (): number {
    return this.#pending.size
  }

  /**
   * What `PartitionSet.resolve` found for partitions given to the data path: holds those whose start is not known
   * (and still owned); returns the states to add (those that were pending leave, with a recovery line).
   */
  admit ({ states, unresolved }: Resolved, fromLogStart: ReadonlySet<string>, owns: Owns): PartitionState[] {
    for (const u of unresolved) this.#hold(u, fromLogStart.has(u.ref.topic), owns)
    const owned = states.filter(state => owns(state.key))
    for (const state of owned) this.#resolved(state.key)
    return owned
  }

  /** Holds the partition until its start is known, reported as failing (once per error). */
  #hold ({ ref, error }: UnresolvedStart, fromLogStart: boolean, owns: Owns, cause?: string, now = Date.now()): void {
    const key = partitionKey(ref.topic, ref.partition)
    if (!owns(key) || this.#deps.taken(key)) return
    const message = cause !== undefined
      ? `where to start copying it is not known yet: ${cause}`
      : error === 'LEADER_NOT_AVAILABLE' || error === 'NETWORK_EXCEPTION'
        ? `${error === 'LEADER_NOT_AVAILABLE' ? 'it has no leader' : 'its leader cannot be reached'}, so where to start copying it is not known yet (Kafka error ${error})`
        : `cluster ${this.#deps.sourceAlias} gave no start offset for it (Kafka error ${error})`
    const retryAt = this.#deps.failing.fail(key, ref, { side: FailureSides.SOURCE, error, kind: kafkaErrorInfo(error).kind, message }, now)
    const before = this.#pending.get(key)
    // Asked for from the log start once, it stays so: a later plain refresh must not move its start.
    const fromStart = before?.fromLogStart === true || fromLogStart
    const hold = before !== undefined && before.fromLogStart === fromStart ? before.hold : ++this.#holds
    // Never sooner than the floor a try under way set.
    const dueAt = Math.max(retryAt, before?.retryAt ?? 0)
    this.#pending.set(key, { ref, fromLogStart: fromStart, owns, retryAt: dueAt, hold })
    this.#nextDueAt = Math.min(this.#nextDueAt, dueAt)
  }

  /**
   * Starts a try of the pending partitions due, unless one is under way; returns at once. Each is not due again
   * for RETRY_FLOOR_MS at least, whatever the try's outcome (`#hold` sets its back-off when it fails again). One
   * no longer owned is dropped.
   */
  retry (now = Date.now()): void {
    if (this.#retrying || now < this.#nextDueAt) return
    const due: Pending[] = []
    let next = Infinity
    for (const [key, p] of this.#pending) {
      if (!p.owns(key)) {
        this.drop([key])
      } else if (p.retryAt <= now) {
        due.push(p)
        this.#pending.set(key, { ...p, retryAt: now + RETRY_FLOOR_MS })
        next = Math.min(next, now + RETRY_FLOOR_MS)
      } else {
        next = Math.min(next, p.retryAt)
      }
    }
    this.#nextDueAt = next
    if (due.length === 0) return
    this.#retrying = true
    void this.#try(due).finally(() => { this.#retrying = false })
  }

  /**
   * Asks where the partitions due start, all at once; when that request fails as a whole (one topic refused, say),
   * each topic alone, so one topic's failure holds up no other's: each partition of a failed request is held again
   * with that failure (its back-off grows, /status shows it).
   */
  async #try (due: readonly Pending[]): Promise<void> {
    const whole = await this.#tryOnce(due)
    if (whole === null) return
    const byTopic = [...groupBy(due, p => p.ref.topic).values()]
    // Only a refusal (a Kafka error, e.g. one topic not authorized) is worth a request per topic; a cluster that
    // does not answer would only fail each of them in turn.
    if (byTopic.length === 1 || kafkaErrorsOf(whole).length === 0) return this.#failed(due, whole)
    // All at once: one topic's broker that does not answer holds up no other topic's try.
    await Promise.all(byTopic.map(async list => {
      const err = await this.#tryOnce(list)
      if (err !== null) this.#failed(list, err)
    }))
  }

  /** One request for these partitions, its answers settled; the error when it failed as a whole, else null. */
  async #tryOnce (due: readonly Pending[]): Promise<unknown> {
    const fromLogStart = new Set(due.filter(p => p.fromLogStart).map(p => p.ref.topic))
    let resolved: Resolved
    try {
      resolved = await this.#deps.resolve(due.map(p => p.ref), fromLogStart)
    } catch (err) {
      return err ?? new Error('unknown failure')
    }
    const holds = new Map(due.map(p => [partitionKey(p.ref.topic, p.ref.partition), p.hold]))
    const still = (key: string): Pending | undefined => {
      const p = this.#pending.get(key)
      return p !== undefined && p.hold === holds.get(key) ? p : undefined
    }
    const answered = new Set([...resolved.states.map(s => s.key), ...resolved.unresolved.map(u => partitionKey(u.ref.topic, u.ref.partition))])
    for (const key of holds.keys()) {
      // `resolve` leaves out what the partition set has: copied already (another add came first), it waits no more.
      if (!answered.has(key) && still(key) !== undefined && this.#deps.taken(key)) this.#resolved(key)
    }
    for (const u of resolved.unresolved) {
      const p = still(partitionKey(u.ref.topic, u.ref.partition))
      if (p !== undefined) this.#hold(u, p.fromLogStart, p.owns)
    }
    const found = resolved.states.filter(s => still(s.key) !== undefined)
    if (found.length > 0) this.#deps.enqueue(found, state => this.#join(state.key, holds.get(state.key)!))
    return null
  }

  /** A request that failed as a whole: each of its partitions still held as it was is failing with that error. */
  #failed (due: readonly Pending[], err: unknown): void {
    const error = kafkaErrorsOf(err)[0] ?? 'NETWORK_EXCEPTION'
    for (const p of due) {
      const current = this.#pending.get(partitionKey(p.ref.topic, p.ref.partition))
      if (current !== undefined && current.hold === p.hold) this.#hold({ ref: p.ref, error }, p.fromLogStart, p.owns, errorMessage(err))
    }
    this.#deps.log.debug({ err, partitions: due.length }, 'cannot read the start offsets of partitions waiting for them yet; trying again')
  }

  /**
   * When the add is applied: joins only if it is still the hold the answer was asked for and still owned (one no
   * longer owned is dropped), leaving with a recovery line.
   */
  #join (key: string, hold: number): boolean {
    const p = this.#pending.get(key)
    if (p === undefined || p.hold !== hold) return false
    if (!p.owns(key)) {
      this.drop([key])
      return false
    }
    this.#resolved(key)
    return true
  }

  /** Its start is known now: it leaves, with a recovery line. */
  #resolved (key: string): void {
    const p = this.#pending.get(key)
    if (p === undefined) return
    this.#pending.delete(key)
    this.#deps.failing.recover(key, p.ref)
  }

  /** Released (revoked from this instance): forgotten without a recovery line. */
  drop (keys: Iterable<string>): void {
    for (const key of keys) if (this.#pending.delete(key)) this.#deps.failing.forget(key)
  }

  dropTopics (topics: ReadonlySet<string>): void {
    this.drop([...this.#pending].filter(([, p]) => topics.has(p.ref.topic)).map(([key]) => key))
  }

  clear (): void {
    this.drop([...this.#pending.keys()])
  }

  /** For /status: each pending partition with its failure, position -1 (not known yet), nothing copied. */
  statuses (): PartitionStatus[] {
    return [...this.#pending].map(([key, { ref }]) => ({
      topic: ref.topic, partition: ref.partition, remoteTopic: ref.remoteTopic, position: -1, highWatermark: -1,
      copiedRecords: 0, copiedBytes: 0, lostToRetention: 0, failure: this.#deps.failing.report(key), lagSeconds: null
    }))
  }
}

/** The Kafka error names a kmirror error carries (none for a connection that failed or timed out). */
function kafkaErrorsOf (err: unknown): string[] {
  const names = isKmirrorError(err) ? err.details['kafkaErrors'] : undefined
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : []
}
