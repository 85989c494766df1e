/**
 * Offsets of a partition by position or by time (ListOffsets), for `kmirror offsets set`.
 *
 * Invariants:
 * - Asked with kmirror's own ListOffsets (offset-listing.ts, through a RecordFetcher), read_uncommitted: `latest`
 *   is the high watermark, the offset a consumer at the end commits.
 * - All or nothing: a partition without an answer (no leader: LEADER_NOT_AVAILABLE, named with the partition and
 *   the cluster) fails the lookup; no partition is ever given a made-up offset, so a plan is never built on one.
 */
import { partitionKey } from '../topic-partition.ts'
import type { OffsetQuery } from './offset-listing.ts'
import type { RecordFetcher } from './record-fetcher.ts'

export class OffsetLookup {
  readonly #fetcher: Pick<RecordFetcher, 'listOffsets'>

  constructor (fetcher: Pick<RecordFetcher, 'listOffsets'>) {
    this.#fetcher = fetcher
  }

  /** Log start offsets. */
  async earliest (topic: string, partitions: readonly number[]): Promise<number[]> {
    return await this.#list(topic, partitions, 'earliest')
  }

  /** High watermarks (the offset a consumer at the end commits). */
  async latest (topic: string, partitions: readonly number[]): Promise<number[]> {
    return await this.#list(topic, partitions, 'latest')
  }

  /** The first offset whose timestamp is at or after `timestampMs`, or -1 when there is none. */
  async forTimestamp (topic: string, partitions: readonly number[], timestampMs: number): Promise<number[]> {
    return await this.#list(topic, partitions, { atOrAfter: timestampMs })
  }

  async #list (topic: string, partitions: readonly number[], which: OffsetQuery): Promise<number[]> {
    const offsets = await this.#fetcher.listOffsets(partitions.map(partition => ({ topic, partition })), which)
    return partitions.map(p => offsets.get(partitionKey(topic, p))!)
  }
}
