/**
 * A group-less consumer of every partition of one topic that records, for each record, the time it was
 * fetched minus its timestamp (the CreateTime the source producer set, which replicators copy).
 */
import { Consumer } from '@platformatic/kafka'
import { uniqueName, waitForValue } from '../../test/helpers/wait.ts'
import type { Latency } from './measure.ts'

export class LatencyConsumer {
  private readonly consumer: Consumer
  private readonly latencies: number[] = []
  private running = false
  private loop: Promise<void> | undefined

  private readonly topic: string

  constructor (bootstrap: string, topic: string) {
    this.topic = topic
    this.consumer = new Consumer({ clientId: uniqueName('kmirror-bench-latency'), bootstrapBrokers: [bootstrap], groupId: uniqueName('kmirror-bench-unused') })
  }

  get received (): number {
    return this.latencies.length
  }

  /** Forgets what was received so far (after a warm-up). */
  reset (): void {
    this.latencies.length = 0
  }

  async start (): Promise<void> {
    const metadata = await waitForValue(async () => {
      const topic = (await this.consumer.metadata({ topics: [this.topic], forceUpdate: true })).topics.get(this.topic)
      return { done: topic !== undefined && topic.partitions.every(p => p.leader >= 0), state: topic }
    }, { timeoutMs: 30_000, intervalMs: 100, message: `every partition of ${this.topic} has a leader` })
    const leader = metadata!.partitions[0]!.leader
    const offsets = metadata!.partitions.map(() => 0n)
    this.running = true
    this.loop = (async () => {
      while (this.running) {
        try {
          this.take(await this.fetch(metadata!.id, leader, offsets), offsets)
        } catch {
          // a partition without its leader yet, or a reconnect: try again shortly
          await new Promise(resolve => setTimeout(resolve, 100))
        }
      }
    })()
  }

  private fetch (topicId: string, leader: number, offsets: readonly bigint[]) {
    return this.consumer.fetch({
      node: leader,
      topics: [{ topicId, partitions: offsets.map((fetchOffset, partition) => ({ partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, partitionMaxBytes: 4 * 1024 * 1024 })) }],
      isolationLevel: 0,
      minBytes: 1,
      maxBytes: 16 * 1024 * 1024,
      maxWaitTime: 100
    })
  }

  /** Notes the latency of every record in RESPONSE at or after its partition's offset, and moves the offsets on. */
  private take (response: Awaited<ReturnType<LatencyConsumer['fetch']>>, offsets: bigint[]): void {
    const now = Date.now()
    for (const partition of response.responses[0]?.partitions ?? []) {
      for (const batch of partition.records ?? []) {
        for (const r of batch.records) {
          if (batch.firstOffset + BigInt(r.offsetDelta) < offsets[partition.partitionIndex]!) continue
          this.latencies.push(now - Number(batch.firstTimestamp + r.timestampDelta))
        }
        offsets[partition.partitionIndex] = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n
      }
    }
  }

  async stop (): Promise<Latency> {
    this.running = false
    await this.loop?.catch(() => undefined)
    await this.consumer.close(true)
    return percentiles(this.latencies)
  }
}

export function percentiles (values: readonly number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN
  return { p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted[sorted.length - 1] ?? NaN }
}
