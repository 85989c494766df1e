/**
 * Exactly-once mode under the least-privilege ACLs of docs/operations.md: kmirror runs as the non-super user bob
 * on the authorizer clusters (secure -> secure2) holding exactly the table's rows, the "exactly-once" ones
 * included, on a host whose name has dashes, as a Kubernetes pod's has (unshare --uts). A lone instance killed with
 * a transaction open and started again once its group is empty:
 * - with the table's ACLs, finds the dead one's open transaction (ListTransactions and DescribeTransactions see
 *   the ids bob may WRITE), tells it from another group's by describing the groups its dashed name could belong to,
 *   fences it, and a read_committed reader sees every record exactly once before that transaction's timeout;
 * - with WRITE on its progress topic revoked mid-run, its rounds abort (nothing of them visible), `/status` and the
 *   console show the last abort and its cause in red; granted again, the commits resume, every record exactly once;
 * - without DESCRIBE on the groups `<group id>-`, cannot tell, leaves the transaction to its timeout, and says so
 *   at info naming that grant; once the coordinator aborted it at its timeout (set to 30 s with
 *   `B.producer.transaction.timeout.ms`), every record is there exactly once.
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import type { AclBinding } from '../../src/kafka/acls.ts'
import { ClusterClients } from '../../src/kafka/cluster-clients.ts'
import type { OpenTransaction } from '../../src/kafka/open-transactions.ts'
import { createAcls, deleteAcls, deleteAclsOf } from '../helpers/acls.ts'
import { launchBrowser, waitForText } from '../helpers/browser.ts'
import { ensureClusters, getCluster, SECURE_ADMIN, type ClusterName } from '../helpers/clusters.ts'
import { runKmirror } from '../helpers/drills.ts'
import { describeGroup } from '../helpers/groups.ts'
import { checkExactlyOnceCopy, GROUP_SETTINGS, produceContinuously, startInstance, waitForSplit, type Instance } from '../helpers/instances.ts'
import { createTopic, deleteTopics, endOffsets } from '../helpers/kafka.ts'
import { leastPrivilegeBindings, type LeastPrivilegeAcl } from '../helpers/least-privilege.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'
import type { ExactlyOnceStatus } from '../../src/replication/transaction-tally.ts'
import type { FlowReplicationStatus } from '../../src/runtime/status.ts'

const BOB = 'User:bob'
const PARTITIONS = 4
/** A pod's host name: kmirror's member name carries it, so its transactional id has dashes after the group id. */
const POD = 'mirror-7d9f8-x2k4q'
const asBob = (name: ClusterName) => ({ ...getCluster(name), sasl: { mechanism: 'PLAIN' as const, username: 'bob', password: 'bob-secret' } })
const bigints = (_key: string, value: unknown): unknown => typeof value === 'bigint' ? value.toString() : value

interface Setup {
  readonly topic: string
  readonly remote: string
  readonly group: string
  /** The source's alias. */
  readonly source: string
  /** The target's alias. */
  readonly target: string
  readonly config: string
  readonly producer: ReturnType<typeof produceContinuously>
  /** Every instance started, killed at the end (before the topics are deleted). */
  readonly instances: Instance[]
  /** The open transactions on secure2 under the group's prefix, listed as the super user. */
  readonly openNow: () => Promise<OpenTransaction[]>
}

