/**
 * The floor, Kafka 2.1 (what the Java client 4.x supports): a 2.1.1 broker works both ways with 4.1.1 (the same
 * scenario as the other compat files), and a 2.0.1 broker, below the floor, stops `kmirror run` (and `plan`) at
 * start with exit 3 and a message naming the broker, what it runs and the floor, having created nothing. Below 2.3
 * (no IncrementalAlterConfigs) topic configs are synced with AlterConfigs; below 2.4 (no broker-default replication
 * factor) -1 is refused with a message asking for a number. On a 2.1.1 target (JoinGroup v3: no KIP-394 member id
 * round trip, no static membership) two instances share a flow through their group and hand it over on SIGTERM; a
 * remote topic then deleted by hand (no topic ids to tell the new one) is created again and copied again whole.
 * Exactly-once mode on a 2.1.1 target (AddPartitionsToTxn v0, EndTxn v0, no ListTransactions): an instance killed
 * with kill -9 and started again at once has its transactional id fenced by the new one, every record exactly once.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { getCluster, type ClusterName } from '../helpers/clusters.ts'
import { compatScenario, useCompatClusters } from '../helpers/compat.ts'
import { eosRestart } from '../helpers/compat-eos.ts'
import { ConfigResourceTypes, IncrementalAlterConfigOperationTypes } from '@platformatic/kafka'
import { createTopic, deleteTopics, listTopics, produce, TIMESTAMP_BASE, topicConfig, withAdmin } from '../helpers/kafka.ts'
import { isAliasTopic, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertEndedWellBeforeTimeout, describeEnd, GROUP_SETTINGS, type Instance, killInstances, nothingToFence, openAtKillEnded, startInstance, waitForSplit } from '../helpers/instances.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

useCompatClusters(['v21', 'v20'])

test('from Kafka 2.1.1 to 4.1.1: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'v21', target: 'target' })
})

test('from Kafka 4.1.1 to 2.1.1: exact copy, exact offset syncs, an exact checkpoint and failover plan', { timeout: 180_000 }, async t => {
  await compatScenario(t, { source: 'source', target: 'v21' })
})

for (const [source, target] of [['v20', 'target'], ['source', 'v20']] as const satisfies readonly [ClusterName, ClusterName][]) {
  test(`kmirror run and plan from ${source} to ${target} with a Kafka 2.0.1 broker exit 3 at start, naming the broker, its release and the floor`, { timeout: 120_000 }, async t => {
    // Given a topic with records on the source, one of the two clusters being Kafka 2.0.1
    const a = uniqueAlias('a')
    const b = uniqueAlias('b')
    const topic = uniqueName('below-floor')
    await createTopic(source, topic, { partitions: 1, t })
    await produce(source, [{ topic, partition: 0, key: null, value: Buffer.from('v'), headers: [], timestamp: TIMESTAMP_BASE }])
    const file = writeTempFile(mm2Properties({ source, target, sourceAlias: a, targetAlias: b, extra: [`${a}->${b}.topics = ${topic}`, 'emit.heartbeats.enabled = false'] }), '.properties', t)

    // When kmirror runs the flow
    const kmirror = spawnKmirror(['run', file], { t })
    removeAliasTopicsAfter(t, [source, target], [a, b])
    const exit = await kmirror.waitForExit(60_000)

    // Then it stops at start with exit 3, and the message names the broker, its release and the floor
    assert.equal(exit.code, 3, kmirror.stderr.slice(-3000))
    const old = getCluster('v20')
    const alias = source === 'v20' ? a : b
    assert.match(kmirror.stderr, new RegExp(`cluster ${alias} broker ${old.bootstrap.replaceAll('.', '\\.')} \\(looks like Kafka 2\\.0 or older\\)`))
    assert.match(kmirror.stderr, /kmirror works with Apache Kafka 2\.1 or newer/)
    // And kmirror plan says the same with exit 3
    const plan = spawnKmirror(['plan', file], { t })
    assert.equal((await plan.waitForExit(60_000)).code, 3, plan.stderr.slice(-3000))
    assert.match(plan.stderr, /looks like Kafka 2\.0 or older\).*kmirror works with Apache Kafka 2\.1 or newer/)
    // And nothing was created on either cluster
    for (const cluster of [source, target]) assert.deepEqual((await listTopics(cluster)).filter(name => isAliasTopic(name, [a, b])), [], `topics on ${cluster}`)
  })
}

test('to Kafka 2.1.1, which has no IncrementalAlterConfigs: a config set and one removed on the source reach the remote topic through AlterConfigs', { timeout: 120_000 }, async t => {
  // Given a source topic with a topic-level config, replicated to 2.1.1 with a one-second config sync
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('floor-configs')
  const remote = `${a}.${topic}`
  await createTopic('source', topic, { partitions: 1, configs: { 'retention.ms': '86400000', 'cleanup.policy': 'compact', 'max.message.bytes': '2000000' }, t })
  removeAliasTopicsAfter(t, ['source', 'v21'], [a, b])
  const file = writeTempFile(mm2Properties({
    source: 'source', target: 'v21', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, 'emit.heartbeats.enabled = false', 'sync.topic.configs.interval.seconds = 1', 'config.properties.exclude = min\\.insync\\.replicas']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', file], { t })
  await waitFor(async () => (await topicConfig('v21', remote, { overridesOnly: true }).catch((): Record<string, string | null> => ({})))['cleanup.policy'] === 'compact', { timeoutMs: 60_000, message: `${remote} created with cleanup.policy=compact` })
  // And a setting of the remote topic's own that config sync must leave alone (excluded)
  await withAdmin('v21', admin => admin.alterConfigs({
    resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: remote, configs: [{ name: 'retention.ms', value: '86400000' }, { name: 'cleanup.policy', value: 'compact' }, { name: 'max.message.bytes', value: '2000000' }, { name: 'min.insync.replicas', value: '1' }] }]
  }))

  // When the source changes one config and removes the other
  await withAdmin('source', admin => admin.incrementalAlterConfigs({
    resources: [{
      resourceType: ConfigResourceTypes.TOPIC,
      resourceName: topic,
      configs: [
        { name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.SET, value: '3600000' },
        { name: 'cleanup.policy', configOperation: IncrementalAlterConfigOperationTypes.DELETE }
      ]
    }]
  }))

  // Then the remote topic's own configs follow (the removed one back to the broker default), and the unchanged one
  // and the excluded one are still there: AlterConfigs replaces a topic's whole config, so kmirror sends them too
  const expected = { 'max.message.bytes': '2000000', 'min.insync.replicas': '1', 'retention.ms': '3600000' }
  await waitFor(async () => {
    const overrides = await topicConfig('v21', remote, { overridesOnly: true })
    const sorted = Object.fromEntries(Object.entries(overrides).sort(([x], [y]) => (x < y ? -1 : 1)))
    return { done: JSON.stringify(sorted) === JSON.stringify(expected), state: JSON.stringify(sorted) }
  }, { timeoutMs: 30_000, message: `${remote} has exactly ${JSON.stringify(expected)} of its own` })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))
  assert.doesNotMatch(kmirror.stderr, /cannot sync configs/)
})

test('to Kafka 2.1.1, replication.factor = -1 (the broker default, which brokers before 2.4 lack) is refused with a message asking for a number', { timeout: 120_000 }, async t => {
  // Given a flow to 2.1.1 whose remote topics would get replication factor -1
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('floor-rf')
  await createTopic('source', topic, { partitions: 1, t })
  removeAliasTopicsAfter(t, ['source', 'v21'], [a, b])
  const file = writeTempFile(mm2Properties({
    source: 'source', target: 'v21', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, 'emit.heartbeats.enabled = false', 'replication.factor = -1']
  }), '.properties', t)

  // When kmirror runs it
  const kmirror = spawnKmirror(['run', file, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const port = (await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 60_000))[1]
  await waitFor(() => kmirror.stderr.includes(`cannot create topic ${a}.${topic}`) && kmirror.stderr.includes('kmirror started'), { timeoutMs: 60_000, message: 'the creation error, then a started kmirror' })
  // (/healthz says degraded naming the topic, /status gives the message with the fix: the topic is not copied)
  const health = await fetch(`http://127.0.0.1:${port}/healthz`)
  assert.equal(health.status, 503)
  assert.equal(await health.text(), `degraded: 1 topic(s) of ${a}->${b} with a remote topic problem (${topic}; /status remoteTopicProblems names the fix)\n`)
  const status = await (await fetch(`http://127.0.0.1:${port}/status?summary`)).json() as { flows: { state: string, remoteTopicProblems: { topic: string, remoteTopic: string, message: string }[] }[] }
  assert.equal(status.flows[0]!.state, 'degraded')
  assert.deepEqual(status.flows[0]!.remoteTopicProblems.map(p => [p.topic, p.remoteTopic]), [[topic, `${a}.${topic}`]])
  assert.match(status.flows[0]!.remoteTopicProblems[0]!.message, /set replication\.factor to a number/)
  kmirror.kill('SIGTERM')
  // (the flow keeps running: a topic that cannot be created is an error for that topic only)
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))

  // Then the error names the topic, the cluster, why -1 fails and the key to set to a number
  assert.match(kmirror.stderr, new RegExp(`cannot create topic ${a}\\.${topic} on cluster ${b} with replication factor -1 \\(the broker default\\): the cluster has 1 broker\\(s\\); brokers before Kafka 2\\.4 have no default .*: set replication\\.factor to a number`))
  assert.doesNotMatch(kmirror.stderr, /or to -1 for the broker default/)
})

test('on a Kafka 2.1.1 target, two instances share a flow through their group (2 partitions each), and one takes everything over when the other stops', { timeout: 120_000 }, async t => {
  // Given a topic of 4 partitions with records on the source, replicated to 2.1.1 by two instances of one configuration
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('floor-group')
  const remote = `${a}.${topic}`
  await createTopic('source', topic, { partitions: 4, t })
  const batch = (round: number): Parameters<typeof produce>[1] => Array.from({ length: 4 }, (_, partition) => ({
    topic, partition, key: Buffer.from(`k${round}`), value: Buffer.from(`${partition}:${round}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(round)
  }))
  await produce('source', [...batch(0), ...batch(1)])
  const config = writeTempFile(mm2Properties({ source: 'source', target: 'v21', sourceAlias: a, targetAlias: b, extra: [`${a}->${b}.topics = ${topic}`, ...GROUP_SETTINGS] }), '.properties', t)
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, ['source', 'v21'], [a, b], async () => await killInstances(instances))
  const copied = async (): Promise<boolean> => {
    for (let p = 0; p < 4; p++) {
      const [source, target] = await Promise.all([readCommitted('source', topic, p), readCommitted('v21', remote, p).catch(() => [])])
      if (target.length < source.length) return false
    }
    return true
  }
  const assertExactCopy = async (label: string): Promise<void> => {
    for (let p = 0; p < 4; p++) assertSamePartition(await readCommitted('source', topic, p), await readCommitted('v21', remote, p), `${label}, ${remote}-${p}`)
  }

  // When both run
  instances.push(...await Promise.all([startInstance(config, 'one', t), startInstance(config, 'two', t)]))

  // Then each owns 2 partitions, both see the same two-member group, and every record is copied once
  const split = await waitForSplit(instances, 4, 'two instances own 2 partitions each on a 2.1.1 coordinator')
  assert.deepEqual(split.map(s => s.membership!.members.length), [2, 2])
  assert.equal(new Set(split.map(s => s.membership!.leader)).size, 1, 'both agree on the leader')
  await waitFor(copied, { timeoutMs: 60_000, message: `the 8 records copied to ${remote} on 2.1.1` })
  await assertExactCopy('two instances')

  // When one stops (SIGTERM) and more records arrive
  const [one, two] = instances
  two!.process.kill('SIGTERM')
  assert.equal((await two!.process.waitForExit(15_000)).code, 0, two!.process.stderr.slice(-3000))
  await waitForSplit([one!], 4, 'the remaining instance owns all 4 partitions')
  await produce('source', batch(2))

  // Then the remaining one copies them, and the target still holds every record once, in source order
  await waitFor(copied, { timeoutMs: 60_000, message: `the 12 records copied to ${remote}` })
  await assertExactCopy('after the hand-over')

  // When the remote topic is deleted on the 2.1.1 target by hand (no topic ids there to tell the new one apart)
  await deleteTopics('v21', [remote])
  // Then the instance, which runs the topic refresh and owns every partition, creates it again and copies every
  // partition again from the log start (their stored positions forgotten first): every record once again, none
  // missing before the old positions
  await one!.process.waitForOutput(new RegExp(`"msg":"remote topic ${remote} was deleted on cluster ${b} while kmirror replicated ${topic}: created it again; copying ${topic} again from the log start of cluster ${a}`), 60_000)
  await waitFor(copied, { timeoutMs: 60_000, message: `the 12 records copied again into ${remote} created again` })
  await assertExactCopy('after the remote topic was deleted and created again')
  one!.process.kill('SIGTERM')
  assert.equal((await one!.process.waitForExit(15_000)).code, 0, one!.process.stderr.slice(-3000))
})

test('exactly-once to Kafka 2.1.1: a lone instance killed with kill -9 and started again at once: the new one fences the dead one\'s transactional id: its open transaction ends well before the transaction timeout, and read_committed readers find every record exactly once', { timeout: 240_000 }, async t => {
  const { again, killed, restartedAt, killedAt, endsAtKill, remote, group, checkExactlyOnce } = await eosRestart(t, 'v21', 'at-once')

  // Then the restarted instance leads its first generation and fences the id the dead member named (unless a loaded
  // machine took longer than the session timeout to start it: the coordinator had dropped the dead member, seen by a
  // generation with neither of them; or the dead one had lost its membership just before the kill: its producer
  // ended with it, nothing of it listed)
  // (unfenced, the dead one's transaction ends at its timeout, 60 s: only then does the new instance start copying, as
  // the progress it resumes from is read past open transactions, so every record is visible later)
  const fenced = /"msg":"fencing the transactional ids of members that left work behind"/.test(again.process.stderr)
  const why = fenced ? null : nothingToFence(killed, again, group)
  if (why === 'lost') t.diagnostic('the killed instance had lost its membership before the kill: nothing of it listed to fence')
  else if (why === 'session-ended') t.diagnostic('the dead member\'s session had ended before the new instance joined: nothing of it listed to fence')
  else {
    assert.ok(fenced, `no fencing line; the restarted instance:\n${again.process.stderr.slice(-3000)}\nthe killed one:\n${killed.process.stderr.slice(-3000)}`)
  }
  const visibleMs = await checkExactlyOnce(why !== null ? 170_000 : 90_000) - restartedAt
  // And the transaction the dead one left open ended well before its timeout, told by its markers' own times from
  // the kill (which include starting a Node process on a loaded machine), not by when the test's reader saw it all
  const ended = await openAtKillEnded('v21', remote, endsAtKill)
  if (why !== 'session-ended') assertEndedWellBeforeTimeout(ended, killedAt)
  t.diagnostic(`every record visible ${visibleMs} ms after the restart; ${describeEnd(ended, killedAt)} (transaction timeout 60000 ms)`)
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(15_000)).code, 0, again.process.stderr.slice(-3000))
})
