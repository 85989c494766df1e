/**
 * MM2-compatible heartbeats: every pair MM2 would run a herder for writes Heartbeat(source, target, now) to the
 * target's compacted `heartbeats` topic every emit.heartbeats.interval.seconds, disabled flows included, and
 * enabled flows replicate `heartbeats` downstream as `<source>.heartbeats`. `--clusters` keeps only the pairs
 * whose target it lists.
 *
 * The flows replicate only the `heartbeats` topic, named in `topics` with heartbeats.replication.enabled = false:
 * the shared clusters hold other tests' heartbeat topics under other aliases (see test/helpers/multi-cluster.ts).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeHeartbeat, type Heartbeat } from '../../src/formats/heartbeat.ts'
import { endOffsets, partitionCount, readPartition, topicConfig, type ReadRecord } from '../helpers/kafka.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { uniqueName, waitForValue } from '../helpers/wait.ts'

type Beat = Heartbeat & { recordTimestamp: bigint, headers: number }

/** The heartbeats of TOPIC from offset FROM on, written for the pair source->target. */
async function beats (cluster: 'source' | 'target', topic: string, from: bigint, source: string, target: string): Promise<Beat[]> {
  const records: ReadRecord[] = await readPartition(cluster, topic, 0, { isolation: 'read_uncommitted', fromOffset: from }).catch(() => [])
  return records
    .filter(r => r.key !== null && r.value !== null)
    .map(r => ({ ...decodeHeartbeat(r.key!, r.value!), recordTimestamp: r.timestamp, headers: r.headers.length }))
    .filter(h => h.sourceClusterAlias === source && h.targetClusterAlias === target)
}

async function endOf (cluster: 'source' | 'target', topic: string): Promise<bigint> {
  return (await endOffsets(cluster, topic).catch(() => [0n]))[0] ?? 0n
}

test('heartbeats are written every second for the enabled flow and for the disabled reverse pair, and replicated downstream', { timeout: 120_000 }, async t => {
  // Given clusters a (source) and b (target), only a->b enabled, default heartbeat settings (1 s)
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const fromTarget = await endOf('target', 'heartbeats')
  const fromSource = await endOf('source', 'heartbeats')
  const config = writeTempFile(multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: 'target' }], [`${a}->${b}`],
    ['topics = heartbeats', 'heartbeats.replication.enabled = false', 'refresh.topics.interval.seconds = 1']), '.properties', t)

  // When kmirror runs
  const kmirror = spawnKmirror(['run', config], { t })
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => { kmirror.kill('SIGKILL'); await kmirror.waitForExit(10_000) })

  // Then b's heartbeats topic receives Heartbeat(a, b) every second: MM2's bytes, record timestamp = timestamp, no headers
  const forward = await waitForValue(async () => {
    const found = await beats('target', 'heartbeats', fromTarget, a, b)
    return { done: found.length >= 4, state: found }
  }, { timeoutMs: 60_000, intervalMs: 500, message: `4 heartbeats (${a}, ${b}) on the target` })
  for (const h of forward) {
    assert.equal(h.recordTimestamp, BigInt(h.timestamp))
    assert.equal(h.headers, 0)
  }
  const gaps = forward.slice(1).map((h, i) => h.timestamp - forward[i]!.timestamp)
  // (the upper bound allows a slow or failed produce or two on a loaded target: each failure backs off a second or more)
  assert.ok(gaps.every(g => g >= 900 && g <= 10_000), `heartbeats about 1 s apart: ${gaps.join(', ')} ms`)
  assert.equal(await partitionCount('target', 'heartbeats'), 1)
  assert.equal((await topicConfig('target', 'heartbeats'))['cleanup.policy'], 'compact')

  // And the disabled pair b->a still runs its heartbeats: a's heartbeats topic gets Heartbeat(b, a)
  await waitForValue(async () => {
    const found = await beats('source', 'heartbeats', fromSource, b, a)
    return { done: found.length >= 2, state: found.length }
  }, { timeoutMs: 30_000, intervalMs: 500, message: `heartbeats (${b}, ${a}) on the source` })

  // And flow a->b replicates a's heartbeats topic to b as `a.heartbeats`, records unchanged
  await waitForValue(async () => {
    const found = await beats('target', `${a}.heartbeats`, 0n, b, a)
    return { done: found.length >= 2 && found.every(h => h.headers === 0), state: found.length }
  }, { timeoutMs: 30_000, intervalMs: 500, message: `${a}.heartbeats on the target holds (${b}, ${a}) heartbeats` })

  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))
})

test('with --clusters, only pairs whose target is listed write heartbeats', { timeout: 120_000 }, async t => {
  // Given the same two clusters, a->b enabled, and kmirror run for target b only
  const [a, b] = [uniqueAlias('a'), uniqueAlias('b')]
  const fromTarget = await endOf('target', 'heartbeats')
  const fromSource = await endOf('source', 'heartbeats')
  const config = writeTempFile(multiClusterProperties([{ alias: a, cluster: 'source' }, { alias: b, cluster: 'target' }], [`${a}->${b}`],
    [`topics = ${uniqueName('nothing')}`, 'heartbeats.replication.enabled = false']), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--clusters', b], { t })
  removeAliasTopicsAfter(t, ['source', 'target'], [a, b], async () => { kmirror.kill('SIGKILL'); await kmirror.waitForExit(10_000) })

  // When b has received three heartbeats from pair a->b
  await waitForValue(async () => {
    const found = await beats('target', 'heartbeats', fromTarget, a, b)
    return { done: found.length >= 3, state: found.length }
  }, { timeoutMs: 60_000, intervalMs: 500, message: `3 heartbeats (${a}, ${b}) on the target` })

  // Then pair b->a, whose target a is not listed, wrote none in that time
  assert.deepEqual(await beats('source', 'heartbeats', fromSource, b, a), [])
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(10_000)).code, 0, kmirror.stderr.slice(-3000))
})
