/**
 * Faults that hit one partition or topic stay there (issue 10): READ revoked on one source topic and re-granted,
 * a record larger than the remote topic's max.message.bytes. While one partition fails, the others and the
 * heartbeats keep flowing, and what the operator sees says so: /status (the partition's error, unknown lag),
 * /healthz (503 naming the failing partitions), kmirror_failing_partitions, and one warning naming the topic, the
 * cluster and what to grant or raise. Once the cause is fixed, the copy is exact record by record. WRITE denied on
 * MM2's offset-syncs topic holds up only the syncs (written beside the data path): they wait, shown (the console's
 * red line too, in Chromium), and are written in order after the re-grant.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigResourceTypes, IncrementalAlterConfigOperationTypes } from '@platformatic/kafka'
import type { AclBinding } from '../../src/kafka/acls.ts'
import type { OffsetSyncsStatus } from '../../src/replication/sync-outbox.ts'
import { aclsOf, createAcls, deleteAcls } from '../helpers/acls.ts'
import { launchBrowser, waitForText } from '../helpers/browser.ts'
import { ensureClusters, getCluster } from '../helpers/clusters.ts'
import { createTopic, deleteTopics, endOffsets, produce, TIMESTAMP_BASE, withAdmin, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { runPrintedTool, secureAdminProperties } from '../helpers/printed-tool.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { assertSamePartition, assertSyncsTranslateExactly, readCommitted, readOffsetSyncs } from '../helpers/replication.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

interface StatusPartition { topic: string, partition: number, lagRecords: number | null, failure: { error: string, cluster: string, remedy: string, attempts: number } | null }
interface StatusDocument { healthy: boolean, health: string, flows: { name: string, lagRecords: number | null, lagUnknownPartitions: number, failingPartitions: number, partitions: StatusPartition[] }[] }

function records (topic: string, from: number, count: number, size = 16, partition = 0): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition, key: Buffer.from(`k${from + i}`), value: Buffer.alloc(size, `v${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i)
  }))
}

async function total (cluster: 'target', topic: string): Promise<bigint> {
  return (await endOffsets(cluster, topic).catch(() => [])).reduce((a, b) => a + b, 0n)
}

/** kmirror run with its HTTP endpoint; resolves with the endpoint's base URL. */
async function runWithHttp (kmirror: KmirrorProcess): Promise<string> {
  const match = await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 60_000)
  return `http://127.0.0.1:${match[1]}`
}

async function status (base: string): Promise<StatusDocument> {
  return await (await fetch(`${base}/status`)).json() as StatusDocument
}

