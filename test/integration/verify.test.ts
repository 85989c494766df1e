/**
 * `kmirror verify` on real clusters: a flow copies three topics; then one remote topic is rebuilt by hand with one
 * record altered and another with a gap (an aborted transaction takes the offsets of three records). verify exits
 * 0 on the exact copy (records produced after the copy are "not copied yet", not missing), 1 naming the altered
 * record and the missing range with their offsets, 0 with --since past the gap; it writes nothing (no topic, no
 * group, no record in the flow's internal topics). Without kmirror's offset history, MM2's offset syncs pair the
 * offsets. A remote topic rebuilt as a crash leaves it (records 5-9 written twice, with the offset-history run the
 * restart records) is equal with 5 duplicate records named. Bad input exits 2 before any cluster is contacted, an
 * unreachable target 3.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { encodeOffsetHistoryKey, encodeOffsetHistoryValue } from '../../src/formats/offset-history.ts'
import { AdminClient } from '../../src/kafka/admin-client.ts'
import { getCluster } from '../helpers/clusters.ts'
import { runKmirror } from '../helpers/drills.ts'
import { createTopic, deleteTopics, endOffsets, listTopics, produce, produceTransactions, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { readCommitted } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const RECORDS = 20

interface JsonPartition {
  topic: string, partition: number, remoteTopic: string, status: string, basis: string, sourceRecords: number, targetRecords: number,
  counts: Record<string, number>, notCopied: { from: number, to: number } | null,
  differences: { kind: string, source: { first: number, last: number } | null, target: { first: number, last: number } | null, records: number, fields?: string[] }[]
  ranges: { source: { records: number, digest: string }, target: { records: number, digest: string }, equal: boolean }[]
}
interface JsonReport { equal: boolean, partitions: JsonPartition[], notes: string[] }

function record (topic: string, i: number): TestRecord {
  return { topic, partition: 0, key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i}`), headers: [[Buffer.from('n'), Buffer.from(String(i))]], timestamp: TIMESTAMP_BASE + BigInt(i) * 1000n }
}

interface Footprint { side: string, topics: string[], groups: string[], ends: string[] }

/**
 * What verify must not change: topics and groups of both clusters, and the end offsets of the flow's internal topics
 * on the target. Groups are compared as "no new group": the run's own groups are Empty once it stopped, and the
 * broker may remove an Empty group without offsets at any moment (its cleanup turn), which is not verify's doing.
 */
async function footprint (admins: Record<'source' | 'target', AdminClient>, alias: string): Promise<Footprint[]> {
  const out: Footprint[] = []
  for (const side of ['source', 'target'] as const) {
    const topics = (await listTopics(side)).filter(t => t.includes(alias) || t.includes('verify')).sort()
    const groups = (await admins[side].groups.listGroups()).map(g => g.groupId).filter(g => g.includes('verify') || g.includes(alias)).sort()
    const internal = topics.filter(t => t.startsWith('mm2-') || t.includes('.internal'))
    out.push({ side, topics, groups, ends: await Promise.all(internal.map(async t => `${t}:${(await endOffsets(side, t)).join(',')}`)) })
  }
  return out
}

function assertUnchanged (after: Footprint[], before: Footprint[]): void {
  assert.deepEqual(after.map(({ groups: _, ...rest }) => rest), before.map(({ groups: _, ...rest }) => rest))
  for (const [i, side] of after.entries()) {
    assert.deepEqual(side.groups.filter(g => !before[i]!.groups.includes(g)), [], `no group created on ${side.side}`)
  }
}

