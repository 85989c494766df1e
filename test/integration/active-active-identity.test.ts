/**
 * Active-active A<->B with IdentityReplicationPolicy: the same topic name on both sides, written on both
 * sides. Names cannot tell origins apart (MM2 loops forever here); kmirror marks each replicated record with
 * the `kmirror.origin` header and never sends a record back to the cluster it came from. Each side ends with
 * exactly its own records plus the other side's, each once; the loop-skip counter equals the other side's count;
 * and offset syncs still translate every copied record exactly across the gaps the skipped records leave.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSyncsTranslateExactly, readCommitted, readOffsetSyncs, type ReadRecord } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const TRAFFIC_MS = 30_000
const PARTITIONS = 3
const ORIGIN = 'kmirror.origin'

type Side = 'source' | 'target'

async function traffic (cluster: Side, topic: string, label: string, until: number): Promise<number> {
  let n = 0
  while (Date.now() < until) {
    const records: TestRecord[] = Array.from({ length: 25 }, () => {
      const i = n++
      return { topic, partition: i % PARTITIONS, key: Buffer.from(`k${i}`), value: Buffer.from(`${label}:${i}`), headers: [[Buffer.from('h'), Buffer.from('x')]], timestamp: TIMESTAMP_BASE + BigInt(i) }
    })
    await produce(cluster, records)
    await delay(100) // pacing the producer, not waiting for a condition
  }
  return n
}

function originOf (r: ReadRecord): string | undefined {
  const found = r.headers.filter(([k]) => k.toString() === ORIGIN)
  assert.ok(found.length <= 1, 'at most one origin header')
  return found[0]?.[1]?.toString()
}

async function allRecords (cluster: Side, topic: string): Promise<ReadRecord[][]> {
  return Promise.all(Array.from({ length: PARTITIONS }, (_, p) => readCommitted(cluster, topic, p)))
}

function metricValue (text: string, name: string, flow: string, topic: string): number {
  const line = text.split('\n').find(l => l.startsWith(`${name}{`) && l.includes(`flow="${flow}"`) && l.includes(`topic="${topic}"`))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

test('active-active with the identity policy: no record returns to its origin, each side holds every record once', { timeout: 240_000 }, async t => {
  // Given the same topic on a (source) and b (target), and both flows with IdentityReplicationPolicy
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const topic = uniqueName('identity')
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  await createTopic('target', topic, { partitions: PARTITIONS, t })
  const config = writeTempFile(multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: 'target' }], [`${a}->${b}`, `${b}->${a}`], [
    'replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy', `topics = ${topic}, heartbeats`,
    'heartbeats.replication.enabled = false', 'refresh.topics.interval.seconds = 1'
  ]), '.properties', t)

  // When kmirror runs both flows while both sides write the topic
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => { kmirror.kill('SIGKILL'); await kmirror.waitForExit(10_000) })
  const port = (await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 60_000))[1]
  await kmirror.waitForOutput(/kmirror started/, 60_000)
  const until = Date.now() + TRAFFIC_MS
  const [nA, nB] = await Promise.all([traffic('source', topic, 'A', until), traffic('target', topic, 'B', until)])

  // Then both sides reach nA + nB records, and the loop counters reach exactly the other side's count:
  // every record copied over was seen coming back and skipped, so the sides are final
  await waitFor(async () => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    const skipped = [metricValue(text, 'kmirror_loop_records_skipped_total', `${a}->${b}`, topic), metricValue(text, 'kmirror_loop_records_skipped_total', `${b}->${a}`, topic)]
    const totals = await Promise.all((['source', 'target'] as const).map(async c => (await endOffsets(c, topic)).reduce((x, y) => x + y, 0n)))
    return { done: skipped[0] === nB && skipped[1] === nA && totals.every(x => x === BigInt(nA + nB)), state: { skipped, totals, expected: { nA, nB } } }
  }, { timeoutMs: 120_000, intervalMs: 1000, message: 'both sides hold every record and every returning record was skipped' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))

  // And each side holds each record exactly once: its own without an origin header, the other's marked with it
  for (const [cluster, self, other, selfLabel, otherLabel] of [['source', a, b, 'A', 'B'], ['target', b, a, 'B', 'A']] as const) {
    const partitions = await allRecords(cluster, topic)
    const records = partitions.flat()
    const values = records.map(r => r.value!.toString())
    assert.equal(new Set(values).size, values.length, `${cluster}: no record twice`)
    assert.equal(values.filter(v => v.startsWith(`${selfLabel}:`)).length, selfLabel === 'A' ? nA : nB)
    assert.equal(values.filter(v => v.startsWith(`${otherLabel}:`)).length, otherLabel === 'A' ? nA : nB)
    for (const r of records) {
      const own = r.value!.toString().startsWith(`${selfLabel}:`)
      assert.equal(originOf(r), own ? undefined : other, `${cluster}: origin of ${r.value!.toString()}`)
      assert.equal(r.headers[0]![0].toString(), 'h', 'the record\'s own headers come first')
      assert.notEqual(originOf(r), self)
    }
  }

  // And offset syncs translate every record a copied to b exactly, across the gaps of skipped records
  const syncs = await readOffsetSyncs('source', `mm2-offset-syncs.${b}.internal`, topic)
  const onA = await allRecords('source', topic)
  const onB = await allRecords('target', topic)
  for (let p = 0; p < PARTITIONS; p++) {
    const copiedFromA = onA[p]!.filter(r => originOf(r) === undefined)
    const copiesOnB = onB[p]!.filter(r => originOf(r) === a)
    assert.deepEqual(copiesOnB.map(r => r.value!.toString()), copiedFromA.map(r => r.value!.toString()), `partition ${p} copied in order`)
    assertSyncsTranslateExactly(syncs, copiedFromA, copiesOnB, p, `${topic}-${p}`)
  }
  t.diagnostic(`${TRAFFIC_MS / 1000} s of traffic both ways: ${nA} records written on a, ${nB} on b`)
})
