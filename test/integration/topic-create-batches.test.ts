/**
 * Remote topics created in batches a KRaft controller accepts (src/metadata/create-batches.ts), on real clusters.
 *
 * A KRaft controller refuses a CreateTopics request that needs more than 10,000 metadata records (a TopicRecord per
 * topic, a PartitionRecord per partition, a ConfigRecord per config set), with POLICY_VIOLATION for every topic in
 * it. 600 source topics with 18 configs each are 12,000 records: sent as one request they were all refused, then
 * created one request per topic. Here they are created in two batches within the budget, each remote topic with the
 * source's configs, and every one is copied in the same topic refresh: none is left for the next (an hour here).
 *
 * A controller mutation quota (KIP-599) on kmirror's admin client refuses the topics of a request past its rate with
 * THROTTLING_QUOTA_EXCEEDED and a throttle time: those are sent again together once it has passed, never one by one
 * (before, the topics the request had created came back "already exists" one by one and waited for the next refresh).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigResourceTypes, ConfigSources, ListOffsetTimestamps } from '@platformatic/kafka'
import type { Admin } from '@platformatic/kafka'
import { deleteTopics, produce, withAdmin, type Cleanup, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const TOPICS = 600

/** Non-default values of 18 topic configs kmirror copies (none in `config.properties.exclude`). */
const CONFIGS: Record<string, string> = {
  'cleanup.policy': 'delete',
  'compression.type': 'lz4',
  'compression.lz4.level': '10',
  'compression.gzip.level': '5',
  'compression.zstd.level': '4',
  'delete.retention.ms': '86400001',
  'file.delete.delay.ms': '60001',
  'flush.ms': '9223372036854775806',
  'index.interval.bytes': '4097',
  'max.compaction.lag.ms': '9223372036854775806',
  'max.message.bytes': '1048589',
  'min.cleanable.dirty.ratio': '0.6',
  'min.compaction.lag.ms': '1',
  'retention.bytes': '1073741825',
  'retention.ms': '604800001',
  'segment.bytes': '1073741823',
  'segment.jitter.ms': '1',
  'segment.ms': '604800001'
}

/** The source topics, 100 a request (one request for all would itself pass the controller's limit), ready to write. */
async function createSourceTopics (names: readonly string[], withConfigs: Record<string, string>): Promise<void> {
  const configs = Object.entries(withConfigs).map(([name, value]) => ({ name, value }))
  await withAdmin('source', async admin => {
    for (let i = 0; i < names.length; i += 100) await admin.createTopics({ topics: names.slice(i, i + 100), partitions: 1, replicas: 1, configs })
  })
  // Ready: every leader answers ListOffsets (Metadata can name a leader before it serves the partition)
  await waitFor(async () => {
    const answered = [...(await endsOn('source', names)).values()].filter(end => end === 0).length
    return { done: answered === names.length, state: `${answered} of ${names.length} source topics answer` }
  }, { timeoutMs: 60_000, intervalMs: 250, message: `${names.length} source topics ready` })
}

/** The end offset of partition 0 of each of TOPICS on CLUSTER, -1 for one not answered (absent, not led yet). */
async function endsOn (cluster: 'source' | 'target', topics: readonly string[]): Promise<Map<string, number>> {
  return withAdmin(cluster, async admin => {
    const ends = new Map<string, number>(topics.map(t => [t, -1]))
    const existing = new Set(await admin.listTopics({ includeInternals: false }))
    const present = topics.filter(t => existing.has(t))
    if (present.length === 0) return ends
    const listed = await admin.listOffsets({ topics: present.map(name => ({ name, partitions: [{ partitionIndex: 0, timestamp: ListOffsetTimestamps.LATEST }] })) }).catch(() => [])
    for (const topic of listed) ends.set(topic.name, Number(topic.partitions[0]?.offset ?? -1))
    return ends
  })
}

/**
 * kmirror copying PREFIX's topics (debug log, topic refresh once an hour), once every one of REMOTES holds its one
 * record: all were created and copied in the first refresh.
 */
