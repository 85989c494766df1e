/**
 * A remote topic deleted by hand on the target while two kmirror instances share its partitions (issue 11): the
 * instance that runs the topic refresh creates it again, and every owner of one of its partitions sees the new
 * topic id (at its next write, or at its periodic check when its partition is idle) and copies its partitions again
 * from the source's log start. The target then holds every source record of every partition exactly, whichever
 * instance owns which partition.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTopic, deleteTopics, endOffsets, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { GROUP_SETTINGS, type Instance, killInstances, startInstance, waitForSplit } from '../helpers/instances.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const PARTITIONS = 4

function records (topic: string, partitions: readonly number[], from: number, count: number): TestRecord[] {
  return partitions.flatMap(partition => Array.from({ length: count }, (_, i) => ({
    topic, partition, key: Buffer.from(`k${from + i}`), value: Buffer.from(`${partition}:${from + i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(from + i)
  })))
}

test('the remote topic deleted by hand with two instances: every owner copies its partitions again from the log start, and the target is an exact copy', { timeout: 90_000 }, async t => {
  // Given a topic of 4 partitions copied by two instances, 2 partitions each
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('rdel')
  const remote = `${a}.${topic}`
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const config = writeTempFile(multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: 'target' }], [`${a}->${b}`],
    [`topics = ${topic}`, ...GROUP_SETTINGS]), '.properties', t)
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => await killInstances(instances))
  instances.push(...await Promise.all([startInstance(config, 'one', t), startInstance(config, 'two', t)]))
  await waitForSplit(instances, PARTITIONS, 'two instances own 2 partitions each')
  await produce('source', records(topic, [0, 1, 2, 3], 0, 20))
  await waitFor(async () => {
    const ends = await endOffsets('target', remote).catch(() => [])
    return { done: ends.length === PARTITIONS && ends.every(e => e === 20n), state: ends }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'first 20 records of every partition copied' })

  // When the remote topic is deleted on the target, and then more records arrive on partitions 0 and 1 only
  await deleteTopics('target', [remote])
  await produce('source', records(topic, [0, 1], 20, 10))

  // Then the target holds every source record of every partition exactly, record by record: the written
  // partitions and the idle ones (2 and 3), whichever instance owns them
  await waitFor(async () => {
    const ends = await endOffsets('target', remote).catch(() => [])
    return { done: ends.length === PARTITIONS && ends[0] === 30n && ends[1] === 30n && ends[2] === 20n && ends[3] === 20n, state: ends }
  }, { timeoutMs: 45_000, intervalMs: 250, message: 'every partition copied again into the re-created topic' })
  for (let partition = 0; partition < PARTITIONS; partition++) {
    assertSamePartition(await readCommitted('source', topic, partition), await readCommitted('target', remote, partition), `${topic}-${partition}`)
  }

  // And each instance said so for its own partitions, at error level: four partitions copied again, once each
  const lines = instances.flatMap(i => i.process.stderr.split('\n').filter(l => l.includes('was deleted and created again on cluster')).map(l => ({ who: i, line: l })))
  const partitions = lines.map(l => /copying \S+-(\d+) again from offset 0/.exec(l.line)?.[1]).sort()
  assert.deepEqual(partitions, ['0', '1', '2', '3'], lines.map(l => l.line).join('\n'))
  assert.equal(new Set(lines.map(l => l.who)).size, 2, 'both instances copied their own partitions again')
  const refresher = instances.flatMap(i => i.process.stderr.split('\n').filter(l => l.includes(`remote topic ${remote} was deleted on cluster ${b}`)))
  assert.equal(refresher.length, 1, 'one instance (the one running the topic refresh) created the remote topic again')

  for (const i of instances) i.process.kill('SIGTERM')
  for (const i of instances) assert.equal((await i.process.waitForExit(15_000)).code, 0, i.process.stderr.slice(-3000))
})
