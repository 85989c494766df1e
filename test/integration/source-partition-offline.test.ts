/**
 * Source partitions offline (one replica, its broker of the three-node `trio` killed with kill -9):
 * - after they were copied: `kmirror status` still shows every partition, the offline ones with `SOURCE END ?
 *   (LEADER_NOT_AVAILABLE)` and the others with their lag, never "source unreachable" for the whole flow; the running
 *   instance copies the online partitions on;
 * - before kmirror's first start (no stored position, so where each starts is unknown): the online partitions are
 *   copied at once, the offline ones wait for their start, reported (warning, /status position -1 and failure,
 *   /healthz 503), and are copied from their first record once the broker is back.
 * Either way, every source record ends on the target exactly, in order.
 *
 * A frozen source partition leader (third test; SIGSTOP, 3 replicas): once the cluster fenced it, the fetches
 * waiting on it are cut (kafka/fenced-brokers.ts), the operator is told why, and the other partitions copy on within
 * seconds, not a request timeout later; after the thaw every record is on the target exactly.
 */
import assert from 'node:assert/strict'
import { after, before, test, type TestContext } from 'node:test'
import { ensureTrio, freezeTrioNode, killTrioNode, thawTrioNode, trioNode, useTrio, type TestCluster } from '../helpers/clusters.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { createTopic, endOffsets, produce, withAdmin } from '../helpers/kafka.ts'
import type { TestRecord } from '../helpers/kafka-clients.ts'
import { type Instance, killInstances, startInstance } from '../helpers/instances.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { writeTempFile } from '../helpers/process.ts'
import { readCommitted } from '../helpers/replication.ts'
import { runKmirror } from '../helpers/drills.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

const PARTITIONS = 4
/** The first test's health.stall.threshold.ms: partitions the source gives nothing of are reported after this long. */
const STALL_THRESHOLD_MS = 4000

let trio: TestCluster
let release: () => Promise<void> = async () => undefined
before(async () => { ({ trio, release } = await useTrio()) })
after(async () => { await release() })

interface StatusPartition {
  readonly topic: string
  readonly partition: number
  readonly lastReplicatedOffset: number
  readonly sourceLogEnd: number | null
  readonly sourceLogEndUnknown?: string
  readonly lagRecords: number | null
}

function records (topic: string, partitions: readonly number[], from: number, count: number): TestRecord[] {
  return partitions.flatMap(partition => Array.from({ length: count }, (_, i) => ({
    topic, partition, key: Buffer.from(`k${from + i}`), value: Buffer.from(`${partition}:${from + i}`), headers: [], timestamp: BigInt(Date.now())
  })))
}

async function waitForEnds (remote: string, expected: readonly number[]): Promise<void> {
  await waitFor(async () => {
    const ends = await endOffsets('target', remote).catch(() => [])
    return { done: ends.length === expected.length && ends.every((e, p) => e === BigInt(expected[p]!)), state: ends }
  }, { timeoutMs: 60_000, intervalMs: 250, message: `the target holds ${JSON.stringify(expected)} records per partition` })
}

async function committedOf (admin: AdminClient, group: string, topic: string): Promise<number[]> {
  const committed = await admin.groups.listCommittedOffsets(group)
  return [...Array(PARTITIONS).keys()].map(p => committed.find(c => c.topic === topic && c.partition === p)?.offset ?? -1)
}

/** A 4-partition topic on the trio (one replica each) with 20 records per partition, and a flow copying it to `target`. */
async function givenTopic (t: TestContext, prefix: string) {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const instances: Instance[] = []
  t.after(async () => { await ensureTrio() })
  removeAliasTopicsAfter(t, [trio, 'target'], [a, b], async () => await killInstances(instances))
  const topic = uniqueName(prefix)
  await createTopic(trio, topic, { partitions: PARTITIONS, t })
  const all = [...Array(PARTITIONS).keys()]
  await produce(trio, records(topic, all, 0, 20))
  // kmirror's offset syncs live on the source: replicated (the trio's default), so the kill leaves them writable
  const properties = multiClusterProperties([{ alias: a, cluster: trio }, { alias: b, cluster: 'target' }], [`${a}->${b}`], [`topics = ${topic}`])
    .replace(/^offset-syncs\.topic\.replication\.factor = 1$/m, 'offset-syncs.topic.replication.factor = -1')
  return { a, b, topic, remote: `${a}.${topic}`, all, properties, instances }
}

