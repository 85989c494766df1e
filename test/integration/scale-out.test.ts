/**
 * Several `kmirror run` processes on one mm2.properties share a flow through its group on the target (issue 11):
 * one instance, then two, then three, then one again, while records keep arriving on a topic of 12 partitions.
 * The third's join is sticky: only the 4 partitions it takes move (2 from each; the others keep being copied by
 * their owner throughout). The three split the partitions 4/4/4 (each one's /status shows its share and the
 * whole group), every job runs on exactly one of them (the heartbeats and checkpoints on the target come from
 * one producer, none written twice), and with clean joins and SIGTERM hand-overs the target holds every record
 * exactly once, in source order. The two that stop do so while MM2's offset-syncs topic cannot be written: each
 * waits for its queued syncs only 2 s, says so, and still hands over in time with its progress stored.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeHeartbeat } from '../../src/formats/heartbeat.ts'
import { JOB_NAMES } from '../../src/runtime/job-registry.ts'
import { decodeCheckpoint } from '../../src/formats/checkpoint.ts'
import { commitOffsets } from '../helpers/groups.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { getCluster } from '../helpers/clusters.ts'
import { createTopic, endOffsets, readBatches, type ReadRecord } from '../helpers/kafka.ts'
import { assertCopiedInOrder, flowStatus, GROUP_SETTINGS, type Instance, type InstanceStatus, killInstances, produceContinuously, startInstance, waitForRounds, waitForSplit } from '../helpers/instances.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

const PARTITIONS = 12

/** The records of TOPIC-0 on the target from offset FROM on that KEY selects (null: not this flow's), and their producer ids. */
async function flowRecords (topic: string, from: bigint, key: (r: ReadRecord) => string | null): Promise<{ keys: string[], producers: Set<bigint> }> {
  const batches = await readBatches('target', topic, 0, { fromOffset: from }).catch(() => [])
  const found = { keys: [] as string[], producers: new Set<bigint>() }
  for (const batch of batches) {
    for (const r of batch.records) {
      const k = r.offset >= from && r.key !== null && r.value !== null ? key(r) : null
      if (k === null) continue
      found.keys.push(k)
      found.producers.add(batch.producerId)
    }
  }
  return found
}

/** The partitions an instance's /status shows it copying, as topic-partition, sorted. */
function owns (status: InstanceStatus): string[] {
  return status.partitions.map(p => `${p.topic}-${p.partition}`).sort()
}

/** How many partitions INSTANCE logged letting go of ("work revoked") in its stderr from character MARK on. */
function revokedSince (instance: Instance, mark: number): number {
  return instance.process.stderr.slice(mark).split('\n').filter(l => l.includes('"msg":"work revoked: progress stored"'))
    .reduce((n, l) => n + (JSON.parse(l) as { partitions: number }).partitions, 0)
}

