/**
 * Disaster drill with the consumer still running when A dies, then the failback drill. A producer writes to A
 * (`third`) while a consumer group processes and commits on A; kmirror replicates A->B (`target`). A's broker
 * is killed with kill -9 in the middle of it; `kmirror failover --apply` moves the group to B from the last
 * checkpoints; the records processed twice are at most those the consumer committed (or processed without
 * committing) on A after the last checkpoint. After processing on B, A comes back, `kmirror failback --apply`
 * moves the group back, and the consumer resumes on A exactly where B left off: nothing skipped or repeated.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { killCluster, restartCluster } from '../helpers/clusters.ts'
import { DrillConsumer, DrillProducer, lastCheckpoints, processedTwice, runPlan, topicValues, type Drill, startDrillTraffic } from '../helpers/drills.ts'
import { endOffsets } from '../helpers/kafka.ts'
import { waitFor, waitForValue } from '../helpers/wait.ts'

async function caughtUp (consumer: DrillConsumer, cluster: 'third' | 'target', topic: string, label: string): Promise<void> {
  const ends = (await endOffsets(cluster, topic)).map(Number)
  await waitFor(() => ({ done: ends.every((end, p) => (consumer.committed.get(p) ?? -1) === end), state: { ends, committed: [...consumer.committed] } }),
    { timeoutMs: 90_000, intervalMs: 200, message: label })
}

/** The records processed twice after failover can only be those processed on A at or after the checkpointed commits. */
async function reprocessingBound (drill: Drill, onA: DrillConsumer): Promise<{ committedAfterCheckpoint: number, processedUncommitted: number }> {
  const checkpoints = await lastCheckpoints(drill)
  let committedAfterCheckpoint = 0
  for (const [p, committed] of onA.committed) committedAfterCheckpoint += Math.max(0, committed - (checkpoints.get(p)?.upstreamOffset ?? 0))
  const processedUncommitted = onA.processed.filter(r => r.offset >= (onA.committed.get(r.partition) ?? 0)).length
  return { committedAfterCheckpoint, processedUncommitted }
}

