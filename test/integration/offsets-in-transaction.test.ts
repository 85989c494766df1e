/**
 * A group whose commits a transaction holds open (an application committing offsets for it through a transactional
 * producer, with no member in the group): `offsets set` reads commits stable (OffsetFetch require_stable), so the
 * coordinator answers UNSTABLE_OFFSET_COMMIT. The group is refused as in use (exit 5, the refusal naming the
 * transaction), its last committed offsets shown, nothing written; once the transaction commits, the same command
 * plans from the offsets it committed and writes. A transaction holding the first commit of a partition (none there
 * before) is seen too: Kafka looks only at partitions with a commit when asked for all of a group's, so the plan asks
 * for the partitions in scope by name (as the check before the write does). On Kafka 4.1.1 (`target`, the new group coordinator, which answers
 * a plain read from its partition's high watermark) and 3.6.2 (`v36`, the classic coordinator).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { ClusterName } from '../helpers/clusters.ts'
import { useCompatClusters } from '../helpers/compat.ts'
import { committedOffsets, runPlan } from '../helpers/drills.ts'
import { commitOffsets, openOffsetsTransaction } from '../helpers/groups.ts'
import { createTopic, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { uniqueName } from '../helpers/wait.ts'

useCompatClusters(['v36'])

for (const [cluster, release] of [['target', '4.1.1'], ['v36', '3.6.2']] as const satisfies readonly (readonly [ClusterName, string])[]) {
test(`Kafka ${release}: offsets set on a group whose commits a transaction holds open: refused as in use, nothing written; after the commit, planned from its offsets and written`, { timeout: 90_000 }, async t => {
  // Given a group with no member at 5 / 5 on the target, and a transaction open committing 8 on partition 0 for it
  const topic = uniqueName('otxn')
  const group = uniqueName('otxn-group')
  await createTopic(cluster, topic, { partitions: 2, t })
  await produce(cluster, Array.from({ length: 20 }, (_, i) => ({ topic, partition: i % 2, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  await commitOffsets(cluster, group, [{ topic, partition: 0, offset: 5 }, { topic, partition: 1, offset: 5 }])
  const transaction = await openOffsetsTransaction(cluster, group, [{ topic, partition: 0, offset: 8 }], t)
  const file = writeTempFile(mm2Properties({ source: 'source', target: cluster }), '.properties', t)
  const set = async () => await runPlan(['offsets', 'set', file, '--cluster', 'B', '--group', group, '--topic', topic, '--to-earliest', '--execute'], t)

  // When `offsets set --to-earliest --execute` runs
  const refused = await set()

  // Then the group is refused (exit 5) naming the open transaction, with its last committed offsets, and nothing is written
  assert.equal(refused.code, 5, refused.stdout + refused.stderr)
  const plan = refused.plan.groups[0]!
  assert.deepEqual(plan.refusals, [`a transaction holds commits of group ${group} open on B (UNSTABLE_OFFSET_COMMIT): an application commits offsets for it in transactions, so it is in use; ` +
    'stop that application, or let its transaction end, then plan again (--force does not override this)'])
  assert.deepEqual(plan.moves.map(m => [m.partition, m.current, m.next]), [[0, 5, 0], [1, 5, 0]])
  assert.equal(plan.written, false)
  assert.deepEqual(Object.fromEntries(await committedOffsets(cluster, group)), { [`${topic}-0`]: 5, [`${topic}-1`]: 5 })

  // When the transaction commits, and the command runs again
  await transaction.commit()
  const written = await set()

  // Then it plans from the offsets the transaction committed (8 on partition 0) and writes both partitions
  assert.equal(written.code, 0, written.stdout + written.stderr)
  assert.deepEqual(written.plan.groups[0]!.moves.map(m => [m.partition, m.current, m.next]), [[0, 8, 0], [1, 5, 0]])
  assert.deepEqual(Object.fromEntries(await committedOffsets(cluster, group)), { [`${topic}-0`]: 0, [`${topic}-1`]: 0 })
})

test(`Kafka ${release}: a transaction holding the first commit of a partition the group never committed to: seen (the partitions in scope asked by name), refused, nothing written`, { timeout: 90_000 }, async t => {
  // Given a group with no member at 5 on partition 0 only, and a transaction open committing 3 on partition 1 for it
  const topic = uniqueName('otxn-first')
  const group = uniqueName('otxn-first-group')
  await createTopic(cluster, topic, { partitions: 2, t })
  await produce(cluster, Array.from({ length: 20 }, (_, i) => ({ topic, partition: i % 2, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  await commitOffsets(cluster, group, [{ topic, partition: 0, offset: 5 }])
  await openOffsetsTransaction(cluster, group, [{ topic, partition: 1, offset: 3 }], t)
  const file = writeTempFile(mm2Properties({ source: 'source', target: cluster }), '.properties', t)

  // When `offsets set --to-earliest --execute` runs
  const refused = await runPlan(['offsets', 'set', file, '--cluster', 'B', '--group', group, '--topic', topic, '--to-earliest', '--execute'], t)

  // Then the group is refused, naming the transaction, and nothing is written
  assert.equal(refused.code, 5, refused.stdout + refused.stderr)
  const plan = refused.plan.groups[0]!
  assert.deepEqual(plan.moves.map(m => [m.partition, m.current, m.next]), [[0, 5, 0], [1, null, 0]])
  assert.deepEqual(plan.refusals, [`a transaction holds commits of group ${group} open on B (UNSTABLE_OFFSET_COMMIT): an application commits offsets for it in transactions, so it is in use; ` +
    'stop that application, or let its transaction end, then plan again (--force does not override this)'])
  assert.equal(plan.written, false)
  assert.deepEqual(Object.fromEntries(await committedOffsets(cluster, group)), { [`${topic}-0`]: 5 })
})
}