/** bob's grants (the table's, but what LEAVEOUT names), a topic with records arriving, and one instance on the pod (EXTRA: more config lines). */
async function setup (t: TestContext, leaveOut: (row: LeastPrivilegeAcl, op: AclBinding['operation']) => boolean = () => false, extra: (target: string) => string[] = () => []): Promise<Setup> {
  await ensureClusters(['secure', 'secure2'])
  const u = uniqueName('lpe').replaceAll('-', '')
  const p = { source: `S${u}`, target: `T${u}`, topics: `${u}t`, groups: `${u}g` }
  const topic = `${p.topics}-1`
  const remote = `${p.source}.${topic}`
  const group = `kmirror-${p.source}-${p.target}`
  const instances: Instance[] = []
  let producer: ReturnType<typeof produceContinuously> | undefined
  // Cleanups run in registration order: the producer and the instances stop before their topics go
  t.after(async () => {
    await producer?.stop()
    for (const i of instances) {
      try { process.kill(i.process.pid, 'SIGCONT') } catch { /* exited */ }
      i.process.kill('SIGKILL')
    }
    await Promise.all(instances.map(async i => await i.process.waitForExit(10_000)))
    await Promise.all([deleteAclsOf('secure', [BOB]), deleteAclsOf('secure2', [BOB])])
    await deleteTopics('secure2', [remote, `mm2-offsets.${p.source}.internal`, `mm2-offset-history.${p.source}.internal`, `${p.source}.checkpoints.internal`])
    await deleteTopics('secure', [topic, `mm2-offset-syncs.${p.target}.internal`])
  })
  await Promise.all([deleteAclsOf('secure', [BOB]), deleteAclsOf('secure2', [BOB])])
  await createAcls('secure', leastPrivilegeBindings('source', BOB, p, leaveOut))
  await createAcls('secure2', leastPrivilegeBindings('target', BOB, p, leaveOut))
  await createTopic('secure', topic, { partitions: PARTITIONS })
  const config = writeTempFile(mm2Properties({
    source: asBob('secure'),
    target: asBob('secure2'),
    sourceAlias: p.source,
    targetAlias: p.target,
    extra: [`${p.source}->${p.target}.topics = ${topic}`, `${p.source}->${p.target}.groups = ${p.groups}.*`, `${p.target}.exactly.once.source.support = enabled`, ...GROUP_SETTINGS, ...extra(p.target)]
  }), '.properties', t)
  const admin = new ClusterClients({
    alias: p.target,
    bootstrapServers: [getCluster('secure2').bootstrap],
    consumer: {},
    producer: {
      'bootstrap.servers': getCluster('secure2').bootstrap,
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'PLAIN',
      'sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required username="${SECURE_ADMIN.username}" password="${SECURE_ADMIN.password}";`
    },
    admin: {}
  }, 'orphan-test', 'target')
  t.after(() => admin.close())
  producer = produceContinuously(topic, PARTITIONS, 'secure')
  instances.push(await startInstance(config, 'one', t, [], { hostname: POD }))
  await waitForSplit(instances, PARTITIONS, 'the instance owns the partitions')
  const ends = await endOffsets('secure2', remote)
  await waitFor(async () => ({ done: (await endOffsets('secure2', remote)).every((e, i) => e > ends[i]! + 5n), state: ends }),
    { timeoutMs: 30_000, intervalMs: 250, message: 'copying as bob' })
  return { topic, remote, group, source: p.source, target: p.target, config, producer, instances, openNow: async () => (await admin.openTransactions(`${group}-`))?.open ?? [] }
}

/**
 * Freezes the instance with a transaction open (SIGSTOP, thawed and frozen again until one is: two listings a
 * moment apart the same, so no request written just before the freeze still changes it), kills it, and waits
 * until its group is empty (session timeout 6 s). Returns its open transaction.
 */
async function killWithTransactionOpen (s: Setup): Promise<OpenTransaction> {
  const one = s.instances[0]!
  const mine = async (): Promise<OpenTransaction[]> => (await s.openNow()).filter(o => o.transactionalId.split(':').at(-2) === String(one.process.pid))
  let last = ''
  const open = await waitForValue(async () => {
    process.kill(one.process.pid, 'SIGSTOP')
    const now = await mine()
    const settled = now.length === 1 && JSON.stringify(now, bigints) === last
    last = JSON.stringify(now, bigints)
    if (now.length === 0) process.kill(one.process.pid, 'SIGCONT')
    return { done: settled, state: now[0] }
  }, { timeoutMs: 30_000, intervalMs: 200, message: 'frozen with a transaction open' })
  one.process.kill('SIGKILL')
  await one.process.waitForExit(10_000)
  assert.ok(open!.transactionalId.startsWith(`${s.group}-${POD}:`), open!.transactionalId)
  await waitFor(async () => {
    const g = await describeGroup('secure2', s.group).catch(() => undefined)
    return { done: g !== undefined && g.members === 0, state: g?.state }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'the group empty' })
  return open!
}

