/**
 * Dynamic ownership on real clusters, without the group protocol: two Flow objects of one flow (one process) are
 * given work as the group would give it. Partitions move from A to B with a clean revoke (progress stored before it
 * resolves), back from B to A, and B loses its membership (nothing stored) while records keep arriving. Every
 * record is on the target in source order; only the partitions B lost may hold repeats; stored progress is exact;
 * each job runs only where assigned; and checkpoints are exact for partitions the checkpointing flow does not copy
 * (it follows the offset history the other one writes).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { WorkItem } from '../../src/cluster/work.ts'
import { loadConfig } from '../../src/config/load.ts'
import type { FlowConfig } from '../../src/config/types.ts'
import { readLastCheckpoints } from '../../src/failover/checkpoint-reader.ts'
import { ClusterClients } from '../../src/kafka/cluster-clients.ts'
import { ProgressStore } from '../../src/replication/progress-store.ts'
import { Flow } from '../../src/runtime/flow.ts'
import { findFlow } from '../../src/runtime/offsets.ts'
import { partitionKey } from '../../src/topic-partition.ts'
import { memoryLogger } from '../fakes/memory-logger.ts'
import { commitOffsets } from '../helpers/groups.ts'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { assertAllPresentInOrder, assertSamePartition, readCommitted, recordSignature } from '../helpers/replication.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

const PARTITIONS = 4

/** Produces one record per partition of every topic per round until `stop()`; values are unique. */
function produceContinuously (topics: readonly string[]): { stop: () => Promise<number> } {
  let running = true
  let round = 0
  const loop = (async () => {
    while (running) {
      const records: TestRecord[] = topics.flatMap(topic => Array.from({ length: PARTITIONS }, (_, partition) => ({
        topic, partition, key: Buffer.from(`k${round}`), value: Buffer.from(`${topic}-${partition}-${round}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(round)
      })))
      await produce('source', records)
      round++
    }
  })()
  return { stop: async () => { running = false; await loop; return round } }
}

/** The progress stored on the target for this flow, per `partitionKey`. */
async function storedProgress (flow: FlowConfig): Promise<Map<string, number>> {
  const target = new ClusterClients(flow.target, `${flow.name}|test`, 'target')
  try {
    return await new ProgressStore(flow, target.admin, target.reader, null).load({ readOnly: true })
  } finally {
    await target.close()
  }
}

async function targetEnd (topic: string, partition: number): Promise<number> {
  return Number((await endOffsets('target', topic))[partition])
}

const jobRuns = (flow: Flow, job: string): number => flow.status().jobs.find(j => j.name === job)?.runs ?? 0

test('partitions and jobs move between two flows: clean revokes lose and repeat nothing, a lost membership repeats at most, checkpoints stay exact', { timeout: 90_000 }, async t => {
  // Given two topics of 4 partitions and one flow configuration, run by two Flow objects that wait for work
  const prefix = uniqueName('own')
  const topics = [`${prefix}-a`, `${prefix}-b`]
  for (const topic of topics) await createTopic('source', topic, { partitions: PARTITIONS, t })
  const group = `${prefix}-group`
  const file = writeTempFile(mm2Properties({
    source: 'source',
    target: 'target',
    extra: [`A->B.topics = ${prefix}-.*`, `A->B.groups = ${group}`, 'emit.checkpoints.interval.seconds = 1', 'B.offset.flush.interval.ms = 200',
      'emit.heartbeats.enabled = false', 'sync.topic.acls.enabled = false', 'sync.topic.configs.enabled = false', 'refresh.topics.interval.seconds = 1']
  }))
  const config = findFlow(loadConfig(file), 'A', 'B')
  const [logA, logB] = [memoryLogger('info'), memoryLogger('info')]
  const workChanged = { a: 0, b: 0 }
  const a = new Flow(config, logA.log, undefined, { onWorkChanged: () => { workChanged.a++ } })
  const b = new Flow(config, logB.log, undefined, { onWorkChanged: () => { workChanged.b++ } })
  t.after(async () => { await Promise.allSettled([a.stop(), b.stop()]) })
  await Promise.all([a.start({ owned: 'assigned' }), b.start({ owned: 'assigned' })])
  assert.deepEqual(a.status().partitions, [])
  assert.equal(a.status().membership, null)

  // When A is given all the work (listed by A: every partition of both topics and every job)
  // (topics created a moment ago: a broker's metadata may list them a little later, seen on a loaded machine)
  const work = await waitForValue(async () => {
    const listed = await a.listWork()
    return { done: listed.filter(w => w.kind === 'partition').length === topics.length * PARTITIONS, state: listed }
  }, { timeoutMs: 15_000, message: 'A lists every partition of both topics' })
  const partitions = work.filter((w): w is Extract<WorkItem, { kind: 'partition' }> => w.kind === 'partition')
  assert.deepEqual(partitions.map(p => `${p.topic}-${p.partition}`), topics.flatMap(topic => Array.from({ length: PARTITIONS }, (_, p) => `${topic}-${p}`)))
  assert.deepEqual(work.filter(w => w.kind === 'job').map(w => w.kind === 'job' ? w.job : ''), ['refresh-topics', 'emit-checkpoints', 'trim-offset-history'])
  await a.assign(work)
  const traffic = produceContinuously(topics)
  t.after(async () => { await traffic.stop() })
  const remote = (topic: string): string => `A.${topic}`
  // Then A copies and checkpoints, B does nothing
  await waitFor(async () => {
    const ends = await Promise.all(topics.map(topic => endOffsets('target', remote(topic)).catch(() => [])))
    return { done: ends.every(e => e.length === PARTITIONS && e.every(o => o >= 3n)), state: ends }
  }, { timeoutMs: 30_000, message: 'A copies every partition' })
  await waitFor(() => jobRuns(a, 'emit-checkpoints') >= 1, { timeoutMs: 10_000, message: 'A emits checkpoints' })
  assert.equal(b.status().jobs.length, 0)
  // When a topic is created on the source, Then the topic refresh (A's) tells the group; B's flow says nothing
  assert.deepEqual(workChanged, { a: 0, b: 0 })
  await createTopic('source', `${prefix}-c`, { partitions: 2, t })
  await waitFor(() => workChanged.a === 1, { timeoutMs: 15_000, message: 'the refresh tells the group that the work changed' })
  assert.deepEqual((await b.listWork()).filter(w => w.kind === 'partition' && w.topic === `${prefix}-c`).length, 2)
  assert.equal(workChanged.b, 0)

  // When half the partitions (2 and 3 of each topic) and the checkpoints are revoked from A, then assigned to B
  const moved = partitions.filter(p => p.partition >= 2)
  const checkpointsJob: WorkItem = { kind: 'job', job: 'emit-checkpoints' }
  await a.revoke([...moved, checkpointsJob])
  // Then once the revoke resolved, their stored progress is exactly what the target holds (nothing in flight)
  const storedAtRevoke = await storedProgress(config)
  for (const p of moved) {
    assert.equal(storedAtRevoke.get(partitionKey(p.topic, p.partition))! + 1, await targetEnd(remote(p.topic), p.partition), `${p.topic}-${p.partition} stored at revoke`)
  }
  assert.deepEqual(a.status().partitions.map(p => p.partition).sort(), [0, 0, 1, 1])
  assert.equal(a.status().jobs.some(j => j.name === 'emit-checkpoints'), false)
  const endsAtHandover = new Map(await Promise.all(moved.map(async p => [partitionKey(p.topic, p.partition), await targetEnd(remote(p.topic), p.partition)] as const)))
  await b.assign([...moved, checkpointsJob])
  // And B copies them on from there, while A keeps copying the others
  await waitFor(async () => {
    const grown = await Promise.all(moved.map(async p => await targetEnd(remote(p.topic), p.partition) > endsAtHandover.get(partitionKey(p.topic, p.partition))! + 2))
    return { done: grown.every(Boolean), state: grown }
  }, { timeoutMs: 30_000, message: 'B copies the partitions it was given' })

  // When a source group commits offsets that both flows copied past, Then B checkpoints every partition exactly,
  // the 4 it copies and the 4 A copies (whose offset history B follows)
  const committed = new Map<string, number>()
  for (const topic of topics) (await endOffsets('source', topic)).forEach((end, partition) => committed.set(partitionKey(topic, partition), Number(end) - 1))
  await waitFor(async () => {
    const copied = await Promise.all(partitions.map(async p => await targetEnd(remote(p.topic), p.partition) > committed.get(partitionKey(p.topic, p.partition))! + 1))
    return { done: copied.every(Boolean), state: copied }
  }, { timeoutMs: 30_000, message: 'both flows copied past the offsets to commit' })
  await commitOffsets('source', group, partitions.map(p => ({ topic: p.topic, partition: p.partition, offset: committed.get(partitionKey(p.topic, p.partition))! })))
  const checkpointRunsOfA = jobRuns(a, 'emit-checkpoints')
  const checkpoints = await waitForValue(async () => {
    const target = new ClusterClients(config.target, 'checkpoints|test', 'target')
    try {
      const all = (await readLastCheckpoints('A.checkpoints.internal', target.admin, target.reader)).get(group) ?? new Map()
      const found = partitions.map(p => all.get(`${remote(p.topic)}\u0000${p.partition}`))
      const current = found.every((c, i) => c !== undefined && c.upstreamOffset === committed.get(partitionKey(partitions[i]!.topic, partitions[i]!.partition)))
      return { done: current, state: found }
    } finally {
      await target.close()
    }
  }, { timeoutMs: 20_000, message: 'a checkpoint of every partition at the committed offsets' })
  for (const [i, p] of partitions.entries()) {
    const source = await readCommitted('source', p.topic, p.partition)
    const copy = await readCommitted('target', remote(p.topic), p.partition)
    const at = committed.get(partitionKey(p.topic, p.partition))!
    const downstream = Number(checkpoints[i]?.downstreamOffset)
    const record = copy.find(r => Number(r.offset) === downstream)
    assert.ok(record !== undefined, `${p.topic}-${p.partition}: checkpoint at target offset ${downstream}, not a record`)
    assert.equal(recordSignature(record), recordSignature(source.find(r => Number(r.offset) === at)!), `${p.topic}-${p.partition}: committed ${at} -> ${downstream}`)
  }
  // And A wrote none of them: its checkpoint job is gone since the revoke
  assert.equal(jobRuns(a, 'emit-checkpoints'), checkpointRunsOfA)

  // When B hands partition 2 of each topic back cleanly, and then loses its membership with partition 3
  const handedBack = moved.filter(p => p.partition === 2)
  const lost = moved.filter(p => p.partition === 3)
  await b.revoke(handedBack)
  await a.assign(handedBack)
  b.lose()
  // And the group gives A what B lost, and the checkpoints
  await a.assign([...lost, checkpointsJob])
  await waitFor(() => b.status().partitions.length === 0, { timeoutMs: 10_000, message: 'B dropped what it lost' })
  const rounds = await traffic.stop()

  // Then every record is on the target in source order: exactly once everywhere but where B lost its membership
  await waitFor(async () => {
    const behind = await Promise.all(partitions.map(async p => {
      const stored = (await storedProgress(config)).get(partitionKey(p.topic, p.partition))
      return stored === rounds - 1
    }))
    return { done: behind.every(Boolean), state: behind }
  }, { timeoutMs: 30_000, message: 'A copied and stored every partition to its end' })
  let repeats = 0
  for (const p of partitions) {
    const source = await readCommitted('source', p.topic, p.partition)
    const copy = await readCommitted('target', remote(p.topic), p.partition)
    assert.equal(source.length, rounds)
    if (p.partition === 3) repeats += assertAllPresentInOrder(source, copy, `${p.topic}-${p.partition}`)
    else assertSamePartition(source, copy, `${p.topic}-${p.partition}`)
  }
  logA.log.info({ repeats }, 'records copied again after the lost membership')
  // And B runs no job any more, A runs them all
  assert.deepEqual(b.status().jobs, [])
  assert.deepEqual(a.status().jobs.map(j => j.name).sort(), ['emit-checkpoints', 'refresh-topics', 'trim-offset-history'])
  assert.ok(logB.lines.some(l => l.msg.startsWith('membership lost')))
})