test('one, two, three, then one instance share a flow: partitions split, every job once, every record once in source order', { timeout: 90_000 }, async t => {
  // Given a topic of 12 partitions on the source with records arriving all the time
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('scale')
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const config = writeTempFile(multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: 'target' }], [`${a}->${b}`],
    [`topics = ${topic}`, ...GROUP_SETTINGS]), '.properties', t)
  const instances: Instance[] = []
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => await killInstances(instances))
  const producer = produceContinuously(topic, PARTITIONS)
  t.after(async () => { await producer.stop() })

  // When one instance runs the flow, it owns every partition and every job
  instances.push(await startInstance(config, 'one', t))
  const [alone] = await waitForSplit(instances.slice(0, 1), PARTITIONS, 'one instance owns all 12 partitions')
  // The first member creates the remote topic while it joins (an empty group: no refresh state elsewhere); a
  // member joining a live group leaves that to the assigned topic refresh.
  const early = new RegExp(`"created":1,"topics":1,"msg":"no member in group kmirror-${a}-${b} on cluster ${b} yet: remote topics created while joining it"`)
  assert.match(instances[0]!.process.stderr, early)
  assert.deepEqual(alone!.membership!.members[0]!.jobs.filter(j => !JOB_NAMES.includes(j as never)), [])

  // When a second starts: they split the partitions 6/6
  instances.push(await startInstance(config, 'two', t))
  const halves = (await waitForSplit(instances, PARTITIONS, 'two instances own 6 partitions each')).map(owns)
  assert.doesNotMatch(instances[1]!.process.stderr, /remote topics created while joining/)

  // When a third starts: a sticky rebalance moves only the 4 partitions the third must take (2 from each), and
  // the first keeps owning (so copying) the 4 it keeps at every /status read during the join
  const marks = instances.map(i => i.process.stderr.length)
  const third = startInstance(config, 'three', t)
  const during: string[][] = []
  let joinEnds: bigint[] | undefined // the target's end offsets when instance one first sees three members
  let joined = false
  const watch = waitFor(async () => {
    const s = await flowStatus(instances[0]!)
    if (s !== null) during.push(owns(s))
    if (s?.membership?.members.length === 3 && joinEnds === undefined) joinEnds = await endOffsets('target', `${a}.${topic}`)
    return joined
  }, { timeoutMs: 60_000, intervalMs: 100, message: 'the third instance joined' })
  instances.push(await third)

  // Then the three split the partitions 4/4/4 and each job runs on exactly one of them
  const split = await waitForSplit(instances, PARTITIONS, 'three instances own 4 partitions each')
  const owned = split.flatMap(s => s.partitions.map(p => `${p.topic}-${p.partition}`)).sort()
  assert.equal(new Set(owned).size, PARTITIONS, `every partition copied by exactly one instance: ${owned.join(', ')}`)
  for (const s of split) assert.equal(s.membership!.members.length, 3)
  joined = true
  await watch
  const thirds = split.map(owns)
  for (const i of [0, 1]) {
    const kept = thirds[i]!.filter(p => halves[i]!.includes(p))
    assert.deepEqual(kept, thirds[i], `instance ${instances[i]!.name} keeps only partitions it had (${halves[i]!.join(', ')}), got ${thirds[i]!.join(', ')}`)
    assert.equal(revokedSince(instances[i]!, marks[i]!), 2, `instance ${instances[i]!.name} lets go of exactly the 2 partitions that move`)
  }
  assert.ok(during.length > 0 && joinEnds !== undefined, 'the first instance answered /status during the join')
  const stayed = [0, 1].flatMap(i => thirds[i]!.map(p => Number(p.slice(p.lastIndexOf('-') + 1))))
  await waitFor(async () => {
    const ends = await endOffsets('target', `${a}.${topic}`)
    return { done: stayed.every(p => ends[p]! > joinEnds![p]!), state: { stayed, joinEnds, ends } }
  }, { timeoutMs: 15_000, intervalMs: 200, message: 'the partitions that stayed keep being copied past where they were when the third joined' })
  for (const seen of during) {
    const missing = thirds[0]!.filter(p => !seen.includes(p))
    assert.deepEqual(missing, [], `during the join, instance one stopped owning ${missing.join(', ')} (owned: ${seen.join(', ')})`)
  }
  const leaders = new Set(split.map(s => s.membership!.leader))
  assert.equal(leaders.size, 1, 'the three agree on the leader')

  // And `kmirror status` shows the three members and what each owns, read from the group on the target
  const status = spawnKmirror(['status', config, '--json'], { t })
  assert.equal((await status.waitForExit(30_000)).code, 0, status.stderr)
  const group = (JSON.parse(status.stdout) as { flows: { membership?: { members: { name: string, partitions: number, jobs: string[] }[], leader: string } }[] }).flows[0]!.membership!
  assert.deepEqual(group.members.map(m => m.partitions), [4, 4, 4])
  assert.deepEqual(group.members.map(m => m.name).sort(), split.map(s => s.membership!.self).sort())
  assert.equal(group.leader, [...leaders][0])
  assert.deepEqual(group.members.flatMap(m => m.jobs).sort(), split[0]!.membership!.members.flatMap(m => m.jobs).sort())

  // And the periodic jobs run on one of them: the heartbeats and the checkpoints written from now on come from
  // one producer (one instance), one heartbeat per timestamp and one checkpoint per change (each instance
  // writes a checkpoint only when it differs from the last it wrote itself, so two emitters would repeat it)
  const beatsFrom = (await endOffsets('target', 'heartbeats'))[0]!
  const checkpointsTopic = `${a}.checkpoints.internal`
  const checkpointsFrom = (await endOffsets('target', checkpointsTopic).catch(() => [0n]))[0]!
  const consumers = uniqueName('scale-group')
  await commitOffsets('source', consumers, [{ topic, partition: 0, offset: 1 }, { topic, partition: 1, offset: 2 }])
  const stream = await waitForValue(async () => {
    const heartbeats = await flowRecords('heartbeats', beatsFrom, r => {
      const h = decodeHeartbeat(r.key!, r.value!)
      return h.sourceClusterAlias === a && h.targetClusterAlias === b ? String(h.timestamp) : null
    })
    const checkpoints = await flowRecords(checkpointsTopic, checkpointsFrom, r => {
      const c = decodeCheckpoint(r.key!, r.value!)
      return c.group === consumers ? `${c.topic}-${c.partition}@${c.upstreamOffset}->${c.downstreamOffset}` : null
    })
    return { done: heartbeats.keys.length >= 5 && checkpoints.keys.length >= 2, state: { heartbeats, checkpoints } }
  }, { timeoutMs: 30_000, intervalMs: 500, message: `five heartbeats (${a}, ${b}) and the checkpoints of ${consumers} on the target` })
  for (const [what, found] of Object.entries(stream)) {
    assert.equal(found.producers.size, 1, `${what} written by one producer, not ${[...found.producers].join(', ')}`)
    assert.deepEqual(found.keys, [...new Set(found.keys)], `${what}: none written twice`)
  }
  assert.deepEqual([...stream.checkpoints.keys].sort(), [`${a}.${topic}-0@1->1`, `${a}.${topic}-1@2->2`])

  // When MM2's offset-syncs topic (on the source) cannot be written meanwhile (max.message.bytes below any batch:
  // each write refused with MESSAGE_TOO_LARGE, retried), until the two about to stop have syncs waiting
  const [, two, three] = instances
  const syncsTopic = `mm2-offset-syncs.${b}.internal`
  const sourceAdmin = new AdminClient({ 'bootstrap.servers': getCluster('source').bootstrap }, 'test', { label: 'source' })
  t.after(async () => { await sourceAdmin.close() })
  await sourceAdmin.alterTopicConfigs(syncsTopic, [{ op: 'set', name: 'max.message.bytes', value: '1' }])
  for (const i of [two!, three!]) {
    await waitFor(async () => {
      const syncs = (await flowStatus(i))?.offsetSyncs
      return { done: syncs !== undefined && syncs.failure !== null && syncs.pending > 0, state: syncs }
    }, { timeoutMs: 30_000, intervalMs: 250, message: `instance ${i.name}: MM2's offset syncs failing, some waiting` })
  }
  // and two of them stop (SIGTERM): they hand their partitions over after storing their progress, having waited
  // (2 s, within the stop's deadline) for MM2's syncs queued before, and say which were not written; once they
  // left their group nothing more can be written, so the stop does not wait for those syncs again: it ends well
  // before its deadline (9 s), with exit code 0
  const stopped = Date.now()
  two!.process.kill('SIGTERM')
  three!.process.kill('SIGTERM')
  assert.equal((await two!.process.waitForExit(15_000)).code, 0, two!.process.stderr.slice(-3000))
  assert.equal((await three!.process.waitForExit(15_000)).code, 0, three!.process.stderr.slice(-3000))
  assert.ok(Date.now() - stopped < 8000, `both stopped within ${Date.now() - stopped} ms of SIGTERM`)
  for (const i of [two!, three!]) {
    assert.match(i.process.stderr, /"msg":"work revoked: progress stored"/, i.process.stderr.slice(-3000))
    assert.match(i.process.stderr, new RegExp(`"msg":"\\d+ offset sync\\(s\\) queued for MM2 before the hand-over of \\d+ partition\\(s\\) \\(of those and of the partitions kept\\) were not written to ${syncsTopic.replace(/\./g, '\\.')} on cluster ${a} within 2 s: the hand-over goes on without them\\.`), i.process.stderr.slice(-3000))
    assert.doesNotMatch(i.process.stderr, /the stop could not hand the work of group/)
  }
  await sourceAdmin.alterTopicConfigs(syncsTopic, [{ op: 'delete', name: 'max.message.bytes' }])

  // Then the one left owns everything again and the copy goes on
  await waitForSplit(instances.slice(0, 1), PARTITIONS, 'the remaining instance owns all 12 partitions again')
  const rounds = await producer.stop()
  await waitForRounds('target', `${a}.${topic}`, rounds, 30_000)

  // And every partition holds every record exactly once, in source order
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const source = await readCommitted('source', topic, partition)
    const copy = await readCommitted('target', `${a}.${topic}`, partition)
    const { duplicates } = assertCopiedInOrder(source, copy, 0, `${topic}-${partition}`)
    assert.equal(duplicates, 0, `${topic}-${partition}: no record copied twice`)
    assert.equal(copy.length, source.length, `${topic}-${partition}`)
  }
  const one = instances[0]!
  one.process.kill('SIGTERM')
  assert.equal((await one.process.waitForExit(15_000)).code, 0, one.process.stderr.slice(-3000))
})
