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