test('disaster and failback drill: failover with the consumer running re-processes at most the commits after the last checkpoint; failback resumes on A exactly', { timeout: 420_000 }, async t => {
  // Given traffic on A, a consumer group processing it, and kmirror copying A->B with checkpoints every second
  const { drill, producer, onA } = await startDrillTraffic(t, 'drill-running')
  await waitFor(async () => ({ done: onA.processed.length >= 400 && (await lastCheckpoints(drill)).size === drill.partitions, state: onA.processed.length }),
    { timeoutMs: 60_000, intervalMs: 300, message: 'the consumer on A processed 400 records and every partition has a checkpoint' })

  // When A's broker is killed with kill -9 while the producer and the consumer are running
  await killCluster('third')
  // ...and the application on A is stopped (it cannot reach its cluster any more)
  await Promise.all([producer.stop(), onA.kill()])
  const { committedAfterCheckpoint, processedUncommitted } = await reprocessingBound(drill, onA)

  // Then failover from the checkpoints moves the group to B, and the consumer processes everything on B
  const failover = await runPlan(['failover', drill.file, '--from', drill.a, '--to', drill.b, '--group', drill.group, '--apply', '--timeout', '5'], t)
  assert.equal(failover.code, 0, `${failover.stdout}\n${failover.stderr}`)
  assert.equal(failover.plan.basis, 'checkpoints')
  const onB = new DrillConsumer('target', drill.group, drill.remote)
  t.after(() => onB.stop())
  await onB.start()
  await caughtUp(onB, 'target', drill.remote, 'the consumer on B caught up')
  const onTarget = await topicValues('target', drill.remote, drill.partitions)
  const twice = processedTwice(onA.values(), onB.values())
  const bound = committedAfterCheckpoint + processedUncommitted
  console.log(`disaster drill (consumer running): produced ${producer.acknowledged.length}, on B ${onTarget.length}, processed on A ${onA.processed.length}, on B ${onB.processed.length}; ` +
    `processed twice ${twice.length} <= bound ${bound} (committed on A after the last checkpoint ${committedAfterCheckpoint} + processed but not committed ${processedUncommitted})`)
  const processed = new Set([...onA.values(), ...onB.values()])
  assert.deepEqual(onTarget.filter(v => !processed.has(v)), [])
  assert.ok(twice.length <= bound, `${twice.length} records processed twice, more than the bound ${bound}`)

  // When A comes back, kmirror copies what it had not copied yet, and the consumer on B processes it too
  await restartCluster('third')
  console.log(`kmirror ${drill.kmirror.exitStatus === null ? 'kept running' : `had exited (${JSON.stringify(drill.kmirror.exitStatus)})`} while A was down`)
  drill.ensureKmirror()
  // (read until it answers: just restarted after a kill, A may not serve every partition yet)
  const onSource = await waitForValue(async () => ({ done: true, state: await topicValues('third', drill.topic, drill.partitions) }),
    { timeoutMs: 30_000, intervalMs: 500, message: 'the records of A read back after its restart' })
  await waitFor(async () => {
    const onB = new Set(await topicValues('target', drill.remote, drill.partitions))
    return { done: onSource.every(v => onB.has(v)), state: { onA: onSource.length, onB: onB.size } }
  }, { timeoutMs: 90_000, intervalMs: 500, message: 'B holds every record of A' })
  await caughtUp(onB, 'target', drill.remote, 'the consumer on B processed the late records')
  await onB.stop()
  // Producers are back on A before the consumers
  const later = new DrillProducer('third', drill.topic, drill.partitions, 'w')
  later.start()
  await waitFor(() => later.acknowledged.length >= 300, { timeoutMs: 60_000, intervalMs: 200, message: '300 more records on A' })
  await later.stop()

  // Then failback (once A's group has expired the member killed with the broker, and the history covers B's commits)
  const failbackArgs = ['failback', drill.file, '--from', drill.b, '--to', drill.a, '--group', drill.group]
  await waitFor(async () => {
    const dry = await runPlan(failbackArgs, t)
    return { done: dry.code === 1 && dry.plan.groups[0]!.moves.every(m => m.exact && m.skip === 0 && m.reRead === 0), state: dry.plan.groups[0] }
  }, { timeoutMs: 90_000, intervalMs: 1000, message: 'the failback plan is exact and safe' })
  const failback = await runPlan([...failbackArgs, '--apply'], t)
  assert.equal(failback.code, 0, `${failback.stdout}\n${failback.stderr}`)
  const resumeAt = new Map(failback.plan.groups[0]!.moves.map(m => [m.partition, m.next]))

  // And the consumer resumes on A exactly where B left off
  const backOnA = new DrillConsumer('third', drill.group, drill.topic)
  t.after(() => backOnA.stop())
  await backOnA.start()
  await caughtUp(backOnA, 'third', drill.topic, 'the consumer back on A caught up')
  await backOnA.stop()
  const everything = await topicValues('third', drill.topic, drill.partitions)
  const before = [...onA.values(), ...onB.values()]
  const all = new Set([...before, ...backOnA.values()])
  console.log(`failback drill: processed on B ${onB.processed.length} (last commits ${JSON.stringify([...onB.committed])}), back on A ${backOnA.processed.length} ` +
    `from offsets ${JSON.stringify([...resumeAt])}; records on A ${everything.length}, processed twice after failback 0, skipped 0`)
  assert.deepEqual(processedTwice(before, backOnA.values()), [], 'no record processed on B (or before) is processed again on A')
  assert.deepEqual(everything.filter(v => !all.has(v)), [], 'no record of A is skipped')
  for (const [p, offset] of resumeAt) {
    assert.equal(backOnA.processed.find(r => r.partition === p)?.offset ?? offset, offset, `partition ${p} resumed at ${offset}`)
  }
  assert.ok(backOnA.values().filter(v => v.startsWith('w-')).length === later.acknowledged.length)
})
