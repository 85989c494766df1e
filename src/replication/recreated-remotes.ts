/**
 * Partitions whose remote topic was deleted and created again on the target while this instance copied them (a
 * new topic id at their next write: kafka/remote-topic-ids.ts). Each owner copies its own partitions again from the
 * source's log start, as the topic refresh of a lone instance does for its topics, so the re-created topic gets
 * every record the source still holds, whichever instance owns which partition.
 *
 * Invariants:
 * - A held partition is fetched no more (`retryAt` infinite) until it starts again: nothing of it is written into
 *   the new topic at its old position.
 * - A partition with nothing to write notices too: every CHECK_INTERVAL_MS the remote topics' ids of every
 *   partition are read (one metadata request).
 * - It starts again at the next round, before fetching, with its offset syncs dropped (target offsets start over).
 *   Reading the log start failing leaves it held and fails the step (retried with back-off).
 * - A partition that left the set meanwhile (released, lost, its topic removed) is dropped: its next owner learns
 *   the new topic id at its first write and resumes from the stored progress.
 */
import type { Logger } from '../logger.ts'
import { partitionKey } from '../topic-partition.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { PartitionSet, PartitionState } from './partition-set.ts'
import type { SourceReader, TargetWriter } from './replicator-ports.ts'

/** How often partitions with nothing to write have their remote topic's id checked. */
const CHECK_INTERVAL_MS = 10_000

/** The write failure of a partition whose remote topic has a new topic id (batch-writer.ts). */
export const REMOTE_TOPIC_RECREATED = 'REMOTE_TOPIC_RECREATED'

export interface RecreatedRemotesDeps {
  readonly flow: string
  readonly aliases: { readonly source: string, readonly target: string }
  readonly fetcher: Pick<SourceReader, 'listOffsets'>
  /** Which of these remote partitions have a new topic id (BatchWriter.recreatedPartitions); absent: never checked. */
  readonly check?: TargetWriter['recreatedPartitions']
  readonly partitions: Pick<PartitionSet, 'get'>
  readonly log: Logger
  readonly metrics: Metrics
  /** Drops what the data path keeps of the partition's copy (offset syncs, re-encoding). */
  readonly restart: (key: string, from: number) => void
}

export class RecreatedRemotes {
  readonly #deps: RecreatedRemotesDeps
  readonly #held = new Map<string, PartitionState>()
  #nextCheck = Date.now() + CHECK_INTERVAL_MS

  constructor (deps: RecreatedRemotesDeps) {
    this.#deps = deps
  }

  /**
   * Every CHECK_INTERVAL_MS, asks the target for the topic ids of every partition's remote topic (one metadata
   * request): a partition with nothing to write (its source is idle) notices a re-created topic too.
   */
  async checkIdle (states: Iterable<PartitionState>): Promise<void> {
    if (this.#deps.check === undefined || Date.now() < this.#nextCheck) return
    this.#nextCheck = Date.now() + CHECK_INTERVAL_MS
    const all = [...states].filter(s => !s.lost && !s.releasing)
    const byRemote = new Map(all.map(s => [partitionKey(s.remoteTopic, s.partition), s]))
    let recreated: { topic: string, partition: number }[]
    try {
      recreated = await this.#deps.check(all.map(s => ({ topic: s.remoteTopic, partition: s.partition })))
    } catch (err) {
      // The writes read the same metadata and fail on their own if the target is unreachable.
      this.#deps.log.debug({ err }, 'cannot check the topic ids of the remote topics; checked again later')
      return
    }
    for (const r of recreated) {
      const state = byRemote.get(partitionKey(r.topic, r.partition))
      if (state !== undefined) this.hold(state)
    }
  }

  hold (state: PartitionState): void {
    state.retryAt = Number.POSITIVE_INFINITY
    this.#held.set(state.key, state)
  }

  /** Starts every held partition still in the set again at the source's log start. */
  async copyAgainFromLogStart (): Promise<void> {
    if (this.#held.size === 0) return
    const held = [...this.#held.values()].filter(s => this.#deps.partitions.get(s.key) === s && !s.lost && !s.releasing)
    this.#held.clear()
    if (held.length === 0) return
    let starts: Map<string, number>
    try {
      starts = await this.#deps.fetcher.listOffsets(held.map(s => ({ topic: s.topic, partition: s.partition })), 'earliest')
    } catch (err) {
      for (const s of held) this.#held.set(s.key, s)
      throw err
    }
    const { source, target } = this.#deps.aliases
    for (const s of held) {
      const from = starts.get(s.key) ?? 0
      this.#deps.log.error({ topic: s.topic, partition: s.partition, remoteTopic: s.remoteTopic, from, was: s.position },
        `remote topic ${s.remoteTopic} was deleted and created again on cluster ${target} (a new topic id): copying ${s.topic}-${s.partition} again from offset ${from}, its log start on cluster ${source} (it was at ${s.position}; records retention already deleted there cannot be copied again)`)
      this.#deps.metrics.inc('remotePartitionsCopiedAgain', { flow: this.#deps.flow, topic: s.topic })
      this.#deps.restart(s.key, from)
      s.position = from
      s.head = null
      s.retryAt = 0
    }
  }
}
