/**
 * `kmirror offsets set` on a real cluster: each position (--to-offset, --to-earliest, --to-latest,
 * --to-datetime, --shift-by) is planned and applied; a skip needs --force; out-of-range positions exit 2 with
 * the valid range; an active group is refused. kafka-consumer-groups.sh's flags: --export writes its CSV (three
 * columns for one group, four for several), --from-file reads it back, --execute writes, --dry-run does not.
 * --all-groups takes every group of the cluster (an active one refused, the idle ones written); --by-duration
 * finds the first record younger than the duration.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { getCluster } from '../helpers/clusters.ts'
import { committedOffsets, DrillConsumer, runKmirror, runPlan, type JsonPlan } from '../helpers/drills.ts'
import { joinGroup } from '../helpers/groups.ts'
import { createTopic, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

test('offsets set plans and applies each position, refuses skips without --force, out-of-range offsets and active groups', { timeout: 180_000 }, async t => {
  // Given a topic of 2 partitions with 40 records each (timestamps BASE + i, i = offset) and a group at 10 / 10
  const topic = uniqueName('oset')
  const group = uniqueName('oset-group')
  await createTopic('target', topic, { partitions: 2, t })
  await produce('target', Array.from({ length: 80 }, (_, i) => ({ topic, partition: i % 2, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(Math.floor(i / 2) * 1000) })))
  const admin = new AdminClient({ 'bootstrap.servers': getCluster('target').bootstrap }, 'test', { label: 'target' })
  t.after(() => admin.close())
  await admin.groups.alterCommittedOffsets(group, [{ topic, partition: 0, offset: 10 }, { topic, partition: 1, offset: 10 }])
  const file = writeTempFile(mm2Properties({ source: 'source', target: 'target' }), '.properties', t)
  const set = (...more: string[]) => runPlan(['offsets', 'set', file, '--cluster', 'B', '--group', group, '--topic', topic, ...more], t)
  const at = async (p: number) => (await committedOffsets('target', group)).get(`${topic}-${p}`)

  // A rewind: planned (exit 1, nothing written), then applied
  const dry = await set('--partition', '0', '--to-offset', '4')
  assert.equal(dry.code, 1, dry.stderr)
  assert.deepEqual(dry.plan.groups[0]!.moves.map(m => [m.partition, m.current, m.next, m.reRead, m.skip]), [[0, 10, 4, 6, 0]])
  assert.equal(await at(0), 10)
  assert.equal((await set('--partition', '0', '--to-offset', '4', '--apply')).code, 0)
  assert.equal(await at(0), 4)

  // A skip is refused without --force, applied with it
  const skip = await set('--partition', '0', '--shift-by', '5', '--apply')
  assert.equal(skip.code, 5)
  assert.match(skip.plan.groups[0]!.refusals.join(), /skip up to 5 record/)
  assert.equal(await at(0), 4)
  assert.equal((await set('--partition', '0', '--shift-by', '5', '--apply', '--force')).code, 0)
  assert.equal(await at(0), 9)

  // Every partition: earliest, datetime (the record of second 20 is offset 20), latest (with --force: a skip)
  assert.equal((await set('--to-earliest', '--apply')).code, 0)
  assert.deepEqual([await at(0), await at(1)], [0, 0])
  const when = new Date(Number(TIMESTAMP_BASE) + 20_000).toISOString()
  const byTime = await set('--to-datetime', when, '--apply', '--force')
  assert.equal(byTime.code, 0)
  assert.equal((byTime.plan as { instant?: string }).instant, when)
  assert.deepEqual([await at(0), await at(1)], [20, 20])
  // ... and a date that does not exist is refused (Date.parse would take it as March 2), nothing written
  const notADate = await runKmirror(['offsets', 'set', file, '--cluster', 'B', '--group', group, '--topic', topic, '--to-datetime', '2026-02-30'], t)
  assert.equal(notADate.code, 2)
  assert.match(notADate.stderr, /--to-datetime accepts an ISO 8601 instant only: .*; got '2026-02-30'/)
  assert.deepEqual([await at(0), await at(1)], [20, 20])
  assert.equal((await set('--to-latest', '--apply', '--force')).code, 0)
  assert.deepEqual([await at(0), await at(1)], [40, 40])
  const nothing = await set('--to-latest', '--apply')
  assert.equal(nothing.code, 0)
  assert.equal(nothing.plan.groups[0]!.moves.length, 0)

  // Out of range and bad input: exit 2, with the valid range
  const out = await runKmirror(['offsets', 'set', file, '--cluster', 'B', '--group', group, '--topic', topic, '--partition', '1', '--to-offset', '41'], t)
  assert.equal(out.code, 2)
  assert.match(out.stderr, /offset 41 of .*-1 is outside the valid range \[0, 40\]/)
  assert.equal((await runKmirror(['offsets', 'set', file, '--cluster', 'B', '--group', group, '--topic', topic, '--to-earliest', '--to-latest'], t)).code, 2)
  assert.equal((await runKmirror(['offsets', 'set', file, '--cluster', 'Z', '--group', group, '--topic', topic, '--to-earliest'], t)).code, 2)

  // Kafka's reset flags: one group exports topic,partition,offset (a dry run with a move: exit 1, nothing written)
  const kafka = async (...more: string[]) => await runKmirror(['offsets', 'set', file, '--cluster', 'B', ...more], t)
  const one = await kafka('--group', group, '--topic', `${topic}:1`, '--to-offset', '30', '--export', '--dry-run')
  assert.equal(one.code, 1, one.stderr)
  assert.equal(one.stdout, `${topic},1,30\n`)
  assert.equal(await at(1), 40)
  // ... two groups export group,topic,partition,offset; the file restores them after a move (--execute = --apply)
  const other = uniqueName('oset-other')
  await admin.groups.alterCommittedOffsets(other, [{ topic, partition: 0, offset: 5 }])
  const saved = await kafka('--group', `${group},${other}`, '--all-topics', '--to-current', '--export')
  assert.equal(saved.code, 0, saved.stderr)
  assert.equal(saved.stdout, `${group},${topic},0,40\n${group},${topic},1,40\n${other},${topic},0,5\n`)
  const csv = writeTempFile(saved.stdout, '.csv', t)
  assert.equal((await kafka('--group', group, '--group', other, '--topic', `${topic}:0`, '--to-earliest', '--execute')).code, 0)
  assert.deepEqual([await at(0), await at(1), (await committedOffsets('target', other)).get(`${topic}-0`)], [0, 40, 0])
  assert.equal((await kafka('--from-file', csv, '--dry-run')).code, 5) // moving back up to the saved positions skips records: refused without --force
  assert.equal((await kafka('--from-file', csv, '--dry-run', '--force')).code, 1)
  const restored = await kafka('--from-file', csv, '--execute', '--force')
  assert.equal(restored.code, 0, restored.stderr)
  assert.deepEqual([await at(0), await at(1), (await committedOffsets('target', other)).get(`${topic}-0`)], [40, 40, 5])

  // An active group is refused
  const consumer = new DrillConsumer('target', group, topic)
  t.after(() => consumer.stop())
  await consumer.start()
  await waitFor(async () => (await admin.groups.describeGroups([group])).get(group)?.state === 'Stable', { timeoutMs: 30_000, intervalMs: 300, message: 'the consumer joined' })
  const active = await set('--to-earliest', '--apply', '--force')
  assert.equal(active.code, 5)
  assert.match(active.plan.groups[0]!.refusals.join(), /active member/)
  assert.deepEqual([await at(0), await at(1)], [40, 40])
})

test('offsets set --all-groups plans and writes every idle group, refuses an active one; --by-duration finds the records older than it', { timeout: 480_000 }, async t => {
  // Given a topic of 10 records: 0-4 written two hours ago, 5-9 twenty minutes ago
  const topic = uniqueName('oset-all')
  await createTopic('target', topic, { partitions: 1, t })
  const now = Date.now()
  await produce('target', Array.from({ length: 10 }, (_, i) => ({ topic, partition: 0, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: BigInt(now - (i < 5 ? 7_200_000 : 1_200_000)) })))
  // And two idle groups at 5 and 7, and a third at 3 with a member
  const [idle, other, busy] = [uniqueName('oset-idle'), uniqueName('oset-idle'), uniqueName('oset-busy')]
  const admin = new AdminClient({ 'bootstrap.servers': getCluster('target').bootstrap }, 'test', { label: 'target' })
  t.after(() => admin.close())
  for (const [group, offset] of [[idle, 5], [other, 7], [busy, 3]] as const) await admin.groups.alterCommittedOffsets(group, [{ topic, partition: 0, offset }])
  const member = await joinGroup('target', busy, [topic], t)
  const file = writeTempFile(mm2Properties({ source: 'source', target: 'target' }), '.properties', t)
  // Every group of the cluster is in scope (other tests' idle ones too, which the plan moves onto this topic: after
  // a whole run there are hundreds; they are read in batches (offsets-set.ts), the long timeouts are for a loaded machine)
  const all = async (...more: string[]): Promise<{ code: number | null, stderr: string, plan: JsonPlan }> => {
    const cli = spawnKmirror(['offsets', 'set', file, '--cluster', 'B', '--all-groups', '--topic', topic, '--timeout', '170', '--json', ...more], { t })
    const { code } = await cli.waitForExit(180_000)
    return { code, stderr: cli.stderr, plan: JSON.parse(cli.stdout) as JsonPlan }
  }
  const mine = (plan: JsonPlan) => plan.groups.filter(g => [idle, other, busy].includes(g.group)).map(g => [g.group, g.moves.map(m => [m.current, m.next]), g.refusals.length > 0, g.written])
  const at = async (group: string) => (await committedOffsets('target', group)).get(`${topic}-0`)

  // When --all-groups --to-earliest is planned: the three are in the plan, the active one refused (exit 5), nothing written
  const dry = await all('--to-earliest', '--dry-run')
  assert.equal(dry.code, 5, dry.stderr)
  assert.deepEqual(mine(dry.plan), [[busy, [[3, 0]], true, false], [idle, [[5, 0]], false, false], [other, [[7, 0]], false, false]].sort((x, y) => String(x[0]).localeCompare(String(y[0]))))
  assert.match(dry.plan.groups.find(g => g.group === busy)!.refusals.join(), /has 1 active member\(s\) on B .*stop its consumers first/)
  assert.deepEqual([await at(idle), await at(other), await at(busy)], [5, 7, 3])

  // When it is executed: each idle group is written, the active one is not (exit 5 still)
  const executed = await all('--to-earliest', '--execute')
  assert.equal(executed.code, 5, executed.stderr)
  assert.deepEqual(mine(executed.plan).map(([g, , refused, written]) => [g, refused, written]), [[busy, true, false], [idle, false, true], [other, false, true]].sort((x, y) => String(x[0]).localeCompare(String(y[0]))))
  assert.deepEqual([await at(idle), await at(other), await at(busy)], [0, 0, 3])

  // When the member leaves, --by-duration PT1H moves the groups to the first record of the last hour (offset 5)
  await member.leave()
  await waitFor(async () => (await admin.groups.describeGroups([busy])).get(busy)?.state === 'Empty', { timeoutMs: 30_000, intervalMs: 300, message: `${busy} is empty` })
  const one = async (group: string, ...more: string[]) => await runPlan(['offsets', 'set', file, '--cluster', 'B', '--group', group, '--topic', topic, ...more], t)
  const hour = await one(busy, '--by-duration', 'PT1H')
  assert.equal(hour.code, 5, hour.stderr) // moving 3 -> 5 skips 2 records: refused without --force
  assert.deepEqual(hour.plan.groups[0]!.moves.map(m => [m.current, m.next, m.skip]), [[3, 5, 2]])
  assert.match(hour.plan.groups[0]!.refusals.join(), /skip/)
  assert.equal((await one(busy, '--by-duration', 'PT1H', '--execute', '--force')).code, 0)
  assert.equal(await at(busy), 5)
  // ... P1D to the first record (offset 0), PT10M to the end (no record that recent: offset 10)
  assert.equal((await one(busy, '--by-duration', 'P1D', '--execute')).code, 0)
  assert.equal(await at(busy), 0)
  assert.equal((await one(idle, '--by-duration', 'PT10M', '--execute', '--force')).code, 0)
  assert.equal(await at(idle), 10)
  // ... and a malformed duration is refused, nothing written
  const bad = await runKmirror(['offsets', 'set', file, '--cluster', 'B', '--group', idle, '--topic', topic, '--by-duration', '1h'], t)
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--by-duration accepts an ISO 8601 duration only: .*; got '1h'/)
  assert.equal(await at(idle), 10)
})
