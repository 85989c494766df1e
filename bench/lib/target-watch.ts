/**
 * Watches how many records a set of topics on one cluster holds (sum of end offsets), with one
 * long-lived admin client, and notes when the first record arrived and when all had.
 */
import { Admin, ListOffsetTimestamps } from '@platformatic/kafka'
import { uniqueName } from '../../test/helpers/wait.ts'

export interface Arrival {
  /** ms from START until the topics held at least one record. */
  firstRecordMs: number
  /** ms from START until they held EXPECTED records. */
  completeMs: number
}

export class TargetWatch {
  private readonly admin: Admin
  private closed = false

  constructor (bootstrap: string) {
    this.admin = new Admin({ clientId: uniqueName('kmirror-bench-watch'), bootstrapBrokers: [bootstrap], retries: 2, retryDelay: 100 })
  }

  /** Records held by TOPICS (those that exist; 0 for the others). */
  async count (topics: readonly string[]): Promise<number> {
    const existing = new Set(await this.admin.listTopics({ includeInternals: false }))
    const present = topics.filter(t => existing.has(t))
    if (present.length === 0) return 0
    // Asking for a missing topic would fail the whole metadata request: only existing ones are named.
    const metadata = await this.admin.metadata({ topics: present, forceUpdate: true })
    const request = present.map(name => ({
      name,
      partitions: Array.from({ length: metadata.topics.get(name)?.partitionsCount ?? 0 }, (_, partitionIndex) => ({ partitionIndex, timestamp: ListOffsetTimestamps.LATEST }))
    }))
    const listed = await this.admin.listOffsets({ topics: request })
    let total = 0n
    for (const topic of listed) for (const p of topic.partitions) total += p.offset
    return Number(total)
  }

  /** True once every one of TOPICS exists. */
  async allExist (topics: readonly string[]): Promise<boolean> {
    const existing = new Set(await this.admin.listTopics({ includeInternals: false }))
    return topics.every(t => existing.has(t))
  }

  /**
   * Polls every INTERVALMS until TOPICS hold EXPECTED records; START is the epoch ms the clock runs from.
   * Rejects after TIMEOUTMS with the count reached. A failed poll (topic being created) counts as "not yet".
   */
  async waitForRecords (topics: readonly string[], expected: number, start: number, { timeoutMs, intervalMs = 200 }: { timeoutMs: number; intervalMs?: number }): Promise<Arrival> {
    let firstRecordMs: number | undefined
    let last = 0
    for (;;) {
      try {
        last = await this.count(topics)
      } catch {
        // metadata not ready yet: try again at the next poll
      }
      if (this.closed) throw new Error('the watch was closed')
      const now = Date.now()
      if (last > 0) firstRecordMs ??= now - start
      if (last >= expected) return { firstRecordMs: firstRecordMs ?? now - start, completeMs: now - start }
      if (now - start > timeoutMs) throw new Error(`target holds ${last} of ${expected} records after ${now - start} ms`)
      await new Promise(resolve => setTimeout(resolve, intervalMs))
    }
  }

  async close (): Promise<void> {
    this.closed = true
    await this.admin.close()
  }
}
