/**
 * A broker that accepts connections and never answers (a wedged broker, a wrong port, a TLS client on a plaintext
 * port): `run` says so within request.timeout.ms, naming the cluster, the broker and the request, keeps waiting
 * (/readyz 503, /healthz 503 once past health.stall.threshold.ms), stops cleanly on SIGTERM during start-up, and
 * gives up with exit 3 after start.retry.timeout.ms; `status` and `failover` exit 3 within their --timeout.
 */
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { ensureClusters, getCluster, type TestCluster } from '../helpers/clusters.ts'
import { createTopic, produce, TIMESTAMP_BASE } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, readCommitted } from '../helpers/replication.ts'
import { startSilentBroker } from '../helpers/silent-broker.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const REQUEST_TIMEOUT_MS = 2000

function silentCluster (address: string): TestCluster {
  return { name: 'third', bootstrap: address, external: true }
}

function requestTimeouts (ms: number): string[] {
  return ['consumer', 'producer', 'admin'].flatMap(role => [`A.${role}.request.timeout.ms = ${ms}`, `B.${role}.request.timeout.ms = ${ms}`])
}

const TIMEOUTS = requestTimeouts(REQUEST_TIMEOUT_MS)

async function get (port: number, path: string): Promise<{ status: number, body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: res.status, body: await res.text() }
}

// `third` is stopped, frozen or used as a plain cluster here; it may not be up when this file runs alone.
before(async () => { await ensureClusters(['third']) })

test('run with a silent source: a warning naming A, the broker and the timed-out request within request.timeout.ms; /readyz 503; /healthz 503 after the threshold; SIGTERM during start-up exits 0 with a log line', { timeout: 60_000 }, async t => {
  // Given a source whose only bootstrap server accepts connections and never answers
  const silent = await startSilentBroker(t)
  const config = writeTempFile(mm2Properties({
    source: silentCluster(silent.address), target: 'third',
    extra: [...TIMEOUTS, 'health.stall.threshold.ms = 3000', 'start.retry.timeout.ms = 600000']
  }), '.properties', t)

  // When kmirror runs
  const began = Date.now()
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1'], { t })
  const [, port] = await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 15_000)

  // Then within the request timeout (plus start-up) it warns, naming the cluster, the broker and what timed out
  const [line] = await kmirror.waitForOutput(/.*start failed on a transient fault.*/, 15_000)
  const warning = JSON.parse(line) as { level: string, attempt: number, nextDelayMs: number, err: { code: string, message: string } }
  assert.ok(Date.now() - began < REQUEST_TIMEOUT_MS + 10_000, `the warning came ${Date.now() - began} ms after the start`)
  assert.equal(warning.level, 'warn')
  assert.equal(warning.attempt, 1)
  assert.equal(warning.err.code, 'KMIRROR_ERR_TIMEOUT')
  assert.match(warning.err.message, new RegExp(`cluster A \\(${silent.address}\\).*ApiVersions v\\d request to broker ${silent.address} timed out`))
  assert.match(warning.err.message, /A\.<role>\.request\.timeout\.ms/)
  // And it is not ready, and unhealthy once nothing has progressed for the threshold
  assert.deepEqual(await get(Number(port), '/readyz'), { status: 503, body: 'starting\n' })
  await waitFor(async () => {
    const health = await get(Number(port), '/healthz')
    return { done: health.status === 503, state: health }
  }, { timeoutMs: 15_000, intervalMs: 250, message: '/healthz 503 after health.stall.threshold.ms' })
  const health = await get(Number(port), '/healthz')
  assert.match(health.body, /^stalled: flow A->B has not started for \d+ s \(health\.stall\.threshold\.ms = 3000\)/)
  const status = JSON.parse((await get(Number(port), '/status')).body) as { healthy: boolean, ready: boolean, stalled: { flow: string, started: boolean }[] }
  assert.equal(status.healthy, false)
  assert.equal(status.ready, false)
  assert.deepEqual(status.stalled.map(s => [s.flow, s.started]), [['A->B', false]])

  // When it gets SIGTERM while still starting
  kmirror.kill('SIGTERM')
  const exit = await kmirror.waitForExit(12_000)

  // Then it logs the stop and exits 0, as for any requested stop
  assert.deepEqual(exit, { code: 0, signal: null })
  assert.match(kmirror.stderr, /"signal":"SIGTERM","msg":"stopping during start-up/)
  assert.match(kmirror.stderr, /"msg":"stopped before start-up completed"/)
})

