/**
 * Partitions whose remote topic was deleted and created again on the target while this instance copied them (a
 * new topic id at their next write: kafka/remote-topic-ids.ts). Each owner copies its own partitions again from the
 * source's log start, as the topic refresh of a lone instance does for its topics, so the re-created topic gets
 * every record the source still holds, whichever instance owns which partition.
 *
 * Invariants:
 * - A held partition is fetched no more (`retryAt` infinite) until it starts again: nothing of it is written into
 *   the new topic at its old position.
 * - It starts again at the next round, before fetching, with its offset syncs dropped (target offsets start over).
 *   Reading the log start failing leaves it held and fails the step (retried with back-off).
 * - A partition that left the set meanwhile (released, lost, its topic removed) is dropped: its next owner learns
 *   the new topic id at its first write and resumes from the stored progress.
 */
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { PartitionSet, PartitionState } from './partition-set.ts'
import type { SourceReader } from './replicator-ports.ts'

/** The write failure of a partition whose remote topic has a new topic id (batch-writer.ts). */
export const REMOTE_TOPIC_RECREATED = 'REMOTE_TOPIC_RECREATED'

export interface RecreatedRemotesDeps {
  readonly flow: string
  readonly aliases: { readonly source: string, readonly target: string }
  readonly fetcher: Pick<SourceReader, 'listOffsets'>
  readonly partitions: Pick<PartitionSet, 'get'>
  readonly log: Logger
  readonly metrics: Metrics
  /** Drops what the data path keeps of the partition's copy (offset syncs, re-encoding). */
  readonly restart: (key: string) => void
}

export class RecreatedRemotes {
  readonly #deps: RecreatedRemotesDeps
  readonly #held = new Map<string, PartitionState>()

  constructor (deps: RecreatedRemotesDeps) {
    this.#deps = deps
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
      this.#deps.restart(s.key)
      s.position = from
      s.head = null
      s.retryAt = 0
    }
  }
}
