/**
 * Faults during a reported hold (a transaction left open on the source, source-transaction-hold.test.ts): the
 * source cluster killed with kill -9 and restarted (the flow cannot copy: /healthz says so besides the hold, whose
 * report stands), and READ revoked and granted again (the refusal takes the hold's place in `/status`). The
 * partition never shows healthy while the transaction holds it: once it answers again the hold's report is the
 * one of before (its clock kept, no second warning, no recovery line), and only the transaction's end recovers it. Then the copy equals what a read_committed reader of the
 * source sees, record by record.
 */
import assert from 'node:assert/strict'
import { before, test, type TestContext } from 'node:test'
import type { AclBinding } from '../../src/kafka/acls.ts'
import { createAcls, deleteAcls } from '../helpers/acls.ts'
import { ensureClusters, getCluster, killCluster, startCluster, type ClusterRef } from '../helpers/clusters.ts'
import { createTopic, endOffsets, openTransaction, produce } from '../helpers/kafka.ts'
import type { TestRecord } from '../helpers/kafka-clients.ts'
import { flowStatus, startInstance, type Instance } from '../helpers/instances.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { printedToolLines, runPrintedTool, secureAdminProperties } from '../helpers/printed-tool.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

const HANG_THRESHOLD_MS = 4000

// `third` is killed and restarted here; it may not be up when this file runs alone.
before(async () => { await ensureClusters(['third', 'secure', 'target']) })

const records = (topic: string, from: number, count: number, tag = 'r'): TestRecord[] => Array.from({ length: count }, (_, i) => ({
  topic, partition: 0, key: Buffer.from(`k${from + i}`), value: Buffer.from(`${tag}:${from + i}`), headers: [], timestamp: BigInt(Date.now())
}))

interface Seen {
  readonly position: number
  readonly heldAt?: number
  readonly heldSince?: string
  readonly failure: { error: string, cluster: string, remedy: string } | null
}

/**
 * Polls partition 0 of TOPIC in the instance's `/status` until `stop()`: what it showed, each change once (the
 * failure's error, or `healthy`). The invariant: never healthy while the transaction holds it.
 */
