/**
 * A transaction left open on the source (its producer hung, or gone with the coordinator unaware). kmirror reads
 * read_committed, so it copies nothing of that partition past the transaction's first record, and would say
 * nothing: the flow completes rounds, the other partitions copy on, only the lag grows. Past
 * `health.transaction.hang.threshold.ms` the partition is reported failing (warning, `/status` with the
 * transaction's first offset and the `kafka-transactions.sh` lines, `kmirror_failing_partitions`, /healthz 503).
 * `kmirror status` shows it held at that offset, its lag counting the records behind. The operator runs the printed lines as printed (describe-producers finds the producer; abort ends the
 * transaction), and kmirror copies the records behind it, logs the recovery, and the copy equals what a
 * read_committed reader of the source sees, record by record.
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { createTopic, endOffsets, openTransaction, produce } from '../helpers/kafka.ts'
import type { TestRecord } from '../helpers/kafka-clients.ts'
import type { FlowReplicationStatus, PartitionReplicationStatus } from '../../src/runtime/status.ts'
import { runKmirror } from '../helpers/drills.ts'
import { flowStatus, startInstance, type Instance } from '../helpers/instances.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { printedToolLines, runPrintedTool } from '../helpers/printed-tool.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

const HANG_THRESHOLD_MS = 5000

const records = (topic: string, partition: number, from: number, count: number, tag = 'r'): TestRecord[] => Array.from({ length: count }, (_, i) => ({
  topic, partition, key: Buffer.from(`k${from + i}`), value: Buffer.from(`${tag}:${partition}:${from + i}`), headers: [], timestamp: BigInt(Date.now())
}))

interface FailingPartition {
  readonly topic: string
  readonly partition: number
  readonly position: number
  readonly lagRecords: number | null
  readonly heldAt?: number
  readonly heldSince?: string
  readonly failure: { side: string, cluster: string, error: string, message: string, remedy: string } | null
}

/**
 * A flow from `source` to `target` copying one new topic (PARTITIONS partitions, named from PREFIX) with the hang
 * threshold of these tests; its instance, once `start`ed, is killed before the topics go (cleanups run in order).
 */
async function holdFlow (t: TestContext, prefix: string, partitions: number): Promise<{ a: string, topic: string, remote: string, config: string, start: () => Promise<Instance> }> {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName(prefix)
  let kmirror: Instance | undefined
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => {
    kmirror?.process.kill('SIGKILL')
    await kmirror?.process.waitForExit(10_000)
  })
  await createTopic('source', topic, { partitions, t })
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `health.transaction.hang.threshold.ms = ${HANG_THRESHOLD_MS}`]
  }), '.properties', t)
  return { a, topic, remote: `${a}.${topic}`, config, start: async () => (kmirror = await startInstance(config, 'one', t)) }
}

