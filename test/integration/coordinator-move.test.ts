/**
 * The group coordinator moving (issue 11): two instances in a group whose target is the three-node cluster `trio`
 * (kafka-local.sh up-multi; __consumer_offsets and every kmirror topic replicated 3 times). kill -9 of the broker
 * that coordinates the kmirror group moves the coordinator (and the partition leaders it held) to another broker:
 * both members find it, log the move naming the cluster and both brokers, stay members of the same group (both in
 * /status, /healthz 200), replication goes on while the broker is down, and after it is back every source record
 * is on the target in source order.
 *
 * Exactly-once (second test, same trio): kill -9 of the broker coordinating kmirror's transactional id moves the
 * transaction coordinator; the instance logs the move naming the cluster and both brokers, its transactions go on
 * with the new coordinator (a round cut short is aborted and copied again), /healthz is 200 again, and a
 * read_committed reader finds every source record exactly once, in source order (0 missing, 0 duplicates).
 *
 * Operator commands (third test): `offsets set` on the trio, with default timeouts, while the broker coordinating
 * the group is frozen (SIGSTOP: connections accepted, nothing answered): the broker check does not wait for the
 * frozen broker past a few seconds, the group's commits are read where the coordinator moved (stable: never read
 * as absent) and every partition is written, well within `--timeout`.
 *
 * A wedged broker (fourth test): the broker coordinating the group, listed first in `bootstrap.servers`, frozen.
 * Each member gives its heartbeat up after a session, finds the coordinator through the other brokers (the frozen
 * one is a suspect now, asked last) and logs the move within 45 s; the broker still frozen, everything produced by
 * then is copied within 60 s of the freeze (the silent broker's connections are cut: nothing waits on it); after
 * the thaw the two share the work again and every source record is on the target in source order.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { CoordinatorKeyTypes } from '../../src/kafka/protocol/find-coordinator.ts'
import { coordinatorOf, coordinatorOfOther } from '../helpers/coordinators.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { ensureTrio, freezeTrioNode, killTrioNode, thawTrioNode, useTrio, type TestCluster } from '../helpers/clusters.ts'
import { committedOffsets, runPlan } from '../helpers/drills.ts'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { assertCopiedInOrder, flowStatus, GROUP_SETTINGS, type Instance, killInstances, produceContinuously, startInstance, waitForRounds, waitForSplit } from '../helpers/instances.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { writeTempFile } from '../helpers/process.ts'
import { readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PARTITIONS = 4

// The trio starts once for both tests (about 45 s) and stops after them, once their own cleanups (which still need
// it) have run: a test's after-hooks run when it ends, the file's after this one at the very end.
let trio: TestCluster
let release: () => Promise<void> = async () => undefined
before(async () => { ({ trio, release } = await useTrio()) })
after(async () => { await release() })

/**
 * Flow A->B from `source` to TARGET (the trio, maybe with its bootstrap list reordered) copying TOPIC in a group.
 * Every topic kmirror makes on the trio is replicated 3 times, so no partition dies with a broker (-1: the broker
 * default, 3 on the trio, 1 on `source`, where the heartbeats of the way back go). A session that outlasts a
 * coordinator move (fencing the broker, loading the group elsewhere: 3-10 s here) keeps the members' membership; a
 * rebalance that does happen waits 15 s at most for members that lost theirs.
 */
function trioFlowProperties (a: string, b: string, target: TestCluster, topic: string, extra: readonly string[] = []): string {
  return multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: target }], [`${a}->${b}`], [`topics = ${topic}`, ...GROUP_SETTINGS, ...extra])
    .replace(/^(replication\.factor|(checkpoints|heartbeats)\.topic\.replication\.factor|offset\.storage\.replication\.factor) = 1$/gm, '$1 = -1')
    .replace(/^session\.timeout\.ms = \d+$/m, 'session.timeout.ms = 20000') + 'rebalance.timeout.ms = 15000\n'
}

/** Per partition of the flow's topic, the next source offset to copy, the highest any instance reports (/status). */
async function copiedPositions (instances: readonly Instance[]): Promise<number[]> {
  const positions = Array.from({ length: PARTITIONS }, () => -1)
  for (const instance of instances) {
    for (const p of (await flowStatus(instance))?.partitions ?? []) positions[p.partition] = Math.max(positions[p.partition]!, p.position)
  }
  return positions
}