/**
 * Kills the broker leading partition 0 (the only replica of each partition it leads), or with PREFER the leader of
 * that topic's partition 0 when it leads a partition of TOPIC too; which partitions went offline.
 */
async function killLeaderOfFirst (t: TestContext, topic: string, all: readonly number[], prefer?: string) {
  const leadersOf = async (name: string): Promise<number[]> => await withAdmin(trio, async admin => (await admin.metadata({ topics: [name] })).topics.get(name)!.partitions.map(p => p.leader))
  const leaders = await leadersOf(topic)
  const preferred = prefer === undefined ? undefined : (await leadersOf(prefer))[0]
  const victim = preferred !== undefined && leaders.includes(preferred) ? preferred : leaders[0]!
  const offline = all.filter(p => leaders[p] === victim)
  const online = all.filter(p => leaders[p] !== victim)
  t.diagnostic(`source leaders ${JSON.stringify(leaders)}: killing node ${victim}, partitions ${JSON.stringify(offline)} go offline`)
  await killTrioNode(victim)
  return { victim, offline, online }
}

test('a source partition offline (its broker killed): kmirror status shows it unknown with its Kafka error and the other partitions\' lag; the online partitions copy on; all exact once it is back', { timeout: 180_000 }, async t => {
  // Given a 4-partition topic on the trio with one replica per partition, copied to `target`
  // (partitions the source gives nothing of are reported after 4 s here, 120 s by default)
  const { a, b, topic, remote, all, properties, instances } = await givenTopic(t, 'srcoffline')
  const config = writeTempFile(`${properties}\nhealth.stall.threshold.ms = ${STALL_THRESHOLD_MS}\n`, '.properties', t)
  const instance = await startInstance(config, 'one', t)
  instances.push(instance)
  await waitForEnds(remote, all.map(() => 20))
  // And a consumer group of the source topic at offset 5 everywhere
  const group = uniqueName('srcoffline-group')
  const admin = new AdminClient({ 'bootstrap.servers': trio.bootstrap }, 'test', { label: trio.name })
  t.after(() => admin.close())
  await admin.groups.alterCommittedOffsets(group, all.map(partition => ({ topic, partition, offset: 5 })))

  // When the broker leading some partitions (their only replica) is killed, and the others get more records
  const beforeKill = instance.process.stderr.length
  // (the leader of MM2's offset-syncs partition when it leads one of the topic's: its syncs then wait beside the copy)
  const { victim, offline, online } = await killLeaderOfFirst(t, topic, all, `mm2-offset-syncs.${b}.internal`)
  if (online.length > 0) await produce(trio, records(topic, online, 20, 10))

  // Then the running instance copies the online partitions on
  await waitForEnds(remote, all.map(p => online.includes(p) ? 30 : 20))
  // and says which broker it cannot fetch from and what waits on it; a failed fetch from the dead broker never
  // failed the whole round (it did before: every partition waited until the cluster fenced the broker)
  const afterKill = (): string => instance.process.stderr.slice(beforeKill)
  await waitFor(() => ({ done: new RegExp(`"msg":"cannot fetch from broker ${victim} \\(127\\.0\\.0\\.1:\\d+\\) of cluster ${a}: .*The \\d+ partition\\(s\\) it leads \\(.*wait where they are, nothing skipped`).test(afterKill()), state: afterKill().slice(-2000) }),
    { timeoutMs: 10_000, intervalMs: 200, message: 'the warning naming the broker that cannot be fetched from' })
  // And, past health.stall.threshold.ms, each offline partition is reported failing on the source, /healthz 503
  for (const p of offline) {
    await waitFor(() => ({ done: new RegExp(`"msg":"cannot read ${topic}-${p} from cluster ${a} for \\d+ s \\(health\\.stall\\.threshold\\.ms = ${STALL_THRESHOLD_MS}\\): .*bring back the broker that leads ${topic}-${p} on cluster ${a}`).test(afterKill()), state: afterKill().slice(-2000) }),
      { timeoutMs: 30_000, intervalMs: 250, message: `the warning that ${topic}-${p} cannot be read` })
  }
  const failing = await sourceFailures(instance.port, topic)
  assert.deepEqual(failing.map(f => f.partition), offline)
  for (const f of failing) {
    assert.equal(f.failure.side, 'source')
    assert.match(f.failure.error, /^(LEADER_NOT_AVAILABLE|NETWORK_EXCEPTION)$/)
  }
  const health = await fetch(`http://127.0.0.1:${instance.port}/healthz`)
  assert.equal(health.status, 503)
  // (the trio's `heartbeats`, copied by this flow too, may have partitions waiting on the dead broker as well)
  assert.match(await health.text(), /\d+ partition\(s\) failing/)
  assert.doesNotMatch(afterKill(), /replication step failed; retrying/)

  // And `kmirror status` shows every partition: the offline ones unknown with their Kafka error, the online ones
  // with their log end and lag 0, and the source as reachable
  const status = await waitForValue(async () => {
    const cli = await runKmirror(['status', config, '--json'], t)
    assert.equal(cli.code, 0, cli.stderr)
    const read = (JSON.parse(cli.stdout) as { flows: { sourceReachable: boolean, error?: string, partitions: StatusPartition[] }[] }).flows[0]!
    // Only this topic: the flow also copies the trio's `heartbeats`, written to all the while by other flows
    const flow = { ...read, partitions: read.partitions.filter(p => p.topic === topic) }
    const settled = flow.partitions.every(p => offline.includes(p.partition) ? p.sourceLogEndUnknown === 'LEADER_NOT_AVAILABLE' : p.lagRecords === 0)
    return { done: settled, state: flow }
  }, { timeoutMs: 60_000, intervalMs: 1000, message: 'status shows the offline partitions as LEADER_NOT_AVAILABLE once the controller fenced the broker' })
  assert.equal(status.sourceReachable, true)
  assert.equal(status.error, undefined)
  assert.deepEqual(status.partitions.map(p => p.partition), all)
  for (const p of status.partitions) {
    if (offline.includes(p.partition)) {
      assert.deepEqual([p.sourceLogEnd, p.lagRecords, p.lastReplicatedOffset], [null, null, 19])
    } else {
      assert.deepEqual([p.sourceLogEnd, p.lagRecords, p.lastReplicatedOffset], [30, 0, 29])
    }
  }
  const text = await runKmirror(['status', config], t)
  for (const p of offline) assert.match(text.stdout, new RegExp(`^  ${topic}\\s+${p}\\s+19\\s+${remote.replace(/\./g, '\\.')}\\s+\\S+\\s+\\? \\(LEADER_NOT_AVAILABLE\\)\\s+\\?\\s+\\?$`, 'm'))

  // And `kmirror offsets set` refuses to plan without the offsets of the offline partitions: it names one, its
  // Kafka error and the fix, exits 3 (the data a plan needs could not be read), and writes nothing
  const reset = await runKmirror(['offsets', 'set', config, '--cluster', a, '--group', group, '--topic', topic, '--to-latest', '--apply', '--force'], t)
  assert.equal(reset.code, 3, reset.stderr)
  assert.match(reset.stderr, new RegExp(`(earliest|latest) offsets of ${offline.length} partition\\(s\\) of cluster ${a}, first ${topic}-${offline[0]}: Kafka error LEADER_NOT_AVAILABLE; .*elect a leader among its live replicas`))
  assert.deepEqual(await committedOf(admin, group, topic), all.map(() => 5))

  // When the broker is back and every partition gets more records
  // Then every source record is on the target, exactly and in order
  const beforeBack = instance.process.stderr.length
  await backAndExact({ instance, topic, remote, all, online })
  // and the end of the outage and each partition's recovery were logged
  const afterBack = instance.process.stderr.slice(beforeBack)
  assert.match(afterKill(), new RegExp(`"msg":"broker ${victim} \\(127\\.0\\.0\\.1:\\d+\\) of cluster ${a} (answers fetches again|leads none of the partitions kmirror reads any more)`))
  for (const p of offline) assert.match(afterBack, new RegExp(`"msg":"${topic}-${p} is replicated again \\(it failed with (LEADER_NOT_AVAILABLE|NETWORK_EXCEPTION) on cluster ${a}\\)`))
  // and offset syncs that could not be written while their leader was down (when a sync fell in that window) were
  // told once and written later, never holding up the copy
  const syncWarnings = afterKill().match(/"msg":"cannot write offset syncs; will retry"/g) ?? []
  t.diagnostic(`offset-sync warnings after the kill: ${syncWarnings.length}`)
  assert.ok(syncWarnings.length <= 1, 'one warning for the failing offset syncs, the repeats at debug')
  if (syncWarnings.length > 0) assert.match(afterKill(), /"msg":"offset syncs written again after \d+ failed attempt\(s\)"/)
})

