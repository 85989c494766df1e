/**
 * Issue 11's scale scenario: 1,000 topics × 5 partitions (5,000 partitions) with a few records each, copied by
 * MM2 and then kmirror on the same clusters. What it costs is per partition (topic creation, fetch rounds over
 * every partition, per-partition state and metrics), not bytes: timed until every partition is complete.
 */
import { ListOffsetTimestamps } from '@platformatic/kafka'
import { produce, withAdmin, type TestRecord } from '../test/helpers/kafka.ts'
import { uniqueName, waitFor } from '../test/helpers/wait.ts'
import { measureReplicator, type BenchContext, type Figures } from './lib/measure.ts'
import { jsonPayload } from './lib/payloads.ts'
import type { Scenario } from './scenarios.ts'

/** MM2's tasks, as in the other scenarios. */
const TASKS = 8
const PAYLOAD_BYTES = 768

/** Creates NAMES with PARTITIONS each, 100 topics a request, and waits until every partition answers ListOffsets. */
async function createTopics (ctx: BenchContext, names: readonly string[], partitions: number): Promise<void> {
  await withAdmin(ctx.source, async admin => {
    for (let i = 0; i < names.length; i += 100) await admin.createTopics({ topics: names.slice(i, i + 100), partitions, replicas: 1 })
    const request = names.map(name => ({ name, partitions: Array.from({ length: partitions }, (_, partitionIndex) => ({ partitionIndex, timestamp: ListOffsetTimestamps.LATEST })) }))
    await waitFor(async () => {
      const listed = await admin.listOffsets({ topics: request }).catch(() => [])
      const served = listed.reduce((n, t) => n + t.partitions.length, 0)
      return { done: served === names.length * partitions, state: `${served} of ${names.length * partitions} partitions answer ListOffsets` }
    }, { timeoutMs: 300_000, intervalMs: 1000, message: `${names.length} topics ready` })
  })
}

export const partitions: Scenario = {
  name: 'partitions',
  async run (ctx, size) {
    const [count, perTopic, perPartition] = size === 'full' ? [1_000, 5, 10] : [5, 5, 4]
    const prefix = uniqueName('parts')
    const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`)
    ctx.created('source', names)
    const created = Date.now()
    await createTopics(ctx, names, perTopic)
    ctx.log(`partitions: created ${count} topics × ${perTopic} partitions in ${((Date.now() - created) / 1000).toFixed(1)} s`)
    const records: TestRecord[] = names.flatMap((topic, t) => Array.from({ length: perTopic * perPartition }, (_, i) => ({
      topic, partition: i % perTopic, key: null, value: Buffer.from(jsonPayload(t * perTopic * perPartition + i, PAYLOAD_BYTES)), headers: [], timestamp: BigInt(Date.now())
    })))
    await produce(ctx.source, records, { compression: 'lz4' })
    ctx.log(`partitions: preloaded ${records.length.toLocaleString()} records`)
    const runs: Figures[] = []
    for (const tool of ctx.tools) {
      ctx.log(`${tool}: copying ${count * perTopic} partitions`)
      runs.push(await measureReplicator(ctx, { tool, sourceTopics: names, records: records.length, bytes: records.length * PAYLOAD_BYTES, compression: 'lz4', tasksMax: TASKS, timeoutMs: size === 'full' ? 600_000 : 120_000, pollMs: size === 'full' ? 2000 : 500 }))
      ctx.log(`${tool}: all partitions on the target after ${runs.at(-1)!.seconds.toFixed(1)} s, peak RSS ${runs.at(-1)!.peakRssMiB.toFixed(0)} MiB`)
    }
    return {
      name: 'partitions',
      workload: `${count.toLocaleString()} topics × ${perTopic} partitions (${(count * perTopic).toLocaleString()}) × ${perPartition} records of ${PAYLOAD_BYTES}-byte JSON (lz4), preloaded; timed until every partition is complete on the target. MM2 with \`tasks.max = ${TASKS}\`.`,
      runs,
      notes: ['No limit row: the cost here is per partition (topic creation, fetch rounds, state), not bytes.']
    }
  }
}
