/**
 * `kmirror failover` safety on real clusters: a dry run writes nothing and exits 1; --apply writes exactly the
 * exact translations; a second apply changes nothing (exit 0, empty plan); a move backwards is refused without
 * --force (exit 5); a group with active members on the target is refused even with --force.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from '../../src/config/load.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { findFlow, openTranslator } from '../../src/runtime/offsets.ts'
import { getCluster } from '../helpers/clusters.ts'
import { committedOffsets, DrillConsumer, runPlan } from '../helpers/drills.ts'
import { createTopic, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

test('failover plans, applies once, refuses rewinds without --force and active target groups', { timeout: 240_000 }, async t => {
  // Given a topic on A with 100 records over 2 partitions, copied by kmirror, and a group with commits on A
  const a = uniqueAlias('a')
  const b = uniqueAlias('b')
  const topic = uniqueName('fo-safety')
  const remote = `${a}.${topic}`
  const group = uniqueName('fo-safety-group')
  await createTopic('source', topic, { partitions: 2, t })
  await produce('source', Array.from({ length: 100 }, (_, i) => ({ topic, partition: i % 2, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  const file = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `${a}->${b}.groups = ${group}`, 'emit.checkpoints.interval.seconds = 1', `${b}.offset.flush.interval.ms = 300`, 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', file], { t })
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => { kmirror.kill('SIGTERM'); await kmirror.waitForExit(15_000) })
  const flow = findFlow(loadConfig(file), a, b)
  await waitFor(async () => {
    const translator = await openTranslator(flow)
    try { return [0, 1].every(p => translator.translate(topic, p, 50)?.exact === true) } finally { await translator.close() }
  }, { timeoutMs: 60_000, intervalMs: 500, message: 'both partitions copied and translatable exactly' })
  const sourceAdmin = new AdminClient({ 'bootstrap.servers': getCluster('source').bootstrap }, 'test', { label: 'source' })
  t.after(() => sourceAdmin.close())
  await sourceAdmin.groups.alterCommittedOffsets(group, [{ topic, partition: 0, offset: 30 }, { topic, partition: 1, offset: 50 }])
  const failover = (...more: string[]) => runPlan(['failover', file, '--from', a, '--to', b, '--group', group, ...more], t)

  // When planning: the exact positions, nothing written, exit 1
  const dry = await failover()
  assert.equal(dry.code, 1, dry.stderr)
  assert.deepEqual(dry.plan.groups[0]!.moves.map(m => [m.topic, m.partition, m.current, m.next, m.reRead, m.skip, m.exact]),
    [[remote, 0, null, 30, 0, 0, true], [remote, 1, null, 50, 0, 0, true]])
  assert.equal(dry.plan.basis, 'source-commits')
  assert.equal((await committedOffsets('target', group)).size, 0)
  const byRegex = await runPlan(['failover', file, '--from', a, '--to', b, '--groups', `${group.slice(0, -3)}.*`], t)
  assert.deepEqual(byRegex.plan.groups.map(g => [g.group, g.moves.length]), [[group, 2]])
  const unknown = await runPlan(['failover', file, '--from', a, '--to', b, '--group', `${group}-typo`], t)
  assert.equal(unknown.code, 0)
  assert.match(unknown.plan.groups[0]!.notes.join(), /no committed offset on .* nothing to move/)

  // When applying: exactly that is written; applying again changes nothing
  const applied = await failover('--apply')
  assert.equal(applied.code, 0, applied.stderr)
  assert.equal(applied.plan.groups[0]!.written, true)
  assert.deepEqual(await committedOffsets('target', group), new Map([[`${remote}-0`, 30], [`${remote}-1`, 50]]))
  const again = await failover('--apply')
  assert.equal(again.code, 0, again.stderr)
  assert.deepEqual(again.plan.groups[0]!.moves, [])
  assert.equal(again.plan.groups[0]!.unchanged, 2)
  assert.equal(again.plan.groups[0]!.written, false)

  // When the group's position on A is behind what it has on B: a rewind, refused without --force
  await sourceAdmin.groups.alterCommittedOffsets(group, [{ topic, partition: 0, offset: 10 }])
  const rewind = await failover('--apply')
  assert.equal(rewind.code, 5, rewind.stdout)
  assert.match(rewind.plan.groups[0]!.refusals.join('\n'), /backwards \(20 record\(s\) re-read/)
  assert.equal((await committedOffsets('target', group)).get(`${remote}-0`), 30)
  const forcedDry = await failover('--force')
  assert.equal(forcedDry.code, 1)
  assert.deepEqual(forcedDry.plan.groups[0]!.moves.map(m => [m.partition, m.current, m.next, m.reRead]), [[0, 30, 10, 20]])

  // When a consumer is active in the group on B: refused, even with --force
  const consumer = new DrillConsumer('target', group, remote)
  t.after(() => consumer.stop())
  await consumer.start()
  await waitFor(async () => {
    const admin = new AdminClient({ 'bootstrap.servers': getCluster('target').bootstrap }, 'test', { label: 'target' })
    try { return (await admin.groups.describeGroups([group])).get(group)?.state === 'Stable' } finally { await admin.close() }
  }, { timeoutMs: 30_000, intervalMs: 300, message: 'the consumer joined the group on B' })
  const active = await failover('--apply', '--force')
  assert.equal(active.code, 5, active.stdout)
  assert.match(active.plan.groups[0]!.refusals.join('\n'), /1 active member\(s\) on .* \(state Stable\)/)
  assert.equal(active.plan.groups[0]!.written, false)
  await consumer.stop()
  const text = await (async () => {
    const cli = spawnKmirror(['failover', file, '--from', a, '--to', b, '--group', group], { t })
    await cli.waitForExit(60_000)
    return cli.stdout
  })()
  console.log(text)
})
