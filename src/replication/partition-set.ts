/**
 * The partitions one flow's data path owns, with their positions, and the changes to that set. The data path
 * (flow-replicator.ts) reads and writes only partitions in this set; what joins or leaves it does so between
 * two fetch rounds, never during one, so no write of a partition is in flight when it leaves.
 *
 * Invariants:
 * - A partition joins at its stored position + 1 (the stored value is the last offset copied), else at the
 *   source position `startAt`, or the log start for a topic to copy again and for a partition whose stored position
 *   was forgotten (negative, `ProgressStore.FORGOTTEN`: its copy starts again from a log start).
 * - A partition set to leave (`releasing`, or `lost`) is fetched no more from that moment; it leaves at the end of
 *   the current round. A lost partition's positions and offset syncs are never stored again.
 * - A partition is keyed once, when it joins (`key`); a round finds the state of a fetched partition by topic, then
 *   partition number (`find`), and asks it at a position object that is made again only when the position moved
 *   (`fetchPosition`): an idle round over thousands of partitions builds no string and no object per partition.
 * - Every partition leaves the set through `#delete`, whatever the change, and `departures` hears of it there, with
 *   whether it was its topic's last (topic-series.ts removes its metric series: ARCHITECTURE invariant 45).
 */
import { ErrorCodes } from '../errors.ts'
import type { Logger } from '../logger.ts'
import { partitionKey } from '../topic-partition.ts'
import type { FetchedBatches, PartitionPosition, RecordFetcher } from '../kafka/record-fetcher.ts'
import type { Metrics } from '../metrics/metrics.ts'

/** A source partition and the remote topic it is copied to. */
export interface PartitionRef {
  readonly topic: string
  readonly partition: number
  readonly remoteTopic: string
}

export interface PartitionState {
  /** `partitionKey(topic, partition)`, made once. */
  readonly key: string
  topic: string
  partition: number
  remoteTopic: string
  position: number
  highWatermark: number
  copiedRecords: number
  copiedBytes: number
  lostToRetention: number
  /** Source timestamp (ms) of the oldest record known not to be copied; null when unknown (record-times.ts). */
  head: number | null
  /** Not fetched before this time (the target could not take its records: no leader). */
  retryAt: number
  /** Leaving the set at the end of the round: its progress is stored then (revoked). */
  releasing: boolean
  /** Leaving the set at the end of the round with nothing stored (membership lost). */
  lost: boolean
  /** The last position object handed to the fetcher (`fetchPosition`), or null. */
  fetchAt: PartitionPosition | null
  /**
   * Resumed from a stored position: the source topic id the copy that stored it came from (the offset history's),
   * until its first answer was checked against it (source-recreated.ts).
   */
  copiedFrom?: string | undefined
}

/** The position to fetch `state` at: the object of the last round while the position has not moved. */
export function fetchPosition (state: PartitionState): PartitionPosition {
  const last = state.fetchAt
  if (last !== null && last.offset === state.position) return last
  state.fetchAt = { topic: state.topic, partition: state.partition, offset: state.position }
  return state.fetchAt
}

/** A partition whose start offset the source did not give, with its Kafka error (LEADER_NOT_AVAILABLE). */
export interface UnresolvedStart {
  readonly ref: PartitionRef
  readonly error: string
}

/** What `resolve` found: the states to add, and the partitions whose start is not known yet. */
export interface Resolved {
  readonly states: PartitionState[]
  readonly unresolved: UnresolvedStart[]
}

/**
 * A change to apply between two rounds; `done` hears of it once applied. An `add` with `admit` adds only the
 * states it admits when applied (a partition released or lost since it was asked for must not join).
 */
export type PartitionChange =
  | { readonly kind: 'remove-topics', readonly topics: ReadonlySet<string>, readonly done: () => void }
  | { readonly kind: 'release', readonly keys: ReadonlySet<string>, readonly done: (released: PartitionState[]) => void }
  | { readonly kind: 'drop-lost', readonly done: () => void }
  | { readonly kind: 'add', readonly states: readonly PartitionState[], readonly done: () => void, readonly admit?: (state: PartitionState) => boolean }

/** Told of each partition that leaves the set, whatever the change (topic-series.ts removes its metric series). */
export interface PartitionDepartures {
  /** LAST_OF_TOPIC: no partition of its topic is left in the set. */
  partitionLeft (topic: string, partition: number, lastOfTopic: boolean): void
}

export class PartitionSet {
  readonly #fetcher: Pick<RecordFetcher, 'listOffsetsSettled'>
  readonly #startAt: 'earliest' | 'latest'
  readonly #log: Logger
  readonly #departures: PartitionDepartures | null
  readonly #partitions = new Map<string, PartitionState>()
  /** The same states by topic, then partition number (`find`). */
  readonly #byTopic = new Map<string, Map<number, PartitionState>>()
  readonly #changes: PartitionChange[] = []
  /** Positions previously stored (by kmirror or MM2), keyed by `partitionKey`; negative: forgotten. */
  #stored = new Map<string, number>()

