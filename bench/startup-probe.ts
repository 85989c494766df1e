/**
 * Start-up probe: how long kmirror takes from process start to its first record on the target, phase by phase.
 *
 *   node bench/startup-probe.ts [--topics 1] [--partitions 8] [--records 2000] [--runs 3] [--warm]
 *       [--source 127.0.0.1:29092] [--target 127.0.0.1:29192] [--main src/cli/main.ts]
 *
 * Preloads fresh topics on the source, then per run spawns `node --import bench/startup-hook.ts MAIN run FILE
 * --clusters T` (as the bench does, plus the hook) and prints, in ms since the spawn: the child's Node start, its
 * log lines, every Kafka request kind's first send and answer per cluster, the first Produce acknowledged on
 * the target, and the first record a 20 ms poll sees on the target. `--warm` reuses one source alias (internal
 * topics already exist after the first run); by default each run uses a fresh alias (first start ever).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { TargetWatch } from './lib/target-watch.ts'
import { REPO_ROOT, type TestCluster } from '../test/helpers/clusters.ts'
import { NODE_FLAGS } from '../src/cli/node-flags.ts'
import { createTopic, produce, TIMESTAMP_BASE } from '../test/helpers/kafka.ts'
import { uniqueName } from '../test/helpers/wait.ts'

const { values } = parseArgs({
  options: {
    topics: { type: 'string', default: '1' },
    partitions: { type: 'string', default: '8' },
    records: { type: 'string', default: '2000' },
    runs: { type: 'string', default: '3' },
    warm: { type: 'boolean', default: false },
    source: { type: 'string', default: '127.0.0.1:29092' },
    target: { type: 'string', default: '127.0.0.1:29192' },
    main: { type: 'string', default: 'src/cli/main.ts' },
    quiet: { type: 'boolean', default: false },
    full: { type: 'boolean', default: false },
    'cpu-prof-dir': { type: 'string' }
  }
})
const source: TestCluster = { name: 'source', bootstrap: values.source, external: true }
const target: TestCluster = { name: 'target', bootstrap: values.target, external: true }
const topicCount = Number(values.topics)
const partitions = Number(values.partitions)
const prefix = uniqueName('probe').replace(/[^a-zA-Z0-9]/g, '')
const dir = mkdtempSync(join(tmpdir(), 'kmirror-probe-'))
const perTopic = Math.max(1, Math.floor(Number(values.records) / topicCount))
const payload = Buffer.alloc(768, 'x')

/** Fresh source topics for one run, preloaded: every run copies to fresh remote topics. */
async function preload (runPrefix: string): Promise<string[]> {
  const topics = Array.from({ length: topicCount }, (_, i) => `${runPrefix}-${i}`)
  for (let i = 0; i < topics.length; i += 50) {
    await Promise.all(topics.slice(i, i + 50).map(t => createTopic(source, t, { partitions })))
  }
  const records = topics.flatMap(topic => Array.from({ length: perTopic }, (_, n) => ({ topic, partition: n % partitions, key: null, value: payload, headers: [], timestamp: TIMESTAMP_BASE + BigInt(n) })))
  for (let i = 0; i < records.length; i += 5000) await produce(source, records.slice(i, i + 5000))
  console.log(`preloaded ${topics.length} topic(s) × ${partitions} partition(s), ${records.length} records`)
  return topics
}

