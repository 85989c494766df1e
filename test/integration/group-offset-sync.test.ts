/**
 * Group offset sync on real clusters (issue 4 item 3): off unless `sync.group.offsets.enabled=true`; when on,
 * a target group gets the exactly translated offsets of its source group only while it has no active members,
 * and never moves backwards (also when a consumer on the target moved it ahead on its own); a group whose commits a
 * transaction holds open on the target (an application committing for it) is left alone until it ends.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { commitOffsets, committedOffsets, describeGroup, joinGroup, openOffsetsTransaction } from '../helpers/groups.ts'
import { createTopic, endOffsets, produce, produceTransactions, TIMESTAMP_BASE, type TestRecord, type TransactionStep } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile, type KmirrorProcess } from '../helpers/process.ts'
import type { Cleanup } from '../helpers/kafka.ts'
import { readCommitted, type ReadRecord } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function rec (topic: string, partition: number, value: string, i: number): TestRecord {
  return { topic, partition, key: Buffer.from(`k${i}`), value: Buffer.from(value), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) }
}

/** Two partitions: plain records, committed and aborted transactions (offset discontinuities), plain again. */
async function loadTopic (topic: string): Promise<void> {
  await produce('source', Array.from({ length: 20 }, (_, i) => rec(topic, i % 2, `a${i}`, i)))
  const plan: TransactionStep[] = Array.from({ length: 4 }, (_, txn) => ({
    commit: txn !== 1,
    records: Array.from({ length: 6 }, (_, i) => rec(topic, i % 2, `t${txn}-${i}`, 100 + txn * 10 + i))
  }))
  await produceTransactions('source', topic, plan)
  await produce('source', Array.from({ length: 20 }, (_, i) => rec(topic, i % 2, `b${i}`, 200 + i)))
}

/**
 * The exact target offset of committed source offset C, computed from the data alone: the remote partition
 * holds the source's committed records in order from offset 0, so C maps to the number of records before it.
 */
function expectedTarget (source: readonly ReadRecord[], committed: number): number {
  return source.filter(r => Number(r.offset) < committed).length
}

async function metricsOf (base: string): Promise<string> {
  return await (await fetch(`${base}/metrics`)).text()
}

function counter (text: string, name: string, labels: string): number {
  return text.split('\n').filter(l => l.startsWith(`${name}{`) && l.includes(labels)).reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0)
}

/** Waits until JOB completed two more runs: the second of them started after this call. */
async function waitForFullRun (base: string, job: string): Promise<void> {
  const runs = (text: string): number => counter(text, 'kmirror_job_runs_total', `job_name="${job}"`)
  const start = runs(await metricsOf(base))
  await waitFor(async () => {
    const now = runs(await metricsOf(base))
    return { done: now >= start + 2, state: { start, now } }
  }, { timeoutMs: 30_000, intervalMs: 200, message: `two more runs of ${job}` })
}

/** The two-partition source topic `<prefix>-t` loaded by loadTopic, and its partitions as read_committed reads them. */
async function loadedTopic (prefix: string, t: Cleanup): Promise<{ topic: string, sources: ReadRecord[][] }> {
  const topic = `${prefix}-t`
  await createTopic('source', topic, { partitions: 2, t })
  await loadTopic(topic)
  return { topic, sources: [await readCommitted('source', topic, 0), await readCommitted('source', topic, 1)] }
}