/** Stops producing; once read_committed sees every round, checks every partition exactly once. Returns when it did. */
async function checkExactlyOnce (s: Setup, timeoutMs: number): Promise<number> {
  return await checkExactlyOnceCopy({ cluster: 'secure', topic: s.topic }, { cluster: 'secure2', topic: s.remote }, PARTITIONS, await s.producer.stop(), timeoutMs)
}

const linesOf = (i: Instance, msg: string): Record<string, unknown>[] =>
  i.process.stderr.split('\n').filter(l => l.includes(`"msg":"${msg}`)).map(l => JSON.parse(l) as Record<string, unknown>)

test('exactly-once as bob with the table\'s ACLs, on a pod named with dashes: a lone instance killed with a transaction open and started again once its group is empty finds that transaction and fences it; read_committed sees every record exactly once before its timeout', { timeout: 150_000 }, async t => {
  const s = await setup(t)
  const orphan = await killWithTransactionOpen(s)

  // When it is started again on the same pod name
  const again = await startInstance(s.config, 'again', t, [], { hostname: POD })
  s.instances.push(again)
  await waitForSplit([again], PARTITIONS, 'the restarted instance owns the partitions')

  // Then it finds the dead one's transaction (bob's WRITE on the ids lets it list and describe them), describes
  // the groups the dashed name could belong to (none exists), and its first generation fences the id
  assert.deepEqual(linesOf(again, 'found a transaction left open by a member gone from the group').map(l => l['transactionalId']), [orphan.transactionalId], again.process.stderr.slice(-3000))
  assert.deepEqual(linesOf(again, 'cannot tell whether groups'), [])
  const fencing = linesOf(again, 'fencing the transactional ids of members that left work behind')
  assert.ok(fencing.some(l => (l['transactionalIds'] as string[]).includes(orphan.transactionalId)), again.process.stderr.slice(-3000))
  assert.ok(!(await s.openNow()).some(o => o.transactionalId === orphan.transactionalId), 'the dead one\'s transaction is no longer open')

  // And a read_committed reader finds every record exactly once before the coordinator would have aborted it
  const visibleAt = await checkExactlyOnce(s, 30_000)
  assert.ok(visibleAt < orphan.startedAt + orphan.timeoutMs, `every record visible ${visibleAt - orphan.startedAt} ms after the dead one's transaction began (timeout ${orphan.timeoutMs} ms)`)
  t.diagnostic(`every record visible ${visibleAt - orphan.startedAt} ms after the dead one's transaction began`)
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})

