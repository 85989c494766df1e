/**
 * What the operator reads when a cluster cannot be used: the cluster alias, the broker host:port and the cause,
 * one error code per kind of failure, and the same exit code in every command. A closed port is
 * CLUSTER_UNREACHABLE (ECONNREFUSED named) with exit 3 everywhere; a replication factor the target refuses is
 * TOPIC_CREATE naming the key to change, never CLUSTER_UNREACHABLE.
 */
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { test } from 'node:test'
import { getCluster } from '../helpers/clusters.ts'
import { runKmirror } from '../helpers/drills.ts'
import { writeTempFile } from '../helpers/process.ts'
import { uniqueName } from '../helpers/wait.ts'

/** A port on 127.0.0.1 that nothing listens on: bound once by the system, then released. */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

/** kmirror's JSON log line with message `msg`. */
function logLine (stderr: string, msg: string): { err: { code: string, message: string } } {
  const line = stderr.split('\n').find(l => l.startsWith('{') && l.includes(`"msg":"${msg}"`))
  assert.ok(line !== undefined, stderr)
  return JSON.parse(line) as { err: { code: string, message: string } }
}

test('an unreachable source is named with its host:port and ECONNREFUSED, and every command exits 3', { timeout: 120_000 }, async t => {
  const port = await closedPort()
  const file = writeTempFile([
    'clusters = A, B', `A.bootstrap.servers = 127.0.0.1:${port}`, `B.bootstrap.servers = ${getCluster('target').bootstrap}`,
    'A->B.enabled = true', `A->B.topics = ${uniqueName('unreach')}`, 'replication.factor = 1',
    // run waits for an unreachable cluster at start (a broker restarting); briefly here
    'start.retry.timeout.ms = 1500'
  ].join('\n'), '.properties', t)
  const cause = new RegExp(`cluster A \\(127\\.0\\.0\\.1:${port}\\).*nothing accepts connections there \\(ECONNREFUSED: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): check A\\.bootstrap\\.servers`)

  const run = await runKmirror(['run', file], t)
  assert.equal(run.code, 3, run.stderr)
  assert.match(run.stderr, cause)
  assert.doesNotMatch(run.stderr, /<alias>/)
  assert.equal(logLine(run.stderr, 'start failed').err.code, 'KMIRROR_ERR_CLUSTER_UNREACHABLE')

  for (const args of [['plan', file], ['topology', file], ['offsets', 'translate', file, '--from', 'A', '--to', 'B', '--group', 'g'],
    ['offsets', 'set', file, '--cluster', 'A', '--group', 'g', '--topic', 't', '--to-earliest']]) {
    const result = await runKmirror(args, t)
    assert.equal(result.code, 3, `kmirror ${args.join(' ')}: ${result.stderr}`)
    assert.match(result.stderr, cause, `kmirror ${args.join(' ')}`)
  }
})

test('a replication factor the target cannot give is TOPIC_CREATE naming the key, exit 3, not CLUSTER_UNREACHABLE', { timeout: 60_000 }, async t => {
  const offsets = uniqueName('rf-offsets')
  const file = writeTempFile([
    'clusters = A, B', `A.bootstrap.servers = ${getCluster('source').bootstrap}`, `B.bootstrap.servers = ${getCluster('target').bootstrap}`,
    'A->B.enabled = true', `A->B.topics = ${uniqueName('rf')}`, 'replication.factor = 1', `B.offset.storage.topic = ${offsets}`, 'offset.storage.replication.factor = 3'
  ].join('\n'), '.properties', t)
  const run = await runKmirror(['run', file], t)
  assert.equal(run.code, 3, run.stderr)
  assert.match(run.stderr, new RegExp(`cannot create topic ${offsets} on cluster B with replication factor 3: the cluster has 1 broker\\(s\\); set offset\\.storage\\.replication\\.factor to at most that`))
  assert.equal(logLine(run.stderr, 'start failed').err.code, 'KMIRROR_ERR_TOPIC_CREATE')
})
