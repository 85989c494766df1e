/**
 * `npm run demo`: kmirror's main job on a fresh machine, end to end.
 * Starts two local Kafka clusters, loads a sample topic, replicates it with kmirror while showing progress,
 * checks every partition record by record, prints a summary and stops the clusters.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../src/config/load.ts'
import { selectFlows } from '../src/config/flows.ts'
import { silentLogger } from '../src/logger.ts'
import { MirrorMaker } from '../src/runtime/mirror-maker.ts'
import { REPO_ROOT, runKafkaLocal, type TestCluster } from '../test/helpers/clusters.ts'
import { createTopic, produce, readPartition, type TestRecord } from '../test/helpers/kafka.ts'
import { recordSignature } from '../test/helpers/replication.ts'

const SOURCE = { name: 'demo-a', port: 29092 }
const TARGET = { name: 'demo-b', port: 29192 }
// The demo's own clusters, handed to the test helpers as external clusters (they only read `bootstrap`).
const CLUSTER_A: TestCluster = { name: 'source', bootstrap: `127.0.0.1:${SOURCE.port}`, external: true }
const CLUSTER_B: TestCluster = { name: 'target', bootstrap: `127.0.0.1:${TARGET.port}`, external: true }
const TOPIC = 'orders'
const PARTITIONS = 6
const RECORDS = 300_000

const say = (line: string): void => { process.stdout.write(`${line}\n`) }

function sampleRecord (i: number): TestRecord {
  const order = { id: i, customer: `c-${i % 9973}`, amount: (i * 37) % 10_000 / 100, currency: i % 3 === 0 ? 'EUR' : 'USD', items: 1 + (i % 5) }
  return {
    topic: TOPIC,
    partition: i % PARTITIONS,
    key: Buffer.from(order.customer),
    value: Buffer.from(JSON.stringify(order)),
    headers: [[Buffer.from('source'), Buffer.from('demo')]],
    timestamp: BigInt(Date.now())
  }
}

async function startClusters (): Promise<void> {
  say('▸ starting two Kafka clusters (KRaft, single node each) on 127.0.0.1 …')
  await runKafkaLocal(['fetch'])
  await runKafkaLocal(['wipe', SOURCE.name, TARGET.name])
  await Promise.all([runKafkaLocal(['up', SOURCE.name, String(SOURCE.port)]), runKafkaLocal(['up', TARGET.name, String(TARGET.port)])])
}

async function loadSample (): Promise<number> {
  say(`▸ creating topic "${TOPIC}" (${PARTITIONS} partitions) on cluster A and loading ${RECORDS.toLocaleString()} records …`)
  await createTopic(CLUSTER_A, TOPIC, { partitions: PARTITIONS })
  const records = Array.from({ length: RECORDS }, (_, i) => sampleRecord(i))
  await produce(CLUSTER_A, records, { compression: 'lz4' })
  return records.reduce((n, r) => n + (r.key?.length ?? 0) + (r.value?.length ?? 0) + 12, 0)
}

function writeConfig (): string {
  const dir = join(REPO_ROOT, '.state', 'demo')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'mm2.properties')
  writeFileSync(file, [
    'clusters = A, B',
    `A.bootstrap.servers = 127.0.0.1:${SOURCE.port}`,
    `B.bootstrap.servers = 127.0.0.1:${TARGET.port}`,
    'A->B.enabled = true',
    `A->B.topics = ${TOPIC}`,
    '# single-broker clusters: one replica for every topic kmirror creates',
    'replication.factor = 1',
    'offset-syncs.topic.replication.factor = 1',
    'offset.storage.replication.factor = 1',
    'checkpoints.topic.replication.factor = 1',
    'heartbeats.topic.replication.factor = 1',
    ''
  ].join('\n'))
  return file
}

function renderProgress (copied: number, total: number, started: number): string {
  const width = 32
  const done = Math.min(width, Math.floor((copied / total) * width))
  const seconds = (Date.now() - started) / 1000
  const rate = seconds > 0 ? Math.round(copied / seconds) : 0
  return `  [${'█'.repeat(done)}${'░'.repeat(width - done)}] ${copied.toLocaleString()} / ${total.toLocaleString()} records  ${rate.toLocaleString()} rec/s`
}

async function replicate (file: string): Promise<{ seconds: number, bytes: number }> {
  say('▸ running kmirror A->B …')
  const mirror = new MirrorMaker(selectFlows(loadConfig(file)), silentLogger())
  const started = Date.now()
  await mirror.start()
  const tty = process.stdout.isTTY === true
  let lastLine = 0
  for (;;) {
    const partitions = mirror.status()[0]?.partitions ?? []
    const copied = partitions.reduce((n, p) => n + p.copiedRecords, 0)
    if (tty) process.stdout.write(`\r${renderProgress(copied, RECORDS, started)}`)
    else if (Date.now() - lastLine > 1000 || copied >= RECORDS) { say(renderProgress(copied, RECORDS, started)); lastLine = Date.now() }
    if (copied >= RECORDS) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const seconds = (Date.now() - started) / 1000
  if (tty) process.stdout.write('\n')
  const bytes = (mirror.status()[0]?.partitions ?? []).reduce((n, p) => n + p.copiedBytes, 0)
  await mirror.stop()
  return { seconds, bytes }
}

async function verify (): Promise<void> {
  say('▸ checking every partition record by record …')
  for (let p = 0; p < PARTITIONS; p++) {
    const source = await readPartition(CLUSTER_A, TOPIC, p, { isolation: 'read_committed' })
    const target = await readPartition(CLUSTER_B, `A.${TOPIC}`, p, { isolation: 'read_committed' })
    const equal = source.length === target.length && source.every((r, i) => recordSignature(r) === recordSignature(target[i]!))
    if (!equal) throw new Error(`partition ${p}: ${source.length} records on A, ${target.length} on B, not equal`)
    say(`  ✓ ${TOPIC}-${p} → A.${TOPIC}-${p}: ${source.length.toLocaleString()} records, identical`)
  }
}

async function main (): Promise<void> {
  const t0 = Date.now()
  try {
    await startClusters()
    await loadSample()
    const { seconds, bytes } = await replicate(writeConfig())
    await verify()
    say('')
    say('kmirror demo summary')
    say(`  records copied   ${RECORDS.toLocaleString()} (topic ${TOPIC} → A.${TOPIC}, ${PARTITIONS} partitions)`)
    say(`  bytes copied     ${(bytes / 1024 / 1024).toFixed(1)} MiB (keys, values, headers)`)
    say(`  replication time ${seconds.toFixed(1)} s (${Math.round(RECORDS / seconds).toLocaleString()} records/s)`)
    say(`  partitions equal ${PARTITIONS} / ${PARTITIONS}`)
    say(`  whole demo       ${((Date.now() - t0) / 1000).toFixed(0)} s`)
  } finally {
    say('▸ stopping the clusters …')
    await runKafkaLocal(['wipe', SOURCE.name, TARGET.name]).catch(() => undefined)
  }
}

main().catch(err => {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.stack : String(err)}\n`)
  process.exitCode = 1
})
