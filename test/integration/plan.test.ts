/**
 * `kmirror plan`: reports a hand-made drift exactly and exits 1, changes nothing, and exits 0 once the next
 * sync has put the target back in step.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { getCluster } from '../helpers/clusters.ts'
import { createTopic, partitionCount, topicConfig } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

async function plan (config: string, t: Parameters<typeof writeTempFile>[2], json = false): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const p = spawnKmirror(['plan', config, ...(json ? ['--json'] : [])], { t })
  const exit = await p.waitForExit(60_000)
  return { code: exit.code, stdout: p.stdout, stderr: p.stderr }
}

test('kmirror plan reports a hand-made drift exactly, exits 1, changes nothing, then exits 0 after a sync', { timeout: 180_000 }, async t => {
  // Given a topic replicated once, with a non-default retention
  const topic = uniqueName('plan')
  const remote = `A.${topic}`
  await createTopic('source', topic, { partitions: 2, configs: { 'retention.ms': '123456789' }, t })
  t.after(async () => { const admin = new AdminClient({ 'bootstrap.servers': getCluster('target').bootstrap }, 'test', { label: 'target' }); await admin.deleteTopics([remote]); await admin.close() })
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target',
    extra: [`A->B.topics = ${topic}`, 'refresh.topics.interval.seconds = 1', 'sync.topic.configs.interval.seconds = 1', 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const first = spawnKmirror(['run', config], { t })
  await waitFor(async () => (await topicConfig('target', remote).catch(() => ({} as Record<string, string>)))['retention.ms'] === '123456789', { timeoutMs: 60_000, message: 'remote topic created with its config' })
  first.kill('SIGTERM')
  await first.waitForExit(10_000)
  const clean = await plan(config, t)
  assert.equal(clean.code, 0, clean.stdout + clean.stderr)
  assert.match(clean.stdout, /in sync, nothing to do/)

  // When the target drifts (a synced key changed) and the source grows a partition
  const targetAdmin = new AdminClient({ 'bootstrap.servers': getCluster('target').bootstrap }, 'test', { label: 'target' })
  const sourceAdmin = new AdminClient({ 'bootstrap.servers': getCluster('source').bootstrap }, 'test', { label: 'source' })
  t.after(() => Promise.all([targetAdmin.close(), sourceAdmin.close()]))
  await targetAdmin.alterTopicConfigs(remote, [{ op: 'set', name: 'retention.ms', value: '999' }])
  await sourceAdmin.createPartitions(topic, 3)

  // Then plan names both changes with old and new values, exits 1, and changes nothing
  const drift = await plan(config, t)
  assert.equal(drift.code, 1, drift.stdout + drift.stderr)
  assert.match(drift.stdout, new RegExp(`grow ${remote} from 2 to 3 partitions`))
  assert.match(drift.stdout, new RegExp(`~ ${remote} retention\\.ms: 999 -> 123456789`))
  const json = JSON.parse((await plan(config, t, true)).stdout) as { flow: string, drift: boolean, topics: { addPartitions: { remoteTopic: string, from: number, to: number }[], alterConfigs: { remoteTopic: string, changes: { name: string, oldValue: string, newValue: string }[] }[] } }[]
  const flow = json.find(f => f.flow === 'A->B')!
  assert.equal(flow.drift, true)
  assert.deepEqual(flow.topics.addPartitions, [{ topic, remoteTopic: remote, from: 2, to: 3 }])
  assert.deepEqual(flow.topics.alterConfigs.flatMap(a => a.changes.map(c => [a.remoteTopic, c.name, c.oldValue, c.newValue])), [[remote, 'retention.ms', '999', '123456789']])
  assert.equal(await partitionCount('target', remote), 2)
  assert.equal((await topicConfig('target', remote))['retention.ms'], '999')

  // And once kmirror has synced again, plan exits 0
  const second = spawnKmirror(['run', config], { t })
  await waitFor(async () => (await plan(config, t)).code === 0, { timeoutMs: 60_000, intervalMs: 1000, message: 'plan clean after the sync' })
  second.kill('SIGTERM')
  assert.equal((await second.waitForExit(10_000)).code, 0)
})