  /** The source topic id the last copy of a partition came from (`OffsetHistoryStore.copiedFrom`), if known. */
  readonly #copiedFrom: (key: string) => string | undefined

  constructor (fetcher: Pick<RecordFetcher, 'listOffsetsSettled'>, startAt: 'earliest' | 'latest', log: Logger, departures: PartitionDepartures | null = null,
    copiedFrom: (key: string) => string | undefined = () => undefined) {
    this.#fetcher = fetcher
    this.#startAt = startAt
    this.#log = log
    this.#departures = departures
    this.#copiedFrom = copiedFrom
  }

  setStored (stored: Map<string, number>): void {
    this.#stored = stored
  }

  /** Updates the stored positions of these partitions (read again: another instance may have stored them). */
  mergeStored (stored: ReadonlyMap<string, number>, keys: Iterable<string>): void {
    for (const key of keys) {
      const value = stored.get(key)
      if (value === undefined) this.#stored.delete(key)
      else this.#stored.set(key, value)
    }
  }

  forgetStored (key: string): void {
    this.#stored.delete(key)
  }

  has (key: string): boolean {
    return this.#partitions.has(key)
  }

  get (key: string): PartitionState | undefined {
    return this.#partitions.get(key)
  }

  /** The state of a partition by topic and number, without building its key. */
  find (topic: string, partition: number): PartitionState | undefined {
    return this.#byTopic.get(topic)?.get(partition)
  }