function metric (text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find(l => l.startsWith(`${name}{`) && l.includes(labels))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

test('READ revoked on one source topic: that topic is set aside and reported, the others and the heartbeats flow, and after the re-grant the copy is exact', { timeout: 180_000 }, async t => {
  await ensureClusters(['secure', 'target'])
  // Given two topics on the authorizer cluster that kmirror reads as alice, with READ, DESCRIBE and DESCRIBE_CONFIGS on each
  const [kept, revoked] = [uniqueName('pf-kept'), uniqueName('pf-revoked')]
  await Promise.all([createTopic('secure', kept, { partitions: 1, t }), createTopic('secure', revoked, { partitions: 1, t })])
  const grant = (topic: string, operation: AclBinding['operation']): AclBinding =>
    ({ resourceType: 'topic', resourceName: topic, patternType: 'literal', principal: 'User:alice', host: '*', operation, permission: 'allow' })
  const read = grant(revoked, 'read')
  const others = [kept, revoked].flatMap(topic => [grant(topic, 'describe'), grant(topic, 'describe-configs')])
  await createAcls('secure', [grant(kept, 'read'), read, ...others], t)
  await produce('secure', [...records(kept, 0, 50), ...records(revoked, 0, 50)])
  const alice = { ...getCluster('secure'), sasl: { mechanism: 'PLAIN' as const, username: 'alice', password: 'alice-secret' } }
  const config = writeTempFile(mm2Properties({
    source: alice,
    target: 'target',
    extra: [`A->B.topics = ${kept}|${revoked}`, 'offset-syncs.topic.location = target', 'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false',
      'sync.topic.acls.enabled = false', 'sync.topic.configs.enabled = false', 'emit.heartbeats.interval.seconds = 1']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const base = await runWithHttp(kmirror)
  await waitFor(async () => ({ done: await total('target', `A.${kept}`) === 50n && await total('target', `A.${revoked}`) === 50n, state: kmirror.stderr.slice(-3000) }), { timeoutMs: 60_000, message: 'first records copied' })

  // When READ on one topic is revoked and both topics get more records
  await deleteAcls('secure', [read])
  await produce('secure', [...records(kept, 50, 50), ...records(revoked, 50, 50)])

  // Then the other topic is copied whole
  await waitFor(async () => await total('target', `A.${kept}`) === 100n, { timeoutMs: 30_000, message: 'the other topic keeps flowing' })
  // and /status reports the revoked topic's partition with its error, the cluster, the grant to add, and unknown lag
  await waitFor(async () => {
    const doc = await status(base)
    return { done: doc.flows[0]?.partitions.some(p => p.topic === revoked && p.failure !== null) === true, state: doc }
  }, { timeoutMs: 30_000, message: 'the failing partition in /status' })
  const doc = await status(base)
  const flow = doc.flows.find(f => f.name === 'A->B')!
  const failing = flow.partitions.find(p => p.topic === revoked)!
  assert.equal(failing.failure?.error, 'TOPIC_AUTHORIZATION_FAILED')
  assert.equal(failing.failure?.cluster, 'A')
  assert.equal(failing.failure?.remedy, `grant READ on topic ${revoked} to User:alice on cluster A (kafka-acls.sh --bootstrap-server ${getCluster('secure').bootstrap} ` +
    `--command-config ADMIN_PROPERTIES_FILE_OF_A --add --allow-principal User:alice --operation Read --topic ${revoked}; see "Least-privilege ACLs" in docs/operations.md)`)
  assert.equal(failing.lagRecords, null)
  assert.equal(flow.lagRecords, null)
  assert.equal(flow.failingPartitions, 1)
  assert.equal(doc.healthy, false)
  assert.equal(flow.partitions.find(p => p.topic === kept)!.failure, null)
  // and /healthz is 503 naming the failing partition, the gauge counts it, and the heartbeats keep coming
  const health = await fetch(`${base}/healthz`)
  assert.equal(health.status, 503)
  assert.equal(await health.text(), 'degraded: 1 partition(s) failing in A->B (TOPIC_AUTHORIZATION_FAILED)\n')
  const metricsBefore = await (await fetch(`${base}/metrics`)).text()
  assert.equal(metric(metricsBefore, 'kmirror_failing_partitions', 'error="TOPIC_AUTHORIZATION_FAILED"'), 1)
  assert.equal(metric(metricsBefore, 'kmirror_replication_lag_records', `topic="${revoked}"`), Number.NaN)
  const beats = metric(metricsBefore, 'kmirror_heartbeats_emitted_total', 'flow="A->B"') ?? 0
  await waitFor(async () => (metric(await (await fetch(`${base}/metrics`)).text(), 'kmirror_heartbeats_emitted_total', 'flow="A->B"') ?? 0) >= beats + 2,
    { timeoutMs: 15_000, message: 'heartbeats during the revocation' })
  // and one warning names the topic, the cluster and the grant, however many retries
  const warnings = kmirror.stderr.split('\n').filter(l => l.includes(`cannot read ${revoked}-0 from cluster A`))
  assert.equal(warnings.length, 1, kmirror.stderr.slice(-3000))
  assert.match(warnings[0]!, new RegExp(`TOPIC_AUTHORIZATION_FAILED.*grant READ on topic ${revoked} to User:alice on cluster A \\(kafka-acls\\.sh --bootstrap-server`))

  // When the operator runs the remedy's kafka-acls.sh line as printed, with the admin's client properties for its
  // placeholder (the same binding as `read`, so the test's cleanup removes it)
  await runPrintedTool(failing.failure!.remedy, { ADMIN_PROPERTIES_FILE_OF_A: secureAdminProperties(t) })
  // (the broker applies the new binding when it replays the metadata record, a moment after kafka-acls.sh returns)
  const granted = await waitForValue(async () => {
    const bindings = (await aclsOf('secure', ['User:alice'])).filter(b => b.resourceName === revoked && b.operation === 'read')
    return { done: bindings.length > 0, state: bindings }
  }, { timeoutMs: 15_000, intervalMs: 50, message: 'the printed remedy granted READ' })
  assert.deepEqual(granted, [read])
  // Then the topic resumes: an exact copy of both topics, record by record, healthy again
  await waitFor(async () => await total('target', `A.${revoked}`) === 100n, { timeoutMs: 60_000, message: 'the revoked topic copied after the re-grant' })
  for (const topic of [kept, revoked]) assertSamePartition(await readCommitted('secure', topic, 0), await readCommitted('target', `A.${topic}`, 0), topic)
  await waitFor(async () => (await fetch(`${base}/healthz`)).status === 200, { timeoutMs: 10_000, message: '/healthz 200 after the recovery' })
  assert.match(kmirror.stderr, new RegExp(`${revoked}-0 is replicated again \\(it failed with TOPIC_AUTHORIZATION_FAILED on cluster A\\)`))
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('a record larger than the remote topic\'s max.message.bytes: that partition is set aside with the hint, the other flows, and it resumes exactly once the limit is raised', { timeout: 180_000 }, async t => {
  await ensureClusters(['secure', 'target'])
  // Given a source topic of two partitions and its remote topic made beforehand with max.message.bytes 4000
  const topic = uniqueName('pf-large')
  const remote = `A.${topic}`
  await createTopic('secure', topic, { partitions: 2, t })
  await createTopic('target', remote, { partitions: 2, configs: { 'max.message.bytes': '4000' }, t })
  await produce('secure', [...records(topic, 0, 20, 16, 0), ...records(topic, 0, 20, 16, 1)])
  const config = writeTempFile(mm2Properties({
    source: 'secure',
    target: 'target',
    extra: [`A->B.topics = ${topic}`, 'sync.topic.configs.enabled = false', 'emit.checkpoints.enabled = false', 'sync.topic.acls.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const base = await runWithHttp(kmirror)
  await waitFor(async () => await total('target', remote) === 40n, { timeoutMs: 60_000, message: 'first records copied' })

  // When partition 0 gets a record of 10 kB between small ones, and partition 1 more small records
  await produce('secure', [...records(topic, 20, 1, 10_000, 0), ...records(topic, 21, 5, 16, 0)])
  await produce('secure', records(topic, 20, 30, 16, 1))

  // Then partition 1 is copied whole, partition 0 stops before the large record and is reported with the hint
  await waitFor(async () => (await endOffsets('target', remote))[1] === 50n, { timeoutMs: 30_000, message: 'the other partition keeps flowing' })
  await waitFor(async () => (await status(base)).flows[0]?.partitions.some(p => p.partition === 0 && p.failure !== null) === true, { timeoutMs: 30_000, message: 'the partition in /status' })
  const failing = (await status(base)).flows[0]!.partitions.find(p => p.partition === 0)!
  assert.match(failing.failure!.error, /^(MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE)$/)
  assert.equal(failing.failure!.cluster, 'B')
  assert.equal(failing.failure!.remedy, `raise max.message.bytes of topic ${remote} on cluster B (or message.max.bytes of its brokers) above the largest record batch of ${topic}`)
  assert.equal((await endOffsets('target', remote))[0], 20n)
  assert.equal((await fetch(`${base}/healthz`)).status, 503)
  assert.match(kmirror.stderr, new RegExp(`cannot write ${remote}-0 to cluster B: (MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE).*, also after re-encoding the records; raise max\\.message\\.bytes`))

  // When max.message.bytes of the remote topic is raised
  await withAdmin('target', admin => admin.incrementalAlterConfigs({
    resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: remote, configs: [{ name: 'max.message.bytes', configOperation: IncrementalAlterConfigOperationTypes.SET, value: '1048588' }] }]
  }))
  // Then partition 0 resumes: both partitions are exact copies, and the endpoint is healthy again
  await waitFor(async () => (await endOffsets('target', remote))[0] === 26n, { timeoutMs: 60_000, message: 'the large record copied after raising the limit' })
  for (const p of [0, 1]) assertSamePartition(await readCommitted('secure', topic, p), await readCommitted('target', remote, p), `${topic}-${p}`)
  await waitFor(async () => (await fetch(`${base}/healthz`)).status === 200, { timeoutMs: 10_000, message: '/healthz 200 after the recovery' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('the remote topic deleted by hand on the target: kmirror creates it again and copies the source topic again from its log start, with an error line', { timeout: 120_000 }, async t => {
  await ensureClusters(['secure', 'target'])
  // Given a topic copied to B
  const topic = uniqueName('pf-deleted')
  const remote = `A.${topic}`
  await createTopic('secure', topic, { partitions: 1, t })
  t.after(() => deleteTopics('target', [remote]))
  await produce('secure', records(topic, 0, 30))
  const config = writeTempFile(mm2Properties({
    source: 'secure',
    target: 'target',
    extra: [`A->B.topics = ${topic}`, 'refresh.topics.interval.seconds = 1', 'emit.checkpoints.enabled = false', 'sync.topic.acls.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t })
  await waitFor(async () => await total('target', remote) === 30n, { timeoutMs: 60_000, message: 'first records copied' })

  // When the remote topic is deleted on B and more records arrive on A
  await deleteTopics('target', [remote])
  await produce('secure', records(topic, 30, 20))

  // Then kmirror says so at error level, creates the remote topic again and copies every record again: an exact copy
  await kmirror.waitForOutput(new RegExp(`remote topic ${remote} was deleted on cluster B while kmirror replicated ${topic}: created it again`), 30_000)
  await kmirror.waitForOutput(new RegExp(`remote topic ${remote} was deleted and created again on cluster B \\(a new topic id\\): copying ${topic}-0 again from offset 0`), 30_000)
  await waitFor(async () => await total('target', remote) === 50n, { timeoutMs: 60_000, message: 'every record copied again' })
  assertSamePartition(await readCommitted('secure', topic, 0), await readCommitted('target', remote, 0), topic)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('WRITE revoked on one remote topic: that partition is set aside and reported on the target side, the other topic flows, and after the re-grant the copy is exact', { timeout: 180_000 }, async t => {
  await ensureClusters(['secure', 'target'])
  // Given kmirror writing to the authorizer cluster as alice, who may do anything there (wildcard ALLOWs), from `target` as A
  const [kept, revoked] = [uniqueName('pf-wkept'), uniqueName('pf-wrevoked')]
  await Promise.all([createTopic('target', kept, { partitions: 1, t }), createTopic('target', revoked, { partitions: 1, t })])
  t.after(() => deleteTopics('secure', [`A.${kept}`, `A.${revoked}`]))
  const allow = (resourceType: AclBinding['resourceType'], resourceName: string): AclBinding =>
    ({ resourceType, resourceName, patternType: 'literal', principal: 'User:alice', host: '*', operation: 'all', permission: 'allow' })
  await createAcls('secure', [allow('topic', '*'), allow('group', '*'), allow('cluster', 'kafka-cluster')], t)
  await produce('target', [...records(kept, 0, 50), ...records(revoked, 0, 50)])
  const alice = { ...getCluster('secure'), sasl: { mechanism: 'PLAIN' as const, username: 'alice', password: 'alice-secret' } }
  const config = writeTempFile(mm2Properties({
    source: 'target',
    target: alice,
    extra: [`A->B.topics = ${kept}|${revoked}`, 'emit.checkpoints.enabled = false', 'sync.topic.acls.enabled = false', 'emit.heartbeats.interval.seconds = 1']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const base = await runWithHttp(kmirror)
  const onB = async (topic: string): Promise<bigint> => (await endOffsets(alice, topic).catch(() => [])).reduce((a, b) => a + b, 0n)
  await waitFor(async () => ({ done: await onB(`A.${kept}`) === 50n && await onB(`A.${revoked}`) === 50n, state: kmirror.stderr.slice(-2000) }), { timeoutMs: 60_000, message: 'first records copied' })

  // When WRITE on one remote topic is denied and both source topics get more records
  const deny: AclBinding = { resourceType: 'topic', resourceName: `A.${revoked}`, patternType: 'literal', principal: 'User:alice', host: '*', operation: 'write', permission: 'deny' }
  await createAcls('secure', [deny], t)
  await produce('target', [...records(kept, 50, 50), ...records(revoked, 50, 50)])

  // Then the other topic is copied whole, and the refused partition is reported on the target side with the grant to add
  await waitFor(async () => await onB(`A.${kept}`) === 100n, { timeoutMs: 30_000, message: 'the other topic keeps flowing' })
  await waitFor(async () => (await status(base)).flows[0]?.partitions.some(p => p.topic === revoked && p.failure !== null) === true, { timeoutMs: 30_000, message: 'the failing partition in /status' })
  const failing = (await status(base)).flows[0]!.partitions.find(p => p.topic === revoked)!
  assert.equal(failing.failure?.error, 'TOPIC_AUTHORIZATION_FAILED')
  assert.equal(failing.failure?.cluster, 'B')
  assert.equal(failing.failure?.remedy, `grant WRITE on topic A.${revoked} to User:alice on cluster B (kafka-acls.sh --bootstrap-server ${getCluster('secure').bootstrap} ` +
    `--command-config ADMIN_PROPERTIES_FILE_OF_B --add --allow-principal User:alice --operation Write --topic A.${revoked}; see "Least-privilege ACLs" in docs/operations.md)`)
  assert.equal(await onB(`A.${revoked}`), 50n)
  const health = await fetch(`${base}/healthz`)
  assert.equal(health.status, 503)
  assert.equal(await health.text(), 'degraded: 1 partition(s) failing in A->B (TOPIC_AUTHORIZATION_FAILED)\n')
  assert.equal(metric(await (await fetch(`${base}/metrics`)).text(), 'kmirror_failing_partitions', 'error="TOPIC_AUTHORIZATION_FAILED"'), 1)
  assert.equal(kmirror.stderr.split('\n').filter(l => l.includes(`cannot write A.${revoked}-0 to cluster B`)).length, 1, kmirror.stderr.slice(-3000))

  // When the DENY is removed
  await deleteAcls('secure', [deny])
  // Then the partition resumes where it stopped: both remote topics are exact copies, and the endpoint is healthy
  await waitFor(async () => await onB(`A.${revoked}`) === 100n, { timeoutMs: 60_000, message: 'the refused topic copied after the re-grant' })
  for (const topic of [kept, revoked]) assertSamePartition(await readCommitted('target', topic, 0), await readCommitted(alice, `A.${topic}`, 0), topic)
  await waitFor(async () => (await fetch(`${base}/healthz`)).status === 200, { timeoutMs: 10_000, message: '/healthz 200 after the recovery' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('WRITE denied on MM2\'s offset-syncs topic: the records copy on, /status and the metrics show the syncs waiting and why, /healthz stays 200, and after the re-grant every sync is written in order and translates exactly', { timeout: 180_000 }, async t => {
  await ensureClusters(['secure', 'target'])
  // Given kmirror writing to the authorizer cluster as alice (wildcard ALLOWs), its offset syncs there too, one every 10 records
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('pf-syncs')
  const remote = `${a}.${topic}`
  // On the target, MM2 names the topic after the source cluster
  const syncsTopic = `mm2-offset-syncs.${a}.internal`
  await createTopic('target', topic, { partitions: 1, t })
  const allow = (resourceType: AclBinding['resourceType'], resourceName: string): AclBinding =>
    ({ resourceType, resourceName, patternType: 'literal', principal: 'User:alice', host: '*', operation: 'all', permission: 'allow' })
  await createAcls('secure', [allow('topic', '*'), allow('group', '*'), allow('cluster', 'kafka-cluster')], t)
  await produce('target', records(topic, 0, 50))
  const alice = { ...getCluster('secure'), sasl: { mechanism: 'PLAIN' as const, username: 'alice', password: 'alice-secret' } }
  const config = writeTempFile(mm2Properties({
    source: 'target',
    target: alice,
    sourceAlias: a,
    targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, 'offset-syncs.topic.location = target', 'offset.lag.max = 10', 'emit.checkpoints.enabled = false',
      'sync.group.offsets.enabled = false', 'sync.topic.acls.enabled = false', 'sync.topic.configs.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  removeAliasTopicsAfter(t, ['secure'], [a, b], async () => { kmirror.kill('SIGKILL'); await kmirror.waitForExit(10_000).catch(() => undefined) })
  const base = await runWithHttp(kmirror)
  const onB = async (): Promise<bigint> => (await endOffsets(alice, remote).catch(() => [])).reduce((x, y) => x + y, 0n)
  const syncsOf = async (): Promise<OffsetSyncsStatus | undefined> =>
    ((await (await fetch(`${base}/status`)).json()) as { flows: { offsetSyncs?: OffsetSyncsStatus }[] }).flows[0]?.offsetSyncs
  await waitFor(async () => ({ done: await onB() === 50n && (await syncsOf())?.pending === 0, state: kmirror.stderr.slice(-2000) }), { timeoutMs: 60_000, message: 'first records copied, their syncs written' })

  // When WRITE on the offset-syncs topic is denied and the source topic gets 50 more records
  const deny: AclBinding = { resourceType: 'topic', resourceName: syncsTopic, patternType: 'literal', principal: 'User:alice', host: '*', operation: 'write', permission: 'deny' }
  await createAcls('secure', [deny], t)
  // (counted once the broker enforces the DENY: a sync held back until a flush, the newest of a run, may be written
  // between the copy and the DENY, as it was in one CI run)
  const writtenBefore = (await readOffsetSyncs(alice, syncsTopic, topic)).length
  await produce('target', records(topic, 50, 50))

  // Then the records are copied whole while the syncs wait, shown with their error, and /healthz stays 200
  await waitFor(async () => await onB() === 100n, { timeoutMs: 30_000, message: 'the records copy on' })
  const waiting = await waitForValue(async () => {
    const syncs = await syncsOf()
    return { done: syncs !== undefined && syncs.failure !== null && syncs.pending > 0, state: syncs }
  }, { timeoutMs: 30_000, message: 'the failing offset syncs in /status' })
  assert.ok(waiting !== undefined)
  assert.match(waiting.failure!.error, /TOPIC_AUTHORIZATION_FAILED|not authorized/i)
  assert.equal(waiting.thinned, 0)
  assert.equal((await fetch(`${base}/healthz`)).status, 200)
  const text = await (await fetch(`${base}/metrics`)).text()
  assert.ok((metric(text, 'kmirror_offset_syncs_pending', `flow="${a}->${b}"`) ?? 0) >= waiting.pending, 'the gauge counts the syncs waiting')
  assert.ok((metric(text, 'kmirror_offset_syncs_failing_since_seconds', `flow="${a}->${b}"`) ?? 0) > 0)
  assert.ok((metric(text, 'kmirror_offset_sync_write_failures_total', `flow="${a}->${b}"`) ?? 0) >= 1)
  assert.equal((await readOffsetSyncs(alice, syncsTopic, topic)).length, writtenBefore, 'no sync written while denied')
  // and the console (in Chromium) shows the flow's syncs waiting in red, with the error
  const browser = await launchBrowser(t)
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const pageErrors: string[] = []
  page.on('pageerror', err => pageErrors.push(err.message))
  await page.goto(`${base}/`)
  const syncsLine = `[data-flow="${a}->${b}"] [data-offset-syncs]`
  await waitForText(page, syncsLine, /^cannot write MM2's offset syncs: \d+ waiting, \d+ attempts since \S+: .*(TOPIC_AUTHORIZATION_FAILED|not authorized)/i, 'the console\'s offset-syncs line')
  assert.equal(await page.locator(syncsLine).getAttribute('class'), 'error-text')

  // When the DENY is removed
  await deleteAcls('secure', [deny])
  // Then the syncs waiting are written, one warning and one recovery line told it, and every sync translates exactly
  await waitFor(async () => JSON.stringify(await syncsOf()) === JSON.stringify({ pending: 0, thinned: 0, failure: null }), { timeoutMs: 30_000, message: 'the syncs written after the re-grant' })
  const syncs = await readOffsetSyncs(alice, syncsTopic, topic)
  assert.ok(syncs.some(s => s.upstreamOffset >= 50), `a sync of the records copied while denied: ${JSON.stringify(syncs)}`)
  assert.deepEqual(syncs.map(s => s.upstreamOffset), [...syncs.map(s => s.upstreamOffset)].sort((x, y) => x - y), 'syncs written in order')
  const source = await readCommitted('target', topic, 0)
  const copied = await readCommitted(alice, remote, 0)
  assertSamePartition(source, copied, topic)
  assertSyncsTranslateExactly(syncs, source, copied, 0, topic)
  assert.equal(kmirror.stderr.split('\n').filter(l => l.includes('"msg":"cannot write offset syncs; will retry"')).length, 1, kmirror.stderr.slice(-3000))
  assert.match(kmirror.stderr, /"msg":"offset syncs written again after \d+ failed attempt\(s\)"/)
  // and the console's line is gone once they are written
  await waitFor(async () => ({ done: await page.locator(syncsLine).count() === 0, state: await page.locator(syncsLine).first().textContent({ timeout: 500 }).catch(() => null) }),
    { timeoutMs: 10_000, intervalMs: 200, message: 'the console\'s offset-syncs line gone' })
  assert.deepEqual(pageErrors, [])
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})