/** The partitions of TOPIC the instance's /status lists failing. */
async function sourceFailures (port: number, topic: string): Promise<{ partition: number, failure: { side: string, error: string } }[]> {
  const body = await (await fetch(`http://127.0.0.1:${port}/status`)).json() as { flows: { partitions: { topic: string, partition: number, failure: { side: string, error: string } | null }[] }[] }
  return body.flows[0]!.partitions.filter(p => p.topic === topic && p.failure !== null).map(p => ({ partition: p.partition, failure: p.failure! }))
}

/**
 * The trio whole again and 5 more records on every partition of TOPIC (20 before, 10 more already on ONLINE): every
 * source record ends on the target exactly, in order; the instance stops cleanly.
 */
async function backAndExact ({ instance, topic, remote, all, online }: { instance: Instance, topic: string, remote: string, all: readonly number[], online: readonly number[] }): Promise<void> {
  await ensureTrio()
  await produce(trio, records(topic, all, 30, 5))
  // What the source holds: 5 more than before the outage on the online partitions, 5 more than the first 20 on the
  // others (more when a plain producer retried through a leader move and wrote a batch twice on the source)
  const expected = (await endOffsets(trio, topic)).map(Number)
  assert.ok(all.every(p => expected[p]! >= (online.includes(p) ? 35 : 25)), `source ends ${expected.join(', ')}`)
  await waitForEnds(remote, expected)
  await assertExactCopies(topic, remote, all)
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(30_000)).code, 0, instance.process.stderr.slice(-3000))
}

