/**
 * Brokers warmed up before a contender is timed. The harness starts its brokers moments before a run (and the
 * target again before each contender, so that none inherits a broker another one warmed up); a JVM that cold
 * spends 40-55 % of its CPU in its first minute compiling its own code (session 44: 10-13.5 CPU s of the target's
 * during a `partitions` run, 4.5-4.9 s of the source's), on the 2 cores the contender shares with it. A production
 * broker has served for days. Every contender gets the same warm-up of the target; what is timed is then mostly the
 * replicator's work and the brokers' work for it rather than the brokers' JIT.
 *
 * What it does not even out: the source is warmed once per scenario, so a contender after the first reads a source
 * the ones before it warmed further; and the target's warm-up (topics created 100 a request, one record on every
 * partition) is the limit's own work in `partitions`, so it helps the limit's figure most (RESULTS.md, session 45).
 */
import { ListOffsetTimestamps } from '@platformatic/kafka'
import { RecordFetcher } from '../../src/kafka/record-fetcher.ts'
import { partitionKey } from '../../src/topic-partition.ts'
import type { TestCluster } from '../../test/helpers/clusters.ts'
import { produce, withAdmin, type TestRecord } from '../../test/helpers/kafka.ts'
import { uniqueName, waitFor } from '../../test/helpers/wait.ts'
import { jsonPayload } from './payloads.ts'

/** Creates NAMES with PARTITIONS each on CLUSTER, 100 topics a request, and waits until every partition answers ListOffsets. */
export async function createReadyTopics (cluster: TestCluster, names: readonly string[], partitions: number): Promise<void> {
  await withAdmin(cluster, async admin => {
    for (let i = 0; i < names.length; i += 100) await admin.createTopics({ topics: names.slice(i, i + 100), partitions, replicas: 1 })
    const request = names.map(name => ({ name, partitions: Array.from({ length: partitions }, (_, partitionIndex) => ({ partitionIndex, timestamp: ListOffsetTimestamps.LATEST })) }))
    await waitFor(async () => {
      const listed = await admin.listOffsets({ topics: request }).catch(() => [])
      const served = listed.reduce((n, t) => n + t.partitions.length, 0)
      return { done: served === names.length * partitions, state: `${served} of ${names.length * partitions} partitions answer ListOffsets` }
    }, { timeoutMs: 300_000, intervalMs: 1000, message: `${names.length} topics ready on ${cluster.name} (${cluster.bootstrap})` })
  })
}

/**
 * Reads every partition of NAMES on CLUSTER once from the start, then IDLEROUNDS rounds at the end in a fetch
 * session (long polls of 500 ms), as a replicator does; resolves with the bytes read.
 */
export async function readEveryPartition (cluster: TestCluster, names: readonly string[], perTopic: number, idleRounds: number): Promise<number> {
  const fetcher = new RecordFetcher({ 'bootstrap.servers': cluster.bootstrap }, uniqueName('bench-warm-up'), {
    isolation: 'read_uncommitted', maxWaitMs: 500, maxBytes: 52_428_800, maxPartitionBytes: 1_048_576, sessions: true
  })
  try {
    const all = names.flatMap(topic => Array.from({ length: perTopic }, (_, partition) => ({ topic, partition })))
    const ends = await fetcher.listOffsets(all, 'latest')
    let positions = all.map(p => ({ ...p, offset: 0 }))
    let bytes = 0
    for (let round = 0; positions.some(p => p.offset < (ends.get(partitionKey(p.topic, p.partition)) ?? 0)); round++) {
      if (round >= 100) throw new Error(`warming ${cluster.name} up (${cluster.bootstrap}): not every partition of ${names.length} topics read after ${round} rounds`)
      const fetched = await fetcher.fetchBatches(positions)
      const next = new Map(fetched.map(f => [partitionKey(f.topic, f.partition), f]))
      positions = positions.map(p => {
        const f = next.get(partitionKey(p.topic, p.partition))
        bytes += f?.batches.reduce((n, b) => n + b.bytes.length, 0) ?? 0
        return f === undefined || f.batches.length === 0 ? p : { ...p, offset: f.nextOffset }
      })
    }
    for (let i = 0; i < idleRounds; i++) await fetcher.fetchBatches(positions)
    return bytes
  } finally {
    await fetcher.close()
  }
}

/** Whether a fresh target of a run of SIZE is warmed up: full size, unless KMIRROR_BENCH_COLD_TARGET=1. */
export function warmsTarget (size: 'full' | 'tiny'): boolean {
  return size === 'full' && process.env['KMIRROR_BENCH_COLD_TARGET'] !== '1'
}

/** What a scenario's notes say of its targets: a fresh one per contender (when CTX has them), warmed up or cold. */
export function freshTargetNote (ctx: { freshTarget?: unknown }, size: 'full' | 'tiny'): string {
  if (ctx.freshTarget === undefined) return ''
  const { topics, perTopic } = WARM_TARGET
  const how = warmsTarget(size) ? `then warmed up with ${topics} topics × ${perTopic} partitions of its own, created, written and read` : 'left cold'
  return `Each contender ran on a fresh target (the target cluster wiped and started again before it, ${how}). `
}

/** How much a fresh target is warmed up with: partitions created, written and read, as a replicator's run does. */
export const WARM_TARGET = { topics: 200, perTopic: 5, idleRounds: 10 } as const

/**
 * Warms a fresh TARGET up with the work a replicator's run gives it, on topics of its own (`bench-warm-*`, left
 * there: a production target holds other topics too): WARM_TARGET.topics topics created 100 a request, one lz4
 * record produced to every partition, every partition read back, then idle fetch rounds. Resolves with the seconds
 * it took.
 */
export async function warmTarget (target: TestCluster): Promise<number> {
  const started = Date.now()
  const { topics, perTopic, idleRounds } = WARM_TARGET
  const prefix = uniqueName('bench-warm')
  const names = Array.from({ length: topics }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`)
  await createReadyTopics(target, names, perTopic)
  const records: TestRecord[] = names.flatMap(topic => Array.from({ length: perTopic }, (_, partition) => ({
    topic, partition, key: null, value: Buffer.from(jsonPayload(partition, 768)), headers: [], timestamp: BigInt(Date.now())
  })))
  await produce(target, records, { compression: 'lz4' })
  await readEveryPartition(target, names, perTopic, idleRounds)
  return (Date.now() - started) / 1000
}
