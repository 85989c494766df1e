/**
 * Hand-over between the real Apache MirrorMaker 2 (dedicated mode) and kmirror with exactly-once on in both
 * (`B.exactly.once.source.support = enabled`): MM2 copies a first part; kmirror, started while MM2 still runs,
 * refuses to copy until MM2 has stopped, then resumes from MM2's committed progress for a second part; MM2 resumes
 * from kmirror's for a third. The source holds committed and aborted
 * transactions; a read_committed reader of the target finds every committed source record exactly once, in order.
 * Once per MM2 release: 3.9.1 (the last 3.x line, from its own jars) in every `npm test`; 4.1.1 passes too, but
 * two releases here would take this file past its CI budget, so mm2-handover.test.ts runs 4.1.1 (at-least-once).
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { runKafkaLocal, shiftedPort } from '../helpers/clusters.ts'
import { createTopic, produce, produceTransactions, readPartition, type TestRecord, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { handoverFixture, mm2ExactlyOnceLines, mm2Releases, newestOffsets, storedRecords, waitForStoredEnd } from '../helpers/mm2.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted, readOffsetSyncs, type DecodedSync, type ReadRecord } from '../helpers/replication.ts'

const PARTITIONS = 3
/** Records of each committed source transaction (two per part) and of the aborted one between them. */
const TXN = 300
const ABORTED = 90
/** Plain records closing each part: a part ends on a record, not on a marker (MM2 stores a record's offset). */
const TAIL = 30
/** Every `npm test` runs 3.9.1; KMIRROR_TEST_MM2_RELEASES (e.g. `4.1.1,3.9.1`) runs others, from 3.5 on (KIP-618). */
const MM2_RELEASES = mm2Releases('3.9.1')
/**
 * MM2's internal REST port (exactly-once in dedicated mode), shifted as the clusters' ports are: below Linux's
 * ephemeral range (32768-60999), where any client connection of the run could hold it, and above the clusters'.
 */
const MM2_REST_PORT = shiftedPort(20_583)