async function assertExactCopies (topic: string, remote: string, partitions: readonly number[]): Promise<void> {
  for (const partition of partitions) {
    const values = async (cluster: typeof trio | 'target', name: string): Promise<string[]> => (await readCommitted(cluster, name, partition)).map(r => String(r.value))
    assert.deepEqual(await values('target', remote), await values(trio, topic), `${topic}-${partition}`)
  }
}

test('source partitions offline at kmirror\'s first start: the others are copied at once, the offline ones wait for their start, reported, and are copied whole once their broker is back', { timeout: 180_000 }, async t => {
  // Given a 4-partition topic on the trio with one replica per partition and records in each, never copied
  const { a, b, topic, remote, all, properties, instances } = await givenTopic(t, 'srcstart')
  // And the broker leading some of them killed before kmirror starts
  const { victim, offline, online } = await killLeaderOfFirst(t, topic, all)

  // When kmirror starts for the first time
  const instance = await startInstance(writeTempFile(properties, '.properties', t), 'one', t)
  instances.push(instance)

  // Then the online partitions are copied whole, at once
  await waitFor(async () => {
    const ends = await endOffsets('target', remote).catch(() => [])
    return { done: ends.length === PARTITIONS && online.every(p => ends[p] === 20n), state: ends }
  }, { timeoutMs: 60_000, intervalMs: 250, message: 'the online partitions copied' })
  // And each offline one is reported: a warning naming it, the cluster, the error and the fix
  // (before the controller fenced the broker: its leader cannot be reached)
  const reason = '(it has no leader|its leader cannot be reached), so where to start copying it is not known yet \\(Kafka error (LEADER_NOT_AVAILABLE|NETWORK_EXCEPTION)\\)'
  for (const p of offline) {
    await instance.process.waitForOutput(new RegExp(`"msg":"cannot read ${topic}-${p} from cluster ${a}: ${reason}; ` +
      `bring back the broker that leads ${topic}-${p} on cluster ${a}, or elect a leader among its live replicas`), 30_000)
  }
  // And /status lists it with its position unknown and its failure, the flow degraded, and its health line says
  // so. Checked in one answer: each partition is retried on its own back-off, so its error may move from
  // NETWORK_EXCEPTION (leader not fenced yet) to LEADER_NOT_AVAILABLE between two requests. The flow also copies
  // the trio's `heartbeats` (always mirrored, as in MM2), whose partitions may live on the killed broker too.
  await waitFor(async () => {
    const body = await (await fetch(`http://127.0.0.1:${instance.port}/status`, { signal: AbortSignal.timeout(2000) })).json() as { health: string, flows: { state: string, partitions: { topic: string, partition: number, position: number, failure: { side: string, error: string } | null }[] }[] }
    const flow = body.flows[0]!
    const waiting = flow.partitions.filter(p => p.topic === topic && offline.includes(p.partition))
    const failing = flow.partitions.filter(p => p.failure !== null)
    const errors = [...new Set(failing.map(p => p.failure!.error))].join(', ')
    const done = flow.state === 'degraded' && waiting.length === offline.length &&
      waiting.every(p => p.position === -1 && p.failure?.side === 'source' && p.failure.error === 'LEADER_NOT_AVAILABLE') &&
      failing.every(p => waiting.includes(p) || p.topic === 'heartbeats') &&
      body.health === `degraded: ${failing.length} partition(s) failing in ${a}->${b} (${errors})`
    return { done, state: body }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'the offline partitions failing in /status, position unknown, and its health line naming them' })
  const health = await fetch(`http://127.0.0.1:${instance.port}/healthz`)
  assert.equal(health.status, 503)
  assert.match(await health.text(), new RegExp(`^degraded: \\d+ partition\\(s\\) failing in ${a}->${b} \\((LEADER_NOT_AVAILABLE|NETWORK_EXCEPTION)`))
  t.diagnostic(`node ${victim} (${trioNode(victim)}) is down; the online partitions are copied`)

  // When the broker is back
  await ensureTrio()

  // Then each offline partition recovers and is copied from its first record: every source record on the target
  for (const p of offline) await instance.process.waitForOutput(new RegExp(`"msg":"${topic}-${p} is replicated again \\(it failed with [A-Z_]+ on cluster ${a}\\)"`), 60_000)
  await waitForEnds(remote, all.map(() => 20))
  await assertExactCopies(topic, remote, all)
  // And /healthz is 200 again once every partition recovered (a `heartbeats` one on the same broker retries on its
  // own back-off, so it may come back a little later)
  await waitFor(async () => {
    const health = await fetch(`http://127.0.0.1:${instance.port}/healthz`, { signal: AbortSignal.timeout(2000) })
    return { done: health.status === 200, state: `${health.status} ${await health.text()}` }
  }, { timeoutMs: 30_000, intervalMs: 500, message: '/healthz 200 once every partition recovered' })
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(30_000)).code, 0, instance.process.stderr.slice(-3000))
})

