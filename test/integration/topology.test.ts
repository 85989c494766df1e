/**
 * Chain A->B->C (clusters source -> target -> third): heartbeat topics are named as MM2 names them on the way
 * down (`A.heartbeats` on B, `B.heartbeats` and `B.A.heartbeats` on C), and `kmirror topology` computes from
 * those names, as MM2's MirrorClient does, that C has B at 1 hop and A at 2. An unreachable cluster is listed
 * as such and makes the command exit 3.
 *
 * The flows replicate the heartbeat topics named in `topics` (heartbeats.replication.enabled = false), not the
 * other tests' heartbeat topics on the shared clusters (see test/helpers/multi-cluster.ts).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ensureClusters, getCluster } from '../helpers/clusters.ts'
import { createTopic, endOffsets, listTopics, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

interface TopologyJson {
  clusters: ({ alias: string, reachable: true, upstream: { alias: string, hops: number, via: string }[], heartbeatTopics: string[] } |
    { alias: string, reachable: false, error: string })[]
}

test('kmirror topology on a chain A->B->C shows B at 1 hop and A at 2 from C, from MM2-named heartbeat topics', { timeout: 180_000 }, async t => {
  // Given three clusters a (source), b (target), c (third) and flows a->b and b->c, with a data topic on a
  await ensureClusters(['third'])
  const [a, b, c] = [uniqueAlias('a'), uniqueAlias('b'), uniqueAlias('c')]
  const topic = uniqueName('chain')
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', Array.from({ length: 10 }, (_, i) => ({ topic, partition: 0, key: null, value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  const clusters = [{ alias: a, cluster: 'source' as const }, { alias: b, cluster: 'target' as const }, { alias: c, cluster: 'third' as const }]
  const config = writeTempFile(multiClusterProperties(clusters, [`${a}->${b}`, `${b}->${c}`], [
    `${a}->${b}.topics = ${topic}, heartbeats`, `${b}->${c}.topics = .*${topic}, heartbeats, ${a}[.]heartbeats`,
    'heartbeats.replication.enabled = false', 'refresh.topics.interval.seconds = 1'
  ]), '.properties', t)

  // When kmirror runs the chain
  const kmirror = spawnKmirror(['run', config], { t })
  removeAliasTopicsAfter(t, ['source', 'target', 'third'], [a, b, c], async () => { kmirror.kill('SIGKILL'); await kmirror.waitForExit(10_000) })

  // Then the heartbeat topics appear downstream with MM2's names, and the data travels the chain
  await waitFor(async () => {
    const [onB, onC] = await Promise.all([listTopics('target'), listTopics('third')])
    const state = { onB: onB.filter(n => n.includes(a)), onC: onC.filter(n => n.includes(b)) }
    return { done: onB.includes(`${a}.heartbeats`) && onC.includes(`${b}.heartbeats`) && onC.includes(`${b}.${a}.heartbeats`), state }
  }, { timeoutMs: 60_000, intervalMs: 500, message: `${a}.heartbeats on b, ${b}.heartbeats and ${b}.${a}.heartbeats on c` })
  await waitFor(async () => ((await endOffsets('third', `${b}.${a}.${topic}`).catch(() => [0n]))[0] === 10n),
    { timeoutMs: 60_000, intervalMs: 500, message: `the data topic copied to c as ${b}.${a}.${topic}` })

  // And `kmirror topology --json` reports, for each cluster, the upstream clusters of this chain with their hops
  const json = spawnKmirror(['topology', config, '--json'], { t })
  assert.equal((await json.waitForExit(60_000)).code, 0, json.stderr)
  const report = JSON.parse(json.stdout) as TopologyJson
  const upstreamOf = (alias: string) => {
    const entry = report.clusters.find(x => x.alias === alias)
    assert.ok(entry?.reachable, `${alias} reachable`)
    // The shared clusters also hold other tests' heartbeat topics: keep the aliases of this chain
    return entry.upstream.filter(u => [a, b, c].includes(u.alias))
  }
  assert.deepEqual(report.clusters.map(x => x.alias), [a, b, c])
  assert.deepEqual(upstreamOf(c), [{ alias: b, hops: 1, via: `${b}.heartbeats` }, { alias: a, hops: 2, via: `${b}.${a}.heartbeats` }])
  assert.deepEqual(upstreamOf(b), [{ alias: a, hops: 1, via: `${a}.heartbeats` }])
  assert.deepEqual(upstreamOf(a), [])

  // And the table says the same, one row per upstream cluster
  const table = spawnKmirror(['topology', config], { t })
  assert.equal((await table.waitForExit(60_000)).code, 0, table.stderr)
  const rows = table.stdout.split('\n').map(line => line.trim().split(/\s+/))
  assert.deepEqual(rows[0], ['CLUSTER', 'UPSTREAM', 'HOPS', 'VIA'])
  assert.ok(rows.some(r => r.join(' ') === `${c} ${a} 2 ${b}.${a}.heartbeats`), table.stdout)
  assert.ok(rows.some(r => r.join(' ') === `${c} ${b} 1 ${b}.heartbeats`), table.stdout)
  assert.ok(rows.some(r => r.join(' ') === `${b} ${a} 1 ${a}.heartbeats`), table.stdout)

  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))
})

test('kmirror topology lists an unreachable cluster as such, still reports the others, and exits 3', { timeout: 120_000 }, async t => {
  // Given a configuration whose cluster d listens nowhere (port 1 on this host refuses connections)
  const [a, d] = [uniqueAlias('a'), uniqueAlias('d')]
  const config = writeTempFile([
    `clusters = ${a}, ${d}`, `${a}.bootstrap.servers = ${getCluster('source').bootstrap}`, `${d}.bootstrap.servers = 127.0.0.1:1`, `${a}->${d}.enabled = true`
  ].join('\n'), '.properties', t)

  // When kmirror topology runs
  const run = spawnKmirror(['topology', config, '--json'], { t })
  const exit = await run.waitForExit(90_000)

  // Then it exits 3, d is listed as unreachable with the reason on stderr, and a is read
  assert.equal(exit.code, 3, run.stderr)
  const report = JSON.parse(run.stdout) as TopologyJson
  assert.deepEqual(report.clusters.map(x => [x.alias, x.reachable]), [[a, true], [d, false]])
  assert.match(run.stderr, new RegExp(`cluster ${d} is unreachable: .*127\\.0\\.0\\.1:1`))
})
