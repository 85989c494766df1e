/**
 * Source topics deleted and created again under the same name while their partitions are copied (the data path's
 * side of it; the topic refresh reports it too). The new topic's offsets start again: a position kept from the old
 * topic would skip its first records, or copy from the middle of it, silently. Each partition is restarted at the
 * new topic's log start by the instance that owns it, the moment one of its fetch answers carries the new topic
 * id (source-topic-ids.ts), before anything of that answer is written.
 *
 * Invariants:
 * - An answer from the new topic is never written as a continuation of the old one: it is dropped, and the
 *   partition's next fetch starts at the new topic's log start (from that answer).
 * - The partition's offset syncs start afresh (`restart`): the old topic's pairs do not map the new offsets.
 * - Logged at error level once per partition and re-creation, counted (`kmirror_source_partitions_restarted_total`).
 * - A partition resumed from a stored position is compared, at its first answer, with the source topic id of the
 *   copy that stored it (`PartitionState.copiedFrom`, from the offset history): a topic deleted and created again
 *   while no kmirror copied it (stopped, or between two owners) restarts the same way, never resumes mid-topic.
 */
import { FetchOutcomes, type FetchedBatches } from '../kafka/fetch-results.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { PartitionState } from './partition-set.ts'
import { SourceTopicIds } from './source-topic-ids.ts'

export interface SourceRecreatedDeps {
  readonly flow: string
  readonly aliases: { readonly source: string, readonly target: string }
  readonly log: Logger
  readonly metrics: Metrics
  /** The state of a partition fetched this round. */
  readonly state: (f: { topic: string, partition: number }) => PartitionState
  /** Forgets what the data path knew of the partition's copy so far (offset syncs, waits, writes in doubt); FROM: where it starts now. */
  readonly restart: (state: PartitionState, from: number) => void
}

export class SourceRecreated {
  readonly #deps: SourceRecreatedDeps
  readonly #ids = new SourceTopicIds()

  constructor (deps: SourceRecreatedDeps) {
    this.#deps = deps
  }

  /** FETCHED without the answers from a re-created source topic, whose partitions restart at its log start. */
  sift (fetched: FetchedBatches[]): FetchedBatches[] {
    let restarted: Set<FetchedBatches> | null = null
    for (const f of fetched) {
      if (f.outcome !== FetchOutcomes.OK) continue
      const state = this.#deps.state(f)
      // Lost since the fetch: not this instance's any more (its round writes nothing of it), so nothing of its copy
      // is forgotten or restarted here; its next owner sees the new id itself.
      if (state.lost) continue
      if (state.copiedFrom !== undefined) {
        this.#ids.resume(state.key, state.copiedFrom)
        state.copiedFrom = undefined
      }
      if (!this.#ids.changed(state.key, f)) continue
      restarted ??= new Set()
      restarted.add(f)
      this.#restart(state, f)
    }
    return restarted === null ? fetched : fetched.filter(f => !restarted.has(f))
  }

  /** The partition left the flow: its next id is learnt afresh. */
  forget (key: string): void {
    this.#ids.forget(key)
  }

  #restart (state: PartitionState, f: FetchedBatches): void {
    const { source, target } = this.#deps.aliases
    const from = Math.max(0, f.logStartOffset)
    this.#deps.log.error({ topic: state.topic, partition: state.partition, remoteTopic: state.remoteTopic, from, was: state.position, topicId: f.topicId },
      `source topic ${state.topic} was deleted and created again on cluster ${source} (a new topic id): copying ${state.topic}-${state.partition} from offset ${from}, ` +
      `the new topic's log start, into ${state.remoteTopic} on cluster ${target} (it was at ${state.position} of the old topic; the remote topic keeps the old topic's records before the new ones)`)
    this.#deps.metrics.inc('sourcePartitionsRestarted', { flow: this.#deps.flow, topic: state.topic })
    this.#deps.restart(state, from)
    state.position = from
    state.head = null
    state.retryAt = 0
  }
}
