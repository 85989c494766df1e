/**
 * The latency run: a replicator runs on an empty topic; once it is warm (a first few records went
 * through), ProducerPerformance writes a steady rate to the source and a consumer on the target notes, per
 * record, arrival time minus the producer's timestamp.
 */
import { uniqueName, waitFor } from '../../test/helpers/wait.ts'
import { LatencyConsumer } from './latency-consumer.ts'
import { LABEL, remoteTopic, type BenchContext, type Figures } from './measure.ts'
import { producerPerfArgs, startTool } from './perf-tools.ts'
import { ProcessTreeSampler } from './process-tree.ts'
import { startKmirror, startMm2, writeFlowFile, type RunningReplicator, type Tool } from './replicators.ts'
import { TargetWatch } from './target-watch.ts'

export interface LatencyRun {
  tool: Tool
  sourceTopic: string
  partitions: number
  ratePerSecond: number
  seconds: number
  payloadFile: string
  payloadBytes: number
}

function produceSteadily (ctx: BenchContext, run: LatencyRun, records: number, rate: number): Promise<string> {
  return startTool(producerPerfArgs({
    bootstrap: ctx.source.bootstrap, topic: run.sourceTopic, records, payload: { file: run.payloadFile }, throughput: rate,
    props: { acks: 'all', 'compression.type': 'lz4' }
  })).done
}

async function waitForCount (consumer: LatencyConsumer, count: number, timeoutMs: number, what: string): Promise<void> {
  await waitFor(() => ({ done: consumer.received >= count, state: `${consumer.received} of ${count} records` }), { timeoutMs, intervalMs: 100, message: what })
}

export async function measureLatency (ctx: BenchContext, run: LatencyRun): Promise<Figures> {
  const file = writeFlowFile(ctx.workDir, {
    sourceBootstrap: ctx.source.bootstrap, targetBootstrap: ctx.target.bootstrap, tool: run.tool,
    topics: run.sourceTopic, tasksMax: run.partitions, compression: 'lz4'
  })
  const remote = remoteTopic(run.tool, run.sourceTopic)
  ctx.created('target', [remote])
  const sampler = new ProcessTreeSampler()
  const watch = new TargetWatch(ctx.target.bootstrap)
  let replicator: RunningReplicator | undefined
  let consumer: LatencyConsumer | undefined
  try {
    replicator = run.tool === 'mm2' ? await startMm2(uniqueName('bench-mm2'), file) : startKmirror(file)
    sampler.watch(replicator.pid)
    await waitFor(() => watch.allExist([remote]), { timeoutMs: 120_000, intervalMs: 200, message: `${remote} created on the target` })
    consumer = new LatencyConsumer(ctx.target.bootstrap, remote)
    await consumer.start()
    // Warm-up: the replicator's tasks are assigned and fetching before the measured records are written.
    const warmUp = Math.max(10, Math.round(run.ratePerSecond / 4))
    await produceSteadily(ctx, run, warmUp, warmUp)
    await waitForCount(consumer, warmUp, 120_000, `${LABEL[run.tool]} warm-up records on the target`)
    consumer.reset()
    const records = run.ratePerSecond * run.seconds
    const start = Date.now()
    await Promise.race([produceSteadily(ctx, run, records, run.ratePerSecond), replicator.failed])
    await waitForCount(consumer, records, 120_000, `${LABEL[run.tool]}: every measured record on the target`)
    const seconds = (Date.now() - start) / 1000
    const usage = sampler.stop()
    const latency = await consumer.stop()
    consumer = undefined
    return {
      label: LABEL[run.tool], records, bytes: records * run.payloadBytes, seconds,
      recordsPerSecond: records / seconds, steadyRecordsPerSecond: records / seconds, ...usage, latency
    }
  } catch (error) {
    throw new Error(`${LABEL[run.tool]} latency run failed: ${(error as Error).message}\n--- log tail ---\n${replicator?.logTail() ?? ''}`, { cause: error })
  } finally {
    sampler.stop()
    await consumer?.stop().catch(() => undefined)
    await replicator?.stop().catch(e => ctx.log(`stopping ${run.tool}: ${(e as Error).message}`))
    await watch.close()
  }
}