function watchPartition (one: Instance, topic: string, t: TestContext): { stop: () => Promise<string[]> } {
  const shown: string[] = []
  let running = true
  const loop = (async () => {
    while (running) {
      const p = (await flowStatus(one))?.partitions.find(q => q.topic === topic && q.partition === 0) as Seen | undefined
      const now = p === undefined ? undefined : p.failure === null ? 'healthy' : p.failure.error
      if (now !== undefined && shown.at(-1) !== now) shown.push(now)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  })()
  t.after(() => { running = false })
  // (a last `healthy` is the recovery the caller waited for before stopping)
  return { stop: async () => { running = false; await loop; return shown.at(-1) === 'healthy' ? shown.slice(0, -1) : shown } }
}

/**
 * A flow copying one new single-partition topic from SOURCE with 10 records copied, then a transaction of 3 left
 * open at offset 10 and 5 records behind it, reported failing (SOURCE_TRANSACTION_OPEN past the threshold).
 */
async function reportedHold (t: TestContext, source: ClusterRef, clusterName: 'third' | 'secure', extra: readonly string[], prepare?: (topic: string) => Promise<void>): Promise<{
  a: string, b: string, topic: string, remote: string, one: Instance, held: Seen, transaction: { commit: () => Promise<void> }
}> {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('txn-hold-fault')
  let one: Instance | undefined
  removeAliasTopicsAfter(t, [clusterName, 'target'], [a, b], async () => {
    one?.process.kill('SIGKILL')
    await one?.process.waitForExit(10_000)
  })
  await createTopic(clusterName, topic, { partitions: 1, t })
  await prepare?.(topic)
  await produce(clusterName, records(topic, 0, 10))
  const timeouts = [a, b].flatMap(c => ['consumer', 'producer', 'admin'].map(role => `${c}.${role}.request.timeout.ms = 3000`))
  const config = writeTempFile(mm2Properties({
    source, target: 'target', sourceAlias: a, targetAlias: b,
    extra: [`${a}->${b}.topics = ${topic}`, `health.transaction.hang.threshold.ms = ${HANG_THRESHOLD_MS}`, 'health.stall.threshold.ms = 5000',
      'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false', 'sync.topic.acls.enabled = false', 'sync.topic.configs.enabled = false',
      ...timeouts, ...extra]
  }), '.properties', t)
  one = await startInstance(config, 'one', t)
  const remote = `${a}.${topic}`
  await waitFor(async () => {
    const ends = await endOffsets('target', remote).catch(() => [])
    return { done: ends[0] === 10n, state: ends }
  }, { timeoutMs: 30_000, message: 'the first 10 records copied' })
  const transaction = await openTransaction(clusterName, records(topic, 10, 3, 'open'), t, { timeoutMs: 600_000 })
  await produce(clusterName, records(topic, 13, 5))
  const held = await waitForValue(async () => {
    const p = (await flowStatus(one!))?.partitions.find(q => q.topic === topic) as Seen | undefined
    return { done: p?.failure?.error === 'SOURCE_TRANSACTION_OPEN', state: p }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'the hold reported failing' })
  assert.equal(held!.heldAt, 10)
  return { a, b, topic, remote, one, held: held!, transaction }
}

/** Waits until the hold's report is back in `/status`, and asserts it is the same report: same offset, same clock. */
async function sameHoldBack (one: Instance, topic: string, held: Seen): Promise<void> {
  const back = await waitForValue(async () => {
    const p = (await flowStatus(one))?.partitions.find(q => q.topic === topic) as Seen | undefined
    return { done: p?.failure?.error === 'SOURCE_TRANSACTION_OPEN', state: p }
  }, { timeoutMs: 60_000, intervalMs: 250, message: 'the hold reported again once the partition answers' })
  assert.deepEqual([back!.heldAt, back!.heldSince, back!.position], [held.heldAt, held.heldSince, 10])
}

function linesOf (one: Instance, text: string): string[] {
  return one.process.stderr.split('\n').filter(l => l.includes(text))
}

test('the source cluster killed with kill -9 and restarted during a reported hold: /healthz names the cluster out of reach besides the hold, the hold\'s report stands through the outage and after it (its clock kept, no recovery line, no second warning), and the commit recovers it with every record copied exactly', { timeout: 180_000 }, async t => {
  // (registered first, so that it runs before the topics are removed from `third`)
  let down = false
  t.after(async () => { if (down) await startCluster('third') })
  const { a, b, topic, remote, one, held, transaction } = await reportedHold(t, 'third', 'third', [])
  const watch = watchPartition(one, topic, t)

  // When the source cluster's one broker is killed with kill -9
  down = true
  await killCluster('third')
  // Then /healthz names both: the flow cannot reach the cluster, and the partition is still failing for the hold
  const health = await waitForValue(async () => {
    const response = await fetch(`http://127.0.0.1:${one.port}/healthz`)
    const text = await response.text()
    return { done: response.status === 503 && text.includes('KMIRROR_ERR_CLUSTER_UNREACHABLE'), state: text }
  }, { timeoutMs: 60_000, intervalMs: 250, message: 'the source out of reach in /healthz' })
  assert.match(health!, new RegExp(`^degraded: 1 partition\\(s\\) failing in ${a}->${b} \\(SOURCE_TRANSACTION_OPEN\\); ${a}->${b} cannot copy \\(KMIRROR_ERR_CLUSTER_UNREACHABLE, \\d+ attempts since \\S+\\)\n$`))
  // When it is restarted
  await startCluster('third')
  down = false
  await one.process.waitForOutput(/"msg":"replication steps succeed again"/, 60_000)

  // Then the hold's report is the one of before: same offset, same clock; no recovery line, no second warning
  await sameHoldBack(one, topic, held)
  assert.deepEqual(linesOf(one, `"msg":"${topic}-0 is replicated again`), [])
  assert.equal(linesOf(one, `"msg":"cannot read ${topic}-0 from cluster ${a} for`).length, 1, 'one hold warning')

  // When the transaction commits (its producer reconnects to the restarted broker)
  await transaction.commit()
  // Then every record is copied, the 3 of the transaction included, and it recovers once
  await waitFor(async () => {
    const ends = await endOffsets('target', remote)
    return { done: ends[0] === 18n, state: ends }
  }, { timeoutMs: 60_000, message: 'every record copied once committed' })
  await one.process.waitForOutput(new RegExp(`"msg":"${topic}-0 is replicated again \\(it failed with SOURCE_TRANSACTION_OPEN on cluster ${a}\\)"`), 10_000)
  assert.deepEqual(await watch.stop(), ['SOURCE_TRANSACTION_OPEN'], 'what /status showed: the hold throughout, never healthy before the commit')
  assertSamePartition(await readCommitted('third', topic, 0), await readCommitted('target', remote, 0), `${topic}-0`)
  assert.equal(linesOf(one, `"msg":"${topic}-0 is replicated again`).length, 1)
  one.process.kill('SIGTERM')
  assert.equal((await one.process.waitForExit(15_000)).code, 0, one.process.stderr.slice(-3000))
})

test('READ revoked during a reported hold: the refusal takes the report\'s place, and after the re-grant the hold\'s report comes back as it was (its clock kept); the printed abort line recovers it, and the copy equals the read_committed source', { timeout: 180_000 }, async t => {
  const grant = (topic: string, operation: AclBinding['operation']): AclBinding =>
    ({ resourceType: 'topic', resourceName: topic, patternType: 'literal', principal: 'User:alice', host: '*', operation, permission: 'allow' })
  const alice = { ...getCluster('secure'), sasl: { mechanism: 'PLAIN' as const, username: 'alice', password: 'alice-secret' } }
  let read: AclBinding | undefined
  const { a, topic, remote, one, held } = await reportedHold(t, alice, 'secure', ['offset-syncs.topic.location = target'], async topic => {
    read = grant(topic, 'read')
    await createAcls('secure', [read, grant(topic, 'describe'), grant(topic, 'describe-configs')], t)
  })
  const watch = watchPartition(one, topic, t)

  // When READ on the topic is revoked
  await deleteAcls('secure', [read!])
  // Then the refusal takes the hold's place, with its own warning
  await waitFor(async () => {
    const p = (await flowStatus(one))?.partitions.find(q => q.topic === topic) as Seen | undefined
    return { done: p?.failure?.error === 'TOPIC_AUTHORIZATION_FAILED', state: p }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'the refusal reported over the hold' })
  assert.equal(linesOf(one, `cannot read ${topic}-0 from cluster ${a}`).filter(l => l.includes('TOPIC_AUTHORIZATION_FAILED')).length, 1)

  // When READ is granted again
  await createAcls('secure', [read!], t)
  // Then the hold's report comes back as it was, with an info line, no recovery line
  await sameHoldBack(one, topic, held)
  await one.process.waitForOutput(new RegExp(`"msg":"${topic}-0 answers again \\(it failed with TOPIC_AUTHORIZATION_FAILED on cluster ${a}\\); it is still held by the transaction open since offset 10"`), 10_000)
  assert.deepEqual(linesOf(one, `"msg":"${topic}-0 is replicated again`), [])

  // When the operator runs the printed abort line (with the admin's client properties for its placeholder)
  const remedy = ((await flowStatus(one))!.partitions.find(q => q.topic === topic) as Seen | undefined)!.failure!.remedy
  const abort = printedToolLines(remedy)[1] ?? ''
  assert.match(abort, new RegExp(`--command-config ADMIN_PROPERTIES_FILE_OF_${a} abort --topic ${topic} --partition 0 --start-offset 10$`))
  await runPrintedTool(abort, { [`ADMIN_PROPERTIES_FILE_OF_${a}`]: secureAdminProperties(t) })
  // Then the 5 records behind it are copied (not the 3 aborted ones), it recovers once, and the copy is exact
  await waitFor(async () => {
    const ends = await endOffsets('target', remote)
    return { done: ends[0] === 15n, state: ends }
  }, { timeoutMs: 30_000, message: 'the records behind the aborted transaction copied' })
  await one.process.waitForOutput(new RegExp(`"msg":"${topic}-0 is replicated again \\(it failed with SOURCE_TRANSACTION_OPEN on cluster ${a}\\)"`), 10_000)
  assert.deepEqual(await watch.stop(), ['SOURCE_TRANSACTION_OPEN', 'TOPIC_AUTHORIZATION_FAILED', 'SOURCE_TRANSACTION_OPEN'], 'what /status showed, in order: never healthy before the abort')
  assertSamePartition(await readCommitted('secure', topic, 0), await readCommitted('target', remote, 0), `${topic}-0`)
  one.process.kill('SIGTERM')
  assert.equal((await one.process.waitForExit(15_000)).code, 0, one.process.stderr.slice(-3000))
})