async function startKmirror (prefix: string, extra: readonly string[], t: Cleanup): Promise<{ kmirror: KmirrorProcess, base: string }> {
  const file = writeTempFile(mm2Properties({
    source: 'source', target: 'target',
    extra: [`A->B.topics = ${prefix}-.*`, `A->B.groups = ${prefix}-.*`, 'emit.checkpoints.interval.seconds = 1', 'B.offset.flush.interval.ms = 300', 'emit.heartbeats.enabled = false', ...extra]
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', file, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const match = await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 30_000)
  return { kmirror, base: `http://127.0.0.1:${match[1]}` }
}

async function waitForCopy (topic: string, sources: readonly ReadRecord[][]): Promise<void> {
  await waitFor(async () => {
    const ends = await endOffsets('target', `A.${topic}`).catch(() => [])
    return { done: sources.every((s, p) => ends[p] === BigInt(s.length)), state: ends }
  }, { timeoutMs: 60_000, message: 'everything copied' })
}

test('group offsets are not written to the target unless sync.group.offsets.enabled is true', { timeout: 120_000 }, async t => {
  // Given a topic and a group with commits on the source
  const prefix = uniqueName('gsync-off')
  const group = `${prefix}-g`
  const { topic, sources } = await loadedTopic(prefix, t)
  await commitOffsets('source', group, [{ topic, partition: 0, offset: 10 }, { topic, partition: 1, offset: 15 }])

  // When kmirror replicates with checkpoints (the group is seen) and the sync interval set, but not enabled
  const { kmirror, base } = await startKmirror(prefix, ['sync.group.offsets.interval.seconds = 1'], t)
  await waitForCopy(topic, sources)
  await waitForFullRun(base, 'emit-checkpoints')
  await commitOffsets('source', group, [{ topic, partition: 0, offset: 12 }])
  await waitForFullRun(base, 'emit-checkpoints')

  // Then the target group does not exist and no sync job ever ran
  assert.deepEqual(await committedOffsets('target', group), [])
  assert.equal((await describeGroup('target', group))?.state ?? 'Dead', 'Dead')
  assert.equal(counter(await metricsOf(base), 'kmirror_job_runs_total', 'job_name="sync-group-offsets"'), 0)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)
})

test('with sync on, target groups get exact offsets only while empty, and never move backwards', { timeout: 180_000 }, async t => {
  // Given a topic with transactions and a group committed on the source past a marker and at the log end
  const prefix = uniqueName('gsync-on')
  const fresh = `${prefix}-a-fresh`
  const busy = `${prefix}-b-busy`
  const ahead = `${prefix}-c-ahead`
  const { topic, sources } = await loadedTopic(prefix, t)
  const ends = (await endOffsets('source', topic)).map(Number)
  // The first record after the first transaction's marker on partition 0: the offset jumps there.
  const afterMarker = Number(sources[0]!.find((r, i) => i > 0 && Number(r.offset) !== Number(sources[0]![i - 1]!.offset) + 1)!.offset)
  await commitOffsets('source', fresh, [{ topic, partition: 0, offset: afterMarker }, { topic, partition: 1, offset: ends[1]! }])

  // When kmirror replicates with group offset sync every second
  const { kmirror, base } = await startKmirror(prefix, ['sync.group.offsets.enabled = true', 'sync.group.offsets.interval.seconds = 1'], t)
  await waitForCopy(topic, sources)

  // Then the absent target group gets exactly the translated offsets
  const remote = `A.${topic}`
  const freshExpected = [
    { topic: remote, partition: 0, offset: expectedTarget(sources[0]!, afterMarker), metadata: '' },
    { topic: remote, partition: 1, offset: sources[1]!.length, metadata: '' }
  ]
  await waitFor(async () => {
    const now = await committedOffsets('target', fresh)
    return { done: JSON.stringify(now) === JSON.stringify(freshExpected), state: now }
  }, { timeoutMs: 30_000, intervalMs: 200, message: 'the empty target group gets the exact offsets' })

  // And a group with an active consumer on the target is not written while the consumer is in it
  const member = await joinGroup('target', busy, [remote], t)
  await commitOffsets('source', busy, [{ topic, partition: 0, offset: 4 }, { topic, partition: 1, offset: 30 }])
  await waitForFullRun(base, 'sync-group-offsets')
  assert.deepEqual(await committedOffsets('target', busy), [])
  assert.ok(counter(await metricsOf(base), 'kmirror_group_offset_sync_skipped_active_total', 'flow="A->B"') > 0)
  // ... and is written once the consumer left
  await member.leave()
  const busyExpected = [
    { topic: remote, partition: 0, offset: expectedTarget(sources[0]!, 4), metadata: '' },
    { topic: remote, partition: 1, offset: expectedTarget(sources[1]!, 30), metadata: '' }
  ]
  await waitFor(async () => {
    const now = await committedOffsets('target', busy)
    return { done: JSON.stringify(now) === JSON.stringify(busyExpected), state: now }
  }, { timeoutMs: 30_000, intervalMs: 200, message: 'the group is synced once its consumer left' })

  // And never backwards: a lower commit on the source, or a target group a consumer there moved ahead
  await commitOffsets('target', ahead, [{ topic: remote, partition: 0, offset: 25 }])
  await commitOffsets('source', ahead, [{ topic, partition: 0, offset: 3 }])
  await commitOffsets('source', fresh, [{ topic, partition: 0, offset: 2 }, { topic, partition: 1, offset: 1 }])
  await waitForFullRun(base, 'sync-group-offsets')
  assert.deepEqual(await committedOffsets('target', fresh), freshExpected)
  assert.deepEqual(await committedOffsets('target', ahead), [{ topic: remote, partition: 0, offset: 25, metadata: '' }])
  assert.ok(counter(await metricsOf(base), 'kmirror_group_offset_sync_skipped_not_forward_total', 'flow="A->B"') > 0)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)
})

test('with sync on, a target group whose first commit a transaction holds open (an application committing for it, no member) is left alone until the transaction ends, then synced', { timeout: 150_000 }, async t => {
  // Given a topic copied to the target, a source group at 4 / 30, and on the target a transaction open committing 2
  // on partition 0 of the remote topic for the same group (its first commit there; the group has no member)
  const prefix = uniqueName('gsync-txn')
  const group = `${prefix}-g`
  const { topic, sources } = await loadedTopic(prefix, t)
  const { kmirror, base } = await startKmirror(prefix, ['sync.group.offsets.enabled = true', 'sync.group.offsets.interval.seconds = 1'], t)
  await waitForCopy(topic, sources)
  const remote = `A.${topic}`
  const transaction = await openOffsetsTransaction('target', group, [{ topic: remote, partition: 0, offset: 2 }], t)
  const skipped = (): Promise<number> => metricsOf(base).then(text => counter(text, 'kmirror_group_offset_sync_skipped_active_total', 'flow="A->B"'))
  const skippedBefore = await skipped()
  await commitOffsets('source', group, [{ topic, partition: 0, offset: 4 }, { topic, partition: 1, offset: 30 }])

  // When sync passes run while the transaction is open
  await waitForFullRun(base, 'sync-group-offsets')
  await waitForFullRun(base, 'sync-group-offsets')

  // Then nothing is written to the group (its partitions asked by name, the open transaction seen), and it counts as active
  assert.deepEqual(await committedOffsets('target', group), [])
  assert.ok(await skipped() > skippedBefore)

  // When the transaction commits, then the group is synced forward from it: exactly the translated offsets
  await transaction.commit()
  const expected = [
    { topic: remote, partition: 0, offset: expectedTarget(sources[0]!, 4), metadata: '' },
    { topic: remote, partition: 1, offset: expectedTarget(sources[1]!, 30), metadata: '' }
  ]
  await waitFor(async () => {
    const now = await committedOffsets('target', group)
    return { done: JSON.stringify(now) === JSON.stringify(expected), state: now }
  }, { timeoutMs: 30_000, intervalMs: 200, message: 'the group synced once the transaction committed' })
  assert.equal(kmirror.exitStatus, null)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)
})
