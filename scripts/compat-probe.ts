/**
 * What works against an older Kafka broker, step by step: the test helpers, kmirror's admin calls, and a tiny
 * `kmirror run` / `plan` / `status` in both directions with the 4.x `target` cluster. Prints one line per step
 * (ok or the error chain) and exits 0 whatever failed: it is a probe, the compat-*.test.ts files are the tests.
 *
 *   node scripts/compat-probe.ts v36 zk28 [--skip-kmirror]
 *
 * Starts the named topology clusters (test/helpers/clusters.ts) and `target` if needed, and leaves them up.
 */
import { Admin } from '@platformatic/kafka'
import { AdminClient } from '../src/kafka/admin-client.ts'
import { RecordFetcher } from '../src/kafka/record-fetcher.ts'
import { ensureClusters, getCluster, isClusterName, type ClusterName, type TestCluster } from '../test/helpers/clusters.ts'
import { committedOffsets, commitOffsets, joinGroup } from '../test/helpers/groups.ts'
import {
  clientOptions, createTopic, deleteTopics, endOffsets, produce, produceTransactions, readBatches, readPartition, startOffsets, TIMESTAMP_BASE,
  topicConfig, type Compression, type TestRecord
} from '../test/helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../test/helpers/process.ts'
import { recordSignature } from '../test/helpers/replication.ts'
import { uniqueName, waitFor } from '../test/helpers/wait.ts'

const STEP_TIMEOUT_MS = 30_000
const CODECS: readonly Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
/** ApiVersions keys worth printing: the data path, transactions, groups, admin. */
const API_NAMES: Record<number, string> = {
  0: 'Produce', 1: 'Fetch', 2: 'ListOffsets', 3: 'Metadata', 8: 'OffsetCommit', 9: 'OffsetFetch', 10: 'FindCoordinator', 11: 'JoinGroup',
  15: 'DescribeGroups', 16: 'ListGroups', 18: 'ApiVersions', 19: 'CreateTopics', 20: 'DeleteTopics', 22: 'InitProducerId',
  24: 'AddPartitionsToTxn', 26: 'EndTxn', 29: 'DescribeAcls', 30: 'CreateAcls', 32: 'DescribeConfigs', 37: 'CreatePartitions',
  44: 'IncrementalAlterConfigs', 47: 'OffsetDelete'
}

interface Outcome { cluster: string, step: string, ok: boolean, ms: number, detail: string }
const outcomes: Outcome[] = []

function errorChain (error: unknown): string {
  const parts: string[] = []
  const seen = new Set<unknown>()
  const visit = (e: unknown, depth: number): void => {
    if (e === undefined || e === null || seen.has(e) || depth > 6) return
    seen.add(e)
    if (e instanceof Error) {
      const extra = e as Error & { code?: string, apiCode?: number, errors?: unknown[] }
      parts.push(`${e.name}${extra.code ? `[${extra.code}]` : ''}: ${e.message}`)
      for (const inner of extra.errors ?? []) visit(inner, depth + 1)
      visit(e.cause, depth + 1)
    } else parts.push(String(e))
  }
  visit(error, 0)
  return [...new Set(parts)].join(' <- ').slice(0, 900)
}

async function step (cluster: string, name: string, work: () => Promise<string | void>): Promise<boolean> {
  const started = Date.now()
  let timer: NodeJS.Timeout | undefined
  try {
    const detail = await Promise.race([
      work(),
      new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS) })
    ])
    outcomes.push({ cluster, step: name, ok: true, ms: Date.now() - started, detail: detail ?? '' })
    return true
  } catch (error) {
    outcomes.push({ cluster, step: name, ok: false, ms: Date.now() - started, detail: errorChain(error) })
    return false
  } finally {
    clearTimeout(timer)
    const last = outcomes.at(-1)!
    process.stdout.write(`${last.ok ? 'ok  ' : 'FAIL'} ${cluster.padEnd(6)} ${name.padEnd(42)} ${String(last.ms).padStart(6)} ms  ${last.detail}\n`)
  }
}

function records (topic: string, partitions: number, count: number, tag: string): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic,
    partition: i % partitions,
    key: i % 5 === 0 ? null : Buffer.from(`k${i % 3}`),
    value: i % 7 === 3 ? null : Buffer.from(`${tag}-${i}`),
    headers: i % 2 === 0 ? [[Buffer.from('h'), Buffer.from('1')], [Buffer.from('h'), null]] : [],
    timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
}