async function healthz (instance: Instance): Promise<number> {
  return (await fetch(`http://127.0.0.1:${instance.port}/healthz`, { signal: AbortSignal.timeout(2000) })).status
}

test('kill -9 of the broker coordinating the group: both members follow the coordinator, replication goes on, nothing lost', { timeout: 180_000 }, async t => {
  // Given two instances sharing a flow from `source` to the three-node `trio`, records arriving all the time
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, ['source', trio], [a, b], async () => await killInstances(instances))
  const topic = uniqueName('coordmove')
  const group = `kmirror-${a}-${b}`
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const properties = trioFlowProperties(a, b, trio, topic)
  const config = writeTempFile(properties, '.properties', t)
  const producer = produceContinuously(topic, PARTITIONS)
  t.after(async () => { await producer.stop() })
  instances.push(await startInstance(config, 'one', t), await startInstance(config, 'two', t))
  const before = await waitForSplit(instances, PARTITIONS, 'two instances own 2 partitions each')
  const generation = before[0]!.membership!.generation
  const remote = `${a}.${topic}`

  // When the broker coordinating the kmirror group is killed (kill -9)
  const old = await coordinatorOf(group)
  t.diagnostic(`group ${group} coordinated by node ${old.nodeId} (${old.address})`)
  const atKill = await endOffsets(trio, remote)
  const killedAt = Date.now()
  await killTrioNode(old.nodeId)

  // Then another broker coordinates the group, and each member logs the move naming the cluster and both brokers
  const moved = await coordinatorOfOther(group, old.nodeId)
  for (const i of instances) {
    const line = new RegExp(`"msg":"the coordinator of group ${group} on cluster ${b} moved from broker ${old.address} to broker ${moved.address} \\(node ${moved.nodeId}\\): the member carries on with it"`)
    await i.process.waitForOutput(line, 30_000)
  }
  t.diagnostic(`coordinator moved to node ${moved.nodeId} ${Date.now() - killedAt} ms after the kill`)

  // And replication goes on while the broker is down: every remote partition grows
  await waitFor(async () => {
    const now = await endOffsets(trio, remote)
    return { done: now.every((end, p) => end > atKill[p]! + 5n), state: { atKill, now } }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'every remote partition grows with one broker down' })

  // And both members are still there, sharing the work (in /status), and healthy
  const after = await waitForSplit(instances, PARTITIONS, 'the two still share the partitions 2/2')
  t.diagnostic(`generation ${generation} before the kill, ${after[0]!.membership!.generation} after`)
  for (const i of instances) {
    await waitFor(async () => await healthz(i).catch(() => 0) === 200, { timeoutMs: 20_000, intervalMs: 250, message: `${i.name} /healthz 200` })
  }

  // And, the broker restarting meanwhile, once the producer stopped every source record is on the target in order
  const restarting = ensureTrio()
  const rounds = await producer.stop()
  await waitForRounds(trio, remote, rounds, 30_000)
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const source = await readCommitted('source', topic, partition)
    const copy = await readCommitted(trio, remote, partition)
    // At least once: a produce request in flight to the killed leader is sent again to the new one, and a member
    // that lost its membership in the move re-copies from its stored position: each a rewind, never a gap.
    const checked = assertCopiedInOrder(source, copy, 2, `${topic}-${partition}`)
    if (checked.rewinds > 0) t.diagnostic(`${topic}-${partition}: ${checked.duplicates} records copied twice`)
  }
  for (const i of instances) i.process.kill('SIGTERM')
  // The killed broker may be rejoining meanwhile: the last progress flush and the LeaveGroup can wait on it.
  for (const i of instances) assert.equal((await i.process.waitForExit(30_000)).code, 0, i.process.stderr.slice(-3000))
  await restarting
  t.diagnostic(`${Date.now() - killedAt} ms from the kill to the end, the broker back`)
})