async function startUntilCopied (prefix: string, remotes: readonly string[], t: Cleanup): Promise<KmirrorProcess> {
  const config = writeTempFile(mm2Properties({
    source: 'source',
    target: 'target',
    extra: [`A->B.topics = ${prefix}-.*`, 'refresh.topics.interval.seconds = 3600', 'sync.topic.configs.enabled = false', 'emit.checkpoints.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })
  await waitFor(async () => {
    const copied = [...(await endsOn('target', remotes)).values()].filter(end => end === 1).length
    return { done: copied === remotes.length, state: `${copied} of ${remotes.length} remote topics hold their record` }
  }, { timeoutMs: 120_000, intervalMs: 1_000, message: `all ${remotes.length} remote topics created and copied` })
  return kmirror
}

test(`${TOPICS} remote topics with 18 configs each (12,000 metadata records) are created in batches the controller accepts, and all copied at once`, { timeout: 240_000 }, async t => {
  // Given 600 source topics with 18 set configs and one record each
  const prefix = uniqueName('batches')
  const names = Array.from({ length: TOPICS }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`)
  const remotes = names.map(n => `A.${n}`)
  t.after(() => deleteTopics('source', names))
  t.after(() => deleteTopics('target', remotes))
  await createSourceTopics(names, CONFIGS)
  const records: TestRecord[] = names.map((topic, i) => ({ topic, partition: 0, key: Buffer.from(topic), value: Buffer.from(`record ${i}`), headers: [], timestamp: BigInt(Date.now()) }))
  await produce('source', records)

  // When kmirror starts, with a topic refresh only once an hour
  // Then every remote topic has its record from the first refresh (one left to the next would wait an hour)
  const kmirror = await startUntilCopied(prefix, remotes, t)

  // And each was created once, in two requests the controller accepted whole (8,000 records at most: 400 topics,
  // then 200), none tried one by one. (The refresh that follows the creation at the group join may still find the
  // last batch missing from the target's metadata and be told it exists: "kept as it is", once per topic.)
  const lines = kmirror.stderr.split('\n')
  assert.deepEqual(lines.filter(l => l.includes('creating remote topics together failed')).map(l => l.slice(0, 600)), [])
  const firstBatches = lines.filter(l => l.includes('"msg":"remote topics created together"')).slice(0, 2).map(l => JSON.parse(l) as Record<string, unknown>)
  assert.deepEqual(firstBatches.map(b => [b['topics'], b['created'], b['existed'], b['refused']]), [[400, 400, 0, {}], [200, 200, 0, {}]])
  const created = lines.filter(l => l.includes('"msg":"created remote topic"')).map(l => (JSON.parse(l) as { remoteTopic: string }).remoteTopic)
  assert.deepEqual(created.sort(), remotes)
  const behind = lines.filter(l => l.includes('(its metadata was behind): kept as it is')).map(l => (JSON.parse(l) as { remoteTopic: string }).remoteTopic)
  assert.equal(new Set(behind).size, behind.length, 'a remote topic the metadata left out is told once')

  // And each remote topic has the 18 configs of its source topic
  const described = await withAdmin('target', admin => admin.describeConfigs({
    resources: remotes.map(resourceName => ({ resourceType: ConfigResourceTypes.TOPIC, resourceName })),
    includeSynonyms: false,
    includeDocumentation: false
  }))
  assert.equal(described.length, TOPICS)
  for (const resource of described) {
    const overrides = Object.fromEntries(resource.configs.filter(c => c.configSource === ConfigSources.DYNAMIC_TOPIC_CONFIG).map(c => [c.name, c.value]))
    assert.deepEqual(overrides, CONFIGS, `configs of ${resource.resourceName}`)
  }

  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0, kmirror.stderr.slice(-3000))
})

/** Sets (VALUE) or removes (undefined) the controller mutation quota (KIP-599, partitions a second) of CLIENT_ID on the target. */
async function mutationQuota (clientId: string, value: number | undefined): Promise<void> {
  const ops: Parameters<Admin['alterClientQuotas']>[0]['entries'][number]['ops'] = value === undefined
    ? [{ key: 'controller_mutation_rate', remove: true }]
    : [{ key: 'controller_mutation_rate', value, remove: false }]
  await withAdmin('target', async admin => await admin.alterClientQuotas({ entries: [{ entities: [{ entityType: 'client-id', entityName: clientId }], ops }] }))
}

test('remote topics a controller mutation quota refuses part way are sent again together once its throttle time has passed, all copied in the first refresh', { timeout: 240_000 }, async t => {
  // Given 80 source topics with a record each, and the target's controller mutation quota of kmirror's admin client
  // at 5 partitions a second (about 55 at once: the broker averages over its 10-second window, then one every 200 ms
  // or so: the rest well within the 10 s a refresh waits)
  const count = 80
  const prefix = uniqueName('throttled')
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`)
  const remotes = names.map(n => `A.${n}`)
  t.after(() => deleteTopics('source', names))
  t.after(() => deleteTopics('target', remotes))
  await createSourceTopics(names, {})
  await produce('source', names.map((topic, i) => ({ topic, partition: 0, key: null, value: Buffer.from(`record ${i}`), headers: [], timestamp: BigInt(Date.now()) })))
  const clientId = 'kmirror|A->B|target-admin'
  await mutationQuota(clientId, 5)
  t.after(() => mutationQuota(clientId, undefined))

  // When kmirror starts, with a topic refresh only once an hour
  // Then every remote topic holds its record from the first refresh
  const kmirror = await startUntilCopied(prefix, remotes, t)

  // And the quota refused part of the first request, whose refused topics went again together, none one by one
  const lines = kmirror.stderr.split('\n')
  const batches = lines.filter(l => l.includes('"msg":"remote topics created together"')).map(l => JSON.parse(l) as { topics: number, created: number, refused: Record<string, string>, throttleMs: number })
  t.diagnostic(`requests (topics, created, throttle ms): ${JSON.stringify(batches.map(b => [b.topics, b.created, b.throttleMs]))}`)
  assert.ok(batches.length >= 2, `requests: ${JSON.stringify(batches.map(b => [b.topics, b.created]))}`)
  assert.equal(batches[0]!.topics, count)
  assert.ok(Object.values(batches[0]!.refused).length > 0 && Object.values(batches[0]!.refused).every(e => e === 'THROTTLING_QUOTA_EXCEEDED'), JSON.stringify(batches[0]))
  assert.ok(batches[0]!.throttleMs > 0)
  assert.equal(batches[1]!.topics, count - batches[0]!.created)
  assert.deepEqual(lines.filter(l => l.includes('creating remote topics together failed')), [])
  const created = lines.filter(l => l.includes('"msg":"created remote topic"')).map(l => (JSON.parse(l) as { remoteTopic: string }).remoteTopic)
  assert.deepEqual(created.sort(), remotes)

  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0, kmirror.stderr.slice(-3000))
})