function sameRecords (expected: readonly TestRecord[], actual: readonly { key: Buffer | null, value: Buffer | null, headers: [Buffer, Buffer | null][], timestamp: bigint }[]): string {
  const sig = (r: { key: Buffer | null, value: Buffer | null, headers: [Buffer, Buffer | null][], timestamp: bigint }): string => recordSignature({ offset: 0n, ...r })
  const a = expected.map(sig)
  const b = actual.map(sig)
  if (a.length !== b.length || a.some((s, i) => s !== b[i])) throw new Error(`read back ${b.length} records, ${a.length} expected, or they differ`)
  return `${b.length} records exact`
}

async function probeHelpers (c: TestCluster): Promise<void> {
  const name = c.name
  await step(name, 'ApiVersions (library listApis)', async () => {
    const admin = new Admin(clientOptions(c, 'probe-apis'))
    try {
      const apis = await admin.listApis()
      return apis.filter(a => API_NAMES[a.apiKey] !== undefined).map(a => `${API_NAMES[a.apiKey]} ${a.minVersion}-${a.maxVersion}`).join(', ')
    } finally { await admin.close() }
  })
  const topic = uniqueName('probe')
  if (!await step(name, 'createTopic (helper, 2 partitions)', () => createTopic(c, topic, { partitions: 2 }))) return
  for (const compression of CODECS) {
    await step(name, `produce idempotent ${compression} + readPartition`, async () => {
      const t = `${topic}-${compression}`
      await createTopic(c, t, { partitions: 1 })
      const rs = records(t, 1, 20, compression)
      await produce(c, rs, { compression })
      const back = await readPartition(c, t, 0, { isolation: 'read_uncommitted' })
      const batches = await readBatches(c, t, 0)
      return `${sameRecords(rs, back)}, batch codecs ${[...new Set(batches.map(b => b.codec))].join(',')}`
    })
  }
  await step(name, 'produce non-idempotent', () => produce(c, records(topic, 2, 10, 'plain'), { idempotent: false }).then(o => `offsets ${o.join(',')}`))
  await step(name, 'produceTransactions commit/abort/commit', async () => {
    const t = `${topic}-txn`
    await createTopic(c, t, { partitions: 2 })
    const steps = [true, false, true].map((commit, s) => ({ commit, records: records(t, 2, 6, `txn${s}`) }))
    await produceTransactions(c, t, steps)
    const committed = [...steps[0]!.records, ...steps[2]!.records]
    const back = [...await readPartition(c, t, 0, { isolation: 'read_committed' }), ...await readPartition(c, t, 1, { isolation: 'read_committed' })]
    const expected = [...committed.filter(r => r.partition === 0), ...committed.filter(r => r.partition === 1)]
    return sameRecords(expected, back)
  })
  await step(name, 'endOffsets / startOffsets / read_committed', async () =>
    `end ${(await endOffsets(c, topic)).join(',')} start ${(await startOffsets(c, topic)).join(',')} lso ${(await endOffsets(c, topic, { isolation: 'read_committed' })).join(',')}`)
  await step(name, 'topicConfig (DescribeConfigs)', async () => `${Object.keys(await topicConfig(c, topic)).length} keys`)
  const group = uniqueName('probe-group')
  await step(name, 'commitOffsets + committedOffsets (groups.ts)', async () => {
    await commitOffsets(c, group, [{ topic, partition: 0, offset: 3 }, { topic, partition: 1, offset: 4 }])
    return JSON.stringify(await committedOffsets(c, group))
  })
  await step(name, 'joinGroup (real consumer, group membership)', async () => {
    const afters: (() => unknown)[] = []
    try {
      const member = await joinGroup(c, `${group}-live`, [topic], { after: fn => afters.push(fn) })
      await member.leave()
      return 'joined and left'
    } finally { for (const fn of afters) await fn() }
  })
  await step(name, 'deleteTopics (helper)', () => deleteTopics(c, [topic, `${topic}-txn`, ...CODECS.map(x => `${topic}-${x}`)]))
}