test('verify passes an exact copy, names an altered record and a gap with their offsets, and a re-copy\'s duplicates, writing nothing', { timeout: 240_000 }, async t => {
  // Given a flow with its own aliases copying three topics of 20 records each, then stopped
  const tag = randomBytes(3).toString('hex')
  const [from, to] = [`VA${tag}`, `VB${tag}`]
  const prefix = uniqueName('verify')
  // The flow's internal topics carry its aliases: removed with the test's topics
  t.after(async () => {
    for (const side of ['source', 'target'] as const) await deleteTopics(side, (await listTopics(side)).filter(name => name.includes(from)))
  })
  const [exact, altered, gap, recopied] = ['exact', 'altered', 'gap', 'recopied'].map(n => `${prefix}-${n}`) as [string, string, string, string]
  for (const topic of [exact, altered, gap, recopied]) {
    await createTopic('source', topic, { partitions: 1, t })
    await produce('source', Array.from({ length: RECORDS }, (_, i) => record(topic, i)))
  }
  const file = writeTempFile(mm2Properties({ source: 'source', target: 'target', sourceAlias: from, targetAlias: to, extra: [`${from}->${to}.topics = ${prefix}-.*`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', file, '--progress-interval', '0'], { t })
  await waitFor(async () => {
    const ends = await Promise.all([exact, altered, gap, recopied].map(async topic => (await endOffsets('target', `${from}.${topic}`).catch(() => [0n]))[0]))
    return { done: ends.every(e => e === BigInt(RECORDS)), state: { ends, stderr: kmirror.stderr.slice(-1500) } }
  }, { timeoutMs: 60_000, intervalMs: 300, message: 'four topics copied' })
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0, kmirror.stderr.slice(-2000))

  // And two remote topics rebuilt by hand: one record altered; three offsets taken by an aborted transaction
  const copies = await Promise.all([altered, gap, recopied].map(async topic => await readCommitted('source', topic, 0)))
  await deleteTopics('target', [`${from}.${altered}`, `${from}.${gap}`, `${from}.${recopied}`])
  for (const topic of [altered, gap, recopied]) {
    await waitFor(async () => {
      try {
        await createTopic('target', `${from}.${topic}`, { partitions: 1, t })
        return true
      } catch { return false }
    }, { timeoutMs: 30_000, intervalMs: 300, message: `${from}.${topic} created again` })
  }
  const asTarget = (topic: string, rs: typeof copies[0]): TestRecord[] => rs.map(r => ({ topic, partition: 0, key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp }))
  const alteredCopy = asTarget(`${from}.${altered}`, copies[0]!)
  alteredCopy[7] = { ...alteredCopy[7]!, value: Buffer.from('tampered') }
  await produce('target', alteredCopy)
  const gapCopy = asTarget(`${from}.${gap}`, copies[1]!)
  await produce('target', gapCopy.slice(0, 10))
  await produceTransactions('target', `${from}.${gap}`, [{ commit: false, records: gapCopy.slice(10, 12) }])
  assert.deepEqual(await produce('target', gapCopy.slice(13)), [13n, 14n, 15n, 16n, 17n, 18n, 19n])
  // And one rebuilt as a crash leaves it: source 0-9 copied to target 0-9 with the position stored at 5 only, then
  // after the restart 5-19 copied again to target 10-24, with the run the restart records in the offset history
  // (source 5 -> target 10, 15 records)
  const recopiedCopy = asTarget(`${from}.${recopied}`, copies[2]!)
  await produce('target', [...recopiedCopy.slice(0, 10), ...recopiedCopy.slice(5)])
  await produce('target', [{
    topic: `mm2-offset-history.${from}.internal`, partition: 0, timestamp: BigInt(Date.now()), headers: [],
    key: encodeOffsetHistoryKey({ topic: recopied, partition: 0, upstreamOffset: 5 }), value: encodeOffsetHistoryValue({ downstreamOffset: 10, length: 15, open: false })
  }])
  // And three records produced on the source after the copy stopped
  await produce('source', [RECORDS, RECORDS + 1, RECORDS + 2].map(i => record(exact, i)))

  const admins = { source: new AdminClient({ 'bootstrap.servers': getCluster('source').bootstrap }, 'verify-test', { label: 'source' }), target: new AdminClient({ 'bootstrap.servers': getCluster('target').bootstrap }, 'verify-test', { label: 'target' }) }
  t.after(async () => { await Promise.all([admins.source.close(), admins.target.close()]) })
  const before = await footprint(admins, from)
  const verify = async (...more: string[]): Promise<{ code: number | null, stdout: string, stderr: string, report: JsonReport }> => {
    const result = await runKmirror(['verify', file, '--from', from, '--to', to, '--json', ...more], t)
    try {
      return { ...result, report: JSON.parse(result.stdout) as JsonReport }
    } catch {
      throw new Error(`verify exited ${result.code} without JSON:\n${result.stdout}\n${result.stderr}`)
    }
  }

  // When verify compares the exact copy: exit 0, 20 records on each side, the 3 new records not copied yet
  const ok = await verify('--topics', exact)
  assert.equal(ok.code, 0, ok.stdout + ok.stderr)
  assert.deepEqual(ok.report.partitions.map(p => [p.remoteTopic, p.status, p.sourceRecords, p.targetRecords, p.notCopied, p.differences.length]),
    [[`${from}.${exact}`, 'equal', RECORDS, RECORDS, { from: 20, to: 23 }, 0]])
  assert.ok(ok.report.partitions[0]!.ranges.every(r => r.equal && r.source.digest === r.target.digest))

  // Then the altered record is named: source and target offset 7, its value differs; exit 1
  const bad = await verify('--topics', `${prefix}-(altered|gap)`)
  assert.equal(bad.code, 1, bad.stdout + bad.stderr)
  const [alteredReport, gapReport] = bad.report.partitions
  assert.deepEqual(alteredReport!.differences, [{ kind: 'differing', source: { first: 7, last: 7 }, target: { first: 7, last: 7 }, records: 1, fields: ['value'] }])
  assert.deepEqual([alteredReport!.sourceRecords, alteredReport!.targetRecords], [RECORDS, RECORDS])
  assert.equal(alteredReport!.ranges[0]!.equal, false)
  // And the gap is a missing range: source offsets 10-12, expected at target offsets 10-12
  assert.deepEqual(gapReport!.differences, [{ kind: 'missing', source: { first: 10, last: 12 }, target: { first: 10, last: 12 }, records: 3 }])
  assert.deepEqual([gapReport!.sourceRecords, gapReport!.targetRecords], [RECORDS, RECORDS - 3])

  // And the text output says the same to a person
  const text = await runKmirror(['verify', file, '--from', from, '--to', to, '--topics', `${prefix}-(altered|gap)`], t)
  assert.equal(text.code, 1)
  assert.match(text.stdout, /DIFFERENT: 2 of 2 partition\(s\) differ/)
  assert.match(text.stdout, /differing: source offset 7 vs target offset 7 \(1 record; value differ\)/)
  assert.match(text.stdout, /missing on the target: source offsets 10-12 \(3 records\), expected at target offsets 10-12/)

  // And --since past the gap compares only the records after it: exit 0
  const since = await verify('--topics', gap, '--since', new Date(Number(TIMESTAMP_BASE) + 15_000).toISOString())
  assert.equal(since.code, 0, since.stdout + since.stderr)
  assert.deepEqual([since.report.partitions[0]!.sourceRecords, since.report.partitions[0]!.targetRecords], [5, 5])

  // And the re-copy: records 5-9 at target 5-9 are duplicates of source 5-9 (copied again at 10-14): reported, exit 0
  const dup = await verify('--topics', recopied)
  assert.equal(dup.code, 0, dup.stdout + dup.stderr)
  const dupReport = dup.report.partitions[0]!
  assert.deepEqual([dupReport.status, dupReport.sourceRecords, dupReport.targetRecords, dupReport.counts.duplicate, dupReport.counts.extra], ['equal', RECORDS, RECORDS + 5, 5, 0])
  assert.deepEqual(dupReport.differences, [{ kind: 'duplicate', source: { first: 5, last: 9 }, target: { first: 5, last: 9 }, records: 5 }])
  const dupText = await runKmirror(['verify', file, '--from', from, '--to', to, '--topics', recopied], t)
  assert.equal(dupText.code, 0)
  assert.match(dupText.stdout, /equal, 5 duplicate/)
  assert.match(dupText.stdout, /duplicate on the target: target offsets 5-9 \(5 records\), copies of source offsets 5-9 copied again after a restart/)

  // And nothing was written on either cluster
  assertUnchanged(await footprint(admins, from), before)

  // And without kmirror's offset history (a flow MM2 copied), MM2's offset syncs pair the offsets: same finding
  await deleteTopics('target', [`mm2-offset-history.${from}.internal`])
  const mm2 = await verify('--topics', altered)
  assert.equal(mm2.code, 1, mm2.stdout + mm2.stderr)
  assert.equal(mm2.report.partitions[0]!.basis, 'mm2-offset-syncs')
  assert.deepEqual(mm2.report.partitions[0]!.differences, alteredReport!.differences)
})

test('verify exits 2 on bad input before contacting a cluster, and 3 when a cluster is unreachable', { timeout: 120_000 }, async t => {
  const file = writeTempFile(mm2Properties({ source: 'source', target: 'target' }), '.properties', t)
  const bad = async (args: string[], message: RegExp): Promise<void> => {
    const result = await runKmirror(['verify', file, ...args], t)
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, message)
  }
  // (each flag's check: test/unit/cli/verify-command.test.ts)
  await bad(['--from', 'A', '--to', 'A'], /--from and --to are both 'A': give the two different clusters of a flow/)
  await bad(['--from', 'A', '--to', 'B', '--since', '2026-02-30'], /--since accepts an ISO 8601 instant only: .*; got '2026-02-30'/)

  // An unreachable target: nothing listens on 127.0.0.1:1
  const unreachable = writeTempFile(mm2Properties({ source: 'source', target: 'target' }).replace(getCluster('target').bootstrap, '127.0.0.1:1'), '.properties', t)
  const down = await runKmirror(['verify', unreachable, '--from', 'A', '--to', 'B', '--timeout', '5'], t)
  assert.equal(down.code, 3, down.stderr)
  assert.match(down.stderr, /cannot verify flow A->B: .*cluster B.*127\.0\.0\.1:1.*nothing was written/s)
})
