/**
 * The least-privilege ACLs of docs/operations.md are exact: kmirror runs as the non-super user bob on both
 * authorizer clusters (secure -> secure2) holding exactly the table's ACLs (test/helpers/least-privilege.ts), with
 * every feature on, starts, restarts and serves the commands; with one ACL of the table missing it says which.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test, type TestContext } from 'node:test'
import type { AclBinding } from '../../src/kafka/acls.ts'
import { aclsOf, createAcls, deleteAcls, deleteAclsOf } from '../helpers/acls.ts'
import { ensureClusters, getCluster, type ClusterName } from '../helpers/clusters.ts'
import { commitOffsets, committedOffsets } from '../helpers/groups.ts'
import { createTopic, deleteTopics, endOffsets, produce, TIMESTAMP_BASE, topicConfig, type TestRecord } from '../helpers/kafka.ts'
import { leastPrivilegeBindings, type LeastPrivilegeAcl, type Placeholders } from '../helpers/least-privilege.ts'
import { runPlan } from '../helpers/drills.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const BOB = 'User:bob'
const asBob = (name: ClusterName) => ({ ...getCluster(name), sasl: { mechanism: 'PLAIN' as const, username: 'bob', password: 'bob-secret' } })

interface Setup {
  readonly p: Placeholders
  readonly topic: string
  readonly group: string
  readonly config: string
}

/** A topic with 10 records and a retention to sync, a group that committed 3 and 2, bob's ACLs, and the config. */
async function setup (t: TestContext, leaveOut?: (row: LeastPrivilegeAcl, op: AclBinding['operation']) => boolean): Promise<Setup> {
  await ensureClusters(['secure', 'secure2'])
  const u = uniqueName('lp').replaceAll('-', '')
  const p = { source: `S${u}`, target: `T${u}`, topics: `${u}t`, groups: `${u}g` }
  const topic = `${p.topics}-1`
  const group = `${p.groups}-1`
  // bob is shared by the tests of this file only (acl-sync.test.ts uses it on `secure` for one topic)
  await Promise.all([deleteAclsOf('secure', [BOB]), deleteAclsOf('secure2', [BOB])])
  t.after(async () => {
    await Promise.all([deleteAclsOf('secure', [BOB]), deleteAclsOf('secure2', [BOB, `User:${u}-reader`])])
    await deleteTopics('secure2', [`${p.source}.${topic}`, `${p.source}.checkpoints.internal`, `${p.source}.heartbeats`, `mm2-offsets.${p.source}.internal`, `mm2-offset-history.${p.source}.internal`, `mm2-acls.${p.source}.internal`])
    await deleteTopics('secure', [`mm2-offset-syncs.${p.target}.internal`])
  })
  // At-least-once: without the exactly-once rows (least-privilege-eos.test.ts grants them)
  const granted = (row: LeastPrivilegeAcl, op: AclBinding['operation']): boolean => row.feature === 'exactly-once' || (leaveOut?.(row, op) ?? false)
  await createAcls('secure', leastPrivilegeBindings('source', BOB, p, granted))
  await createAcls('secure2', leastPrivilegeBindings('target', BOB, p, granted))
  await createTopic('secure', topic, { partitions: 2, configs: { 'retention.ms': '123456789' }, t })
  await produce('secure', records(topic, 0, 10))
  await commitOffsets('secure', group, [{ topic, partition: 0, offset: 3 }, { topic, partition: 1, offset: 2 }])
  // A grant of another principal on A, for ACL sync to copy
  await createAcls('secure', [{ resourceType: 'topic', resourceName: topic, patternType: 'literal', principal: `User:${u}-reader`, host: '*', operation: 'read', permission: 'allow' }], t)
  const text = mm2Properties({
    source: asBob('secure'), target: asBob('secure2'), sourceAlias: p.source, targetAlias: p.target,
    extra: [
      `${p.source}->${p.target}.topics = ${p.topics}.*`, `${p.source}->${p.target}.groups = ${p.groups}.*`,
      'refresh.topics.interval.seconds = 1', 'refresh.groups.interval.seconds = 1', 'sync.topic.configs.interval.seconds = 1', 'sync.topic.acls.interval.seconds = 1',
      'emit.checkpoints.interval.seconds = 1', 'sync.group.offsets.enabled = true', 'sync.group.offsets.interval.seconds = 1'
    ]
  }).replace('heartbeats.replication.enabled = false', 'heartbeats.replication.enabled = true')
  return { p, topic, group, config: writeTempFile(text, '.properties', t) }
}