test('exactly-once: kill -9 of the broker coordinating the transactional id, the transactions follow the coordinator, every record exactly once', { timeout: 150_000 }, async t => {
  // Given one instance copying from `source` to the trio in exactly-once mode, records arriving all the time
  await ensureTrio()
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, ['source', trio], [a, b], async () => await killInstances(instances))
  const topic = uniqueName('txnmove')
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  // Replication factor 3 for every topic kmirror makes on the trio (see the first test); __transaction_state has 3
  // replicas and min.isr 2 there (kafka-local.sh up-multi), so its partitions survive one broker.
  const properties = trioFlowProperties(a, b, trio, topic, [`${b}.exactly.once.source.support = enabled`])
  const config = writeTempFile(properties, '.properties', t)
  const producer = produceContinuously(topic, PARTITIONS)
  t.after(async () => { await producer.stop() })
  const instance = await startInstance(config, 'eos', t)
  instances.push(instance)
  await waitForSplit(instances, PARTITIONS, 'the instance owns the 4 partitions')
  const remote = `${a}.${topic}`
  const committed = async (): Promise<number[]> => await Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => (await readCommitted(trio, remote, p).catch(() => [])).length))
  await waitFor(async () => ({ done: (await committed()).every(n => n > 0), state: await committed() }), { timeoutMs: 30_000, intervalMs: 500, message: 'first rounds committed' })
  const transactionalId = (await instance.process.waitForOutput(/"transactionalId":"([^"]+)"[^\n]*"msg":"exactly-once: transactional producer initialised/, 1000))[1]!

  // When the broker coordinating its transactional id is killed (kill -9) mid-copy
  const old = await coordinatorOf(transactionalId, undefined, CoordinatorKeyTypes.TRANSACTION)
  const group = await coordinatorOf(`kmirror-${a}-${b}`)
  t.diagnostic(`transactional id ${transactionalId} coordinated by node ${old.nodeId}, the group by node ${group.nodeId}${group.nodeId === old.nodeId ? ' (the same broker: both coordinators move)' : ''}`)
  const atKill = await endOffsets(trio, remote)
  const killedAt = Date.now()
  await killTrioNode(old.nodeId)

  // Then another broker coordinates the transactional id, and the instance logs the move naming the cluster and both brokers
  const moved = await coordinatorOfOther(transactionalId, old.nodeId, CoordinatorKeyTypes.TRANSACTION)
  await instance.process.waitForOutput(new RegExp(`"msg":"the transaction coordinator of transactional id ${transactionalId} on cluster ${b} moved from broker ${old.address} ` +
    `to broker ${moved.address} \\(node ${moved.nodeId}\\): the flow's transactions go on with it`), 30_000)
  t.diagnostic(`transaction coordinator moved to node ${moved.nodeId}, logged ${Date.now() - killedAt} ms after the kill`)

  // And replication goes on while the broker is down: every remote partition grows, and /healthz is 200 again
  await waitFor(async () => {
    const now = await endOffsets(trio, remote)
    return { done: now.every((end, p) => end > atKill[p]! + 5n), state: { atKill, now } }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'every remote partition grows with the coordinator\'s broker down' })
  await waitFor(async () => await healthz(instance).catch(() => 0) === 200, { timeoutMs: 20_000, intervalMs: 250, message: '/healthz 200 again' })

  // And, the broker restarting meanwhile, once the producer stopped a read_committed reader finds every source
  // record exactly once, in source order: 0 missing, 0 duplicates
  const restarting = ensureTrio()
  const rounds = await producer.stop()
  await waitFor(async () => ({ done: (await committed()).every(n => n >= rounds), state: { counts: await committed(), rounds } }),
    { timeoutMs: 30_000, intervalMs: 500, message: `all ${rounds} rounds committed on the target` })
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const source = await readCommitted('source', topic, partition)
    const copy = await readCommitted(trio, remote, partition)
    const checked = assertCopiedInOrder(source, copy, 0, `${topic}-${partition}`)
    assert.equal(checked.duplicates, 0, `${topic}-${partition}: no record twice`)
    assert.equal(copy.length, source.length, `${topic}-${partition}`)
  }
  instance.process.kill('SIGTERM')
  assert.equal((await instance.process.waitForExit(15_000)).code, 0, instance.process.stderr.slice(-3000))
  await restarting
  t.diagnostic(`${Date.now() - killedAt} ms from the kill to the end, the broker back`)
})

