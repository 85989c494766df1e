/**
 * Hand-over between the real Apache MirrorMaker 2 and kmirror, both ways, on one flow: each resumes from the
 * positions the other stored in `mm2-offsets.<source>.internal`, and nothing is copied again. Once per MM2 release
 * (`kafka-local.sh mm2 --version`): 4.1.1 in every `npm test` (mm2-handover-eos.test.ts runs 3.9.1, from its own
 * jars, kafka/legacy-mm2/pom.xml, in exactly-once mode).
 */
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { runKafkaLocal } from '../helpers/clusters.ts'
import { createTopic, produce, type TestRecord, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { handoverFixture, mm2Releases, newestOffsets, storedRecords, waitForStoredEnd } from '../helpers/mm2.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertAllPresentInOrder, readCommitted } from '../helpers/replication.ts'

const PARTITIONS = 3
const PER_PART = 3000
/** Three parts of PER_PART records, spread evenly. */
const PER_PARTITION = (3 * PER_PART) / PARTITIONS
/** Every `npm test` runs 4.1.1; KMIRROR_TEST_MM2_RELEASES (e.g. `3.9.1,3.6.2,2.8.2`) runs others, from 2.4 on. */
const MM2_RELEASES = mm2Releases('4.1.1')

function records (topic: string, tag: string, count: number): TestRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    topic, partition: i % PARTITIONS, key: Buffer.from(`${tag}-${i}`), value: Buffer.from(`${tag}:${i}`), headers: [[Buffer.from('tag'), Buffer.from(tag)]], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
}

async function handOver (t: TestContext, release: string): Promise<void> {
  const fixture = handoverFixture(t, 'handover')
  const { a, b, topic, offsetsTopic, mm2, phase, phases } = fixture

  // Given a topic whose first part the real MirrorMaker 2 copied and recorded
  await createTopic('source', topic, { partitions: PARTITIONS, t })
  const config = writeTempFile(mm2Properties({
    source: 'source', target: 'target', sourceAlias: a, targetAlias: b,
    extra: [
      `${a}->${b}.topics = ${topic}`, 'emit.heartbeats.enabled = false', 'sync.topic.acls.enabled = false', `${b}.offset.flush.interval.ms = 1000`,
      // Speed only: MM2 3.6+ skips Connect's reflective plugin scan, 5-10 s per start here, in the driver (top level)
      // and in the flow's worker (`${b}.`). Older MM2 and kmirror ignore the key (kmirror warns).
      'plugin.discovery = service_load', `${b}.plugin.discovery = service_load`
    ]
  }), '.properties', t)
  const startMm2 = (): Promise<string> => runKafkaLocal(['mm2', mm2, config, '--version', release, '--clusters', b])
  await produce('source', records(topic, 'part1', PER_PART))
  await startMm2()
  phase('MM2 started')
  await waitForStoredEnd(offsetsTopic, a, topic, `MirrorMaker 2 ${release}`)
  await runKafkaLocal(['mm2-down', mm2])
  phase('part 1 copied by MM2')

  // When more records arrive and kmirror takes over with the same mm2.properties
  await produce('source', records(topic, 'part2', PER_PART))
  const kmirror = fixture.kmirror = spawnKmirror(['run', config], { t })
  await waitForStoredEnd(offsetsTopic, a, topic, 'kmirror')
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-2000))
  phase('part 2 copied by kmirror')

  // And MirrorMaker 2 takes the flow back for a third part
  await produce('source', records(topic, 'part3', PER_PART))
  await startMm2()
  await waitForStoredEnd(offsetsTopic, a, topic, `MirrorMaker 2 ${release} again`)
  await runKafkaLocal(['mm2-down', mm2])
  phase('part 3 copied by MM2')

  // Then the target holds every record once, in order: each side resumed where the other stopped
  let duplicates = 0
  for (let p = 0; p < PARTITIONS; p++) {
    const source = await readCommitted('source', topic, p)
    const target = await readCommitted('target', `${a}.${topic}`, p)
    assert.equal(source.length, PER_PARTITION, `${topic}-${p}: records on the source`)
    duplicates += assertAllPresentInOrder(source, target, `${topic}-${p}`)
    assert.equal(target.length, PER_PARTITION, `${a}.${topic}-${p}: records on the target`)
  }
  // And MM2 and kmirror stored each partition's offset under the same key bytes in the same partition of the
  // offsets topic (Connect looks offsets up by those bytes; a key in two partitions would leave two live values)
  const stored = await storedRecords(offsetsTopic, a, topic)
  for (let p = 0; p < PARTITIONS; p++) {
    const mine = stored.filter(r => r.partition === p)
    // the last offset of each part: stored by MM2, by kmirror, by MM2 again
    const partEnds = [1, 2, 3].map(part => (part * PER_PARTITION) / 3 - 1)
    assert.deepEqual(partEnds.filter(end => mine.some(r => r.offset === end)), partEnds, `${topic}-${p}: the end of every part stored`)
    assert.equal(new Set(mine.map(r => r.keyHex)).size, 1, `${topic}-${p}: one key form in ${offsetsTopic}`)
    assert.equal(new Set(mine.map(r => r.at)).size, 1, `${topic}-${p}: one partition of ${offsetsTopic}`)
  }
  assert.deepEqual([...newestOffsets(stored)].sort(([x], [y]) => x - y), [[0, PER_PARTITION - 1], [1, PER_PARTITION - 1], [2, PER_PARTITION - 1]])
  t.diagnostic(`hand-over MM2 ${release} -> kmirror -> MM2 ${release}: ${3 * PER_PART} records, ${duplicates} copied twice, ` +
    `${stored.length} offset records; ${phases.join(', ')}`)
  assert.equal(duplicates, 0)
}

for (const release of MM2_RELEASES) {
  test(`MirrorMaker 2 ${release} hands a flow over to kmirror and back without copying anything twice`, { timeout: 480_000 }, t => handOver(t, release))
}
