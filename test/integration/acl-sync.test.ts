/**
 * ACL sync between two clusters that run the standard authorizer (secure -> secure2): topic and group ACLs of A
 * reach B as read-only copies, renamed for the remote topics, and leave B when removed on A; a sync kmirror has no permission for fails, is
 * retried, and never stops replication. Between plain clusters (no authorizer) it has nothing to do.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { aclKey, type AclBinding } from '../../src/kafka/acls.ts'
import { aclsOf, createAcls, deleteAcls, deleteAclsOf } from '../helpers/acls.ts'
import { ensureClusters, getCluster } from '../helpers/clusters.ts'
import { createTopic, deleteTopics, endOffsets, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { runPrintedTool, secureAdminProperties } from '../helpers/printed-tool.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function binding (permission: AclBinding['permission'], operation: AclBinding['operation'], resourceType: AclBinding['resourceType'], resourceName: string, principal: string, patternType: AclBinding['patternType'] = 'literal'): AclBinding {
  return { resourceType, resourceName, patternType, principal, host: '*', operation, permission }
}

const sorted = (bindings: readonly AclBinding[]): AclBinding[] => [...bindings].sort((a, b) => aclKey(a).localeCompare(aclKey(b)))

/** Lines of kmirror's JSON log with this message. */
function logLines (kmirror: KmirrorProcess, msg: string): Record<string, unknown>[] {
  return kmirror.stderr.split('\n').filter(l => l.includes(`"msg":"${msg}"`)).map(l => JSON.parse(l) as Record<string, unknown>)
}

/** Waits until the sync-acls job has finished `runs` more runs than now. */
async function waitForSyncRuns (kmirror: KmirrorProcess, runs: number): Promise<void> {
  const from = logLines(kmirror, 'ACL sync done').length
  await waitFor(() => logLines(kmirror, 'ACL sync done').length >= from + runs, { timeoutMs: 20_000, message: `${runs} more ACL sync runs` })
}