test('a transaction left open on the source holds its partition: reported failing past health.transaction.hang.threshold.ms with the kafka-transactions.sh lines, which run as printed; once aborted, the records behind it are copied and the copy equals the read_committed source', { timeout: 150_000 }, async t => {
  const { a, topic, remote, config, start } = await holdFlow(t, 'source-txn-hold', 2)
  await produce('source', [...records(topic, 0, 0, 10), ...records(topic, 1, 0, 10)])
  const one = await start()
  await waitFor(async () => {
    const ends = await endOffsets('target', remote).catch(() => [])
    return { done: ends[0] === 10n && ends[1] === 10n, state: ends }
  }, { timeoutMs: 30_000, message: 'the first 10 records of each partition copied' })

  // When a producer opens a transaction on partition 0 at offset 10 and leaves it open (its timeout 10 minutes),
  // and 5 records arrive on each partition after it
  const heldSince = Date.now()
  await openTransaction('source', records(topic, 0, 10, 3, 'open'), t, { timeoutMs: 600_000 })
  await produce('source', [...records(topic, 0, 13, 5), ...records(topic, 1, 10, 5)])

  // Then partition 1 copies on while partition 0 stays at 10
  await waitFor(async () => {
    const ends = await endOffsets('target', remote)
    return { done: ends[1] === 15n, state: ends }
  }, { timeoutMs: 30_000, message: 'partition 1 copied on' })
  assert.equal((await endOffsets('target', remote))[0], 10n)
  // and, before the threshold, /status shows the hold without a failure and the hold gauges count it
  const early = await waitForValue(async () => {
    const p = (await flowStatus(one))?.partitions.find(q => q.topic === topic && q.partition === 0) as FailingPartition | undefined
    return { done: p?.heldAt === 10, state: p }
  }, { timeoutMs: 10_000, intervalMs: 200, message: 'the hold in /status' })
  if (Date.now() - heldSince < HANG_THRESHOLD_MS - 500) assert.equal(early!.failure, null, 'not failing before the threshold')
  assert.ok(Math.abs(Date.parse(early!.heldSince!) - heldSince) < 5_000, early!.heldSince)
  const gauges = await (await fetch(`http://127.0.0.1:${one.port}/metrics`)).text()
  assert.match(gauges, /^kmirror_source_partitions_held\{[^}]*\} 1$/m)
  assert.match(gauges, /^kmirror_source_hold_seconds\{[^}]*\} \d/m)

  // and past the threshold partition 0 is failing in /status: the transaction's first offset, the tool lines
  const held = await waitForValue(async () => {
    const p = (await flowStatus(one))?.partitions.find(q => q.topic === topic && q.partition === 0) as FailingPartition | undefined
    return { done: p?.failure?.error === 'SOURCE_TRANSACTION_OPEN', state: p }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'partition 0 failing for the open transaction' })
  const failure = held!.failure!
  assert.ok(Date.now() - heldSince >= HANG_THRESHOLD_MS)
  assert.equal(held!.position, 10)
  assert.equal(held!.lagRecords, 8, 'its lag stays known: the records behind the transaction')
  assert.deepEqual([failure.side, failure.cluster], ['source', a])
  assert.match(failure.message, /^\S+-0 cannot be read: it is read read_committed, and a transaction still open on the source since offset 10 \(its last stable offset; the log goes on to 18\) holds it/)
  // and a warning naming the key, the health 503 degraded, the gauge
  await one.process.waitForOutput(new RegExp(`"level":"warn"[^\\n]*"msg":"cannot read ${topic}-0 from cluster ${a} for \\d+ s \\(health\\.transaction\\.hang\\.threshold\\.ms = ${HANG_THRESHOLD_MS}\\): it is read read_committed[^\\n]*none is skipped`), 5000)
  const health = await fetch(`http://127.0.0.1:${one.port}/healthz`)
  assert.equal(health.status, 503)
  assert.match(await health.text(), /degraded/)
  const metrics = await (await fetch(`http://127.0.0.1:${one.port}/metrics`)).text()
  assert.match(metrics, /^kmirror_failing_partitions\{[^}]*error="SOURCE_TRANSACTION_OPEN"[^}]*\} 1$/m)

  // and `kmirror status` shows it held at offset 10, its lag counting the records behind the transaction
  const cliPartition = async (): Promise<PartitionReplicationStatus | undefined> =>
    (JSON.parse((await runKmirror(['status', config, '--json'], t)).stdout) as { flows: FlowReplicationStatus[] }).flows[0]?.partitions.find(p => p.partition === 0)
  const cli = await waitForValue(async () => {
    const p = await cliPartition()
    return { done: p?.lastReplicatedOffset === 9, state: p }
  }, { timeoutMs: 30_000, intervalMs: 500, message: 'kmirror status with the progress of partition 0 stored' })
  assert.deepEqual([cli!.heldAt, cli!.sourceLogEnd, cli!.lagRecords], [10, 18, 8])
  assert.ok(cli!.lagSeconds! > 0, `lag ${cli!.lagSeconds} s since the transaction's first record`)
  const text = (await runKmirror(['status', config], t)).stdout
  assert.match(text, new RegExp(`\\n  ${topic}-0: held at offset 10 by a transaction open on the source for [0-9.]+ s \\(read read_committed; `), text)

  // When the operator runs the printed lines as printed: describe-producers shows the producer at offset 10
  const [describe, abort] = printedToolLines(failure.remedy)
  assert.ok(describe !== undefined && abort !== undefined, failure.remedy)
  assert.match(describe, new RegExp(`^kafka-transactions\\.sh --bootstrap-server \\S+ describe-producers --topic ${topic} --partition 0$`))
  const producers = await runPrintedTool(describe)
  assert.match(producers, /CurrentTransactionStartOffset/)
  assert.equal(producers.split('\n').filter(l => /^\d+\s.*\s10\s*$/.test(l.trim())).length, 1, `one producer's transaction starts at 10: ${producers}`)
  // and abort ends the transaction
  assert.match(abort, new RegExp(`^kafka-transactions\\.sh --bootstrap-server \\S+ abort --topic ${topic} --partition 0 --start-offset 10$`))
  await runPrintedTool(abort)

  // Then kmirror copies the 5 records behind it (the 3 aborted ones are not copied), logs the recovery, is healthy
  await waitFor(async () => {
    const ends = await endOffsets('target', remote)
    return { done: ends[0] === 15n, state: ends }
  }, { timeoutMs: 30_000, message: 'partition 0 copied past the aborted transaction' })
  await one.process.waitForOutput(new RegExp(`"msg":"${topic}-0 is replicated again \\(it failed with SOURCE_TRANSACTION_OPEN on cluster ${a}\\)"`), 10_000)
  await waitFor(async () => {
    const response = await fetch(`http://127.0.0.1:${one.port}/healthz`)
    return { done: response.status === 200, state: response.status }
  }, { timeoutMs: 10_000, message: '/healthz 200 again' })
  // and each remote partition holds exactly what a read_committed reader of the source sees
  for (const partition of [0, 1]) {
    const [source, target] = await Promise.all([readCommitted('source', topic, partition), readCommitted('target', remote, partition)])
    assertSamePartition(source, target, `${topic}-${partition}`)
  }
  assert.equal((await readCommitted('target', remote, 0)).filter(r => r.value?.toString().startsWith('open:')).length, 0, 'no record of the aborted transaction')
  assert.equal(one.process.stderr.split('\n').filter(l => l.includes(`"msg":"cannot read ${topic}-0 from cluster`)).length, 1, 'one warning')
  one.process.kill('SIGTERM')
  assert.equal((await one.process.waitForExit(15_000)).code, 0, one.process.stderr.slice(-3000))
})