test('offsets set while the broker coordinating the group is frozen (SIGSTOP): it waits for the coordinator to move, describes the group there and writes every partition', { timeout: 120_000 }, async t => {
  // Given a group with commits at 5 on both partitions of a topic of the trio (3 replicas), no member
  await ensureTrio()
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('coordfrozen')
  const group = uniqueName('coordfrozen-group')
  await createTopic(trio, topic, { partitions: 2, replicationFactor: 3, t })
  await produce(trio, Array.from({ length: 20 }, (_, i) => ({ topic, partition: i % 2, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  const admin = new AdminClient({ 'bootstrap.servers': trio.bootstrap }, 'test', { label: 'cluster trio' })
  try {
    await admin.groups.alterCommittedOffsets(group, [{ topic, partition: 0, offset: 5 }, { topic, partition: 1, offset: 5 }])
  } finally { await admin.close() }
  // (default timeouts: request.timeout.ms 30 s, --timeout 30 s)
  const file = writeTempFile(multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: trio }], [`${a}->${b}`], [`topics = ${topic}`]), '.properties', t)

  // When the broker coordinating the group is frozen and `offsets set --to-earliest --execute` runs at once
  const frozen = await coordinatorOf(group)
  freezeTrioNode(frozen.nodeId, t)
  let set: Awaited<ReturnType<typeof runPlan>>
  let moved: { nodeId: number }
  let took: number
  try {
    const began = Date.now()
    set = await runPlan(['offsets', 'set', file, '--cluster', b, '--group', group, '--topic', topic, '--to-earliest', '--execute'], t)
    took = Date.now() - began
    t.diagnostic(`offsets set took ${took} ms with node ${frozen.nodeId} (${frozen.address}) frozen`)
    moved = await coordinatorOfOther(group, frozen.nodeId)
  } finally {
    // Thawed before anything else reads the trio: the test's clients (and its cleanups) would wait on the frozen broker.
    thawTrioNode(frozen.nodeId)
  }

  // Then, well within its --timeout (the frozen broker's answer to the broker check is not waited for past a few
  // seconds), it described the group where the coordinator moved (Empty, no member) and wrote both partitions
  assert.equal(set.code, 0, set.stdout + set.stderr)
  // (waiting out the frozen broker's request.timeout.ms would take 30 s; the bound leaves room for a loaded machine
  // starting the Node process and the controller fencing the broker)
  assert.ok(took < 25_000, `took ${took} ms`)
  // (Empty, or Dead: a coordinator that has just taken the group over answers reads from its partition's high
  // watermark, which can lag its log for a moment after the move (Kafka 4.x reads at the last committed offset),
  // so an offsets-only group may look absent. Either means no member; the broker's own check of the write, which
  // refuses a write under a group with members, is what keeps an active group safe.)
  assert.ok(['Empty', 'Dead'].includes(set.plan.groups[0]!.state), set.plan.groups[0]!.state)
  // The commits, though, are read stable (they decide the re-read and the check before the write): both at 5, never
  // read as absent (a plain read planned "none -> 0", then the check before the write read 5 and refused: exit 5).
  assert.deepEqual(set.plan.groups[0]!.moves.map(m => [m.partition, m.current, m.next]), [[0, 5, 0], [1, 5, 0]])
  assert.deepEqual([set.plan.groups[0]!.members, set.plan.groups[0]!.written], [0, true])
  t.diagnostic(`the group is coordinated by node ${moved.nodeId} now`)
  // (the thawed broker may answer from its stale copy of the group until it has read that it lost it)
  const expected = { [`${topic}-0`]: 0, [`${topic}-1`]: 0 }
  await waitFor(async () => {
    const now = Object.fromEntries(await committedOffsets(trio, group))
    return { done: JSON.stringify(now) === JSON.stringify(expected), state: now }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'the offsets written read back' })
})

test('the broker coordinating the group frozen (SIGSTOP) while first in bootstrap.servers: both members find the new coordinator through the other brokers within 45 s, copying goes on while it stays frozen, and after the thaw nothing is lost', { timeout: 180_000 }, async t => {
  // Given two instances sharing a flow into the trio, whose bootstrap.servers lists first the broker that will
  // coordinate their group (a frozen broker accepts connections and answers nothing: asking it first again and
  // again would never find the coordinator's new home)
  await ensureTrio()
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, ['source', trio], [a, b], async () => await killInstances(instances))
  const topic = uniqueName('coordfreeze')
  const group = `kmirror-${a}-${b}`
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const coordinator = await coordinatorOf(group)
  const ordered: TestCluster = { ...trio, bootstrap: [coordinator.address, ...trio.bootstrap.split(',').filter(s => s !== coordinator.address)].join(',') }
  const properties = trioFlowProperties(a, b, ordered, topic)
  const config = writeTempFile(properties, '.properties', t)
  const producer = produceContinuously(topic, PARTITIONS)
  t.after(async () => { await producer.stop() })
  instances.push(await startInstance(config, 'one', t), await startInstance(config, 'two', t))
  await waitForSplit(instances, PARTITIONS, 'two instances own 2 partitions each')
  const remote = `${a}.${topic}`
  assert.equal((await coordinatorOf(group)).nodeId, coordinator.nodeId)

  // When that broker is frozen
  const frozenAt = Date.now()
  freezeTrioNode(coordinator.nodeId, t)
  try {
    // Then each member, its heartbeat unanswered for a session (20 s), finds the coordinator again through another
    // broker and logs the move, within 45 s of the freeze (asking the frozen broker first, it took 62 s: a request
    // timeout on the heartbeat, another on FindCoordinator)
    const moved = await coordinatorOfOther(group, coordinator.nodeId)
    for (const i of instances) {
      await i.process.waitForOutput(new RegExp(`"msg":"the coordinator of group ${group} on cluster ${b} moved from broker ${coordinator.address} to broker ${moved.address} `), Math.max(1000, 45_000 - (Date.now() - frozenAt)))
    }
    t.diagnostic(`coordinator moved from node ${coordinator.nodeId} to node ${moved.nodeId}; both members followed ${Date.now() - frozenAt} ms after the freeze`)

    // And, the broker still frozen, copying goes on: every record produced by the time the members followed is
    // copied within 60 s of the freeze (the heartbeat that gave up made the broker silent: this process's
    // connections to it were closed, so a produce in flight to it and the reads of internal topics it led, which
    // held the new generation's start for a request timeout, were sent again where the cluster moved their
    // partitions; and the library clients that write progress read their metadata again, asking answering brokers
    // first, instead of connecting to the frozen leader again: without that, progress writes, and the data path
    // with them, waited 30 s more)
    const produced = producer.rounds()
    await waitFor(async () => {
      const positions = await copiedPositions(instances)
      return { done: positions.every(p => p >= produced), state: { positions, produced } }
    }, { timeoutMs: Math.max(1000, 60_000 - (Date.now() - frozenAt)), intervalMs: 250, message: `every partition copied up to offset ${produced} while the broker stays frozen` })
    t.diagnostic(`copied up to offset ${produced} on every partition ${Date.now() - frozenAt} ms after the freeze, the broker still frozen`)

    // And each instance told the operator: a warning naming the silent broker and its cluster, whichever found it
    // first (its cluster no longer listing it while a request waited on it, kafka/fenced-brokers.ts, or the
    // heartbeat given up), and the counter
    for (const i of instances) {
      assert.match(i.process.stderr, new RegExp(`"level":"warn"[^\n]*"msg":"broker ${coordinator.address} of cluster ${b} (answered nothing in time \\(Heartbeat|was fenced by its cluster while requests waited on it \\(a \\w+ request)`))
      const metrics = await (await fetch(`http://127.0.0.1:${i.port}/metrics`, { signal: AbortSignal.timeout(2000) })).text()
      assert.match(metrics, new RegExp(`^kmirror_broker_silences_total\\{broker="${coordinator.address}"\\} [1-9]`, 'm'))
    }
  } finally {
    thawTrioNode(coordinator.nodeId)
  }

  // And once the broker is thawed, both members share the work again
  await waitForSplit(instances, PARTITIONS, 'the two share the partitions 2/2 again')

  // And once the producer stopped, every source record is on the target in source order
  const rounds = await producer.stop()
  await waitForRounds(trio, remote, rounds, 60_000)
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const checked = assertCopiedInOrder(await readCommitted('source', topic, partition), await readCommitted(trio, remote, partition), 2, `${topic}-${partition}`)
    if (checked.rewinds > 0) t.diagnostic(`${topic}-${partition}: ${checked.duplicates} records copied twice`)
  }
  for (const i of instances) i.process.kill('SIGTERM')
  for (const i of instances) assert.equal((await i.process.waitForExit(30_000)).code, 0, i.process.stderr.slice(-3000))
})