  #put (state: PartitionState): void {
    this.#partitions.set(state.key, state)
    let partitions = this.#byTopic.get(state.topic)
    if (partitions === undefined) this.#byTopic.set(state.topic, partitions = new Map())
    partitions.set(state.partition, state)
  }

  /** The one way out of the set: every change that removes a partition comes here, and `departures` hears of it. */
  #delete (state: PartitionState): void {
    this.#partitions.delete(state.key)
    const partitions = this.#byTopic.get(state.topic)
    if (partitions?.get(state.partition) !== state) return
    partitions.delete(state.partition)
    if (partitions.size === 0) this.#byTopic.delete(state.topic)
    this.#departures?.partitionLeft(state.topic, state.partition, partitions.size === 0)
  }

  /** Whether a partition of TOPIC is in the set (leaving or not). */
  hasTopic (topic: string): boolean {
    return this.#byTopic.has(topic)
  }

  get size (): number {
    return this.#partitions.size
  }

  entries (): IterableIterator<[string, PartitionState]> {
    return this.#partitions.entries()
  }

  values (): IterableIterator<PartitionState> {
    return this.#partitions.values()
  }

  /** Partitions to fetch now: not cooling down, not leaving. */
  active (now: number): PartitionState[] {
    // Sized once (growing it by push copies it again and again: 5,000 partitions, every round).
    const active = new Array<PartitionState>(this.#partitions.size)
    let count = 0
    for (const p of this.#partitions.values()) if (p.retryAt <= now && !p.releasing && !p.lost) active[count++] = p
    active.length = count
    return active
  }

  /**
   * The states of `refs` not in the set yet, at their starting positions (stored + 1, or `startAt`, or the log
   * start for topics in `fromLogStart`). Nothing is added: `enqueue` an `add` with them. A partition without a
   * stored position whose start the source did not give (no leader: its broker is down) is not among them but in
   * `unresolved`, with its Kafka error: one offline partition must not hold up the others (pending-starts.ts).
   */
  async resolve (refs: readonly PartitionRef[], fromLogStart: ReadonlySet<string> = new Set(), attempts?: number): Promise<Resolved> {
    const fresh = refs.filter(p => !this.#partitions.has(partitionKey(p.topic, p.partition)) || this.#leaving(partitionKey(p.topic, p.partition)))
    if (fresh.length === 0) return { states: [], unresolved: [] }
    // A forgotten position (negative) is no position to resume from, and its copy starts at the log start.
    const fromStart = (p: PartitionRef): boolean => fromLogStart.has(p.topic) || (this.#stored.get(partitionKey(p.topic, p.partition)) ?? 0) < 0
    const unstored = fresh.filter(p => this.#resumeFrom(partitionKey(p.topic, p.partition)) === undefined)
    const earliest = unstored.filter(fromStart)
    const usual = unstored.filter(p => !fromStart(p))
    const none = { offsets: new Map<string, number>(), failed: new Map<string, string>() }
    const [a, b] = [
      usual.length === 0 ? none : await this.#fetcher.listOffsetsSettled(usual, this.#startAt, attempts),
      earliest.length === 0 ? none : await this.#fetcher.listOffsetsSettled(earliest, 'earliest', attempts)
    ]
    const starts = new Map([...a.offsets, ...b.offsets])
    const failed = new Map([...a.failed, ...b.failed])
    const states: PartitionState[] = []
    const unresolved: UnresolvedStart[] = []
    for (const p of fresh) {
      const key = partitionKey(p.topic, p.partition)
      const stored = this.#resumeFrom(key)
      const start = stored === undefined ? starts.get(key) : stored + 1
      // No offset and no error (an answer that left it out) is not a start either: never a made-up 0.
      if (start === undefined) {
        unresolved.push({ ref: p, error: failed.get(key) ?? 'UNKNOWN_SERVER_ERROR' })
        continue
      }
      this.#log.debug({ topic: p.topic, partition: p.partition, position: start, resumed: stored !== undefined }, 'partition added')
      const copiedFrom = stored === undefined ? undefined : this.#copiedFrom(key)
      states.push({ key, topic: p.topic, partition: p.partition, remoteTopic: p.remoteTopic, position: start, highWatermark: -1, copiedRecords: 0, copiedBytes: 0, lostToRetention: 0, head: null, retryAt: 0, releasing: false, lost: false, fetchAt: null, copiedFrom })
    }
    return { states, unresolved }
  }

  /** The stored position KEY resumes after: none for a partition without one, or whose position was forgotten. */
  #resumeFrom (key: string): number | undefined {
    const stored = this.#stored.get(key)
    return stored === undefined || stored < 0 ? undefined : stored
  }

  /**
   * Whether the partition is copied (in the set, not leaving). A queued add does not count: every add of the data
   * path has an `admit` check that may still refuse it when applied.
   */
  taken (key: string): boolean {
    return this.#partitions.has(key) && !this.#leaving(key)
  }

  #leaving (key: string): boolean {
    const p = this.#partitions.get(key)
    return p !== undefined && (p.releasing || p.lost)
  }

  /** Queues a change for the end of the current round (`applyChanges`). */
  enqueue (change: PartitionChange): void {
    this.#changes.push(change)
  }

  /**
   * Applies the queued changes in order; returns the keys that left. `forget` is called for each partition that
   * leaves, so the data path drops what it keeps about it.
   */
  applyChanges (forget: (key: string, state: PartitionState) => void): void {
    for (const change of this.#changes.splice(0)) {
      switch (change.kind) {
        case 'remove-topics':
          for (const [key, p] of [...this.#partitions]) {
            if (!change.topics.has(p.topic)) continue
            this.#delete(p)
            this.#stored.delete(key)
            forget(key, p)
          }
          this.#log.debug({ topics: [...change.topics] }, 'topics removed from replication')
          change.done()
          break
        case 'release': {
          const released: PartitionState[] = []
          for (const key of change.keys) {
            const p = this.#partitions.get(key)
            if (p === undefined || !p.releasing || p.lost) continue
            this.#delete(p)
            released.push(p)
          }
          change.done(released)
          break
        }
        case 'drop-lost':
          for (const [key, p] of [...this.#partitions]) {
            if (!p.lost) continue
            this.#delete(p)
            forget(key, p)
          }
          change.done()
          break
        case 'add':
          for (const state of change.states) {
            if (change.admit !== undefined && !change.admit(state)) continue
            const current = this.#partitions.get(state.key)
            if (current !== undefined && !current.releasing && !current.lost) continue
            if (current !== undefined) forget(state.key, current)
            this.#put(state)
          }
          change.done()
          break
      }
    }
  }
}

/**
 * The source answered OFFSET_OUT_OF_RANGE at the partition's position. Below the log start (retention deleted
 * records before they were copied): never skipped silently, logged at error level with the number lost and
 * counted, then resumed at the log start. Beyond the log end (topic re-created or truncated): resumed at the log start.
 */
export async function recoverOutOfRange (state: PartitionState, f: FetchedBatches, deps: { fetcher: Pick<RecordFetcher, 'listOffsets'>, log: Logger, metrics: Metrics, flow: string }): Promise<void> {
  const tp = [{ topic: state.topic, partition: state.partition }]
  const key = partitionKey(state.topic, state.partition)
  const earliest = (await deps.fetcher.listOffsets(tp, 'earliest')).get(key) ?? 0
  const latest = (await deps.fetcher.listOffsets(tp, 'latest')).get(key) ?? 0
  if (state.position < earliest) {
    const lost = earliest - state.position
    state.lostToRetention += lost
    deps.metrics.inc('recordsLostToRetention', { flow: deps.flow, topic: state.topic }, lost)
    deps.log.error({ code: ErrorCodes.DATA_LOSS_RETENTION, topic: state.topic, partition: state.partition, from: state.position, to: earliest, lost },
      'records were deleted by retention on the source before kmirror copied them; resuming at the log start. Raise retention on the source or fix the replication lag')
    state.position = earliest
  } else if (state.position > latest) {
    deps.log.warn({ topic: state.topic, partition: state.partition, position: state.position, logEnd: latest, logStart: f.logStartOffset },
      'stored position is beyond the end of the source partition (topic re-created or truncated?); restarting at its log start')
    state.position = earliest
  }
}
