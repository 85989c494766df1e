/**
 * A start whose progress read waits on a transaction open on the offsets topic (a writer of that topic hung with a
 * transaction open: another deployment, a frozen member). The read must wait (progress committed behind the
 * transaction counts), and must not wait silently: the operator sees the warning with the tool lines, `/status`
 * heldReads, and, held 30 s, `/healthz` 503 naming it. A read held on by another transaction (opened after the first,
 * before the read) once the first ended is warned of again with that transaction's offset. Once both end, the start goes on and the copy is exact.
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { STOP_DEADLINE_MS } from '../../src/cli/run-command.ts'
import { createTopic, endOffsets, openTransaction, produce } from '../helpers/kafka.ts'
import type { TestRecord } from '../helpers/kafka-clients.ts'
import { flowStatus, startInstance, type Instance } from '../helpers/instances.ts'
import { removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { mm2Properties, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor, waitForValue } from '../helpers/wait.ts'

const records = (topic: string, from: number, count: number): TestRecord[] => Array.from({ length: count }, (_, i) => ({
  topic, partition: 0, key: Buffer.from(`k${from + i}`), value: Buffer.from(`v${from + i}`), headers: [], timestamp: BigInt(Date.now())
}))

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

interface StoppedFlow {
  readonly a: string
  readonly b: string
  readonly topic: string
  readonly remote: string
  readonly offsetsTopic: string
  /** Starts an instance of the flow (killed at the test's end if still running). */
  readonly start: (name: string, options?: { started?: boolean }) => Promise<Instance>
  /** A record MM2's heartbeat connector writes to the offsets topic (partition 0): the progress read skips it. */
  readonly heartbeatProgress: () => TestRecord
}

/** A flow of one new topic (prefix PREFIX) that copied 5 records and was stopped (SIGTERM, exit 0). */
async function stoppedFlow (t: TestContext, prefix: string): Promise<StoppedFlow> {
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName(prefix)
  const remote = `${a}.${topic}`
  const offsetsTopic = `mm2-offsets.${a}.internal`
  let instance: Instance | undefined
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => {
    instance?.process.kill('SIGKILL')
    await instance?.process.waitForExit(10_000)
  })
  await createTopic('source', topic, { partitions: 1, t })
  const config = writeTempFile(mm2Properties({ source: 'source', target: 'target', sourceAlias: a, targetAlias: b, extra: [`${a}->${b}.topics = ${topic}`] }), '.properties', t)
  const start = async (name: string, { started = true }: { started?: boolean } = {}): Promise<Instance> => (instance = await startInstance(config, name, t, [], { started }))
  await produce('source', records(topic, 0, 5))
  const first = await start('first')
  await waitFor(async () => (await endOffsets('target', remote).catch(() => []))[0] === 5n, { timeoutMs: 30_000, message: 'the first 5 records copied' })
  first.process.kill('SIGTERM')
  assert.equal((await first.process.waitForExit(20_000)).code, 0)
  const heartbeatProgress = (): TestRecord => ({
    topic: offsetsTopic, partition: 0, key: Buffer.from(JSON.stringify(['MirrorHeartbeatConnector', { sourceClusterAlias: a, targetClusterAlias: b }])),
    value: Buffer.from('{"offset":0}'), headers: [], timestamp: BigInt(Date.now())
  })
  return { a, b, topic, remote, offsetsTopic, start, heartbeatProgress }
}

