/**
 * A target broker throttling kmirror's writes: a client quota (`producer_byte_rate`) on the data path's producer
 * client id, `kmirror|<flow>|replication-producer`. The broker answers each Produce at once with a throttle time
 * (KIP-219) and kmirror waits it out before its next Produce to that broker, so the flow goes at the quota's pace.
 * Nothing fails and nothing times out, so without a report the operator would see only lag: the log warns once a
 * minute naming the broker, the pause and the quota to raise, /metrics counts the pauses and /status lists the
 * broker as throttled. Every record is copied exactly.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Admin } from '@platformatic/kafka'
import { getCluster } from '../helpers/clusters.ts'
import { createTopic, endOffsets, produce, withAdmin } from '../helpers/kafka.ts'
import type { TestRecord } from '../helpers/kafka-clients.ts'
import { type Instance, killInstances, startInstance } from '../helpers/instances.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { writeTempFile } from '../helpers/process.ts'
import { readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

/** About 1.5 MB at 100 kB/s: seconds of throttling, several pauses. */
const RECORDS = 1500
const QUOTA_BYTES_PER_SECOND = 100_000

/** Sets (or with VALUE undefined removes) the produce quota of CLIENT_ID on the target. */
async function produceQuota (clientId: string, value: number | undefined): Promise<void> {
  const ops: Parameters<Admin['alterClientQuotas']>[0]['entries'][number]['ops'] = value === undefined
    ? [{ key: 'producer_byte_rate', remove: true }]
    : [{ key: 'producer_byte_rate', value, remove: false }]
  const [result] = await withAdmin('target', async admin => await admin.alterClientQuotas({ entries: [{ entities: [{ entityType: 'client-id', entityName: clientId }], ops }] }))
  assert.equal(result?.errorCode, 0, result?.errorMessage ?? 'quota refused')
}

function metric (text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find(l => l.startsWith(`${name}{`) && l.includes(labels))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

test('a target broker throttling kmirror\'s writes by a client quota: told once with the quota to raise, counted, listed throttled; every record copied exactly', { timeout: 120_000 }, async t => {
  // Given 1.5 MB on a source topic and a produce quota of 100 kB/s on the flow's data-path producer on the target
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => await killInstances(instances))
  const topic = uniqueName('tgtquota')
  const remote = `${a}.${topic}`
  await createTopic('source', topic, { partitions: 2, t })
  const clientId = `kmirror|${a}->${b}|replication-producer`
  await produceQuota(clientId, QUOTA_BYTES_PER_SECOND)
  t.after(async () => { await produceQuota(clientId, undefined) })
  const records: TestRecord[] = Array.from({ length: RECORDS }, (_, i) => ({
    topic, partition: i % 2, key: Buffer.from(`k${i}`), value: Buffer.from(`${i}:`.padEnd(1000, 'x')), headers: [], timestamp: BigInt(Date.now())
  }))
  await produce('source', records)

  // When kmirror copies it
  const properties = multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: 'target' }], [`${a}->${b}`], [`topics = ${topic}`])
  const instance = await startInstance(writeTempFile(properties, '.properties', t), 'one', t)
  instances.push(instance)

  // Then every record is copied, exactly and in order, at the quota's pace
  await waitFor(async () => {
    const ends = await endOffsets('target', remote).catch(() => [])
    return { done: ends.reduce((x, y) => x + y, 0n) === BigInt(RECORDS), state: ends }
  }, { timeoutMs: 90_000, intervalMs: 500, message: 'every record copied' })
  for (const partition of [0, 1]) {
    const values = async (cluster: 'source' | 'target', name: string): Promise<string[]> => (await readCommitted(cluster, name, partition)).map(r => String(r.value))
    assert.deepEqual(await values('target', remote), await values('source', topic), `${topic}-${partition}`)
  }
  // and the throttling was told: one warning naming the broker, its cluster, the pause and the quota to raise
  const target = getCluster('target').bootstrap
  const warnings = instance.process.stderr.split('\n').filter(l => l.includes('throttles kmirror\'s Produce requests for a client quota'))
  assert.equal(warnings.filter(l => l.includes('"level":"warn"')).length, 1, instance.process.stderr.slice(-3000))
  assert.match(warnings[0]!, new RegExp(`broker ${target.replace(/\./g, '\\.')} of cluster ${b} throttles kmirror's Produce requests for a client quota: it asked for a pause of [\\d.]+ s, .*` +
    'every partition a flow writes goes at the quota\'s pace.*raise or remove the quota \\(producer_byte_rate, or request_percentage\\).*kafka-configs\\.sh --bootstrap-server'))
  // counted in /metrics and listed in /status
  const base = `http://127.0.0.1:${instance.port}`
  const paused = metric(await (await fetch(`${base}/metrics`)).text(), 'kmirror_quota_throttle_seconds_total', 'request="Produce"')
  assert.ok(paused !== undefined && paused > 1, `seconds of pause counted: ${paused}`)
  const { brokers } = await (await fetch(`${base}/status`)).json() as { brokers: { broker: string, kind: string, clusters: string[], count: number }[] }
  const listed = brokers.find(x => x.kind === 'throttled')
  assert.deepEqual([listed?.broker, listed?.clusters], [target, [`cluster ${b}`]])
  t.diagnostic(`${paused} s of pause asked in ${listed?.count} throttled answers`)
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(30_000)).code, 0, instance.process.stderr.slice(-3000))
})
