/**
 * Deletion needs proof: a source topic that kmirror may no longer DESCRIBE vanishes from the source's topic list
 * just as a deleted one does. With `sync.topic.deletions.enabled` on, its remote topic must stay (the log says
 * why and which ACL to grant), while a topic really deleted on the source still has its remote topic deleted.
 * kmirror reads the SASL cluster as the non-super user bob, with ACLs this test grants.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AclBinding } from '../../src/kafka/acls.ts'
import { createAcls } from '../helpers/acls.ts'
import { ensureClusters, getCluster } from '../helpers/clusters.ts'
import { createTopic, deleteTopics, endOffsets, listTopics, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function binding (permission: AclBinding['permission'], operation: AclBinding['operation'], resourceName: string, patternType: AclBinding['patternType'] = 'literal'): AclBinding {
  return { resourceType: 'topic', resourceName, patternType, principal: 'User:bob', host: '*', operation, permission }
}

/** Lines of kmirror's JSON log about `topic` whose message matches `msg`. */
function logLines (kmirror: KmirrorProcess, topic: string, msg: RegExp): Record<string, unknown>[] {
  return kmirror.stderr.split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l) as Record<string, unknown>)
    .filter(l => l['topic'] === topic && msg.test(String(l['msg'])))
}

test('a topic kmirror may no longer describe keeps its remote topic; a topic deleted on the source loses it', { timeout: 120_000 }, async t => {
  await ensureClusters(['secure', 'target'])
  const u = uniqueName('delproof')
  const denied = `${u}-denied`
  const gone = `${u}-gone`
  t.after(() => deleteTopics('target', [`A.${denied}`, `A.${gone}`]))
  t.after(() => deleteTopics('secure', [denied]))

  // Given two topics on the SASL cluster with 10 records each, readable by bob
  await createTopic('secure', denied, { partitions: 1 })
  await createTopic('secure', gone, { partitions: 1 })
  await createAcls('secure', [binding('allow', 'read', `${u}-`, 'prefixed'), binding('allow', 'describe-configs', `${u}-`, 'prefixed')], t)
  const records = (topic: string): TestRecord[] => Array.from({ length: 10 }, (_, i) => ({
    topic, partition: 0, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
  await produce('secure', [...records(denied), ...records(gone)])

  // And kmirror replicating them as bob, with topic deletions synced and a refresh every second
  const bob = { ...getCluster('secure'), sasl: { mechanism: 'PLAIN' as const, username: 'bob', password: 'bob-secret' } }
  const config = writeTempFile(mm2Properties({
    source: bob,
    target: 'target',
    extra: [`A->B.topics = ${u}-.*`, 'offset-syncs.topic.location = target', 'sync.topic.deletions.enabled = true',
      'refresh.topics.interval.seconds = 1', 'emit.checkpoints.enabled = false', 'sync.topic.acls.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t })
  const copied = async (topic: string): Promise<boolean> => (await endOffsets('target', `A.${topic}`).catch(() => [0n]))[0] === 10n
  await waitFor(async () => await copied(denied) && await copied(gone), { timeoutMs: 60_000, message: 'both topics copied' })

  // When DESCRIBE on one topic is denied to bob
  await createAcls('secure', [binding('deny', 'describe', denied)], t)

  // Then kmirror says once that it keeps the topic and which ACL to grant
  const keptMessage = /^source topic .*-denied on A can no longer be described by kmirror \(TOPIC_AUTHORIZATION_FAILED\): it is not taken as deleted: it stays in the flow and its remote topic A\..*-denied on B is kept\. Fix: grant the principal of A's client settings ALLOW DESCRIBE and READ on TOPIC .*-denied on A/
  await waitFor(() => logLines(kmirror, denied, keptMessage).length > 0, { timeoutMs: 20_000, message: 'the warning about the denied topic' })

  // When the other topic is really deleted on the source
  await deleteTopics('secure', [gone])

  // Then its remote topic is deleted after two refreshes found it absent, and the log says it was deleted
  await waitFor(async () => !(await listTopics('target')).includes(`A.${gone}`), { timeoutMs: 30_000, message: `A.${gone} deleted on the target` })
  // (logged once the deletion was answered, which may be after the broker stopped listing the topic)
  await kmirror.waitForOutput(new RegExp(`${gone} was deleted`), 10_000)
  assert.equal(logLines(kmirror, gone, /does not exist any more; it counts as deleted if the next refresh finds it missing too$/).length, 1)
  assert.equal(logLines(kmirror, gone, /was deleted/).length, 1)

  // And the remote topic of the denied one is still there, with its 10 records, warned about once
  assert.ok((await listTopics('target')).includes(`A.${denied}`))
  assert.deepEqual(await endOffsets('target', `A.${denied}`), [10n])
  assert.equal(logLines(kmirror, denied, keptMessage).length, 1)
  assert.equal(logLines(kmirror, denied, /was deleted/).length, 0)

  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0, kmirror.stderr.slice(-3000))
})

test('every replicated topic deleted on the source at once (a mass absence): warned of once, counted as deleted only after 12 refreshes, and their remote topics kept with their records though sync.topic.deletions.enabled, an error naming them and the command', { timeout: 120_000 }, async t => {
  // Given three topics with 10 records each, copied by kmirror with topic deletions synced and a refresh every second
  const u = uniqueName('massgone')
  const topics = [`${u}-a`, `${u}-b`, `${u}-c`]
  t.after(() => deleteTopics('target', topics.map(name => `A.${name}`)))
  for (const topic of topics) await createTopic('source', topic, { partitions: 1 })
  await produce('source', topics.flatMap(topic => Array.from({ length: 10 }, (_, i) => ({
    topic, partition: 0, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))))
  const config = writeTempFile(mm2Properties({
    source: 'source',
    target: 'target',
    extra: [`A->B.topics = ${u}-.*`, 'sync.topic.deletions.enabled = true', 'refresh.topics.interval.seconds = 1',
      'emit.checkpoints.enabled = false', 'sync.topic.acls.enabled = false', 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t })
  const copied = async (topic: string): Promise<boolean> => (await endOffsets('target', `A.${topic}`).catch(() => [0n]))[0] === 10n
  await waitFor(async () => (await Promise.all(topics.map(copied))).every(Boolean), { timeoutMs: 60_000, message: 'the three topics copied' })

  // When all three are deleted on the source at once (as a broker answering from an empty metadata cache, or
  // bootstrap.servers reaching another cluster, would look)
  await deleteTopics('source', topics)

  // Then one warning says most replicated topics are absent and how long kmirror waits
  await kmirror.waitForOutput(/answers that 3 of the 3 topics A->B replicates do not exist: kmirror takes them as deleted only if they stay absent for 12 refreshes/, 30_000)
  // And once they stayed absent that long, one error names the remote topics kept and the command to delete them
  const kept = await kmirror.waitForOutput(/"msg":"(3 source topics of A->B counted as deleted on cluster A while most replicated topics were absent at once[^"]*)"/, 60_000)
  assert.match(kept[1]!, /are kept on purpose though sync\.topic\.deletions\.enabled = true.*kafka-topics\.sh .*--delete --topic REMOTE_TOPIC/)
  for (const topic of topics) assert.ok(kept[1]!.includes(`A.${topic}`), kept[1])
  // (counted as deleted only after the 12 refreshes: no "was deleted" before the error, one warning in all)
  const before = kmirror.stderr.slice(0, kmirror.stderr.lastIndexOf('\n', kmirror.stderr.indexOf(kept[1]!)) + 1)
  for (const topic of topics) assert.equal(logLines({ stderr: before } as KmirrorProcess, topic, /^source topic .* does not exist any more; it counts as deleted if the next refresh/).length, 0)
  assert.equal(kmirror.stderr.split('\n').filter(l => l.includes('answers that 3 of the 3 topics')).length, 1)

  // And the remote topics are still there with every record
  const listed = await listTopics('target')
  for (const topic of topics) {
    assert.ok(listed.includes(`A.${topic}`), `A.${topic} kept`)
    assert.deepEqual(await endOffsets('target', `A.${topic}`), [10n])
  }
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0, kmirror.stderr.slice(-3000))
})
