/**
 * Exactly-once keeps faults to one partition (invariant 22): WRITE denied on one remote topic makes the
 * transaction coordinator refuse that partition (AddPartitionsToTxn TOPIC_AUTHORIZATION_FAILED); it is set aside
 * and reported while the other topic's rounds commit, and after the re-grant both are exact copies for a
 * read_committed reader.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AclBinding } from '../../src/kafka/acls.ts'
import { createAcls, deleteAcls } from '../helpers/acls.ts'
import { ensureClusters, getCluster } from '../helpers/clusters.ts'
import { createTopic, deleteTopics, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

interface StatusDocument { flows: { partitions: { topic: string, failure: { error: string, cluster: string } | null }[] }[] }

function records (topic: string, from: number, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({ topic, partition: 0, key: Buffer.from(`k${from + i}`), value: Buffer.from(`v${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i) }))
}

test('exactly-once: WRITE denied on one remote topic sets its partition aside, the other commits, and the re-grant ends exact', { timeout: 180_000 }, async t => {
  await ensureClusters(['secure', 'target'])
  // Given kmirror in exactly-once mode writing to the authorizer cluster as alice (wildcard ALLOWs, transactional ids included)
  const [kept, revoked] = [uniqueName('eosf-kept'), uniqueName('eosf-revoked')]
  await Promise.all([createTopic('target', kept, { partitions: 1, t }), createTopic('target', revoked, { partitions: 1, t })])
  t.after(() => deleteTopics('secure', [`A.${kept}`, `A.${revoked}`]))
  const allow = (resourceType: AclBinding['resourceType'], resourceName: string): AclBinding =>
    ({ resourceType, resourceName, patternType: 'literal', principal: 'User:alice', host: '*', operation: 'all', permission: 'allow' })
  await createAcls('secure', [allow('topic', '*'), allow('group', '*'), allow('cluster', 'kafka-cluster'), allow('transactional-id', '*')], t)
  await produce('target', [...records(kept, 0, 50), ...records(revoked, 0, 50)])
  const alice = { ...getCluster('secure'), sasl: { mechanism: 'PLAIN' as const, username: 'alice', password: 'alice-secret' } }
  const config = writeTempFile(mm2Properties({
    source: 'target', target: alice,
    extra: [`A->B.topics = ${kept}|${revoked}`, 'B.exactly.once.source.support = enabled', 'emit.checkpoints.enabled = false', 'sync.topic.acls.enabled = false', 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const base = `http://127.0.0.1:${(await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 60_000))[1]}`
  const committed = async (topic: string): Promise<number> => (await readCommitted(alice, topic, 0).catch(() => [])).length
  await waitFor(async () => ({ done: await committed(`A.${kept}`) === 50 && await committed(`A.${revoked}`) === 50, state: kmirror.stderr.slice(-2000) }), { timeoutMs: 60_000, message: 'first records committed' })

  // When WRITE on one remote topic is denied and both source topics get more records
  const deny: AclBinding = { resourceType: 'topic', resourceName: `A.${revoked}`, patternType: 'literal', principal: 'User:alice', host: '*', operation: 'write', permission: 'deny' }
  await createAcls('secure', [deny], t)
  await produce('target', [...records(kept, 50, 50), ...records(revoked, 50, 50)])

  // Then the other topic's rounds commit, and the refused partition is set aside and reported on the target side
  await waitFor(async () => ({ done: await committed(`A.${kept}`) === 100, state: kmirror.stderr.slice(-2000) }), { timeoutMs: 30_000, message: 'the other topic keeps committing' })
  await waitFor(async () => ((await (await fetch(`${base}/status`)).json()) as StatusDocument).flows[0]?.partitions.some(p => p.topic === revoked && p.failure !== null) === true,
    { timeoutMs: 30_000, message: 'the failing partition in /status' })
  const failing = ((await (await fetch(`${base}/status`)).json()) as StatusDocument).flows[0]!.partitions.find(p => p.topic === revoked)!
  assert.equal(failing.failure?.error, 'TOPIC_AUTHORIZATION_FAILED')
  assert.equal(failing.failure?.cluster, 'B')
  assert.equal(await committed(`A.${revoked}`), 50)

  // When the DENY is removed, Then both remote topics are exact copies for read_committed
  await deleteAcls('secure', [deny])
  await waitFor(async () => await committed(`A.${revoked}`) === 100, { timeoutMs: 60_000, message: 'the refused topic copied after the re-grant' })
  for (const topic of [kept, revoked]) assertSamePartition(await readCommitted('target', topic, 0), await readCommitted(alice, `A.${topic}`, 0), topic)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})
