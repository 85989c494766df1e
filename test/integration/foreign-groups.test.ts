/**
 * Groups of other programs (Connect workers, kmirror's own instances: protocol types other than "consumer") seen
 * by the commands that describe groups on real clusters. Describing one must never fail the command (the Kafka
 * library decodes every member as a consumer and throws on any other protocol, outside the caller's promise);
 * an active one is refused as any active group is, and `--groups REGEX` leaves them out with a note, as
 * `--all-groups` does.
 *
 * The KIP-848 tests need a broker that runs KIP-848 groups (Kafka 4.0+ by default): on an external cluster
 * (KMIRROR_TEST_<NAME>_BOOTSTRAP) whose broker shows it does not, they are skipped, saying why (broker-apis.ts).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { readLastCheckpoints } from '../../src/failover/checkpoint-reader.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { RecordFetcher } from '../../src/kafka/record-fetcher.ts'
import { GroupCoordinator } from '../../src/kafka/group-coordinator.ts'
import { JoinGroupApi } from '../../src/kafka/protocol/join-group.ts'
import { SyncGroupApi } from '../../src/kafka/protocol/sync-group.ts'
import { skipWithoutKip848 } from '../helpers/broker-apis.ts'
import { getCluster, type ClusterName } from '../helpers/clusters.ts'
import { committedOffsets, runPlan } from '../helpers/drills.ts'
import { Consumer, MessagesStreamModes } from '@platformatic/kafka'
import { createTopic, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { clientOptions } from '../helpers/kafka-clients.ts'
import type { Cleanup } from '../helpers/kafka-clients.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

const SKIP_KIP848_TARGET = await skipWithoutKip848('target')
const SKIP_KIP848_SOURCE = await skipWithoutKip848('source')

/** A KIP-848 consumer (`group.protocol=consumer`) in GROUP on CLUSTER, subscribed to TOPIC, until the test ends; once listed as Stable. */
async function joinAsKip848Consumer (cluster: ClusterName, group: string, topic: string, admin: AdminClient, t: Cleanup): Promise<void> {
  const consumer = new Consumer({ ...clientOptions(cluster, 'kip848-member'), groupId: group, groupProtocol: 'consumer', autocommit: false })
  const stream = await consumer.consume({ topics: [topic], autocommit: false, mode: MessagesStreamModes.COMMITTED, sessionTimeout: 10_000, heartbeatInterval: 500 })
  t.after(async () => { await stream.close().catch(() => undefined); await consumer.close(true).catch(() => undefined) })
  stream.on('data', () => undefined)
  // (listed, as checkpoints, group offset sync and --all-groups list groups: the library lists classic groups only unless told)
  await waitFor(async () => (await admin.groups.listGroups()).find(g => g.groupId === group && g.protocolType === 'consumer')?.state === 'Stable',
    { timeoutMs: 30_000, message: `KIP-848 consumer in group ${group} on ${cluster}, listed` })
}

/** One member of protocol type "connect" (as a Connect worker) holding GROUP on CLUSTER until the test ends. */
async function holdAsConnectWorker (cluster: ClusterName, group: string, t: Cleanup): Promise<void> {
  const worker = new GroupCoordinator({ 'bootstrap.servers': getCluster(cluster).bootstrap }, 'connect-worker', { label: `cluster ${cluster}`, alias: cluster }, group, 10_000)
  t.after(() => worker.close())
  const join = { groupId: group, sessionTimeoutMs: 45_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'connect', protocols: [{ name: 'sessioned', metadata: Buffer.from('not a consumer subscription') }], reason: null }
  let answer = await worker.send(JoinGroupApi, join, 'join')
  if (answer.errorCode === 79) answer = await worker.send(JoinGroupApi, { ...join, memberId: answer.memberId }, 'join')
  assert.equal(answer.errorCode, 0, `JoinGroup of ${group} on ${cluster}`)
  // Its own assignment bytes, not a consumer assignment: the group is Stable, and DescribeGroups returns both.
  const assignments = [{ memberId: answer.memberId, assignment: Buffer.from('a Connect assignment') }]
  const synced = await worker.send(SyncGroupApi, { groupId: group, generationId: answer.generationId, memberId: answer.memberId, protocolType: 'connect', protocolName: 'sessioned', assignments }, 'join')
  assert.equal(synced.errorCode, 0, `SyncGroup of ${group} on ${cluster}`)
}

