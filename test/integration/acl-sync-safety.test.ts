/**
 * ACL sync never widens access and removes what it created (secure -> secure2, standard authorizer): an ALLOW that
 * a source DENY narrows is not copied when that DENY cannot be copied whole (literal and prefixed
 * `DENY DESCRIBE User:*`), with a warning; a binding kmirror created is removed from the target once its source
 * binding is revoked or narrowed, also across a restart; a hand-made identical binding on the target stays.
 * A topic excluded from the flow keeps its DENY on the target while a copied prefix ALLOW covers its copy.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { aclKey, type AclBinding } from '../../src/kafka/acls.ts'
import { AclSkipReasons } from '../../src/metadata/acl-sync.ts'
import { aclsOf, createAcls, deleteAcls } from '../helpers/acls.ts'
import { ensureClusters, getCluster } from '../helpers/clusters.ts'
import { createTopic, deleteTopics, endOffsets, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function binding (permission: AclBinding['permission'], operation: AclBinding['operation'], resourceName: string, principal: string, patternType: AclBinding['patternType'] = 'literal'): AclBinding {
  return { resourceType: 'topic', resourceName, patternType, principal, host: '*', operation, permission }
}

const sorted = (bindings: readonly AclBinding[]): AclBinding[] => [...bindings].sort((a, b) => aclKey(a).localeCompare(aclKey(b)))

function logLines (kmirror: KmirrorProcess, msg: string | RegExp): Record<string, unknown>[] {
  return kmirror.stderr.split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l) as Record<string, unknown>)
    .filter(l => (typeof msg === 'string' ? l['msg'] === msg : msg.test(String(l['msg']))))
}

async function waitForSyncRuns (kmirror: KmirrorProcess, runs: number): Promise<void> {
  const from = logLines(kmirror, 'ACL sync done').length
  await waitFor(() => logLines(kmirror, 'ACL sync done').length >= from + runs, { timeoutMs: 30_000, message: `${runs} more ACL sync runs` })
}

test('a DENY kmirror cannot copy keeps the ALLOWs it narrows off the target; revoked and narrowed copies are removed, hand-made ones stay', { timeout: 150_000 }, async t => {
  await ensureClusters(['secure', 'secure2'])
  const u = uniqueName('aclsafe')
  // A source alias of this test only: its ownership topic mm2-acls.<alias>.internal is this test's alone
  const alias = `S${u.replaceAll('-', '')}`
  // bob, a real SASL user of both clusters, so that the test can read as him (other files use bob too, one at a time)
  const reader = 'User:bob'
  const [lit, pfx, ok, gone, kept] = ['lit', 'pfx-1', 'ok', 'gone', 'kept'].map(s => `${u}-${s}`) as [string, string, string, string, string]
  const remote = (topic: string): string => `${alias}.${topic}`
  const mine = (b: AclBinding): boolean => b.resourceName.includes(u)
  const everyone = (b: AclBinding): boolean => b.principal === 'User:*' && mine(b)
  const onTarget = async (): Promise<AclBinding[]> => sorted([...(await aclsOf('secure2', [reader])).filter(mine), ...(await aclsOf('secure2', ['User:*'])).filter(everyone)])
  t.after(async () => {
    await deleteAcls('secure2', (await aclsOf('secure2', [reader])).filter(mine))
    await deleteAcls('secure2', (await aclsOf('secure2', ['User:*'])).filter(everyone))
    await deleteTopics('secure2', [`mm2-acls.${alias}.internal`, remote(lit), remote(gone)])
  })

  // Given on A: an ALLOW narrowed by a literal DENY DESCRIBE User:*, one narrowed by a prefixed one, one with a
  // DENY READ User:* (copyable whole), one to revoke later, and one a person also granted by hand on B
  const source = {
    litAllow: binding('allow', 'read', lit, reader),
    litDeny: binding('deny', 'describe', lit, 'User:*'),
    pfxAllow: binding('allow', 'read', pfx, reader),
    pfxDeny: binding('deny', 'describe', `${u}-pfx`, 'User:*', 'prefixed'),
    okAllow: binding('allow', 'read', ok, reader),
    okDeny: binding('deny', 'read', ok, 'User:*'),
    goneAllow: binding('allow', 'read', gone, reader),
    keptAllow: binding('allow', 'read', kept, reader)
  }
  await createAcls('secure', Object.values(source), t)
  // and two of those topics with one record each, to read as bob on B
  for (const topic of [lit, gone]) {
    await createTopic('secure', topic, { partitions: 1, t })
    await produce('secure', [{ topic, partition: 0, key: Buffer.from('k'), value: Buffer.from('v'), headers: [], timestamp: TIMESTAMP_BASE }])
  }
  const handMade = binding('allow', 'read', remote(kept), reader)
  await createAcls('secure2', [handMade], t)
  const config = writeTempFile(mm2Properties({
    source: 'secure', target: 'secure2', sourceAlias: alias,
    extra: [`${alias}->B.topics = ${u}-.*`, 'sync.topic.acls.interval.seconds = 1', 'emit.heartbeats.enabled = false', 'emit.checkpoints.enabled = false']
  }), '.properties', t)

  // When kmirror runs
  const first = spawnKmirror(['run', config], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })

  // Then B holds the copies that narrow nothing, never the narrowed ALLOWs, and the hand-made binding
  const expected = sorted([
    binding('allow', 'read', remote(ok), reader),
    binding('deny', 'read', remote(ok), 'User:*'),
    binding('allow', 'read', remote(gone), reader),
    handMade
  ])
  await waitFor(async () => { const acls = await onTarget(); return { done: JSON.stringify(acls) === JSON.stringify(expected), state: acls } }, { timeoutMs: 60_000, message: 'the safe copies on B' })
  await waitForSyncRuns(first, 2)
  assert.deepEqual(await onTarget(), expected)
  const warnings = logLines(first, /is not copied: the source's DENY/)
  assert.deepEqual(warnings.map(w => [w['level'], w['acl'], w['deny']]).sort(), [
    ['warn', `ALLOW READ on topic ${lit} for ${reader}`, `DENY DESCRIBE on topic ${lit} for User:*`],
    ['warn', `ALLOW READ on topic ${pfx} for ${reader}`, `DENY DESCRIBE on topic prefix ${u}-pfx for User:*`]
  ], 'each narrowed ALLOW warned about once')
  // and bob, who cannot use `lit` on A, cannot read its copy on B either, while he reads `gone`'s copy
  await waitFor(async () => (await endOffsets('secure2', remote(lit)).catch(() => [0n]))[0] === 1n && (await endOffsets('secure2', remote(gone)).catch(() => [0n]))[0] === 1n, { timeoutMs: 30_000, message: 'both topics copied' })
  const bob = { ...getCluster('secure2'), sasl: { mechanism: 'PLAIN' as const, username: 'bob', password: 'bob-secret' } }
  assert.deepEqual((await readCommitted(bob, remote(gone), 0)).map(r => r.value?.toString()), ['v'])
  await assert.rejects(readCommitted(bob, remote(lit), 0), /Topic authorization failed/)
  first.kill('SIGTERM')
  assert.equal((await first.waitForExit(15_000)).code, 0)

  // When, while kmirror is stopped, A revokes two grants and narrows a third with a DENY DESCRIBE User:*
  await deleteAcls('secure', [source.goneAllow, source.keptAllow])
  await createAcls('secure', [binding('deny', 'describe', ok, 'User:*')], t)

  // Then `kmirror plan` shows the removals of what kmirror created, and only those
  const plan = spawnKmirror(['plan', config], { t })
  assert.equal((await plan.waitForExit(60_000)).code, 1, plan.stdout + plan.stderr)
  const removals = plan.stdout.split('\n').filter(l => l.startsWith('  - ACL'))
  const narrowedNow = `its source binding ALLOW READ on topic ${ok} for ${reader} is no longer copied: ${AclSkipReasons.NARROWED_BY_UNCOPIED_DENY} (DENY DESCRIBE on topic ${ok} for User:*)`
  assert.deepEqual(removals.sort(), [
    `  - ACL ALLOW READ on topic ${remote(gone)} for ${reader} (kmirror created it; its source binding is gone)`,
    `  - ACL ALLOW READ on topic ${remote(ok)} for ${reader} (kmirror created it; ${narrowedNow})`
  ])
  assert.equal(plan.stdout.split('\n').filter(l => l.startsWith('  ! ACL ALLOW READ')).length, 3, plan.stdout)

  // And after a restart kmirror removes exactly them (it remembers across restarts what it created)
  const second = spawnKmirror(['run', config], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })
  const after = sorted([binding('deny', 'read', remote(ok), 'User:*'), handMade])
  await waitFor(async () => { const acls = await onTarget(); return { done: JSON.stringify(acls) === JSON.stringify(after), state: acls } }, { timeoutMs: 60_000, message: 'the revoked and narrowed copies removed from B' })
  await waitForSyncRuns(second, 2)
  assert.deepEqual(await onTarget(), after)
  assert.deepEqual(logLines(second, /^removed ACL from the target/).map(l => [l['acl'], l['msg']]).sort(), [
    [`ALLOW READ on topic ${remote(gone)} for ${reader}`, 'removed ACL from the target: kmirror created it and its source binding is gone'],
    [`ALLOW READ on topic ${remote(ok)} for ${reader}`, `removed ACL from the target: kmirror created it and ${narrowedNow}`]
  ])
  second.kill('SIGTERM')
  assert.equal((await second.waitForExit(15_000)).code, 0)
})

test('a topic excluded from the flow keeps its DENY on the target while a copied prefix ALLOW covers its remote topic', { timeout: 150_000 }, async t => {
  await ensureClusters(['secure', 'secure2'])
  const u = uniqueName('aclexcl')
  const alias = `S${u.replaceAll('-', '')}`
  const reader = 'User:bob'
  const [open, secret] = [`${u}-open`, `${u}-secret`]
  const remote = (topic: string): string => `${alias}.${topic}`
  const mine = (b: AclBinding): boolean => b.resourceName.includes(u)
  const onTarget = async (): Promise<AclBinding[]> => sorted((await aclsOf('secure2', [reader])).filter(mine))
  t.after(async () => {
    await deleteAcls('secure2', (await aclsOf('secure2', [reader])).filter(mine))
    await deleteTopics('secure2', [`mm2-acls.${alias}.internal`, remote(open), remote(secret)])
  })
  // Given on A: bob may read every topic under the test's prefix but the secret one, each with one record
  await createAcls('secure', [binding('allow', 'read', `${u}-`, reader, 'prefixed'), binding('deny', 'read', secret, reader)], t)
  for (const topic of [open, secret]) {
    await createTopic('secure', topic, { partitions: 1, t })
    await produce('secure', [{ topic, partition: 0, key: Buffer.from('k'), value: Buffer.from('v'), headers: [], timestamp: TIMESTAMP_BASE }])
  }
  const configWith = (...lines: string[]): string => writeTempFile(mm2Properties({
    source: 'secure', target: 'secure2', sourceAlias: alias,
    extra: [`${alias}->B.topics = ${u}-.*`, ...lines, 'sync.topic.acls.interval.seconds = 1', 'emit.heartbeats.enabled = false', 'emit.checkpoints.enabled = false']
  }), '.properties', t)
  // and both copied by kmirror with the ACLs: the prefix ALLOW and the DENY on the secret topic's copy
  const first = spawnKmirror(['run', configWith()], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })
  const expected = sorted([binding('allow', 'read', remote(`${u}-`), reader, 'prefixed'), binding('deny', 'read', remote(secret), reader)])
  await waitFor(async () => { const acls = await onTarget(); return { done: JSON.stringify(acls) === JSON.stringify(expected), state: acls } }, { timeoutMs: 60_000, message: 'the ALLOW and the DENY on B' })
  await waitFor(async () => (await endOffsets('secure2', remote(secret)).catch(() => [0n]))[0] === 1n, { timeoutMs: 30_000, message: 'the secret topic copied' })
  first.kill('SIGTERM')
  assert.equal((await first.waitForExit(15_000)).code, 0)

  // When the secret topic is excluded from the flow (its copy stays on B, with its record) and kmirror runs again
  const second = spawnKmirror(['run', configWith(`${alias}->B.topics.exclude = ${secret}`)], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })
  await waitForSyncRuns(second, 3)

  // Then the DENY stays beside the prefix ALLOW (before the fix it was removed as "its source binding is gone"),
  // and bob still cannot read the secret topic's copy on B, as on A
  assert.deepEqual(await onTarget(), expected)
  assert.deepEqual(logLines(second, /^removed ACL from the target/), [])
  const bob = { ...getCluster('secure2'), sasl: { mechanism: 'PLAIN' as const, username: 'bob', password: 'bob-secret' } }
  assert.deepEqual((await readCommitted(bob, remote(open), 0)).map(r => r.value?.toString()), ['v'])
  await assert.rejects(readCommitted(bob, remote(secret), 0), /Topic authorization failed/)
  second.kill('SIGTERM')
  assert.equal((await second.waitForExit(15_000)).code, 0)
})
