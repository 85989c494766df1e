/**
 * Disaster drill, consumer stopped before the disaster: a producer writes to A (`third`) while a consumer group
 * on A processes and commits; kmirror replicates A->B (`target`). The consumer stops, A's broker is killed
 * with kill -9, `kmirror failover --apply` moves the group to B from the checkpoints (A is unreachable), and
 * the consumer resumes on B: every record that reached B is processed, none twice.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { killCluster, restartCluster } from '../helpers/clusters.ts'
import { DrillConsumer, lastCheckpoints, processedTwice, runPlan, topicValues, startDrillTraffic } from '../helpers/drills.ts'
import { endOffsets } from '../helpers/kafka.ts'
import { waitFor } from '../helpers/wait.ts'

test('disaster drill: with the consumer stopped before A dies, failover from checkpoints processes every record on B exactly once', { timeout: 300_000 }, async t => {
  // Given traffic on A, a consumer group processing it, and kmirror copying A->B with checkpoints every second
  const { drill, producer, onA } = await startDrillTraffic(t, 'drill-stopped')
  await waitFor(() => ({ done: onA.processed.length >= 300, state: { processed: onA.processed.length, produced: producer.acknowledged.length } }),
    { timeoutMs: 60_000, intervalMs: 200, message: 'the consumer on A processed 300 records' })

  // When the consumer stops (the producer goes on), its final commits are checkpointed exactly
  await onA.stop()
  const finalCommits = new Map(onA.committed)
  await waitFor(async () => {
    const checkpoints = await lastCheckpoints(drill)
    return { done: [...finalCommits].every(([p, c]) => checkpoints.get(p)?.upstreamOffset === c), state: { finalCommits: [...finalCommits], checkpoints: [...checkpoints].map(([p, c]) => [p, c.upstreamOffset, c.downstreamOffset]) } }
  }, { timeoutMs: 60_000, intervalMs: 500, message: 'the final commits are checkpointed on B' })

  // And A's broker is killed with kill -9
  await killCluster('third')
  await producer.stop()

  // Then failover works from B alone, from the checkpoints, and says what it could not check
  const failover = await runPlan(['failover', drill.file, '--from', drill.a, '--to', drill.b, '--group', drill.group, '--apply', '--timeout', '5'], t)
  assert.equal(failover.code, 0, `${failover.stdout}\n${failover.stderr}`)
  assert.equal(failover.plan.basis, 'checkpoints')
  assert.match(failover.plan.notes.join('\n'), /unreachable/)
  assert.match(failover.plan.groups[0]!.notes.join('\n'), /commits made on .* after them are not known/)
  assert.equal(failover.plan.groups[0]!.written, true)
  assert.ok(failover.plan.groups[0]!.moves.every(m => m.exact), JSON.stringify(failover.plan.groups[0]!.moves))

  // And the consumer resumes on B and processes everything that reached B, nothing twice
  const onB = new DrillConsumer('target', drill.group, drill.remote)
  t.after(() => onB.stop())
  await onB.start()
  const ends = (await endOffsets('target', drill.remote)).map(Number)
  await waitFor(() => ({ done: ends.every((end, p) => (onB.committed.get(p) ?? -1) === end), state: { ends, committed: [...onB.committed] } }),
    { timeoutMs: 60_000, intervalMs: 200, message: 'the consumer on B caught up' })
  await onB.stop()
  const onTarget = await topicValues('target', drill.remote, drill.partitions)
  const processed = new Set([...onA.values(), ...onB.values()])
  const unprocessed = onTarget.filter(v => !processed.has(v))
  const twice = processedTwice(onA.values(), onB.values())
  console.log(`disaster drill (consumer stopped first): produced ${producer.acknowledged.length}, on B ${onTarget.length}, processed on A ${onA.processed.length}, on B ${onB.processed.length}, twice ${twice.length}, unprocessed ${unprocessed.length}`)
  assert.deepEqual(unprocessed, [])
  assert.deepEqual(twice, [])
  assert.equal(new Set(onB.values()).size, onB.processed.length)

  await restartCluster('third')
})