async function probeAdmin (c: TestCluster): Promise<void> {
  const name = c.name
  const admin = new AdminClient({ 'bootstrap.servers': c.bootstrap }, 'probe-admin', { label: `cluster ${name}` })
  const topic = uniqueName('probe-admin')
  try {
    await step(name, 'AdminClient.listTopics', async () => `${(await admin.listTopics()).length} topics`)
    await step(name, 'AdminClient.brokerCount', async () => `${await admin.brokerCount()} broker(s)`)
    await step(name, 'AdminClient.createTopic (replication factor -1)', async () => admin.createTopic({ name: `${topic}-rf`, partitions: 1, replicationFactor: -1, configs: {} }))
    await step(name, 'AdminClient.createTopic (replication factor 1)', async () => admin.createTopic({ name: topic, partitions: 1, replicationFactor: 1, configs: { 'retention.ms': '3600000' } }))
    await step(name, 'AdminClient.createTopics (2, one existing)', async () => {
      const result = await admin.createTopics([{ name: `${topic}-a`, partitions: 1, replicationFactor: 1, configs: {} }, { name: topic, partitions: 2, replicationFactor: 1, configs: {} }])
      return `created ${result.created.join(', ')}; exists ${result.exists.join(', ')}; failed ${[...result.failed].join(', ')}`
    })
    await step(name, 'AdminClient.describeAllTopics (Metadata)', async () => {
      // A new topic reaches the broker's metadata cache a moment after CreateTopics returns.
      await waitFor(async () => (await admin.describeAllTopics()).has(topic), { timeoutMs: 10_000, message: `${topic} listed` })
      return `${(await admin.describeAllTopics()).size} topics`
    })
    await step(name, 'AdminClient.describeTopics', async () => JSON.stringify([...(await admin.describeTopics([topic])).values()]))
    await step(name, 'AdminClient.describeTopicConfigs', async () => `${(await admin.describeTopicConfigs([topic])).get(topic)?.length} entries`)
    await step(name, 'AdminClient.alterTopicConfigs (incremental)', () => admin.alterTopicConfigs(topic, [{ op: 'set', name: 'retention.ms', value: '7200000' }]))
    await step(name, 'AdminClient.createPartitions', () => admin.createPartitions(topic, 2))
    await step(name, 'AdminClient.describeAcls', async () => JSON.stringify(await admin.describeAcls(['topic', 'group'])))
    await step(name, 'GroupAdmin.alterCommittedOffsets', () => admin.groups.alterCommittedOffsets(`${topic}-g`, [{ topic, partition: 0, offset: 0 }]))
    await step(name, 'GroupAdmin.listGroups', async () => `${(await admin.groups.listGroups()).length} groups`)
    await step(name, 'GroupAdmin.describeGroups', async () => JSON.stringify([...(await admin.groups.describeGroups([`${topic}-g`])).values()]))
    await step(name, 'GroupAdmin.listCommittedOffsets', async () => JSON.stringify(await admin.groups.listCommittedOffsets(`${topic}-g`)))
    await step(name, 'AdminClient.deleteTopics', () => admin.deleteTopics([topic, `${topic}-rf`, `${topic}-a`, `${topic}-b`]))
  } finally { await admin.close() }
  const fetcher = new RecordFetcher({ 'bootstrap.servers': c.bootstrap }, 'probe-fetcher', { isolation: 'read_committed', maxWaitMs: 100, maxBytes: 1_000_000, maxPartitionBytes: 1_000_000 })
  const t2 = uniqueName('probe-fetch')
  try {
    await createTopic(c, t2, { partitions: 1 })
    await produce(c, records(t2, 1, 5, 'f'), { compression: 'lz4' })
    await step(name, 'RecordFetcher.listOffsets (ListOffsets)', async () => JSON.stringify([...(await fetcher.listOffsets([{ topic: t2, partition: 0 }], 'latest'))]))
    await step(name, 'RecordFetcher.fetchBatches (Fetch)', async () => {
      const got = await fetcher.fetchBatches([{ topic: t2, partition: 0, offset: 0 }])
      return JSON.stringify(got.map(g => ({ ...g, batches: undefined })), (_k, v: unknown) => typeof v === 'bigint' ? v.toString() : v).slice(0, 300)
    })
  } finally {
    await fetcher.close()
    await deleteTopics(c, [t2]).catch(() => undefined)
  }
}

