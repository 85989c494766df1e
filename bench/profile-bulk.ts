/**
 * Where kmirror spends its CPU on the `bulk` workload: preloads the topic on bench-a/bench-b (started if
 * needed, left running), runs kmirror under `--cpu-prof` until the target holds everything, and prints the
 * functions with the most self time. Not part of `npm run bench`.
 *
 *   node bench/profile-bulk.ts [RECORDS]     (default 1,000,000)
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runKafkaLocal, type TestCluster } from '../test/helpers/clusters.ts'
import { createTopic } from '../test/helpers/kafka.ts'
import { spawnKmirror } from '../test/helpers/process.ts'
import { uniqueName } from '../test/helpers/wait.ts'
import { newWorkDir, remoteTopic } from './lib/measure.ts'
import { writePayloadFile } from './lib/payloads.ts'
import { producerPerfArgs, startTool } from './lib/perf-tools.ts'
import { TARGET_ALIAS, writeFlowFile } from './lib/replicators.ts'
import { TargetWatch } from './lib/target-watch.ts'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
}

/** Self time per function (name and file:line), as a share of all samples, highest first. */
function topFunctions (file: string, count: number): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] }
  const hits = new Map<number, number>()
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1)
  const byFunction = new Map<string, number>()
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame
    const where = url ? `${url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/src\//, 'src/')}:${lineNumber + 1}` : ''
    const name = `${functionName || '(anonymous)'} ${where}`.trim()
    byFunction.set(name, (byFunction.get(name) ?? 0) + (hits.get(node.id) ?? 0))
  }
  const total = profile.samples.length
  return [...byFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, count)
    .map(([name, n]) => `${((100 * n) / total).toFixed(1).padStart(5)} %  ${name}`)
}

async function main (): Promise<void> {
  const records = Number(process.argv[2] ?? 1_000_000)
  await Promise.all([runKafkaLocal(['up', 'bench-a', '39092']), runKafkaLocal(['up', 'bench-b', '39192'])])
  const source: TestCluster = { name: 'source', bootstrap: '127.0.0.1:39092', external: true }
  const target: TestCluster = { name: 'target', bootstrap: '127.0.0.1:39192', external: true }
  const dir = newWorkDir()
  const payloads = join(dir, 'payloads.json')
  writePayloadFile(payloads, 2_000, 1024)
  const topic = uniqueName('profile')
  await createTopic(source, topic, { partitions: 8 })
  await startTool(producerPerfArgs({ bootstrap: source.bootstrap, topic, records, payload: { file: payloads }, throughput: -1, props: { acks: 'all', 'compression.type': 'lz4', 'batch.size': '262144', 'linger.ms': '10' } })).done
  const file = writeFlowFile(dir, { sourceBootstrap: source.bootstrap, targetBootstrap: target.bootstrap, tool: 'kmirror', topics: topic, tasksMax: 8, compression: 'lz4' })
  const profiles = join(dir, 'profiles')
  const watch = new TargetWatch(target.bootstrap)
  const start = Date.now()
  const kmirror = spawnKmirror(['run', file, '--clusters', TARGET_ALIAS], { env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profiles}` } })
  const arrival = await watch.waitForRecords([remoteTopic('kmirror', topic)], records, start, { timeoutMs: 600_000 })
  kmirror.kill('SIGTERM')
  await kmirror.waitForExit(20_000)
  await watch.close()
  process.stdout.write(`kmirror copied ${records} records in ${(arrival.completeMs / 1000).toFixed(1)} s; profile in ${profiles}\n`)
  for (const line of topFunctions(join(profiles, readdirSync(profiles)[0]!), 30)) process.stdout.write(`${line}\n`)
}

main().catch(error => {
  process.stderr.write(`profile failed: ${error instanceof Error ? error.stack : String(error)}\n`)
  process.exitCode = 1
})