const summary: Record<string, number | string | undefined>[] = []
const warmAlias = `P${prefix.slice(-6)}`
for (let run = 0; run < Number(values.runs); run++) {
  const mains = values.main.split(',')
  const main = mains[run % mains.length]!
  const alias = values.warm ? warmAlias : `P${prefix.slice(-6)}r${run}`
  const runPrefix = `${prefix}r${run}`
  const topics = await preload(runPrefix)
  const file = join(dir, `run${run}.properties`)
  writeFileSync(file, [
    `clusters = ${alias}, T`,
    `${alias}.bootstrap.servers = ${source.bootstrap}`,
    `T.bootstrap.servers = ${target.bootstrap}`,
    `${alias}->T.enabled = true`,
    `${alias}->T.topics = ${runPrefix}-.*`,
    ...['replication.factor', 'offset-syncs.topic.replication.factor', 'checkpoints.topic.replication.factor', 'heartbeats.topic.replication.factor', 'offset.storage.replication.factor'].map(k => `${k} = 1`),
    'T.producer.compression.type = lz4', 'refresh.topics.interval.seconds = 1', 'sync.topic.acls.enabled = false',
    'emit.checkpoints.enabled = false', 'emit.heartbeats.enabled = false', 'heartbeats.replication.enabled = false', ''
  ].join('\n'))
  const trace = join(dir, `run${run}.trace`)
  rmSync(trace, { force: true })
  const remote = topics.map(t => `${alias}.${t}`)
  const watch = new TargetWatch(target.bootstrap)
  const spawnedAt = Date.now()
  const child = spawn(process.execPath, [...NODE_FLAGS, ...(values['cpu-prof-dir'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof-dir']]), '--import', join(REPO_ROOT, 'bench', 'startup-hook.ts'), resolve(REPO_ROOT, main), 'run', file, '--clusters', 'T'], {
    cwd: REPO_ROOT, env: { ...process.env, KMIRROR_STARTUP_TRACE: trace, KMIRROR_LOG_LEVEL: process.env['KMIRROR_LOG_LEVEL'] ?? 'info' }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c })
  const exited = new Promise(resolve => child.once('close', resolve))
  exited.finally(() => writeFileSync(join(tmpdir(), `kmirror-probe-run${run}.stderr`), stderr)).catch(() => undefined)
  const arrival = await watch.waitForRecords(remote, 1, spawnedAt, { timeoutMs: 30_000, intervalMs: 20 }).catch((err: unknown) => {
    child.kill('SIGKILL')
    console.error(stderr.slice(-6000))
    throw err
  })
  child.kill('SIGTERM')
  await exited
  await watch.close()
  const lines = existsSync(trace) ? readFileSync(trace, 'utf8').trim().split('\n').map(l => JSON.parse(l) as { ms: number, event: string, port?: number, api?: string, origin?: number }) : []
  const hook = lines.find(l => l.event === 'hook-loaded')
  const originOffset = hook?.origin !== undefined ? hook.origin - spawnedAt : 0
  const at = (ms: number): number => Math.round(ms + originOffset)
  const events: [number, string][] = [[Math.round(originOffset), 'node process start (timeOrigin)']]
  if (hook !== undefined) events.push([at(hook.ms), 'hook loaded (before main module)'])
  const seen = new Set<string>()
  const side = (port?: number): string => port === Number(target.bootstrap.split(':')[1]) ? 'target' : 'source'
  let firstAck: number | undefined
  for (const l of lines) {
    if (l.event === 'hook-loaded' || l.event === 'exit') continue
    const key = `${l.event} ${l.api ?? ''} ${side(l.port)}`
    if (l.event === 'response' && l.api === 'Produce' && side(l.port) === 'target' && firstAck === undefined) firstAck = at(l.ms)
    if (seen.has(key) && !values.full) continue
    seen.add(key)
    events.push([at(l.ms), `first ${key}`])
  }
  const logged = new Map<string, number>()
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue
    const log = JSON.parse(line) as { time: string, msg: string }
    logged.set(log.msg, (logged.get(log.msg) ?? 0) + 1)
    if (logged.get(log.msg) === 1) events.push([Date.parse(log.time) - spawnedAt, `log: ${log.msg}`])
  }
  for (const e of events) {
    const n = logged.get(e[1].slice(5))
    if (e[1].startsWith('log: ') && n !== undefined && n > 1) e[1] += ` (first of ${n})`
  }
  if (firstAck !== undefined) events.push([firstAck, 'FIRST PRODUCE ACK on target'])
  events.push([arrival.firstRecordMs, 'first record seen by 20 ms poll'])
  events.sort((a, b) => a[0] - b[0])
  const requests = lines.filter(l => l.event === 'request')
  const count = (s: string): number => requests.filter(l => side(l.port) === s).length
  if (!values.quiet) {
    console.log(`\nrun ${run} (alias ${alias}): ${count('source')} requests to source, ${count('target')} to target before stop`)
    for (const [ms, what] of events) console.log(`${String(ms).padStart(6)} ms  ${what}`)
  }
  const logAt = (msg: string): number | undefined => events.find(e => e[1] === `log: ${msg}`)?.[0]
  summary.push({ main: main.length > 24 ? `…${main.slice(-24)}` : main, run, nodeStart: Math.round(originOffset), firstRequest: events.find(e => e[1].startsWith('first request'))?.[0], progressLoaded: logAt('progress loaded'), flowStarted: logAt('flow started'), firstProduceAck: firstAck, firstSeen: arrival.firstRecordMs })
}
console.log('\nsummary (ms since spawn)')
console.table(summary)
rmSync(dir, { recursive: true, force: true })
