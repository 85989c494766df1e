/**
 * What the replicator's own bookkeeping costs per fetch round over many caught-up partitions, without Kafka:
 * FlowReplicator (the data path) driven by a source that answers every partition OK and empty at once, as an
 * incremental fetch session does when nothing moved. The source hands back the same answer objects each round,
 * so what is measured is the replicator's round alone (the fetcher's own cost: bench/fetch-rounds.ts).
 *
 *   node --expose-gc bench/replicator-rounds.ts [--partitions 5000] [--rounds 2000] [--runs 3]
 *
 * Per round: main-thread CPU (process.cpuUsage, includes garbage collection on the main thread) and bytes
 * allocated on the V8 heap (summed between garbage collections with v8.GCProfiler). Run with nothing else of
 * yours running; the best of `--runs` runs is printed with all of them.
 */
import { parseArgs } from 'node:util'
import { GCProfiler } from 'node:v8'
import { pino } from 'pino'
import { FetchOutcomes, type FetchedBatches, type PartitionPosition } from '../src/kafka/record-fetcher.ts'
import { FlowReplicator, type SourceReader } from '../src/replication/flow-replicator.ts'

const { values } = parseArgs({
  options: {
    partitions: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '2000' },
    runs: { type: 'string', default: '3' }
  }
})
const partitionCount = Number(values.partitions)
const rounds = Number(values.rounds)
const runs = Number(values.runs)
const PARTITIONS_PER_TOPIC = 5
const topics = Array.from({ length: Math.ceil(partitionCount / PARTITIONS_PER_TOPIC) }, (_, i) => ({
  source: `replicator-rounds-${i}`, remote: `A.replicator-rounds-${i}`, partitions: PARTITIONS_PER_TOPIC
}))

/** Answers every partition OK and empty at its position (high watermark = position: caught up). */
class IdleSource implements SourceReader {
  fetches = 0
  #answer: FetchedBatches[] | null = null
  #onFetch: (() => void) | null = null

  onFetch (listener: () => void): void {
    this.#onFetch = listener
  }

  async fetchBatches (positions: readonly PartitionPosition[]): Promise<FetchedBatches[]> {
    this.#answer ??= positions.map(p => ({
      topic: p.topic, partition: p.partition, outcome: FetchOutcomes.OK, fromOffset: p.offset, batches: [],
      nextOffset: p.offset, highWatermark: p.offset, lastStableOffset: p.offset, logStartOffset: 0
    }))
    this.fetches++
    this.#onFetch?.()
    return this.#answer
  }

  async listOffsets (partitions: readonly { topic: string, partition: number }[]): Promise<Map<string, number>> {
    return new Map(partitions.map(p => [`${p.topic}\u0000${p.partition}`, 100]))
  }

  async listOffsetsSettled (partitions: readonly { topic: string, partition: number }[]): Promise<{ offsets: Map<string, number>, failed: Map<string, string> }> {
    return { offsets: await this.listOffsets(partitions), failed: new Map() }
  }
}

interface Figures { cpuMsPerRound: number, allocatedKiBPerRound: number, roundsPerSecond: number }

async function measure (): Promise<Figures> {
  const source = new IdleSource()
  const replicator = new FlowReplicator({
    flow: { name: 'A->B', offsetLagMax: 100, offsetFlushIntervalMs: 5000 },
    fetcher: source,
    writer: { write: async () => ({ incomplete: [], failed: [] }) },
    progress: { commit: async positions => positions.size },
    syncs: null,
    log: pino({ level: 'silent' }),
    startAt: 'latest'
  })
  await replicator.addTopics(topics)
  const warmUp = Math.min(200, rounds)
  let started = 0
  let cpuBefore = process.cpuUsage()
  let heapBefore = 0
  const profiler = new GCProfiler()
  let done!: () => void
  const finished = new Promise<void>(resolve => { done = resolve })
  source.onFetch(() => {
    if (source.fetches === warmUp) {
      globalThis.gc?.()
      heapBefore = process.memoryUsage().heapUsed
      profiler.start()
      cpuBefore = process.cpuUsage()
      started = performance.now()
    } else if (source.fetches === warmUp + rounds) {
      replicator.stop()
      done()
    }
  })
  const running = replicator.run()
  await finished
  const cpu = process.cpuUsage(cpuBefore)
  const seconds = (performance.now() - started) / 1000
  const heapNow = process.memoryUsage().heapUsed
  const gc = profiler.stop()
  await running
  return {
    cpuMsPerRound: Number(((cpu.user + cpu.system) / 1000 / rounds).toFixed(3)),
    allocatedKiBPerRound: Number((allocated(gc?.statistics ?? [], heapBefore, heapNow) / 1024 / rounds).toFixed(1)),
    roundsPerSecond: Number((rounds / seconds).toFixed(0))
  }
}

/** Bytes allocated from `heapBefore` to `heapNow`: the heap's growth between garbage collections, summed. */
function allocated (statistics: readonly { beforeGC: { heapStatistics: { usedHeapSize: number } }, afterGC: { heapStatistics: { usedHeapSize: number } } }[], heapBefore: number, heapNow: number): number {
  let total = 0
  let last = heapBefore
  for (const s of statistics) {
    total += s.beforeGC.heapStatistics.usedHeapSize - last
    last = s.afterGC.heapStatistics.usedHeapSize
  }
  return total + heapNow - last
}

const results: Figures[] = []
for (let i = 0; i < runs; i++) results.push(await measure())
const best = results.reduce((a, b) => (b.cpuMsPerRound < a.cpuMsPerRound ? b : a))
console.log(JSON.stringify({ partitions: topics.length * PARTITIONS_PER_TOPIC, rounds, best, runs: results }))