test('a frozen source partition leader (SIGSTOP): the other brokers\' partitions copy on without waiting for it, its connections are cut once the cluster fenced it, not after a request timeout, the operator told why; all exact after the thaw', { timeout: 180_000 }, async t => {
  // Given a 6-partition topic on the trio with 3 replicas per partition, and a 2-partition topic with one replica
  // per partition (its records readable as soon as their leader has them: no follower holds their high watermark
  // back), records in each, copied to `target` (request.timeout.ms at its default, 30 s)
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, [trio, 'target'], [a, b], async () => await killInstances(instances))
  const partitions = 6
  const all = [...Array(partitions).keys()]
  const topic = uniqueName('srcfrozen')
  const single = uniqueName('srcfrozen1')
  const [remote, remoteSingle] = [`${a}.${topic}`, `${a}.${single}`]
  await createTopic(trio, topic, { partitions, replicationFactor: 3, t })
  const leadersOf = async (name: string): Promise<number[]> => await withAdmin(trio, async admin => (await admin.metadata({ topics: [name] })).topics.get(name)!.partitions.map(p => p.leader))
  const leaders = await leadersOf(topic)
  const frozen = leaders[0]!
  // (the one-replica topic on the other two brokers only: its metadata stays whole when the frozen one is fenced)
  const singleOnline = [0, 1]
  await createTopic(trio, single, { partitions: 2, assignments: [1, 2, 3].filter(n => n !== frozen).map(n => [n]), t })
  await produce(trio, [...records(topic, all, 0, 20), ...records(single, singleOnline, 0, 20)])
  // (fetch.max.wait.ms 100: a round leaves the frozen broker out 0.6 s after the others answered, well before the
  // trio fences it, 3 s after the freeze)
  const properties = multiClusterProperties([{ alias: a, cluster: trio }, { alias: b, cluster: 'target' }], [`${a}->${b}`], [`topics = ${topic}|${single}`, `${a}.consumer.fetch.max.wait.ms = 100`])
    .replace(/^offset-syncs\.topic\.replication\.factor = 1$/m, 'offset-syncs.topic.replication.factor = -1')
  assert.doesNotMatch(properties, /request\.timeout\.ms/)
  const instance = await startInstance(writeTempFile(properties, '.properties', t), 'one', t)
  instances.push(instance)
  await Promise.all([waitForEnds(remote, all.map(() => 20)), waitForEnds(remoteSingle, [20, 20])])

  // When the broker leading partition 0 is frozen (its fetches, long polls, are always in flight), and the
  // partitions other brokers lead get more records (written through those brokers only)
  const online = all.filter(p => leaders[p] !== frozen)
  const others: TestCluster = { ...trio, bootstrap: [1, 2, 3].filter(n => n !== frozen).map(trioNode).join(',') }
  t.diagnostic(`source leaders ${JSON.stringify(leaders)}, of the one-replica topic ${JSON.stringify(await leadersOf(single))}: freezing node ${frozen}`)
  const address = trioNode(frozen).replace(/\./g, '\\.')
  const fenceLine = new RegExp(`"level":"warn"[^\n]*"msg":"broker ${address} of cluster ${a} was fenced by its cluster while requests waited on it \\(a (\\w+) request to broker ${address} unanswered for [\\d.]+ s, and broker 127\\.0\\.0\\.1:\\d+ no longer lists it among the brokers of cluster ${a}: the cluster fenced it\\)`)
  const frozenAt = Date.now()
  freezeTrioNode(frozen, t)
  const timings: string[] = []
  try {
    // (not idempotent: InitProducerId needs the active controller, which may be the frozen node until another is
    // elected, and the test's producer must not wait on that. Two producers: the three-replica records are
    // acknowledged only once the frozen follower leaves their ISR, at the fence, and the one-replica records, which
    // must be copied before kmirror cuts the frozen broker, must not wait for that)
    const threeReplicasWritten = produce(others, records(topic, online, 20, 10), { idempotent: false })
    threeReplicasWritten.catch(() => undefined)
    await produce(others, records(single, singleOnline, 20, 10), { idempotent: false })
    const copied = async (name: string, parts: readonly number[], end: bigint | readonly bigint[], what: string): Promise<void> => {
      try {
        await waitFor(async () => {
          const ends = await endOffsets('target', name).catch(() => [])
          return { done: parts.every(p => ends[p] === (typeof end === 'bigint' ? end : end[p])), state: ends }
        }, { timeoutMs: Math.max(1000, 20_000 - (Date.now() - frozenAt)), intervalMs: 100, message: `the partitions other brokers lead (${what}: ${parts.join(', ')}) copied on with a leader frozen (${name}), to ${typeof end === 'bigint' ? end : `the source's ends ${end.join(', ')}`}` })
      } catch (err) {
        // What tells a fetch that stopped (position = high watermark below the source's end) from a write that did
        // not land (position past the target's end) or a source that moved on after the snapshot (a CI run timed out
        // with every target partition at 30 and the expected ends unknown)
        throw new Error(`${(err as Error).message}; then: ${await copyState(name === remote ? topic : single, parts)}; timings ${timings.join('; ')}`, { cause: err })
      }
      timings.push(`${what}: ${Date.now() - frozenAt} ms`)
    }
    const copyState = async (source: string, parts: readonly number[]): Promise<string> => {
      const sourceEnds = await endOffsets(others, source).catch((e: unknown) => `unreadable (${String(e)})`)
      const status = await fetch(`http://127.0.0.1:${instance.port}/status`, { signal: AbortSignal.timeout(5000) }).then(async r => await r.json() as { flows: { partitions: { topic: string, partition: number, position: number, highWatermark: number, failure: unknown }[] }[] }).catch(() => null)
      const kept = status?.flows[0]?.partitions.filter(p => p.topic === source && parts.includes(p.partition)).map(p => ({ partition: p.partition, position: p.position, highWatermark: p.highWatermark, failure: p.failure }))
      const lines = instance.process.stderr.split('\n').filter(l => /"level":"(warn|error)"/.test(l) || l.includes(source)).slice(-15)
      return `source ends ${Array.isArray(sourceEnds) ? sourceEnds.join(', ') : sourceEnds}; kmirror /status ${JSON.stringify(kept ?? 'unanswered')}; its last warnings and lines about ${source}: ${lines.join(' | ')}`
    }
    // Then they are on the target within 20 s of the freeze (waiting out the fetch's request timeout would take
    // 30 s): the three-replica topic's once their high watermark moves on without the frozen follower
    // (replica.lag.time.max.ms, 5 s on the trio), the one-replica topic's at once
    const replicated = threeReplicasWritten.then(async () => { await copied(remote, online, 30n, 'three replicas') })
    // And the frozen broker's partitions, once the cluster moved their leaders, are read from the new leaders (their
    // topic's leaders are read again every 500 ms while its fetch is out, and again at the cut, which on the trio
    // comes within about a second of the move: either copies them well within the bound; the diagnostic line tells
    // which came first)
    const moved = all.filter(p => leaders[p] === frozen)
    const movedCopied = (async () => {
      await waitFor(async () => {
        const now = await withAdmin(others, async admin => (await admin.metadata({ topics: [topic] })).topics.get(topic)!.partitions.map(p => p.leader))
        return { done: moved.every(p => now[p] !== undefined && now[p] >= 0 && now[p] !== frozen), state: now }
      }, { timeoutMs: 20_000, intervalMs: 250, message: `the leaders of ${topic} moved off broker ${frozen}` })
      timings.push(`leaders moved: ${Date.now() - frozenAt} ms`)
      // (plain, as above: InitProducerId failed here in CI. A plain producer retrying through the leader move may
      // write a batch twice on the source, seen in CI: the target must hold what the source holds)
      await produce(others, records(topic, moved, 20, 10), { idempotent: false })
      // (the ends read at once after the acknowledgement once gave 20 for a moved partition, 30 a moment later: a
      // leader just elected may answer ListOffsets with a high watermark its followers have not moved yet. Every
      // record acknowledged is in: the expected ends are taken once each moved partition shows at least them)
      const sourceEnds = await waitForValue(async () => {
        const ends = await endOffsets(others, topic).catch(() => [])
        return { done: moved.every(p => (ends[p] ?? 0n) >= 30n), state: ends }
      }, { timeoutMs: 10_000, intervalMs: 100, message: `the source's ends of the moved partitions ${moved.join(', ')} of ${topic} at 30 or past` })
      await copied(remote, moved, sourceEnds, `moved partitions (${fenceLine.test(instance.process.stderr) ? 'after' : 'before'} the cut line)`)
    })()
    // (awaited below; a failure before then is this test's, not an unhandled rejection)
    for (const waiting of [replicated, movedCopied]) waiting.catch(() => undefined)
    await copied(remoteSingle, singleOnline, 30n, 'one replica')
    // And records written next to the one-replica partitions are copied before the cluster fences the frozen broker
    // (3 s on the trio; the cut is logged after): the round under way when it froze may have had its answer, but the
    // next ones leave it out once the others answered and fetch.max.wait.ms and 0.5 s more passed, instead of
    // waiting for the cut
    await produce(others, records(single, singleOnline, 30, 10), { idempotent: false })
    await copied(remoteSingle, singleOnline, 40n, 'one replica, written after the first copy')
    assert.doesNotMatch(instance.process.stderr, fenceLine, `copied only once the frozen broker was cut (${timings.join('; ')})`)
    await Promise.all([replicated, movedCopied])
    // And the operator is told which broker of which cluster was cut, and why
    const line = await instance.process.waitForOutput(fenceLine, Math.max(1000, 20_000 - (Date.now() - frozenAt)))
    timings.push(`cut logged: ${Date.now() - frozenAt} ms (its first request waiting: ${line[1]})`)
  } finally {
    thawTrioNode(frozen)
  }
  t.diagnostic(`after the freeze: ${timings.join('; ')}`)

  // And once the broker is back and every partition got more records, every source record is on the target,
  // exactly and in order
  await ensureTrio()
  await produce(trio, records(single, singleOnline, 40, 5))
  await waitForEnds(remoteSingle, [45, 45])
  await assertExactCopies(single, remoteSingle, singleOnline)
  await backAndExact({ instance, topic, remote, all, online: all })
})
