/**
 * The floor, Kafka 2.1 (what the Java client 4.x supports): a 2.1.1 broker works both ways with 4.1.1 (the same
 * scenario as the other compat files), and a 2.0.1 broker, below the floor, stops `kmirror run` (and `plan`) at
 * start with exit 3 and a message naming the broker, what it runs and the floor, having created nothing.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { getCluster, type ClusterName } from '../helpers/clusters.ts'
import { compatScenario, useCompatClusters } from '../helpers/compat.ts'
import { createTopic, listTopics, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { isAliasTopic, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName } from '../helpers/wait.ts'

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