test('topic and group ACLs on A arrive on B renamed and read-only; WRITE never, ALL as READ, DENY as is, excluded topics not', { timeout: 120_000 }, async t => {
  await ensureClusters(['secure', 'secure2'])
  const u = uniqueName('acl')
  const reader = `User:${u}-reader`
  const all = `User:${u}-all`
  const denied = `User:${u}-denied`
  const writer = `User:${u}-writer`
  const principals = [reader, all, denied, writer]
  t.after(() => deleteAclsOf('secure2', principals))

  // Given ACLs on A for principals of this test only
  const lit = `${u}-lit`
  const source = [
    binding('allow', 'read', 'topic', lit, reader),
    binding('allow', 'describe-configs', 'topic', lit, reader),
    binding('allow', 'write', 'topic', lit, writer),
    binding('allow', 'create', 'topic', lit, writer),
    binding('allow', 'all', 'topic', lit, all),
    binding('deny', 'read', 'topic', lit, denied),
    binding('deny', 'write', 'topic', lit, denied),
    binding('allow', 'describe', 'topic', `${u}-pre`, reader, 'prefixed'),
    binding('allow', 'read', 'topic', `${u}-excl`, reader),
    binding('allow', 'read', 'group', `${u}-group`, reader),
    binding('allow', 'describe', 'group', `${u}-gp`, reader, 'prefixed'),
    binding('allow', 'delete', 'group', `${u}-group`, writer),
    binding('allow', 'read', 'group', `other-${u}`, reader)
  ]
  await createAcls('secure', source, t)

  // When kmirror runs A->B as the super user, for this test's topics (but the excluded one) and groups only:
  // group ACLs are scoped by `groups`, not by `topics`, and other tests' ACLs live on A too
  const config = writeTempFile(mm2Properties({
    source: 'secure',
    target: 'secure2',
    extra: [`A->B.topics = ${u}-.*`, `A->B.topics.exclude = ${u}-excl.*`, `A->B.groups = ${u}-.*`, 'sync.topic.acls.interval.seconds = 1']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })

  // Then B holds exactly the read-only, renamed copies, and nothing for the excluded topic or group
  const expected = sorted([
    binding('allow', 'read', 'topic', `A.${lit}`, reader),
    binding('allow', 'describe-configs', 'topic', `A.${lit}`, reader),
    binding('allow', 'read', 'topic', `A.${lit}`, all),
    binding('deny', 'read', 'topic', `A.${lit}`, denied),
    binding('deny', 'write', 'topic', `A.${lit}`, denied),
    binding('allow', 'describe', 'topic', `A.${u}-pre`, reader, 'prefixed'),
    binding('allow', 'read', 'group', `${u}-group`, reader),
    binding('allow', 'describe', 'group', `${u}-gp`, reader, 'prefixed')
  ])
  await waitFor(async () => {
    const onB = sorted(await aclsOf('secure2', principals))
    return { done: JSON.stringify(onB) === JSON.stringify(expected), state: onB }
  }, { timeoutMs: 60_000, message: 'the copies of A\'s ACLs on B' })
  await waitForSyncRuns(kmirror, 2)
  assert.deepEqual(sorted(await aclsOf('secure2', principals)), expected)
  assert.equal(logLines(kmirror, 'created ACL on the target').filter(l => String(l['acl']).includes(u)).length, expected.length, 'each binding created once')

  // When an ACL is added on A while kmirror runs, and another is removed from A
  const late = binding('allow', 'read', 'topic', `${u}-late`, reader)
  await createAcls('secure', [late], t)
  await deleteAcls('secure', [source[0]!])

  // Then the new one arrives within the interval, and the copy of the removed one, which kmirror created, is
  // removed from B (MM2 would leave it; acl-sync-safety.test.ts: hand-made bindings stay)
  const removedCopy = aclKey(binding('allow', 'read', 'topic', `A.${lit}`, reader))
  const afterChange = sorted([...expected.filter(b => aclKey(b) !== removedCopy), binding('allow', 'read', 'topic', `A.${u}-late`, reader)])
  await waitFor(async () => JSON.stringify(sorted(await aclsOf('secure2', principals))) === JSON.stringify(afterChange), { timeoutMs: 20_000, message: 'the ACL added on A reaches B, the removed one leaves B' })
  await waitForSyncRuns(kmirror, 2)
  assert.deepEqual(sorted(await aclsOf('secure2', principals)), afterChange)

  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('without permission to read A\'s ACLs the sync fails with the grant to add, is retried, and replication goes on', { timeout: 120_000 }, async t => {
  await ensureClusters(['secure', 'secure2'])
  // Given kmirror reads A as bob, who may read one topic and nothing else
  const topic = uniqueName('acl-data')
  await createTopic('secure', topic, { partitions: 1, t })
  t.after(() => deleteTopics('secure2', [`A.${topic}`]))
  await createAcls('secure', ['read', 'describe-configs'].map(op => binding('allow', op as AclBinding['operation'], 'topic', topic, 'User:bob')), t)
  const record = (i: number): TestRecord => ({ topic, partition: 0, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })
  await produce('secure', Array.from({ length: 100 }, (_, i) => record(i)))
  const bob = { ...getCluster('secure'), sasl: { mechanism: 'PLAIN' as const, username: 'bob', password: 'bob-secret' } }
  const config = writeTempFile(mm2Properties({
    source: bob,
    target: 'secure2',
    extra: [`A->B.topics = ${topic}`, 'offset-syncs.topic.location = target', 'sync.topic.acls.interval.seconds = 1']
  }), '.properties', t)

  // When kmirror runs (at debug: a failure repeating the one before is logged there)
  const kmirror = spawnKmirror(['run', config], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })
  const copied = (n: bigint) => async () => (await endOffsets('secure2', `A.${topic}`).catch(() => [0n]))[0] === n

  // Then the ACL sync fails with the fix, again and again, while records keep arriving: a warning the first time,
  // the same failure again at debug (a reminder at warn comes only every 5 minutes)
  await waitFor(copied(100n), { timeoutMs: 60_000, message: 'the first 100 records copied' })
  const failures = (): Record<string, unknown>[] => logLines(kmirror, 'job failed; it will run again').filter(l => l['job'] === 'sync-acls')
  await waitFor(() => failures().length >= 2, { timeoutMs: 30_000, message: 'the ACL sync failed twice' })
  assert.deepEqual(failures().slice(0, 2).map(l => [l['level'], l['failedRuns']]), [['warn', 1], ['debug', 2]])
  const err = failures()[0]!['err'] as { message: string }
  assert.match(err.message, /ACL sync cannot read ACLs on cluster A: grant DESCRIBE on the cluster resource of A to User:bob/)
  assert.ok(err.message.includes(`(kafka-acls.sh --bootstrap-server ${getCluster('secure').bootstrap} --command-config ADMIN_PROPERTIES_FILE_OF_A ` +
    '--add --allow-principal User:bob --operation Describe --cluster)'), err.message)
  await produce('secure', Array.from({ length: 100 }, (_, i) => record(100 + i)))
  await waitFor(copied(200n), { timeoutMs: 30_000, message: 'the next 100 records copied despite the failing job' })
  assert.equal(kmirror.exitStatus, null)

  // When the operator runs that kafka-acls.sh line as printed, with the admin's client properties for its placeholder
  const describeCluster = binding('allow', 'describe', 'cluster', 'kafka-cluster', 'User:bob')
  t.after(async () => {
    await deleteAcls('secure', [describeCluster])
    await deleteAcls('secure2', (await aclsOf('secure2', ['User:bob'])).filter(b => b.resourceName === `A.${topic}`))
  })
  await runPrintedTool(err.message, { ADMIN_PROPERTIES_FILE_OF_A: secureAdminProperties(t) })
  // Then the next run succeeds, saying so once, and bob's READ on the topic reaches B on its remote topic
  await waitFor(() => logLines(kmirror, 'job succeeded again').some(l => l['job'] === 'sync-acls'), { timeoutMs: 20_000, message: 'the ACL sync succeeded again' })
  await waitFor(async () => (await aclsOf('secure2', ['User:bob'])).some(b => aclKey(b) === aclKey(binding('allow', 'read', 'topic', `A.${topic}`, 'User:bob'))),
    { timeoutMs: 20_000, message: 'bob\'s READ copied to B once the sync may read A\'s ACLs' })

  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('between clusters without authorizer the sync says so once at info and does not fail', { timeout: 60_000 }, async t => {
  // Given the plain clusters, which run no authorizer
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', extra: [`A->B.topics = ${uniqueName('acl-none')}`, 'sync.topic.acls.interval.seconds = 1']
  }), '.properties', t)

  // When kmirror runs three ACL syncs
  const kmirror = spawnKmirror(['run', config], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })
  await waitForSyncRuns(kmirror, 3)

  // Then it said once that there is nothing to do, and no run failed
  assert.deepEqual(logLines(kmirror, 'no ACL authorizer is configured on cluster A and B: ACL sync has nothing to do').map(l => l['level']), ['info'])
  assert.equal(logLines(kmirror, 'job failed; it will run again').filter(l => l['job'] === 'sync-acls').length, 0)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})
