/**
 * `kmirror status` on real clusters: exact positions and lag 0 after a full copy; a positive lag in records and
 * seconds for a topic that got records after kmirror stopped; what the target knows when the source is
 * unreachable; exit codes 2 (configuration) and 3 (nothing readable).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { loadConfig } from '../../src/config/load.ts'
import type { FlowReplicationStatus } from '../../src/runtime/status.ts'
import { findFlow, openTranslator } from '../../src/runtime/offsets.ts'
import { createTopic, endOffsets, produce, produceTransactions, TIMESTAMP_BASE, type Cleanup, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

function rec (topic: string, partition: number, i: number, timestamp = TIMESTAMP_BASE + BigInt(i)): TestRecord {
  return { topic, partition, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [], timestamp }
}

async function status (file: string, t: Cleanup, ...args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const cli = spawnKmirror(['status', file, ...args], { t })
  const { code } = await cli.waitForExit(90_000)
  return { code, stdout: cli.stdout, stderr: cli.stderr }
}

async function statusJson (file: string, t: Cleanup): Promise<FlowReplicationStatus> {
  const out = await status(file, t, '--json')
  assert.equal(out.code, 0, out.stderr)
  const { flows } = JSON.parse(out.stdout) as { flows: FlowReplicationStatus[] }
  assert.equal(flows.length, 1)
  return flows[0]!
}

test('kmirror status shows exact positions, lag 0 after a full copy and the lag of a topic left behind', { timeout: 240_000 }, async t => {
  // Given two topics on the source, one with transactions (so target offsets differ from source offsets)
  const prefix = uniqueName('status')
  const txnTopic = `${prefix}-txn`
  const plainTopic = `${prefix}-plain`
  await createTopic('source', txnTopic, { partitions: 2, t })
  await createTopic('source', plainTopic, { partitions: 1, t })
  await produce('source', Array.from({ length: 10 }, (_, i) => rec(txnTopic, i % 2, i)))
  await produceTransactions('source', txnTopic, [true, false, true].map((commit, txn) => ({ commit, records: Array.from({ length: 6 }, (_, i) => rec(txnTopic, i % 2, 100 + txn * 10 + i)) })))
  await produce('source', Array.from({ length: 30 }, (_, i) => rec(plainTopic, 0, i)))

  // When kmirror copies both completely and stops
  const file = writeTempFile(mm2Properties({
    source: 'source', target: 'target', extra: [`A->B.topics = ${prefix}-.*`, 'B.offset.flush.interval.ms = 300', 'emit.heartbeats.enabled = false']
  }), '.properties', t)
  const kmirror = spawnKmirror(['run', file], { t })
  const partitions: [string, number][] = [[txnTopic, 0], [txnTopic, 1], [plainTopic, 0]]
  const ends = new Map<string, number>()
  for (const topic of [txnTopic, plainTopic]) (await endOffsets('source', topic)).forEach((e, p) => ends.set(`${topic}-${p}`, Number(e)))
  const flow = findFlow(loadConfig(file), 'A', 'B')
  await waitFor(async () => {
    const translator = await openTranslator(flow)
    try {
      return partitions.every(([topic, p]) => translator.translate(topic, p, ends.get(`${topic}-${p}`)!)?.exact === true)
    } finally { await translator.close() }
  }, { timeoutMs: 60_000, intervalMs: 300, message: 'everything copied and its progress stored' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0)

  // Then status shows, per partition, the last source offset, the target offset of the last copied record, and lag 0
  const copied = await statusJson(file, t)
  assert.equal(copied.sourceReachable, true)
  const expected = await Promise.all(partitions.map(async ([topic, p]) => {
    const target = await readCommitted('target', `A.${topic}`, p)
    return {
      topic, partition: p, remoteTopic: `A.${topic}`, lastReplicatedOffset: ends.get(`${topic}-${p}`)! - 1,
      targetOffset: Number(target.at(-1)!.offset), sourceLogEnd: ends.get(`${topic}-${p}`)!, lagRecords: 0, lagSeconds: 0
    }
  }))
  assert.deepEqual(copied.partitions, [...expected].sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition))

  // When 50 records, written 30 s ago, reach the plain topic after kmirror stopped
  const before = Date.now()
  await produce('source', Array.from({ length: 50 }, (_, i) => rec(plainTopic, 0, 1000 + i, BigInt(before - 30_000 + i))))
  const behind = await statusJson(file, t)
  const after = Date.now()

  // Then its lag is 50 records and 30 s (since the oldest one not copied), and the other topic is still at 0
  const plain = behind.partitions.find(p => p.topic === plainTopic)!
  assert.equal(plain.lastReplicatedOffset, 29)
  assert.equal(plain.sourceLogEnd, 80)
  assert.equal(plain.lagRecords, 50)
  assert.ok(plain.lagSeconds! >= 29.9 && plain.lagSeconds! <= (after - before) / 1000 + 30.1, `lag ${plain.lagSeconds} s`)
  assert.ok(behind.partitions.filter(p => p.topic === txnTopic).every(p => p.lagRecords === 0 && p.lagSeconds === 0))
  // And with a numeric password equal to a number of the document (the source end, 80), --json stays valid JSON
  // with every number intact (the password is still hidden wherever it stands in the text of the table)
  const numericSecret = writeTempFile(mm2Properties({
    source: 'source', target: 'target', extra: [`A->B.topics = ${prefix}-.*`, 'A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="status" password="80";']
  }), '.properties', t)
  const withSecret = await statusJson(numericSecret, t)
  const withoutSeconds = (s: FlowReplicationStatus): unknown => s.partitions.map(p => ({ ...p, lagSeconds: null }))
  assert.deepEqual(withoutSeconds(withSecret), withoutSeconds(behind))
  assert.equal(withSecret.partitions.find(p => p.topic === plainTopic)?.sourceLogEnd, 80)
  // And the table says the same
  const table = await status(file, t)
  assert.equal(table.code, 0, table.stderr)
  assert.match(table.stdout, /^flow A->B$/m)
  assert.match(table.stdout, /TOPIC\s+PARTITION\s+LAST REPLICATED\s+TARGET TOPIC\s+TARGET OFFSET\s+SOURCE END\s+LAG RECORDS\s+LAG SECONDS/)
  assert.match(table.stdout, new RegExp(`^\\s+${plainTopic}\\s+0\\s+29\\s+A\\.${plainTopic}\\s+29\\s+80\\s+50\\s+${plain.lagSeconds === null ? '' : '\\d+(\\.\\d)?'}$`, 'm'))
  for (const e of expected.filter(x => x.topic === txnTopic)) {
    assert.match(table.stdout, new RegExp(`^\\s+${txnTopic}\\s+${e.partition}\\s+${e.lastReplicatedOffset}\\s+A\\.${txnTopic}\\s+${e.targetOffset}\\s+${e.sourceLogEnd}\\s+0\\s+0$`, 'm'))
  }

  // And with the source unreachable, status still shows what the target knows, and says so
  const unreachable = writeTempFile(mm2Properties({
    source: 'source', target: 'target', extra: [`A->B.topics = ${prefix}-.*`, 'A.bootstrap.servers = 127.0.0.1:1', 'A.request.timeout.ms = 2000']
  }), '.properties', t)
  const blind = await statusJson(unreachable, t)
  assert.equal(blind.sourceReachable, false)
  assert.match(blind.error ?? '', /cannot read the source A/)
  assert.deepEqual(blind.partitions.map(p => [p.topic, p.partition, p.lastReplicatedOffset, p.targetOffset, p.sourceLogEnd, p.lagRecords, p.lagSeconds]),
    behind.partitions.map(p => [p.topic, p.partition, p.lastReplicatedOffset, p.targetOffset, null, null, null]))
})

test('kmirror status exits 2 on a configuration error and 3 when no target can be read', { timeout: 120_000 }, async t => {
  const file = writeTempFile(mm2Properties({ source: 'source', target: 'target', extra: ['B.bootstrap.servers = 127.0.0.1:1', 'B.request.timeout.ms = 2000'] }), '.properties', t)
  const bad = await status(file, t, '--clusters', 'nope')
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--clusters names "nope"/)
  const down = await status(file, t)
  assert.equal(down.code, 3, down.stdout + down.stderr)
  assert.match(down.stdout, /^flow A->B: unknown \(cannot read the stored progress on B/m)
})
