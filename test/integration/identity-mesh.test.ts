/**
 * Meshes of three and four clusters with IdentityReplicationPolicy (the same topic name everywhere), full mesh
 * and ring, all run by one kmirror process: a record produced once on a cluster appears exactly once on every
 * other cluster, never twice anywhere, identical (key, value, timestamp, user headers). Origin alone would let
 * A's records go A->B->C->B and, in a full mesh, reach C twice (from A and through B).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ensureClusters, type ClusterName } from '../helpers/clusters.ts'
import { createTopic, endOffsets, produce, TIMESTAMP_BASE, type TestRecord } from '../helpers/kafka.ts'
import { multiClusterProperties, removeAliasTopicsAfter, uniqueAlias } from '../helpers/multi-cluster.ts'
import { spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { readCommitted, type ReadRecord } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const RECORDS = 10
const CLUSTERS: readonly ClusterName[] = ['source', 'target', 'third', 'fourth']

interface Mesh {
  readonly name: string
  readonly topic: string
  readonly members: readonly { alias: string, cluster: ClusterName }[]
  readonly flows: readonly string[]
}

function meshOf (name: string, size: number, shape: 'full' | 'ring'): Mesh {
  const members = CLUSTERS.slice(0, size).map(cluster => ({ alias: uniqueAlias(name[0]!), cluster }))
  const aliases = members.map(m => m.alias)
  const flows = shape === 'ring'
    ? aliases.map((a, i) => `${a}->${aliases[(i + 1) % size]}`)
    : aliases.flatMap(a => aliases.filter(b => b !== a).map(b => `${a}->${b}`))
  return { name, topic: uniqueName(`mesh-${name}`), members, flows }
}

function recordsOf (mesh: Mesh, alias: string): TestRecord[] {
  return Array.from({ length: RECORDS }, (_, i) => ({
    topic: mesh.topic, partition: 0, key: Buffer.from(`${alias}-k${i}`), value: Buffer.from(`${alias}:${i}`),
    headers: [[Buffer.from('h'), Buffer.from(`${alias}-${i}`)], [Buffer.from('h'), Buffer.from('again')]], timestamp: TIMESTAMP_BASE + BigInt(i)
  }))
}

const userHeaders = (r: ReadRecord): string[] => r.headers.filter(([k]) => !k.toString().startsWith('kmirror.')).map(([k, v]) => `${k.toString()}=${v?.toString()}`)
const total = async (cluster: ClusterName, topic: string): Promise<bigint> => (await endOffsets(cluster, topic)).reduce((a, b) => a + b, 0n)

test('meshes of 3 and 4 clusters, full and ring, with the identity policy: every record once on every cluster', { timeout: 180_000 }, async t => {
  await ensureClusters([...CLUSTERS])
  const meshes = [meshOf('full3', 3, 'full'), meshOf('ring3', 3, 'ring'), meshOf('full4', 4, 'full'), meshOf('ring4', 4, 'ring')]
  const aliases = meshes.flatMap(m => m.members.map(a => a.alias))
  for (const m of meshes) for (const { cluster } of m.members) await createTopic(cluster, m.topic, { partitions: 1, t })

  // Given every flow of the four meshes in one kmirror process, each mesh replicating its own topic
  const config = writeTempFile(multiClusterProperties(meshes.flatMap(m => m.members), meshes.flatMap(m => m.flows), [
    'replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy',
    ...meshes.flatMap(m => m.flows.map(f => `${f}.topics = ${m.topic}`)),
    'heartbeats.replication.enabled = false', 'emit.heartbeats.enabled = false', 'emit.checkpoints.enabled = false',
    'sync.topic.configs.enabled = false', 'sync.topic.acls.enabled = false', 'refresh.topics.interval.seconds = 1', 'offset.flush.interval.ms = 1000'
  ]), '.properties', t)
  const kmirror = spawnKmirror(['run', config], { t })
  removeAliasTopicsAfter(t, CLUSTERS, aliases, async () => { kmirror.kill('SIGKILL'); await kmirror.waitForExit(10_000) })
  await kmirror.waitForOutput(/kmirror started/, 90_000)

  // When each cluster of each mesh gets 10 records of its own
  for (const m of meshes) for (const { alias, cluster } of m.members) await produce(cluster, recordsOf(m, alias))

  // Then every cluster of a mesh holds every member's records, and then one more round on top, to see that nothing
  // more arrives behind them: each cluster's last record of the second round comes after anything its flows relay
  const expected = (m: Mesh, rounds: number): bigint => BigInt(m.members.length * RECORDS * rounds)
  const settled = async (rounds: number): Promise<void> => waitFor(async () => {
    const state = await Promise.all(meshes.flatMap(m => m.members.map(async ({ cluster }) => `${m.name}@${cluster}=${await total(cluster, m.topic)}/${expected(m, rounds)}`)))
    return { done: state.every(s => { const [have, want] = s.split('=')[1]!.split('/'); return BigInt(have!) >= BigInt(want!) }), state }
  }, { timeoutMs: 90_000, intervalMs: 500, message: `every mesh member holds ${rounds} round(s) of every member's records` })
  await settled(1)
  for (const m of meshes) for (const { alias, cluster } of m.members) await produce(cluster, recordsOf(m, alias).map(r => ({ ...r, value: Buffer.from(`${r.value!.toString()}:2`) })))
  await settled(2)
  kmirror.kill('SIGTERM')
  assert.equal((await kmirror.waitForExit(15_000)).code, 0, kmirror.stderr.slice(-3000))

  // And each cluster holds each record exactly once, identical to what was produced
  for (const m of meshes) {
    const produced = m.members.flatMap(({ alias }) => [...recordsOf(m, alias), ...recordsOf(m, alias).map(r => ({ ...r, value: Buffer.from(`${r.value!.toString()}:2`) }))])
    for (const { cluster } of m.members) {
      const held = await readCommitted(cluster, m.topic, 0)
      const where = `${m.name} on ${cluster}`
      assert.equal(held.length, produced.length, `${where}: ${held.map(r => r.value!.toString()).join(' ')}`)
      const byValue = new Map(held.map(r => [r.value!.toString(), r]))
      assert.equal(byValue.size, held.length, `${where}: no record twice`)
      for (const want of produced) {
        const got = byValue.get(want.value!.toString())
        assert.ok(got !== undefined, `${where}: ${want.value!.toString()} missing`)
        assert.deepEqual([got.key, got.timestamp, userHeaders(got)], [want.key, want.timestamp, want.headers.map(([k, v]) => `${k.toString()}=${v?.toString()}`)], `${where}: ${want.value!.toString()}`)
      }
    }
  }
})