test('run with a silent target gives up after start.retry.timeout.ms with exit 3 and a TIMEOUT naming B and the broker', { timeout: 60_000 }, async t => {
  const silent = await startSilentBroker(t)
  const config = writeTempFile(mm2Properties({ source: 'third', target: silentCluster(silent.address), extra: [...TIMEOUTS, 'start.retry.timeout.ms = 4000'] }), '.properties', t)

  const began = Date.now()
  const kmirror = spawnKmirror(['run', config], { t })
  const exit = await kmirror.waitForExit(30_000)

  assert.deepEqual(exit, { code: 3, signal: null })
  assert.ok(Date.now() - began < 4000 + REQUEST_TIMEOUT_MS + 10_000, `gave up after ${Date.now() - began} ms`)
  assert.match(kmirror.stderr, new RegExp(`kmirror: flow A->B could not start: check the brokers of cluster B \\(${silent.address}\\): .*request to broker ${silent.address} timed out`))
  assert.ok((kmirror.stderr.match(/start failed on a transient fault/g) ?? []).length >= 1, kmirror.stderr)
})

test('status and failover with a silent target exit 3 within --timeout, naming B, the broker and what timed out', { timeout: 60_000 }, async t => {
  const silent = await startSilentBroker(t)
  const config = writeTempFile(mm2Properties({ source: 'third', target: silentCluster(silent.address) }), '.properties', t)

  for (const args of [['status', config, '--timeout', '3'], ['failover', config, '--from', 'A', '--to', 'B', '--group', 'g', '--timeout', '3']]) {
    const began = Date.now()
    const command = spawnKmirror(args, { t })
    const exit = await command.waitForExit(20_000)
    const elapsed = Date.now() - began
    assert.deepEqual(exit, { code: 3, signal: null }, `${args[0]}: ${command.stderr}`)
    // Bounded by the command's own deadline (2 × --timeout + 2 s), plus Node's start on a loaded machine; without
    // --timeout honoured it would wait the default 30 s request timeout
    assert.ok(elapsed < 2 * 3000 + 2000 + 5000, `${args[0]} took ${elapsed} ms`)
    assert.match(command.stderr, new RegExp(`cluster B \\(${silent.address}\\).*request to broker ${silent.address} timed out`), `${args[0]}: ${command.stderr}`)
  }
})

test('a silent bootstrap server listed before a real one costs one request timeout: the start warns naming it, then copies every record exactly', { timeout: 60_000 }, async t => {
  // Given records on `third`, whose bootstrap list starts with a silent server
  const silent = await startSilentBroker(t)
  const topic = uniqueName('silent-bootstrap')
  await createTopic('third', topic, { partitions: 2, t })
  await produce('third', Array.from({ length: 40 }, (_, i) => ({ topic, partition: i % 2, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) })))
  const mixed: TestCluster = { name: 'third', bootstrap: `${silent.address},${getCluster('third').bootstrap}`, external: true }
  // (5 s, not 2: the same timeout applies to the real brokers, which must not fail the start by a pause of a loaded machine)
  const config = writeTempFile(mm2Properties({ source: mixed, target: 'source', extra: [`A->B.topics = ${topic}`, ...requestTimeouts(5000)] }), '.properties', t)

  // When kmirror runs
  const kmirror = spawnKmirror(['run', config, '--progress-interval', '0'], { t })

  // Then it starts after one request timeout, naming the silent server, and copies everything exactly
  const [line] = await kmirror.waitForOutput(/.*brokers that did not answer at start.*/, 20_000)
  assert.match(line, new RegExp(`bootstrap server ${silent.address} of cluster A: ApiVersions v\\d request to broker ${silent.address} timed out`))
  await kmirror.waitForOutput(/"msg":"kmirror started"/, 20_000)
  await waitFor(async () => {
    const counts = await Promise.all([0, 1].map(async p => (await readCommitted('source', `A.${topic}`, p).catch(() => [])).length))
    return { done: counts[0]! + counts[1]! === 40, state: counts }
  }, { timeoutMs: 30_000, intervalMs: 250, message: 'every record copied' })
  kmirror.kill('SIGTERM')
  assert.deepEqual(await kmirror.waitForExit(15_000), { code: 0, signal: null })
  for (const p of [0, 1]) assertSamePartition(await readCommitted('third', topic, p), await readCommitted('source', `A.${topic}`, p), `${topic}-${p}`)
  assert.doesNotMatch(kmirror.stderr, /start failed on a transient fault/)
})
