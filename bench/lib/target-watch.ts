/**
 * Watches how many records a set of topics on one cluster holds (sum of end offsets), with one
 * long-lived admin client, and notes when the first record arrived and when all had.
 */
import { Admin, ListOffsetTimestamps } from '@platformatic/kafka'
import { uniqueName } from '../../test/helpers/wait.ts'

/** Topics per ListOffsets request. */
const CHUNK = 100

export interface Arrival {
  /** ms from START until the topics held at least one record. */
  firstRecordMs: number
  /** ms from START until they held EXPECTED records. */
  completeMs: number
}

export class TargetWatch {
  private readonly admin: Admin
  private closed = false
  /** Records each topic held at its last good answer (never lowered). */
  private readonly known = new Map<string, bigint>()

  constructor (bootstrap: string) {
    this.admin = new Admin({ clientId: uniqueName('kmirror-bench-watch'), bootstrapBrokers: [bootstrap], retries: 2, retryDelay: 100 })
  }

  /**
   * Records held by TOPICS (those that exist; 0 for the others). A topic whose offsets cannot be listed now (a
   * partition without a leader yet: the whole ListOffsets fails) counts what it held at its last good answer, so
   * one such partition among 5,000 does not hide the records of all the others.
   */
  async count (topics: readonly string[]): Promise<number> {
    const existing = new Set(await this.admin.listTopics({ includeInternals: false }))
    const present = topics.filter(t => existing.has(t))
    for (let i = 0; i < present.length; i += CHUNK) await this.listChunk(present.slice(i, i + CHUNK))
    let total = 0n
    for (const topic of topics) total += this.known.get(topic) ?? 0n
    return Number(total)
  }

  /** End offsets of every partition of TOPIC (index = partition). */
  async partitionEnds (topic: string): Promise<bigint[]> {
    const listed = await this.listOffsets([topic])
    const ends: bigint[] = []
    for (const p of listed[0]?.partitions ?? []) ends[p.partitionIndex] = p.offset
    return ends
  }

  /** Updates `known` for TOPICS in one request, or topic by topic if that one fails. */
  private async listChunk (topics: readonly string[]): Promise<void> {
    try {
      this.remember(await this.listOffsets(topics))
    } catch {
      if (topics.length === 1) return
      for (const topic of topics) await this.listOffsets([topic]).then(listed => this.remember(listed), () => undefined)
    }
  }

  private remember (listed: readonly { name: string, partitions: readonly { offset: bigint }[] }[]): void {
    for (const topic of listed) {
      const sum = topic.partitions.reduce((n, p) => n + p.offset, 0n)
      if (sum > (this.known.get(topic.name) ?? 0n)) this.known.set(topic.name, sum)
    }
  }

  private async listOffsets (topics: readonly string[]): Promise<{ name: string, partitions: { partitionIndex: number, offset: bigint }[] }[]> {
    // Asking for a missing topic would fail the whole metadata request: only existing ones are named.
    const metadata = await this.admin.metadata({ topics: [...topics], forceUpdate: true })
    const request = topics.map(name => ({
      name,
      partitions: Array.from({ length: metadata.topics.get(name)?.partitionsCount ?? 0 }, (_, partitionIndex) => ({ partitionIndex, timestamp: ListOffsetTimestamps.LATEST }))
    }))
    return await this.admin.listOffsets({ topics: request })
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