function records (topic: string, from: number, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({ topic, partition: (from + i) % 2, key: Buffer.from(`k${from + i}`), value: Buffer.from(`v${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i) }))
}

/**
 * Kafka errors a healthy cluster answers now and then (a coordinator loading a fresh `__consumer_offsets`
 * partition, a leader moving, a slow answer on a loaded machine): a warning caused by these alone is not about grants.
 */
const ROUTINE_KAFKA_ERRORS = new Set(['COORDINATOR_LOAD_IN_PROGRESS', 'COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR', 'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'REQUEST_TIMED_OUT'])

/** The Kafka error names an error and its causes carry (`details.kafkaErrors`). */
function kafkaErrorsOf (err: unknown): string[] {
  if (typeof err !== 'object' || err === null) return []
  const { details, cause } = err as { details?: { kafkaErrors?: unknown }, cause?: unknown }
  const own = Array.isArray(details?.kafkaErrors) ? details.kafkaErrors.filter((n): n is string => typeof n === 'string') : []
  return [...own, ...kafkaErrorsOf(cause)]
}

/**
 * kmirror's warnings and errors (JSON log lines at level warn and above), but for warnings caused only by routine
 * broker states (above). A line that does not parse (cut at the end of the output so far) is kept.
 */
function problems (kmirror: KmirrorProcess): string[] {
  return kmirror.stderr.split('\n').filter(l => /^\{"level":"(warn|error|fatal)"/.test(l)).filter(l => {
    let entry: { level: string, err?: unknown }
    try {
      entry = JSON.parse(l) as { level: string, err?: unknown }
    } catch {
      return true
    }
    const names = kafkaErrorsOf(entry.err)
    return entry.level !== 'warn' || names.length === 0 || !names.every(n => ROUTINE_KAFKA_ERRORS.has(n))
  })
}

async function command (args: readonly string[], t: TestContext): Promise<{ code: number | null, out: string }> {
  const p = spawnKmirror(args, { t })
  const exit = await p.waitForExit(60_000)
  return { code: exit.code, out: p.stdout + p.stderr }
}

test('as a non-super user with exactly the documented ACLs, kmirror runs every feature, restarts, and serves status, plan and failover', { timeout: 180_000 }, async t => {
  const { p, topic, group, config } = await setup(t)
  const remote = `${p.source}.${topic}`
  const endOf = async (cluster: ClusterName, name: string): Promise<bigint[]> => endOffsets(cluster, name).catch(() => [])

  // When kmirror runs as bob
  const first = spawnKmirror(['run', config], { t })

  // Then it copies every record exactly, emits offset syncs, checkpoints and heartbeats, syncs the group's offsets,
  // the topic config and the ACL, with no warning at all
  await waitFor(async () => (await endOf('secure2', remote)).join() === '5,5', { timeoutMs: 60_000, message: 'the 10 records copied' })
  await waitFor(async () => (await committedOffsets('secure2', group)).map(o => o.offset).join() === '3,2', { timeoutMs: 30_000, message: `${group}'s offsets synced to the target` })
  await waitFor(async () => (await endOf('secure2', `${p.source}.checkpoints.internal`))[0]! > 0n, { timeoutMs: 30_000, message: 'checkpoints written' })
  await waitFor(async () => (await endOf('secure', `mm2-offset-syncs.${p.target}.internal`))[0]! > 0n, { timeoutMs: 30_000, message: 'offset syncs written' })
  await waitFor(async () => (await endOf('secure2', 'heartbeats'))[0]! > 0n && (await endOf('secure', 'heartbeats'))[0]! > 0n, { timeoutMs: 30_000, message: 'heartbeats on both clusters' })
  await waitFor(async () => (await endOf('secure2', `${p.source}.heartbeats`))[0]! > 0n, { timeoutMs: 30_000, message: 'the source\'s heartbeats replicated' })
  await waitFor(async () => (await topicConfig('secure2', remote))['retention.ms'] === '123456789', { timeoutMs: 30_000, message: 'the topic config synced' })
  await waitFor(async () => (await aclsOf('secure2', [`User:${p.source.slice(1)}-reader`])).some(b => b.resourceName === remote), { timeoutMs: 30_000, message: 'the ACL copied' })
  for (let partition = 0; partition < 2; partition++) assertSamePartition(await readCommitted('secure', topic, partition), await readCommitted('secure2', remote, partition), `${topic}-${partition}`)
  assert.deepEqual(problems(first), [])
  first.kill('SIGTERM')
  assert.equal((await first.waitForExit(15_000)).code, 0)

  // When it restarts (now reading its own internal topics) and more records arrive
  const second = spawnKmirror(['run', config], { t })
  await produce('secure', records(topic, 10, 10))
  await waitFor(async () => (await endOf('secure2', remote)).join() === '10,10', { timeoutMs: 60_000, message: 'the next 10 records copied after the restart' })
  for (let partition = 0; partition < 2; partition++) assertSamePartition(await readCommitted('secure', topic, partition), await readCommitted('secure2', remote, partition), `${topic}-${partition} after restart`)
  assert.deepEqual(problems(second), [])
  second.kill('SIGTERM')
  assert.equal((await second.waitForExit(15_000)).code, 0)

  // And the commands work with the same ACLs
  const status = await command(['status', config, '--clusters', p.target], t)
  assert.equal(status.code, 0, status.out)
  const plan = await command(['plan', config], t)
  assert.equal(plan.code, 0, plan.out)
  const failover = await command(['failover', config, '--from', p.source, '--to', p.target, '--group', group], t)
  assert.equal(failover.code, 0, failover.out)
  assert.match(failover.out, /2 already there: nothing to do/)
  // With the source unreachable, failover reads the checkpoints on the target
  const unreachable = writeTempFile(readFileSync(config, 'utf8').replace(/^(\S+\.bootstrap\.servers = ).*$/m, '$1127.0.0.1:1'), '.properties', t)
  const blind = await command(['failover', unreachable, '--from', p.source, '--to', p.target, '--group', group, '--timeout', '3'], t)
  assert.equal(blind.code, 0, blind.out)
  assert.match(blind.out, /checkpoints/)
  // and, READ on the checkpoints topic revoked, exits 3 naming the grant (no plan from nothing)
  const checkpoints = `${p.source}.checkpoints.internal`
  await deleteAcls('secure2', [{ resourceType: 'topic', resourceName: checkpoints, patternType: 'literal', principal: BOB, host: '*', operation: 'read', permission: 'allow' }])
  const refused = await command(['failover', unreachable, '--from', p.source, '--to', p.target, '--group', group, '--timeout', '3'], t)
  assert.equal(refused.code, 3, refused.out)
  assert.match(refused.out, new RegExp(`grant READ on topic ${checkpoints.replaceAll('.', '\\.')} to User:bob on cluster ${p.target}`))
  assert.doesNotMatch(refused.out, /nothing to do|would resume/)
  // offsets set writes a group on the source
  const set = await command(['offsets', 'set', config, '--cluster', p.source, '--group', `${p.groups}-set`, '--topic', topic, '--to-earliest', '--apply'], t)
  assert.equal(set.code, 0, set.out)
  assert.deepEqual((await committedOffsets('secure', `${p.groups}-set`)).map(o => o.offset), [0, 0])
})

test('with WRITE on the checkpoints topic missing, kmirror names that ACL and keeps replicating', { timeout: 120_000 }, async t => {
  // Given bob holds the table but for WRITE on <source>.checkpoints.internal on the target
  const { p, topic, config } = await setup(t, (row, op) => row.name === '<source>.checkpoints.internal' && row.feature === 'checkpoints' && op === 'write')
  const checkpoints = `${p.source}.checkpoints.internal`

  // When kmirror runs as bob (at debug: a failure repeating the one before is logged there)
  const kmirror = spawnKmirror(['run', config], { t, env: { KMIRROR_LOG_LEVEL: 'debug' } })

  // Then the checkpoint job fails with the ACL to grant (operation, resource, principal, cluster), again and again
  // (a warning the first time, the repeats at debug), while every record is copied
  const failures = (): Record<string, unknown>[] => kmirror.stderr.split('\n').filter(l => l.includes('"msg":"job failed; it will run again"'))
    .map(l => JSON.parse(l) as Record<string, unknown>).filter(l => l['job'] === 'emit-checkpoints')
  await waitFor(() => failures().length >= 2, { timeoutMs: 60_000, message: 'the checkpoint job failed twice' })
  assert.deepEqual(failures().slice(0, 2).map(l => l['level']), ['warn', 'debug'])
  const message = (failures()[0]!['err'] as { message: string }).message
  assert.match(message, new RegExp(`grant WRITE on topic ${checkpoints} to User:bob on cluster ${p.target}`), message)
  await waitFor(async () => (await endOffsets('secure2', `${p.source}.${topic}`).catch(() => [])).join() === '5,5', { timeoutMs: 60_000, message: 'the 10 records copied' })
  assert.equal(kmirror.exitStatus, null)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('with DESCRIBE_CONFIGS missing on one of two source topics, the other is copied, the warning names the grant, and the first joins once granted', { timeout: 120_000 }, async t => {
  // Given bob may DESCRIBE_CONFIGS on <topics>-1 only (the table grants it on the prefix), and a second topic of 10 records
  const { p, topic, config } = await setup(t, (row, op) => row.name === '<topics>' && row.cluster === 'source' && op === 'describe-configs')
  await createAcls('secure', [{ resourceType: 'topic', resourceName: topic, patternType: 'literal', principal: BOB, host: '*', operation: 'describe-configs', permission: 'allow' }])
  const refused = `${p.topics}-2`
  const remoteRefused = `${p.source}.${refused}`
  t.after(async () => { await deleteTopics('secure2', [remoteRefused]) })
  await createTopic('secure', refused, { partitions: 2, configs: { 'retention.ms': '234567890' }, t })
  await produce('secure', records(refused, 0, 10))

  // When kmirror runs as bob
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const port = (await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 60_000))[1]
  const health = async (): Promise<string> => {
    const answer = await fetch(`http://127.0.0.1:${port}/healthz`)
    return `${answer.status} ${await answer.text()}`
  }

  // Then it starts, copies the first topic exactly, and says once which ACL the second needs; the second is not created
  const remote = `${p.source}.${topic}`
  await waitFor(async () => (await endOffsets('secure2', remote).catch(() => [])).join() === '5,5', { timeoutMs: 60_000, message: 'the first topic copied' })
  for (let partition = 0; partition < 2; partition++) assertSamePartition(await readCommitted('secure', topic, partition), await readCommitted('secure2', remote, partition), `${topic}-${partition}`)
  const warnings = (): string[] => problems(kmirror).map(l => (JSON.parse(l) as { msg: string }).msg).filter(m => m.includes(refused))
  await waitFor(() => warnings().length > 0, { timeoutMs: 30_000, message: 'a warning about the refused topic' })
  assert.match(warnings()[0]!, new RegExp(`source topic ${refused} on ${p.source} is not replicated yet: .*grant DESCRIBE_CONFIGS on topic ${refused} to User:bob on cluster ${p.source}`))
  assert.equal((await endOffsets('secure2', remoteRefused).catch(() => null)), null)
  // (and /healthz says degraded naming it, /status gives the same message with the grant)
  assert.equal(await health(), `503 degraded: 1 topic(s) of ${p.source}->${p.target} with a remote topic problem (${refused}; /status remoteTopicProblems names the fix)\n`)
  const status = await (await fetch(`http://127.0.0.1:${port}/status`)).json() as { flows: { remoteTopicProblems: { topic: string, remoteTopic: string, message: string }[] }[] }
  assert.deepEqual(status.flows[0]!.remoteTopicProblems, [{ topic: refused, remoteTopic: remoteRefused, message: warnings()[0]! }])

  // When DESCRIBE_CONFIGS is granted on the second topic
  await createAcls('secure', [{ resourceType: 'topic', resourceName: refused, patternType: 'literal', principal: BOB, host: '*', operation: 'describe-configs', permission: 'allow' }])

  // Then it joins the flow with its configs, and is copied exactly; the refusal was logged once
  await waitFor(async () => (await endOffsets('secure2', remoteRefused).catch(() => [])).join() === '5,5', { timeoutMs: 60_000, message: 'the second topic copied after the grant' })
  for (let partition = 0; partition < 2; partition++) assertSamePartition(await readCommitted('secure', refused, partition), await readCommitted('secure2', remoteRefused, partition), `${refused}-${partition}`)
  assert.equal((await topicConfig('secure2', remoteRefused))['retention.ms'], '234567890')
  assert.equal(warnings().length, 1, warnings().join('\n'))
  await waitFor(async () => ({ done: (await health()) === '200 ok\n', state: await health() }), { timeoutMs: 30_000, message: '/healthz ok again' })
  assert.equal(kmirror.exitStatus, null)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('with READ on its offsets topic revoked, a restart exits 3 naming the READ grant', { timeout: 120_000 }, async t => {
  // Given kmirror ran once as bob with the whole table, so its offsets topic holds records
  const { p, topic, config } = await setup(t)
  const offsets = `mm2-offsets.${p.source}.internal`
  const first = spawnKmirror(['run', config], { t })
  await waitFor(async () => (await endOffsets('secure2', `${p.source}.${topic}`).catch(() => [])).join() === '5,5', { timeoutMs: 60_000, message: 'the 10 records copied' })
  first.kill('SIGTERM')
  assert.equal((await first.waitForExit(15_000)).code, 0)

  // When READ on the offsets topic is revoked and kmirror starts again
  const read = leastPrivilegeBindings('target', BOB, p).filter(b => b.resourceName === offsets && b.operation === 'read')
  assert.equal(read.length, 1)
  await deleteAcls('secure2', read)
  const second = spawnKmirror(['run', config], { t })

  // Then it exits 3, with one error naming the ACL to grant (operation, topic, principal, cluster)
  assert.equal((await second.waitForExit(60_000)).code, 3)
  const errors = problems(second).map(l => (JSON.parse(l) as { err?: { message?: string } }).err?.message ?? '')
  assert.equal(errors.length, 1, errors.join('\n'))
  assert.match(errors[0]!, new RegExp(`reading ${offsets} on cluster ${p.target} was refused \\(TOPIC_AUTHORIZATION_FAILED\\): grant READ on topic ${offsets} to User:bob on cluster ${p.target}`))
})

test('with READ on the groups missing on the target, group offset sync names that ACL once per refusal and records keep flowing', { timeout: 120_000 }, async t => {
  // Given bob holds the table but for READ on <groups> on the target, and group ACL sync is off (it would copy bob's
  // own READ on <groups> from the source)
  const { p, topic, group, config: base } = await setup(t, (row, op) => row.cluster === 'target' && row.feature === 'group offset sync' && row.resourceType === 'group' && op === 'read')
  const config = writeTempFile(`${readFileSync(base, 'utf8')}\nsync.group.acls.enabled = false\n`, '.properties', t)

  // When kmirror runs as bob
  const kmirror = spawnKmirror(['run', config], { t })

  // Then the group's refusal names READ on the group, the principal and the cluster; the job's own failure names the
  // group without repeating the refusal; every record is copied
  const lines = (): Record<string, unknown>[] => problems(kmirror).map(l => JSON.parse(l) as Record<string, unknown>).filter(l => l['job'] === 'sync-group-offsets')
  await waitFor(() => lines().length >= 2, { timeoutMs: 60_000, message: 'the group offset sync job failed' })
  const [refusal, failure] = lines() as [{ group: string, err: { message: string } }, { group?: string, err: { message: string } }]
  assert.equal(refusal.group, group)
  assert.match(refusal.err.message, new RegExp(`group ${group} on cluster ${p.target} was refused \\(GROUP_AUTHORIZATION_FAILED\\): grant READ on group ${group} to User:bob on cluster ${p.target}`))
  assert.equal(failure.group, undefined)
  assert.equal(failure.err.message, `offsets of 1 group(s) not synced, each refused or failed as its warning "group offsets not synced" says: ${group}`)
  await waitFor(async () => (await endOffsets('secure2', `${p.source}.${topic}`).catch(() => [])).join() === '5,5', { timeoutMs: 60_000, message: 'the 10 records copied' })
  assert.equal(kmirror.exitStatus, null)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
})

test('with READ on the flow\'s group missing on the target, kmirror run exits 3 naming the group, the cluster and the READ grant', { timeout: 120_000 }, async t => {
  // Given bob holds the table but for READ on the flow's group kmirror-<source>-<target> on the target
  const { p, config } = await setup(t, (row, op) => row.cluster === 'target' && row.feature === 'group membership' && op === 'read')
  const group = `kmirror-${p.source}-${p.target}`

  // When kmirror runs as bob
  const kmirror = spawnKmirror(['run', config], { t })

  // Then it exits 3 at start, and its error names the group, the cluster and the ACL to add for bob
  assert.equal((await kmirror.waitForExit(60_000)).code, 3, kmirror.stderr.slice(-3000))
  assert.match(kmirror.stderr, new RegExp(`group ${group} on cluster ${p.target} was refused \\(GROUP_AUTHORIZATION_FAILED\\): grant READ on group ${group} to User:bob on cluster ${p.target}`))
  assert.deepEqual(kmirror.stderr.split('\n').filter(l => /trying again in/.test(l) && /GROUP_AUTHORIZATION_FAILED/.test(l)), [], 'a refused group is not waited for')
})

test('failover --apply of three groups as bob, READ denied on the second on the target: the first is written, the apply stops there (exit 3) naming the grant, the third is not written; once allowed, applying again writes the other two and leaves the first', { timeout: 120_000 }, async t => {
  // Given three groups with commits on the source (the first 3,2; the others 4,1 and 5,0), copied by kmirror as
  // bob without group offset sync (the target's groups stay empty until the failover)
  const { p, topic, group, config: synced } = await setup(t)
  const config = writeTempFile(readFileSync(synced, 'utf8').replace('sync.group.offsets.enabled = true', 'sync.group.offsets.enabled = false'), '.properties', t)
  const [second, third] = [`${p.groups}-2`, `${p.groups}-3`]
  await commitOffsets('secure', second, [{ topic, partition: 0, offset: 4 }, { topic, partition: 1, offset: 1 }])
  await commitOffsets('secure', third, [{ topic, partition: 0, offset: 5 }, { topic, partition: 1, offset: 0 }])
  const remote = `${p.source}.${topic}`
  const kmirror = spawnKmirror(['run', config], { t })
  await waitFor(async () => (await endOffsets('secure2', remote).catch(() => [])).join() === '5,5', { timeoutMs: 60_000, message: 'the 10 records copied' })
  await waitFor(async () => ((await endOffsets('secure', `mm2-offset-syncs.${p.target}.internal`).catch(() => []))[0] ?? 0n) > 0n, { timeoutMs: 30_000, message: 'offset syncs written' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0)
  // and READ on the second group denied to bob on the target (a DENY beats the table's prefixed ALLOW)
  await createAcls('secure2', [{ resourceType: 'group', resourceName: second, patternType: 'literal', principal: BOB, host: '*', operation: 'read', permission: 'deny' }])
  const failover = async (): Promise<Awaited<ReturnType<typeof runPlan>>> => await runPlan(['failover', config, '--from', p.source, '--to', p.target, '--group', `${group},${second},${third}`, '--apply'], t)
  const onTarget = async (g: string): Promise<string> => (await committedOffsets('secure2', g)).map(o => `${o.topic}-${o.partition}:${o.offset}`).join()

  // When applying
  const stopped = await failover()

  // Then the first group is written, the second's problem names the refusal and the grant, the third is not written
  assert.equal(stopped.code, 3, stopped.stdout + stopped.stderr)
  assert.deepEqual(stopped.plan.groups.map(g => [g.group, g.written]), [[group, true], [second, false], [third, false]])
  assert.match(stopped.plan.groups[1]!.problem ?? '', new RegExp(`writing the offsets of group ${second} on ${p.target} failed .*GROUP_AUTHORIZATION_FAILED.*grant READ on group ${second} to User:bob on cluster ${p.target}`))
  assert.equal(stopped.plan.groups[2]!.problem, `not written: the apply stopped when group ${second} failed; plan again`)
  assert.equal(await onTarget(group), `${remote}-0:3,${remote}-1:2`)
  assert.equal(await onTarget(second), '')
  assert.equal(await onTarget(third), '')

  // When READ is allowed again and the apply is run again
  await deleteAcls('secure2', [{ resourceType: 'group', resourceName: second, patternType: 'literal', principal: BOB, host: '*', operation: 'read', permission: 'deny' }])
  const again = await failover()

  // Then the first is already there (nothing moved), the other two are written exactly
  assert.equal(again.code, 0, again.stdout + again.stderr)
  assert.deepEqual(again.plan.groups.map(g => [g.group, g.moves.length, g.unchanged, g.written]), [[group, 0, 2, false], [second, 2, 0, true], [third, 2, 0, true]])
  assert.equal(await onTarget(group), `${remote}-0:3,${remote}-1:2`)
  assert.equal(await onTarget(second), `${remote}-0:4,${remote}-1:1`)
  assert.equal(await onTarget(third), `${remote}-0:5,${remote}-1:0`)
})