test('a start held by a transaction open on the offsets topic: warned with the tool lines, in /status heldReads, /healthz 503 past 30 s naming it; held on by a later transaction, warned again at its offset; once both commit the start goes on and the copy is exact', { timeout: 180_000 }, async t => {
  // Given a flow that copied 5 records and was stopped
  const { a, b, topic, remote, offsetsTopic, start, heartbeatProgress } = await stoppedFlow(t, 'held-progress')

  // When a producer leaves a transaction open on partition 0 of the offsets topic, 5 more records arrive, and
  // kmirror starts again (and a second producer one after it, on the same partition: the read, which goes to the end it finds at its
  // start, is held by each in turn)
  const first = await openTransaction('target', [heartbeatProgress()], t, { timeoutMs: 120_000 })
  const second = await openTransaction('target', [heartbeatProgress()], t, { timeoutMs: 120_000 })
  await produce('source', records(topic, 5, 5))
  const again = await start('again', { started: false })

  // Then the read warns, naming the topic, the partition and the transaction's first offset, with the tool lines
  const heldLine = (offset: string): RegExp => new RegExp(`"msg":"reading ${escape(offsetsTopic)} on cluster ${b} waits for a transaction still open there \\(partition 0 at offset (${offset}) of \\d+`)
  const warned = await again.process.waitForOutput(heldLine('\\d+'), 30_000)
  const firstOffset = Number(warned[1])
  assert.match(warned.input!.slice(warned.index), new RegExp(`abort --topic ${escape(offsetsTopic)} --partition 0 --start-offset ${firstOffset};`))
  // and /status lists the held read
  const held = await waitForValue(async () => {
    const reads = (await flowStatus(again))?.heldReads ?? []
    return { done: reads.length > 0, state: reads }
  }, { timeoutMs: 10_000, message: '/status heldReads' })
  assert.deepEqual(held.map(r => [r.topic, r.cluster, r.partitions.map(p => [p.partition, p.offset])]), [[offsetsTopic, b, [[0, firstOffset]]]])
  // and, held 30 s, /healthz answers 503 naming it, while nothing was started
  const health = await waitForValue(async () => {
    const response = await fetch(`http://127.0.0.1:${again.port}/healthz`)
    const text = await response.text()
    return { done: response.status === 503 && text.includes('waits for a transaction open on'), state: `${response.status} ${text}` }
  }, { timeoutMs: 45_000, intervalMs: 500, message: '/healthz 503 for the held read' })
  assert.match(health, new RegExp(`^503 degraded: ${a}->${b} waits for a transaction open on ${escape(offsetsTopic)} on cluster ${b} \\(its read held since \\S+; /status heldReads and the log name it and how to end it\\)`))
  assert.ok(!again.process.stderr.includes('"msg":"kmirror started"'), 'the start waits')
  assert.equal((await endOffsets('target', remote))[0], 5n, 'nothing copied before the progress is read')

  // When the first transaction commits
  await first.commit()

  // Then the read, held on by the second, warns again at its first offset (right after the first's record)
  await again.process.waitForOutput(heldLine(String(firstOffset + 1)), 20_000)
  const moved = await waitForValue(async () => {
    const reads = (await flowStatus(again))?.heldReads ?? []
    return { done: reads.some(r => r.partitions.some(p => p.offset === firstOffset + 1)), state: reads }
  }, { timeoutMs: 10_000, message: '/status heldReads at the second transaction' })
  assert.deepEqual(moved.map(r => r.partitions.map(p => p.offset)), [[firstOffset + 1]])

  // And once it commits too, the start goes on, /healthz is 200 again, and the copy equals the source
  await second.commit()
  await again.process.waitForOutput(new RegExp(`"msg":"reading ${escape(offsetsTopic)} on cluster ${b} no longer waits: the transaction that held it ended`), 20_000)
  await again.process.waitForOutput(/"msg":"kmirror started"/, 30_000)
  await waitFor(async () => (await endOffsets('target', remote))[0] === 10n, { timeoutMs: 30_000, message: 'the 10 records copied' })
  assertSamePartition(await readCommitted('source', topic, 0), await readCommitted('target', remote, 0), remote)
  await waitFor(async () => (await fetch(`http://127.0.0.1:${again.port}/healthz`)).status === 200, { timeoutMs: 15_000, message: '/healthz 200 again' })
  assert.deepEqual((await flowStatus(again))?.heldReads ?? [], [])
  assert.equal(again.process.stderr.split('\n').filter(l => l.includes(`"msg":"reading ${offsetsTopic} on cluster ${b} waits for a transaction still open there`)).length, 2, 'one warning per transaction')
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(20_000)).code, 0, again.process.stderr.slice(-3000))
})

test('a stop (SIGTERM) while the start waits on a transaction open on the offsets topic ends by the stop deadline with exit 0, no error; started again once it commits, the copy is exact', { timeout: 120_000 }, async t => {
  // Given a flow that copied 5 records and was stopped, and a transaction left open on its offsets topic
  const { b, topic, remote, offsetsTopic, start, heartbeatProgress } = await stoppedFlow(t, 'held-stop')
  const open = await openTransaction('target', [heartbeatProgress()], t, { timeoutMs: 120_000 })
  await produce('source', records(topic, 5, 5))

  // When kmirror starts, its start waits on that transaction, and it is stopped (SIGTERM)
  const held = await start('held', { started: false })
  await held.process.waitForOutput(new RegExp(`"msg":"reading ${escape(offsetsTopic)} on cluster ${b} waits for a transaction still open there`), 30_000)
  const stopped = Date.now()
  held.process.kill('SIGTERM')
  const exit = await held.process.waitForExit(STOP_DEADLINE_MS + 10_000)

  // Then it exits 0 within the stop's deadline, with no error line
  const tookMs = Date.now() - stopped
  t.diagnostic(`stopped ${tookMs} ms after SIGTERM`)
  assert.equal(exit.code, 0, held.process.stderr.slice(-3000))
  assert.ok(tookMs < STOP_DEADLINE_MS, `stopped ${tookMs} ms after SIGTERM (deadline ${STOP_DEADLINE_MS} ms)`)
  assert.deepEqual(held.process.stderr.split('\n').filter(l => l.includes('"level":"error"')), [])

  // And once the transaction commits, a start copies the rest: the copy equals the source
  await open.commit()
  const again = await start('again')
  await waitFor(async () => (await endOffsets('target', remote))[0] === 10n, { timeoutMs: 30_000, message: 'the 10 records copied' })
  assertSamePartition(await readCommitted('source', topic, 0), await readCommitted('target', remote, 0), remote)
  again.process.kill('SIGTERM')
  assert.equal((await again.process.waitForExit(20_000)).code, 0, again.process.stderr.slice(-3000))
})