test('exactly-once as bob without DESCRIBE on the groups <group id>-: the dashed name cannot be told from another group\'s member, the open transaction is left to its timeout, the start says so naming the grant, and then every record is there exactly once', { timeout: 180_000 }, async t => {
  // (with a transaction timeout of 30 s, B.producer.transaction.timeout.ms, so the wait for it is short, yet long enough
  // for a loaded machine to restart it while that transaction is still open)
  const s = await setup(t, row => row.feature === 'exactly-once' && row.resourceType === 'group', target => [`${target}.producer.transaction.timeout.ms = 30000`])
  const orphan = await killWithTransactionOpen(s)
  assert.equal(orphan.timeoutMs, 30_000, 'the transactions have the configured timeout')
  // (read_committed readers wait for it only on the partitions it holds)
  t.diagnostic(`the dead one's transaction holds ${orphan.topics.join(', ')}`)

  // When it is started again, `kmirror status`, run as bob meanwhile, names the transaction holding read_committed readers back, its age and timeout
  // (all at once with the restart below: the coordinator aborts it 30-40 s after it began)
  const [json, text, again] = await Promise.all([runKmirror(['status', s.config, '--json'], t), runKmirror(['status', s.config], t), startInstance(s.config, 'again', t, [], { hostname: POD })])
  s.instances.push(again)
  assert.equal(json.code, 0, json.stderr)
  const eos = (JSON.parse(json.stdout) as { flows: FlowReplicationStatus[] }).flows[0]!.exactlyOnce
  assert.ok(eos !== undefined && eos.listable && eos.transactionalIdPrefix === `${s.group}-`, json.stdout)
  // (without DESCRIBE on the groups it cannot tell the dashed id from another flow's member either, and says so)
  assert.deepEqual(eos.missed.map(m => m.what), [`groups ${s.group}-mirror, ${s.group}-mirror-7d9f8`], json.stdout)
  const listed = eos.open.find(o => o.transactionalId === orphan.transactionalId)
  assert.ok(listed !== undefined && listed.timeoutMs === 30_000 && listed.openSeconds > 0, json.stdout)
  assert.deepEqual(listed.topics, orphan.topics)
  assert.ok(text.stdout.includes(`  exactly-once: transactional ids ${s.group}-<member>, timeout 30 s; `), text.stdout)
  assert.match(text.stdout, new RegExp(`\\n    ${orphan.transactionalId.replaceAll('.', '\\.')}: open [0-9.]+ s of its 30 s timeout.*; holds ${orphan.topics.join(', ').replaceAll('.', '\\.')}\\n`))

  // Then the start names the cluster, the groups it could not describe and the grant, and fences nothing
  await waitFor(() => linesOf(again, 'cannot tell whether groups').length > 0, { timeoutMs: 30_000, message: 'the start says it cannot tell' })
  const [cannot, ...more] = linesOf(again, 'cannot tell whether groups')
  assert.ok(cannot !== undefined && more.length === 0, again.process.stderr.slice(-3000))
  assert.equal(cannot['level'], 'info')
  const said = String(cannot['msg'])
  assert.ok(said.includes(`groups ${s.group}-mirror, ${s.group}-mirror-7d9f8 exist on cluster ${s.target}`), said)
  assert.ok(said.includes(`grant DESCRIBE on groups prefixed ${s.group}- to User:bob on cluster ${s.target} (kafka-acls.sh `), said)
  assert.ok(said.includes(`--operation Describe --group ${s.group}- --resource-pattern-type prefixed;`), said)
  assert.ok(said.includes(`ends at its transaction timeout (${s.target}.producer.transaction.timeout.ms, 30 s in this configuration)`), said)
  assert.deepEqual(linesOf(again, 'found a transaction left open by a member gone from the group'), [])
  // (not fenced: no fencing names it, and it is still open with its epoch unless its timeout already passed, on a
  // loaded machine the coordinator may have aborted it by now, which is the outcome this case expects anyway)
  assert.ok(!linesOf(again, 'fencing the transactional ids of members that left work behind').some(l => (l['transactionalIds'] as string[]).includes(orphan.transactionalId)), again.process.stderr.slice(-3000))
  const askedAt = Date.now()
  const stillOpen = (await s.openNow()).filter(o => o.transactionalId === orphan.transactionalId).map(o => o.producerEpoch)
  if (stillOpen.length > 0 || askedAt - orphan.startedAt < orphan.timeoutMs) assert.deepEqual(stillOpen, [orphan.producerEpoch], 'left open, not fenced')
  else t.diagnostic(`the dead one's transaction already ended at its timeout (${askedAt - orphan.startedAt} ms after it began)`)
  // And it starts copying the partitions once that transaction ended (progress committed behind it counts: the
  // read waits for it), within its timeout and the coordinator's 10 s look
  await waitForSplit([again], PARTITIONS, 'the restarted instance owns the partitions', Math.max(30_000, orphan.startedAt + orphan.timeoutMs + 30_000 - Date.now()))


  // And once the coordinator aborted it at its timeout, a read_committed reader finds every record exactly once
  // (the coordinator looks for timed-out transactions every 10 s)
  const visibleAt = await checkExactlyOnce(s, Math.max(30_000, orphan.startedAt + orphan.timeoutMs + 60_000 - Date.now()))
  t.diagnostic(`every record visible ${visibleAt - orphan.startedAt} ms after the dead one's transaction began (timeout ${orphan.timeoutMs} ms)`)
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})

