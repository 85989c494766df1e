/**
 * Topic config sync on real clusters, with MM2's integration-test setup (mm2-spec §10): `delete.retention.ms`
 * excluded, one-second sync. Drift on the target is put back, excluded keys stay as the target has them, and
 * `use.defaults.from` behaves as in MM2's testSyncTopicConfigs, testReplicateSourceDefault and testReplicateTargetDefault.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ConfigResourceTypes, IncrementalAlterConfigOperationTypes } from '@platformatic/kafka'
import type { ClusterName } from '../helpers/clusters.ts'
import { createTopic, deleteTopics, topicConfig, withAdmin, type Cleanup } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

// From kmirror's spawn: Node's start, internal topics, the group join, the creation and a config sync pass
const WAIT = { timeoutMs: 60_000 }

function startKmirror (prefix: string, t: Cleanup, ...extra: string[]): KmirrorProcess {
  const config = writeTempFile(mm2Properties({
    source: 'source',
    target: 'target',
    extra: [
      `A->B.topics = ${prefix}-.*`, 'heartbeats.replication.enabled = false', 'config.properties.exclude = delete\\.retention\\..*',
      'refresh.topics.interval.seconds = 1', 'sync.topic.configs.interval.seconds = 1', ...extra
    ]
  }), '.properties', t)
  return spawnKmirror(['run', config], { t })
}

async function stop (kmirror: KmirrorProcess): Promise<void> {
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))
}

/** Incremental changes of one topic: a value sets the key, null deletes it (back to the cluster default). */
async function alterConfigs (cluster: ClusterName, topic: string, changes: Record<string, string | null>): Promise<void> {
  await withAdmin(cluster, admin => admin.incrementalAlterConfigs({
    resources: [{
      resourceType: ConfigResourceTypes.TOPIC,
      resourceName: topic,
      configs: Object.entries(changes).map(([name, value]) => value === null
        ? { name, configOperation: IncrementalAlterConfigOperationTypes.DELETE }
        : { name, configOperation: IncrementalAlterConfigOperationTypes.SET, value })
    }]
  }))
}

async function valueOf (cluster: ClusterName, topic: string, key: string): Promise<string | null | undefined> {
  return (await topicConfig(cluster, topic))[key]
}

/** A source topic under a fresh prefix, and kmirror running until its remote topic exists. */
async function replicatedTopic (t: Cleanup, name: string, configs: Record<string, string>, ...extra: string[]) {
  const prefix = uniqueName(name)
  const topic = `${prefix}-topic`
  const remote = `A.${topic}`
  t.after(() => deleteTopics('target', [remote]))
  await createTopic('source', topic, { partitions: 1, configs, t })
  const kmirror = startKmirror(prefix, t, ...extra)
  await waitFor(async () => (await topicConfig('target', remote).catch(() => null)) !== null, { ...WAIT, message: `${remote} created` })
  return { topic, remote, kmirror }
}

test('config drift on the target is put back, while an excluded key changed there stays (MM2 testSyncTopicConfigs)', { timeout: 120_000 }, async t => {
  // Given a replicated topic with an excluded and two synced configs
  const { topic, remote, kmirror } = await replicatedTopic(t, 'tcfg-drift', { 'delete.retention.ms': '1000', 'retention.bytes': '1000', 'cleanup.policy': 'compact' })
  const created = await topicConfig('target', remote, { overridesOnly: true })
  assert.deepEqual([created['retention.bytes'], created['cleanup.policy'], created['delete.retention.ms']], ['1000', 'compact', undefined])

  // When someone changes the excluded key, two synced keys, and overrides a key that is a default on the source
  await alterConfigs('target', remote, { 'delete.retention.ms': '2000', 'retention.bytes': '2000', 'cleanup.policy': 'delete', 'segment.ms': '3600000' })

  // Then the synced keys go back to the source's values, the override of a source default goes back to the target default
  await waitFor(async () => {
    const overrides = await topicConfig('target', remote, { overridesOnly: true })
    return { done: overrides['retention.bytes'] === '1000' && overrides['cleanup.policy'] === 'compact' && overrides['segment.ms'] === undefined, state: overrides }
  }, { ...WAIT, message: 'the drift put back' })
  // And the excluded key keeps the target's value
  assert.equal(await valueOf('target', remote, 'delete.retention.ms'), '2000')
  assert.equal(await valueOf('source', topic, 'delete.retention.ms'), '1000')
  await kmirror.waitForOutput(/synced remote topic configs/, 10_000)
  await stop(kmirror)
})

test('with use.defaults.from=source, a key changed on the target is reset to the source default; the excluded key is untouched (MM2 testReplicateSourceDefault)', { timeout: 120_000 }, async t => {
  // Given a topic with default configs, replicated with use.defaults.from=source
  const { topic, remote, kmirror } = await replicatedTopic(t, 'tcfg-srcdef', {}, 'A->B.use.defaults.from = source')

  // When the target topic's configs are changed
  await alterConfigs('target', remote, { 'delete.retention.ms': '2000', 'retention.bytes': '2000' })

  // Then retention.bytes is synced with the source cluster's default, -1
  await waitFor(async () => {
    const [source, target] = [await valueOf('source', topic, 'retention.bytes'), await valueOf('target', remote, 'retention.bytes')]
    return { done: target === source && target === '-1', state: { source, target } }
  }, { ...WAIT, message: 'retention.bytes synced with the source default' })
  // And the excluded delete.retention.ms keeps the value set on the target
  assert.equal(await valueOf('target', remote, 'delete.retention.ms'), '2000')
  assert.notEqual(await valueOf('source', topic, 'delete.retention.ms'), '2000')
  await stop(kmirror)
})

test('with use.defaults.from=target, a key deleted on the source returns to the target default (MM2 testReplicateTargetDefault)', { timeout: 120_000 }, async t => {
  // Given a topic with retention.bytes=1000, synced to the target
  const { topic, remote, kmirror } = await replicatedTopic(t, 'tcfg-tgtdef', { 'retention.bytes': '1000' })
  assert.equal(await valueOf('target', remote, 'retention.bytes'), '1000')

  // When retention.bytes is deleted on the source
  await alterConfigs('source', topic, { 'retention.bytes': null })

  // Then the target topic returns to the target cluster's default, no longer overridden
  await waitFor(async () => {
    const overrides = await topicConfig('target', remote, { overridesOnly: true })
    return { done: overrides['retention.bytes'] === undefined, state: overrides }
  }, { ...WAIT, message: 'retention.bytes back to the target default' })
  assert.equal(await valueOf('target', remote, 'retention.bytes'), '-1')
  await stop(kmirror)
})
