/**
 * Active-active A<->B with DefaultReplicationPolicy, both flows in one kmirror process, under continuous
 * traffic both ways: MM2's cycle detection keeps every topic from going back where it came from, so each side
 * holds exactly its own topics plus the other's, once (never `A.B.A.orders`), and every remote partition is an
 * exact copy of its source partition.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { createTopic, endOffsets, listTopics, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

/** How long both sides produce while kmirror runs (the issue asks for minutes; the suite's budget allows this). */
// "Several minutes of traffic both ways" (issue 3): three by default; KMIRROR_TEST_ACTIVE_ACTIVE_MS changes it.
const TRAFFIC_MS = Number(process.env.KMIRROR_TEST_ACTIVE_ACTIVE_MS ?? 180_000)
const PARTITIONS = 3
const PER_ROUND = 30

type Side = 'source' | 'target'

/** Produces rounds of records to TOPICS (spread over partitions) until `until`; returns the count per topic. */
async function traffic (cluster: Side, topics: readonly string[], until: number): Promise<Map<string, number>> {
  const counts = new Map(topics.map(t => [t, 0]))
  for (let round = 0; Date.now() < until; round++) {
    const records: TestRecord[] = []
    for (let i = 0; i < PER_ROUND; i++) {
      const topic = topics[i % topics.length]!
      const n = counts.get(topic)!
      counts.set(topic, n + 1)
      records.push({
        topic, partition: n % PARTITIONS, key: Buffer.from(`k${n % 17}`), value: Buffer.from(`${cluster}:${topic}:${n}`),
        headers: n % 5 === 0 ? [[Buffer.from('trace'), Buffer.from(String(n))]] : [], timestamp: TIMESTAMP_BASE + BigInt(n)
      })
    }
    await produce(cluster, records)
    await delay(100) // pacing the producer, not waiting for a condition
  }
  return counts
}

async function total (cluster: Side, topic: string): Promise<bigint> {
  return (await endOffsets(cluster, topic).catch(() => [] as bigint[])).reduce((x, y) => x + y, 0n)
}

test('active-active A<->B with the default policy: each side holds its own topics and the other\'s, once, copied exactly', { timeout: TRAFFIC_MS + 240_000 }, async t => {
  // Given clusters a (source) and b (target), each with two topics of its own, one of them with the same name on both
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const prefix = uniqueName('aa')
  const shared = `${prefix}-shared`
  const onA = [`${prefix}-orders`, shared]
  const onB = [`${prefix}-stock`, shared]
  for (const topic of onA) await createTopic('source', topic, { partitions: PARTITIONS, t })
  for (const topic of onB) await createTopic('target', topic, { partitions: PARTITIONS, t })
  // Both flows select every topic naming the prefix and both sides' heartbeat topics, remote ones included: only
  // cycle detection keeps them home (other tests' heartbeat topics are left out: see test/helpers/multi-cluster.ts)
  const config = writeTempFile(multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: 'target' }], [`${a}->${b}`, `${b}->${a}`], [
    `topics = .*${prefix}.*, heartbeats, ${a}[.]heartbeats, ${b}[.]heartbeats`, 'heartbeats.replication.enabled = false', 'refresh.topics.interval.seconds = 1'
  ]), '.properties', t)

  // When kmirror runs both flows (no --clusters) while both sides produce continuously
  const kmirror = spawnKmirror(['run', config, '--progress-interval', '15'], { t })
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => { kmirror.kill('SIGKILL'); await kmirror.waitForExit(10_000) })
  await kmirror.waitForOutput(/kmirror started/, 60_000)
  const started = Date.now()
  const until = started + TRAFFIC_MS
  const [countsA, countsB] = await Promise.all([traffic('source', onA, until), traffic('target', onB, until)])
  const trafficSeconds = Math.round((Date.now() - started) / 1000)

  // Then every remote partition catches up with its source partition
  const pairs = [
    ...onA.map(topic => ({ from: 'source' as Side, to: 'target' as Side, topic, remote: `${a}.${topic}`, count: countsA.get(topic)! })),
    ...onB.map(topic => ({ from: 'target' as Side, to: 'source' as Side, topic, remote: `${b}.${topic}`, count: countsB.get(topic)! }))
  ]
  await waitFor(async () => {
    const state = await Promise.all(pairs.map(async p => ({ remote: p.remote, copied: await total(p.to, p.remote), produced: p.count })))
    return { done: state.every(s => s.copied === BigInt(s.produced)), state }
  }, { timeoutMs: 120_000, intervalMs: 1000, message: 'every remote topic caught up' })

  // And each side holds exactly its own topics and the other's, once, plus the other side's heartbeats
  const [topicsOnA, topicsOnB] = await Promise.all([listTopics('source'), listTopics('target')])
  assert.deepEqual(topicsOnA.filter(n => n.includes(prefix)), [...onA, ...onB.map(n => `${b}.${n}`)].sort())
  assert.deepEqual(topicsOnB.filter(n => n.includes(prefix)), [...onB, ...onA.map(n => `${a}.${n}`)].sort())
  assert.ok(topicsOnA.includes(`${b}.heartbeats`) && topicsOnB.includes(`${a}.heartbeats`))
  // And nothing came home: no a.* on a, no b.* on b, no a.b.* or b.a.* anywhere (heartbeat topics included)
  assert.deepEqual(topicsOnA.filter(n => n.startsWith(`${a}.`)), [])
  assert.deepEqual(topicsOnB.filter(n => n.startsWith(`${b}.`)), [])
  assert.deepEqual([...topicsOnA, ...topicsOnB].filter(n => n.includes(`${a}.${b}.`) || n.includes(`${b}.${a}.`)), [])

  // And every remote partition is an exact copy, record by record: nothing lost, nothing doubled
  for (const p of pairs) {
    for (let partition = 0; partition < PARTITIONS; partition++) {
      assertSamePartition(await readCommitted(p.from, p.topic, partition), await readCommitted(p.to, p.remote, partition), `${p.remote}-${partition}`)
    }
  }
  const produced = [...countsA.values(), ...countsB.values()].reduce((x, y) => x + y, 0)
  t.diagnostic(`${trafficSeconds} s of traffic both ways, ${produced} records produced, each copied exactly once`)

  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))
})