/** The exactly-once part of the one flow's `/status` entry. */
async function exactlyOnceOf (i: Instance): Promise<ExactlyOnceStatus | undefined> {
  const response = await fetch(`http://127.0.0.1:${i.port}/status`, { signal: AbortSignal.timeout(2000) }).catch(() => null)
  const body = await response?.json().catch(() => null) as { flows: { exactlyOnce?: ExactlyOnceStatus }[] } | null
  return body?.flows[0]?.exactlyOnce
}

test('exactly-once as bob with WRITE on its progress topic revoked mid-run: its rounds abort, /status and the console show the last abort and its cause in red; granted again, commits resume and every record is there exactly once', { timeout: 150_000 }, async t => {
  const s = await setup(t)
  const one = s.instances[0]!
  // (asked again while /status does not answer in time: a loaded machine)
  const first = await waitForValue(async () => {
    const eos = await exactlyOnceOf(one)
    return { done: eos !== undefined && eos.committed > 0, state: eos }
  }, { timeoutMs: 15_000, intervalMs: 250, message: 'the flow\'s exactly-once status, with commits' })
  assert.ok(first !== undefined && first.transactionalId.startsWith(`${s.group}-${POD}:`), JSON.stringify(first))
  assert.equal(first.transactionTimeoutMs, 60_000)
  assert.ok(first.committed > 0 && first.lastCommitAt !== null, JSON.stringify(first))

  // When WRITE on its progress topic (part of every round's transaction) is revoked
  const progressWrite: AclBinding = { resourceType: 'topic', resourceName: `mm2-offsets.${s.source}.internal`, patternType: 'literal', principal: BOB, host: '*', operation: 'write', permission: 'allow' }
  await deleteAcls('secure2', [progressWrite])

  // Then its rounds abort, and /status shows the last abort with the refusal
  const aborting = await waitForValue(async () => {
    const eos = await exactlyOnceOf(one)
    return { done: eos?.lastAbort?.code === 'KMIRROR_ERR_NOT_AUTHORIZED', state: eos }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'an abort for the refused progress write in /status' })
  t.diagnostic(JSON.stringify(aborting))
  assert.ok(aborting!.lastAbort!.message.includes(`grant WRITE on topic mm2-offsets.${s.source}.internal to User:bob on cluster ${s.target} (kafka-acls.sh `), aborting!.lastAbort!.message)
  // and so does the console, in red
  const browser = await launchBrowser(t)
  const page = await browser.newPage()
  await page.goto(`http://127.0.0.1:${one.port}/`)
  await waitForText(page, '[data-exactly-once]', new RegExp(`^exactly-once as ${s.group}-${POD}:.* transactions? committed .*aborted, the last .* ago: KMIRROR_ERR_NOT_AUTHORIZED: .*mm2-offsets\\.${s.source}\\.internal`), 'the console\'s exactly-once line')
  assert.equal(await page.locator('[data-exactly-once]').getAttribute('class'), 'error-text')

  // When it is granted again, commits resume
  await createAcls('secure2', [progressWrite])
  await waitFor(async () => {
    const eos = await exactlyOnceOf(one)
    return { done: eos !== undefined && eos.lastCommitAt !== null && eos.lastAbort !== null && eos.lastCommitAt > eos.lastAbort.at && eos.committed > aborting!.committed, state: eos }
  }, { timeoutMs: 60_000, intervalMs: 250, message: 'commits again after the grant' })
  assert.equal(one.process.exitStatus, null, 'still running')

  // And a read_committed reader finds every record exactly once
  await checkExactlyOnce(s, 60_000)
  one.process.kill('SIGTERM')
  assert.equal((await one.process.waitForExit(15_000)).code, 0, one.process.stderr.slice(-3000))
})