let sequence = 0
function records (tag: string, count: number): (Omit<TestRecord, 'topic'>)[] {
  return Array.from({ length: count }, (_, i) => ({
    partition: i % PARTITIONS, key: Buffer.from(`${tag}-${i}`), value: Buffer.from(`${tag}:${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(sequence++)
  }))
}

/** A part: committed, aborted and committed transactions, then TAIL plain records. */
async function producePart (topic: string, tag: string): Promise<void> {
  await produceTransactions('source', topic, [
    { commit: true, records: records(`${tag}-first`, TXN) },
    { commit: false, records: records(`${tag}-aborted`, ABORTED) },
    { commit: true, records: records(`${tag}-second`, TXN) }
  ])
  await produce('source', records(`${tag}-tail`, TAIL).map(r => ({ ...r, topic })))
}

/**
 * Every offset sync (source-located, written by both tools) maps a source record to its copy: the record at the
 * sync's upstream offset is the one at its downstream offset on the target. Returns how many syncs were checked.
 */
function assertSyncsPointAtCopies (syncs: readonly DecodedSync[], source: readonly ReadRecord[], target: readonly ReadRecord[], partition: number, label: string): number {
  const mine = syncs.filter(s => s.partition === partition)
  const sourceAt = new Map(source.map(r => [Number(r.offset), r.value?.toString()]))
  const targetAt = new Map(target.map(r => [Number(r.offset), r.value?.toString()]))
  for (const s of mine) {
    const value = sourceAt.get(s.upstreamOffset)
    assert.ok(value !== undefined, `${label}: sync ${s.upstreamOffset} -> ${s.downstreamOffset} names no committed source record`)
    assert.equal(targetAt.get(s.downstreamOffset), value, `${label}: sync ${s.upstreamOffset} -> ${s.downstreamOffset} points at another record`)
  }
  return mine.length
}

async function handOverExactlyOnce (t: TestContext, release: string): Promise<void> {
  const fixture = handoverFixture(t, 'handover-eos')
  const { a, b, topic, offsetsTopic, mm2, phase, phases } = fixture

  // Given a flow in exactly-once mode for both tools, and a first part of the topic that MirrorMaker 2 copied
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [
      `${a}->${b}.topics = ${topic}`, 'emit.heartbeats.enabled = false', 'emit.checkpoints.enabled = false', 'sync.topic.acls.enabled = false',
      'refresh.topics.interval.seconds = 1', `${b}.offset.flush.interval.ms = 1000`,
      'plugin.discovery = service_load', `${b}.plugin.discovery = service_load`,
      ...mm2ExactlyOnceLines({ sourceAlias: a, targetAlias: b, restPort: MM2_REST_PORT })
    ]
  }), '.properties', t)
  const startMm2 = (): Promise<string> => runKafkaLocal(['mm2', mm2, config, '--version', release, '--clusters', b])
  await producePart(topic, 'part1')
  await startMm2()
  phase('MM2 started')
  await waitForStoredEnd(offsetsTopic, a, topic, `MirrorMaker 2 ${release}`)
  phase('part 1 copied by MM2')

  // When kmirror is started with the same mm2.properties while MM2 still runs the flow, it refuses to copy and waits
  const kmirror = fixture.kmirror = spawnKmirror(['run', config], { t })
  const refusal = await kmirror.waitForOutput(/(MirrorMaker 2 is running flow [^"]*)/, 60_000)
  assert.match(kmirror.stdout + kmirror.stderr, /KMIRROR_ERR_MM2_RUNNING/)
  assert.match(refusal[1]!, new RegExp(`MirrorMaker 2 is running flow ${a}->${b}: its worker group ${a}-mm2 on cluster ${b} has 1 live worker\\(s\\)`))
  assert.match(refusal[1]!, /1 MirrorSourceConnector task\(s\) run there/)
  phase('kmirror refused while MM2 runs')

  // And MM2 stops, more records arrive, and kmirror takes over from MM2's committed progress on its own
  await runKafkaLocal(['mm2-down', mm2])
  await producePart(topic, 'part2')
  await kmirror.waitForOutput(/started after waiting for a transient fault to clear/, 60_000)
  await waitForStoredEnd(offsetsTopic, a, topic, 'kmirror')
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-2000))
  phase('part 2 copied by kmirror')

  // And MirrorMaker 2 takes the flow back for a third part
  await producePart(topic, 'part3')
  await startMm2()
  await waitForStoredEnd(offsetsTopic, a, topic, `MirrorMaker 2 ${release} again`)
  await runKafkaLocal(['mm2-down', mm2])
  phase('part 3 copied by MM2')

  // Then a read_committed reader of the target finds every committed source record once, in source order
  const perPartition = (3 * (2 * TXN + TAIL)) / PARTITIONS
  const syncs = await readOffsetSyncs('source', `mm2-offset-syncs.${b}.internal`, topic)
  let syncsChecked = 0
  for (let p = 0; p < PARTITIONS; p++) {
    const source = await readCommitted('source', topic, p)
    const target = await readCommitted('target', `${a}.${topic}`, p)
    assert.equal(source.length, perPartition, `${topic}-${p}: committed records on the source`)
    assert.equal(source.filter(r => r.value?.toString().includes('aborted') === true).length, 0, `${topic}-${p}: no aborted record read`)
    assertSamePartition(source, target, `${a}.${topic}-${p}`)
    // And every offset sync either tool wrote maps a source record to its copy
    syncsChecked += assertSyncsPointAtCopies(syncs, source, target, p, `${topic}-${p}`)
  }
  // And both stored each partition's progress under the same key, in the same partition of the offsets topic
  const stored = await storedRecords(offsetsTopic, a, topic)
  for (let p = 0; p < PARTITIONS; p++) {
    const mine = stored.filter(r => r.partition === p)
    assert.equal(new Set(mine.map(r => r.keyHex)).size, 1, `${topic}-${p}: one key form in ${offsetsTopic}`)
    assert.equal(new Set(mine.map(r => r.at)).size, 1, `${topic}-${p}: one partition of ${offsetsTopic}`)
  }
  const ends = await Promise.all(Array.from({ length: PARTITIONS }, async (_, p) => (await readPartition('source', topic, p, { isolation: 'read_uncommitted' })).at(-1)!.offset))
  assert.deepEqual([...newestOffsets(stored)].sort(([x], [y]) => x - y), ends.map((end, p) => [p, Number(end)]))
  t.diagnostic(`exactly-once hand-over MM2 ${release} -> kmirror -> MM2: ${PARTITIONS * perPartition} committed records, ` +
    `${syncsChecked} offset syncs checked, ${stored.length} progress records; ${phases.join(', ')}`)
}

for (const release of MM2_RELEASES) {
  test(`MirrorMaker 2 ${release} and kmirror hand an exactly-once flow over both ways: every committed record once`, { timeout: 420_000 }, t => handOverExactlyOnce(t, release))
}