/** The first few distinct error messages kmirror logged (pino JSON lines on stderr). */
function kmirrorErrors (stderr: string): string {
  const messages: string[] = []
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) { if (line.trim() !== '') messages.push(line.trim()); continue }
    try {
      const entry = JSON.parse(line) as { level?: string, msg?: string, err?: { message?: string, code?: string } }
      if (['warn', 'error', 'fatal'].includes(entry.level ?? '')) messages.push(`${entry.msg ?? ''}${entry.err ? ` [${entry.err.code ?? ''}] ${entry.err.message ?? ''}` : ''}`)
    } catch { messages.push(line) }
  }
  return [...new Set(messages)].slice(0, 4).join(' | ').slice(0, 900)
}

async function probeKmirror (old: TestCluster, direction: 'from' | 'to'): Promise<void> {
  const name = old.name
  const target = getCluster('target')
  const [src, dst] = direction === 'from' ? [old, target] : [target, old]
  const label = direction === 'from' ? `${name}->target` : `target->${name}`
  const topic = uniqueName('probe-run')
  const rs = records(topic, 2, 40, 'run')
  if (!await step(name, `${label}: source topic + records`, async () => { await createTopic(src, topic, { partitions: 2 }); await produce(src, rs, { compression: 'lz4' }) })) return
  const file = writeTempFile(mm2Properties({ source: src, target: dst, extra: [`A->B.topics = ${topic}`, 'emit.heartbeats.enabled = false', 'emit.checkpoints.interval.seconds = 1', 'B.offset.flush.interval.ms = 300'] }), '.properties')
  const kmirror = spawnKmirror(['run', file, '--progress-interval', '0'])
  try {
    await step(name, `${label}: kmirror run copies 40 records`, async () => {
      await waitFor(async () => {
        if (kmirror.exitStatus !== null) throw new Error(`kmirror exited ${JSON.stringify(kmirror.exitStatus)}: ${kmirrorErrors(kmirror.stderr)}`)
        const ends = await endOffsets(dst, `A.${topic}`).catch(() => [0n])
        return { done: ends.reduce((a, b) => a + b, 0n) === BigInt(rs.length), state: { ends, log: kmirrorErrors(kmirror.stderr) } }
      }, { timeoutMs: 25_000, intervalMs: 500, message: 'records on the target' })
      const back = [...await readPartition(dst, `A.${topic}`, 0, { isolation: 'read_committed' }), ...await readPartition(dst, `A.${topic}`, 1, { isolation: 'read_committed' })]
      return sameRecords([...rs.filter(r => r.partition === 0), ...rs.filter(r => r.partition === 1)], back)
    })
    for (const command of ['plan', 'status']) {
      await step(name, `${label}: kmirror ${command}`, async () => {
        const cli = spawnKmirror([command, file])
        const exit = await cli.waitForExit(25_000)
        const text = `exit ${exit.code}: ${cli.stdout.split('\n').slice(0, 3).join(' / ').slice(0, 300)} ${kmirrorErrors(cli.stderr)}`
        if (exit.code !== 0 && exit.code !== 1) throw new Error(text)
        return text
      })
    }
  } finally {
    kmirror.kill('SIGTERM')
    await kmirror.waitForExit(15_000).catch(() => kmirror.kill('SIGKILL'))
    await deleteTopics(src, [topic]).catch(() => undefined)
    await deleteTopics(dst, [`A.${topic}`]).catch(() => undefined)
  }
}

async function main (): Promise<void> {
  const args = process.argv.slice(2)
  const skipKmirror = args.includes('--skip-kmirror')
  const names = args.filter(a => !a.startsWith('--'))
  for (const n of names) if (!isClusterName(n)) throw new Error(`unknown cluster ${n}`)
  const clusters = await ensureClusters([...names as ClusterName[], 'target'])
  for (const c of clusters.slice(0, -1)) {
    process.stdout.write(`\n== ${c.name} (Kafka ${c.version}) at ${c.bootstrap}\n`)
    await probeHelpers(c)
    await probeAdmin(c)
    if (!skipKmirror) {
      await probeKmirror(c, 'from')
      await probeKmirror(c, 'to')
    }
  }
  const failed = outcomes.filter(o => !o.ok)
  process.stdout.write(`\n${outcomes.length - failed.length} ok, ${failed.length} failed\n`)
}

main().then(() => process.exit(0), error => {
  process.stderr.write(`${errorChain(error)}\n`)
  process.exit(1)
})