test('a transaction already hanging when kmirror starts: the answer that brings the partition up to it is its last in the fetch session (nothing changes after it), and the hold is still reported; once committed, every record is copied', { timeout: 120_000 }, async t => {
  const { a, topic, remote, start } = await holdFlow(t, 'source-txn-hung', 1)
  // Given 10 records, then a transaction of 3 left open, then 5 records behind it, before kmirror starts
  await produce('source', records(topic, 0, 0, 10))
  const transaction = await openTransaction('source', records(topic, 0, 10, 3, 'open'), t, { timeoutMs: 600_000 })
  await produce('source', records(topic, 0, 13, 5))

  // When kmirror starts: it copies the 10 records, and from then on its fetch session leaves the partition out
  const one = await start()
  await waitFor(async () => {
    const ends = await endOffsets('target', remote).catch(() => [])
    return { done: ends[0] === 10n, state: ends }
  }, { timeoutMs: 30_000, message: 'the 10 records before the transaction copied' })

  // Then the hold is in /status at once, and reported failing past the threshold
  const held = await waitForValue(async () => {
    const p = (await flowStatus(one))?.partitions.find(q => q.topic === topic) as FailingPartition | undefined
    return { done: p?.failure?.error === 'SOURCE_TRANSACTION_OPEN', state: p }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'the partition failing for the transaction it found hanging' })
  assert.deepEqual([held!.heldAt, held!.position, held!.lagRecords], [10, 10, 8])
  assert.match(held!.failure!.remedy, new RegExp(`abort --topic ${topic} --partition 0 --start-offset 10\\)$`))
  // (the fetch session did leave it out: its answers came as incremental ones)
  const metrics = await (await fetch(`http://127.0.0.1:${one.port}/metrics`)).text()
  assert.match(metrics, /^kmirror_fetch_incremental_requests_total\{[^}]*\} [1-9]/m)

  // When the transaction commits, Then every record is copied, the 3 of the transaction included, and it recovers
  await transaction.commit()
  await waitFor(async () => {
    const ends = await endOffsets('target', remote)
    return { done: ends[0] === 18n, state: ends }
  }, { timeoutMs: 30_000, message: 'every record copied once committed' })
  await one.process.waitForOutput(new RegExp(`"msg":"${topic}-0 is replicated again \\(it failed with SOURCE_TRANSACTION_OPEN on cluster ${a}\\)"`), 10_000)
  const [source, target] = await Promise.all([readCommitted('source', topic, 0), readCommitted('target', remote, 0)])
  assertSamePartition(source, target, `${topic}-0`)
  one.process.kill('SIGTERM')
  assert.equal((await one.process.waitForExit(15_000)).code, 0, one.process.stderr.slice(-3000))
})
