/**
 * What one fetch round over many idle partitions costs kmirror's fetcher (RecordFetcher.fetchBatches, the data
 * path's read): bytes sent and received per round, kmirror's CPU per round and rounds per second, and the
 * broker's CPU per round when its pid is given.
 *
 *   node bench/fetch-rounds.ts --bootstrap 127.0.0.1:19092 [--topics 1000] [--partitions 5] [--rounds 40]
 *                              [--max-wait-ms 0] [--sessions on|off] [--broker-pid PID]
 *
 * Topics `fetch-rounds-<i>` are created once (with --partitions each) and kept, so runs before and after a change
 * read the same partitions. Every round asks every partition at its end offset: nothing to return, as a mirror
 * that caught up. Bytes are the process's read/write syscall bytes (/proc/self/io rchar, wchar): the sockets,
 * nothing else happens meanwhile.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Admin } from '@platformatic/kafka'
import { RecordFetcher } from '../src/kafka/record-fetcher.ts'
import { partitionKey } from '../src/topic-partition.ts'

const { values } = parseArgs({
  options: {
    bootstrap: { type: 'string' },
    topics: { type: 'string', default: '1000' },
    partitions: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '40' },
    'max-wait-ms': { type: 'string', default: '0' },
    sessions: { type: 'string', default: 'on' },
    'broker-pid': { type: 'string' }
  }
})
if (values.bootstrap === undefined) throw new Error('--bootstrap HOST:PORT is required')
const bootstrap = values.bootstrap
const topicCount = Number(values.topics)
const partitions = Number(values.partitions)
const rounds = Number(values.rounds)
const names = Array.from({ length: topicCount }, (_, i) => `fetch-rounds-${i}`)

async function ensureTopics (): Promise<void> {
  const admin = new Admin({ clientId: 'fetch-rounds', bootstrapBrokers: [bootstrap] })
  try {
    const existing = new Set(await admin.listTopics())
    const missing = names.filter(n => !existing.has(n))
    for (let i = 0; i < missing.length; i += 100) {
      // A listing can lag behind a creation of a moment ago: "already exists" is fine (a real failure shows below).
      await admin.createTopics({ topics: missing.slice(i, i + 100), partitions, replicas: 1 }).catch(() => undefined)
    }
    if (missing.length > 0) console.log(`created ${missing.length} topics`)
  } finally {
    await admin.close()
  }
}

function io (): { read: number, written: number } {
  const text = readFileSync('/proc/self/io', 'utf8')
  const field = (name: string): number => Number(/^(\w+): (\d+)$/m.exec(text.split('\n').find(l => l.startsWith(`${name}:`)) ?? '')?.[2] ?? 0)
  return { read: field('rchar'), written: field('wchar') }
}

/** utime + stime of a process in seconds (clock ticks of 10 ms). */
function processCpu (pid: string): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

await ensureTopics()
const fetcher = new RecordFetcher({ 'bootstrap.servers': bootstrap }, 'fetch-rounds', {
  isolation: 'read_uncommitted', maxWaitMs: Number(values['max-wait-ms']), maxBytes: 52_428_800, maxPartitionBytes: 1_048_576,
  sessions: values.sessions === 'on'
})
try {
  const all = names.flatMap(topic => Array.from({ length: partitions }, (_, partition) => ({ topic, partition })))
  const ends = await fetcher.listOffsets(all, 'latest')
  const positions = all.map(p => ({ ...p, offset: ends.get(partitionKey(p.topic, p.partition)) ?? 0 }))
  // Warm-up: connections, ApiVersions, metadata, the session's full fetch.
  for (let i = 0; i < 3; i++) await fetcher.fetchBatches(positions)
  const ioBefore = io()
  const cpuBefore = process.cpuUsage()
  const brokerBefore = values['broker-pid'] === undefined ? 0 : processCpu(values['broker-pid'])
  const started = performance.now()
  for (let i = 0; i < rounds; i++) await fetcher.fetchBatches(positions)
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  const ioAfter = io()
  const perRound = (n: number): string => (n / rounds).toFixed(0)
  console.log(JSON.stringify({
    partitions: positions.length,
    sessions: values.sessions,
    maxWaitMs: Number(values['max-wait-ms']),
    rounds,
    roundsPerSecond: Number((rounds / seconds).toFixed(1)),
    bytesSentPerRound: Number(perRound(ioAfter.written - ioBefore.written)),
    bytesReceivedPerRound: Number(perRound(ioAfter.read - ioBefore.read)),
    requests: fetcher.sessionStats,
    kmirrorCpuMsPerRound: Number(((cpu.user + cpu.system) / 1000 / rounds).toFixed(2)),
    brokerCpuMsPerRound: values['broker-pid'] === undefined ? null : Number(((processCpu(values['broker-pid']) - brokerBefore) * 1000 / rounds).toFixed(1))
  }))
} finally {
  await fetcher.close()
}
