/**
 * Offsets of a partition by position or by time (ListOffsets), for `kmirror offsets set`.
 */
import { Consumer, ListOffsetTimestamps } from '@platformatic/kafka'
import type { ClientProps } from '../config/types.ts'
import { ErrorCodes } from '../errors.ts'
import { toConnectOptions } from './client-options.ts'
import type { ClusterContext } from './connection-hints.ts'
import { toKmirrorError } from './errors.ts'
import { toOffset } from './offsets.ts'
import { watchedLibraryClient } from './answering-first.ts'

export class OffsetLookup {
  readonly #consumer: Consumer
  readonly #cluster: ClusterContext

  constructor (props: ClientProps, clientId: string, cluster: ClusterContext) {
    // A group id is required by the library's constructor; nothing here joins it.
    this.#consumer = watchedLibraryClient(new Consumer({ ...toConnectOptions(props, clientId), groupId: `${clientId}-unused`, autocommit: false }), cluster.label)
    this.#cluster = cluster
  }

  /** Log start offsets. */
  async earliest (topic: string, partitions: readonly number[]): Promise<number[]> {
    return await this.#list(topic, partitions, ListOffsetTimestamps.EARLIEST, 'earliest')
  }

  /** High watermarks (the offset a consumer at the end commits). */
  async latest (topic: string, partitions: readonly number[]): Promise<number[]> {
    return await this.#list(topic, partitions, ListOffsetTimestamps.LATEST, 'latest')
  }

  /** The first offset whose timestamp is at or after `timestampMs`, or -1 when there is none. */
  async forTimestamp (topic: string, partitions: readonly number[], timestampMs: number): Promise<number[]> {
    return await this.#list(topic, partitions, BigInt(timestampMs), `offsets at ${new Date(timestampMs).toISOString()}`)
  }

  async #list (topic: string, partitions: readonly number[], timestamp: bigint, what: string): Promise<number[]> {
    try {
      const result = await this.#consumer.listOffsets({ topics: [topic], partitions: { [topic]: [...partitions] }, timestamp, isolationLevel: 0 })
      const offsets = result.get(topic) ?? []
      return partitions.map(p => offsets[p] === undefined ? -1 : toOffset(offsets[p]))
    } catch (err) {
      throw toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `list ${what} of ${topic} on ${this.#cluster.label}`, this.#cluster)
    }
  }

  async close (): Promise<void> {
    await this.#consumer.close(true).catch(() => undefined)
  }
}