test('failover, failback and offsets set describe groups of other protocols: no failure, active ones refused, --groups leaves them out', { timeout: 120_000 }, async t => {
  // Given a group held by a Connect worker on A and on B, and a consumer group with a commit on A
  const a = uniqueAlias('a')
  const b = uniqueAlias('b')
  const prefix = uniqueName('foreign')
  const worker = `${prefix}-worker`
  const consumers = `${prefix}-consumers`
  const topic = uniqueName('foreign-topic')
  await createTopic('source', topic, { partitions: 1, t })
  await createTopic('target', topic, { partitions: 1, t })
  await produce('target', Array.from({ length: 10 }, (_, i) => ({ topic, partition: 0, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  await holdAsConnectWorker('source', worker, t)
  await holdAsConnectWorker('target', worker, t)
  const sourceAdmin = new AdminClient({ 'bootstrap.servers': getCluster('source').bootstrap }, 'test', { label: 'cluster source' })
  t.after(() => sourceAdmin.close())
  await sourceAdmin.groups.alterCommittedOffsets(consumers, [{ topic, partition: 0, offset: 0 }])
  const file = writeTempFile(mm2Properties({ source: 'source', target: 'target', sourceAlias: a, targetAlias: b, extra: [`${a}->${b}.topics = ${topic}`] }), '.properties', t)
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b])

  // When the worker's group is named: described on both clusters (its member, state Stable), nothing to move (exit 0)
  const named = await runPlan(['failover', file, '--from', a, '--to', b, '--group', worker], t)
  assert.equal(named.code, 0, named.stderr)
  assert.deepEqual([named.plan.groups[0]!.state, named.plan.groups[0]!.members], ['Stable', 1])
  assert.match(named.plan.groups[0]!.notes.join('\n'), new RegExp(`1 active member\\(s\\) on ${a} \\(state Stable\\)[^]*no committed offset on ${a}`))

  // When a regex matches both: the consumer group is planned, the worker's group left out with a note naming it
  const byRegex = await runPlan(['failover', file, '--from', a, '--to', b, '--groups', `${prefix}-.*`], t)
  assert.doesNotMatch(byRegex.stderr, /KMIRROR_ERR_INTERNAL/)
  assert.deepEqual(byRegex.plan.groups.map(g => g.group), [consumers])
  assert.match(byRegex.plan.notes.join('\n'), new RegExp(`${worker} .*protocol type connect.*not a consumer group`))

  // When failing back the worker's group: described on A (the destination) and B, nothing to move (exit 0)
  const back = await runPlan(['failback', file, '--from', b, '--to', a, '--group', worker], t)
  assert.equal(back.code, 0, back.stderr)
  assert.deepEqual([back.plan.groups[0]!.cluster, back.plan.groups[0]!.state, back.plan.groups[0]!.members], [a, 'Stable', 1])

  // When setting its offsets on B: refused as an active group (exit 5), nothing written
  const set = await runPlan(['offsets', 'set', file, '--cluster', b, '--group', worker, '--topic', topic, '--to-earliest', '--execute'], t)
  assert.equal(set.code, 5, set.stderr)
  assert.match(set.plan.groups[0]!.refusals.join('\n'), /1 active member\(s\) on /)
  assert.equal((await committedOffsets('target', worker)).size, 0)
})

test('a group of KIP-848 consumers (group.protocol=consumer), which DescribeGroups shows as Dead: described by ConsumerGroupDescribe, refused as active (exit 5), nothing written', { skip: SKIP_KIP848_TARGET, timeout: 120_000 }, async t => {
  // Given a topic on B with a commit at 5 and a KIP-848 consumer active in the group
  const topic = uniqueName('kip848')
  const group = uniqueName('kip848-group')
  await createTopic('target', topic, { partitions: 1, t })
  await produce('target', Array.from({ length: 10 }, (_, i) => ({ topic, partition: 0, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  const admin = new AdminClient({ 'bootstrap.servers': getCluster('target').bootstrap }, 'test', { label: 'cluster target' })
  t.after(() => admin.close())
  await admin.groups.alterCommittedOffsets(group, [{ topic, partition: 0, offset: 5 }])
  await joinAsKip848Consumer('target', group, topic, admin, t)
  const file = writeTempFile(mm2Properties({ source: 'source', target: 'target' }), '.properties', t)

  // When its offsets are set on B: its member is seen, and the group refused as active (exit 5), nothing written
  const set = await runPlan(['offsets', 'set', file, '--cluster', 'B', '--group', group, '--topic', topic, '--to-earliest', '--execute'], t)
  assert.equal(set.code, 5, set.stderr)
  assert.deepEqual([set.plan.groups[0]!.state, set.plan.groups[0]!.members], ['Stable', 1])
  assert.match(set.plan.groups[0]!.refusals.join('\n'), /1 active member\(s\) on B \(state Stable\)/)
  assert.equal((await committedOffsets('target', group)).get(`${topic}-0`), 5)
})

test('a group of KIP-848 consumers on the source is checkpointed, as classic groups are', { skip: SKIP_KIP848_SOURCE, timeout: 120_000 }, async t => {
  // Given a topic on A copied by kmirror, and a group with a commit at 4 whose consumer then joins with group.protocol=consumer
  const a = uniqueAlias('a')
  const b = uniqueAlias('b')
  const topic = uniqueName('kip848-cp')
  const group = uniqueName('kip848-cp-group')
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', Array.from({ length: 10 }, (_, i) => ({ topic, partition: 0, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  const admin = new AdminClient({ 'bootstrap.servers': getCluster('source').bootstrap }, 'test', { label: 'cluster source' })
  t.after(() => admin.close())
  await admin.groups.alterCommittedOffsets(group, [{ topic, partition: 0, offset: 4 }])
  await joinAsKip848Consumer('source', group, topic, admin, t)

  // When kmirror runs the flow with checkpoints every second
  const file = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `${a}->${b}.groups = ${group}`, 'emit.checkpoints.interval.seconds = 1', 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', file], { t })
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => { kmirror.kill('SIGTERM'); await kmirror.waitForExit(15_000) })

  // Then its checkpoint on B names the group's commit and the same offset on the remote topic
  const props = { 'bootstrap.servers': getCluster('target').bootstrap }
  const targetAdmin = new AdminClient(props, 'kip848-checkpoints-admin', { label: 'cluster target' })
  const reader = new RecordFetcher(props, 'kip848-checkpoints-reader', { isolation: 'read_committed', maxWaitMs: 100, maxBytes: 10_000_000, maxPartitionBytes: 1_000_000 })
  t.after(async () => { await Promise.all([targetAdmin.close(), reader.close()]) })
  const checkpoint = await waitForValue(async () => {
    const all = await readLastCheckpoints(`${a}.checkpoints.internal`, targetAdmin, reader).catch(() => undefined)
    const found = [...(all?.get(group)?.values() ?? [])][0]
    return { done: found !== undefined, state: found }
  }, { timeoutMs: 60_000, intervalMs: 500, message: `a checkpoint of KIP-848 group ${group}` })
  assert.deepEqual([checkpoint?.topic, checkpoint?.partition, checkpoint?.upstreamOffset, checkpoint?.downstreamOffset], [`${a}.${topic}`, 0, 4, 4])
})
