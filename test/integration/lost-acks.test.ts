/**
 * A lost acknowledgement: the target broker appends a produce request of kmirror's data path, and the connection
 * is cut before its answer arrives (a proxy in front of the real `auth` broker, answer-cutting-proxy.ts). In
 * at-least-once mode kmirror sends the batches again with the same producer id and sequences, and the broker keeps
 * them once: the target holds every source record exactly once, at the same offsets, and the offset syncs are exact.
 * Also when the batch in doubt merged small source batches and more records arrived before the resend (the resend
 * is planned with the same cut, batch-plan.ts `cutAfter`).
 * And a slow answer: the proxy holds a produce answer 13 s; kmirror reports the broker slow (log, metric, /status,
 * the console) and cuts nothing.
 */
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { startAnswerCuttingProxy } from '../helpers/answer-cutting-proxy.ts'
import { launchBrowser, waitForText } from '../helpers/browser.ts'
import { AUTH_LISTENERS, ensureClusters, type TestCluster } from '../helpers/clusters.ts'
import { createTopic, produce, TIMESTAMP_BASE, type Cleanup, type TestRecord } from '../helpers/kafka.ts'
import { mm2Properties, spawnKmirror, writeTempFile } from '../helpers/process.ts'
import { assertSamePartition, assertSyncsTranslateExactly, readCommitted, readOffsetSyncs } from '../helpers/replication.ts'
import { uniqueName, waitFor } from '../helpers/wait.ts'

const RECORDS = 3000

/** Records `from` to `from + count - 1` of 200-byte values. */
function records (topic: string, from = 0, count = RECORDS): TestRecord[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k
    return { topic, partition: 0, key: Buffer.from(`k${i}`), value: Buffer.from(`lost-ack-${i}-`.padEnd(200, 'x')), headers: [], timestamp: TIMESTAMP_BASE + BigInt(i) }
  })
}

/** A topic on `source` copied by one kmirror to the `auth` broker through the proxy; asserts on its end state. */
async function copyThroughProxy (t: Cleanup, topic: string, whileCopying: () => Promise<number>): Promise<void> {
  const proxy = await startAnswerCuttingProxy(t, AUTH_LISTENERS.proxied.advertisedPort, AUTH_LISTENERS.proxied.port)
  const target: TestCluster = { name: 'auth', bootstrap: `127.0.0.1:${AUTH_LISTENERS.proxied.advertisedPort}`, external: true }
  // Only the data path writes 20 KB at once: the cut hits one of its produce requests, after the broker appended it
  proxy.armForProduce(20_000)
  const remote = `A.${topic}`
  const config = writeTempFile(mm2Properties({ source: 'source', target, extra: [`A->B.topics = ${topic}`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--progress-interval', '0'], { t })
  const produced = await whileCopying()
  const count = async (): Promise<number> => (await readCommitted('auth', remote, 0).catch(() => [])).length
  await waitFor(async () => ({ done: await count() >= produced, state: { copied: await count(), produced, cuts: proxy.cuts() } }),
    { timeoutMs: 60_000, intervalMs: 250, message: `all ${produced} records copied` })
  kmirror.kill('SIGTERM')
  assert.deepEqual(await kmirror.waitForExit(15_000), { code: 0, signal: null })

  // The proxy cut one produce the broker had appended; kmirror said the write failed, naming the target
  assert.equal(proxy.cuts().length, 1, `cut produce requests: ${JSON.stringify(proxy.cuts())}`)
  assert.match(kmirror.stderr, /"level":"warn".*write to broker 1 \(127\.0\.0\.1:\d+\) of cluster B: Connection closed/)
  // Every source record once, in order, at its source offset: no batch was appended twice
  const sourceRecords = await readCommitted('source', topic, 0)
  const targetRecords = await readCommitted('auth', remote, 0)
  assert.equal(sourceRecords.length, produced)
  assertSamePartition(sourceRecords, targetRecords, remote)
  assert.deepEqual(targetRecords.map(r => r.offset), sourceRecords.map(r => r.offset))
  // Every offset sync translates exactly, including those of the batches acknowledged on their resend
  const syncs = await readOffsetSyncs('source', 'mm2-offset-syncs.B.internal', topic)
  assertSyncsTranslateExactly(syncs, sourceRecords, targetRecords, 0, remote)
}

before(async () => { await ensureClusters(['source', 'auth']) })

test('a produce the target appended whose answer was lost (connection cut): sent again under the same producer id, kept once; the copy and the offset syncs are exact', { timeout: 120_000 }, async t => {
  // Given batches of about 32 KiB on the source: each is forwarded as it is
  const topic = uniqueName('lost-ack')
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', records(topic), { maxBatchBytes: 32 * 1024 })
  // When kmirror copies them to a target whose answer to a produce is lost once, then every record is there once
  await copyThroughProxy(t, topic, async () => RECORDS)
})

test('the same with small source batches merged into the batch in doubt and records arriving before its resend: planned again as it was, kept once', { timeout: 120_000 }, async t => {
  // Given batches of about 1 KiB on the source (merged by kmirror into larger ones), and more arriving all along
  const topic = uniqueName('lost-ack-merged')
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', records(topic, 0, RECORDS), { maxBatchBytes: 1024 })
  await copyThroughProxy(t, topic, async () => {
    let produced = RECORDS
    for (let round = 0; round < 40; round++) {
      await produce('source', records(topic, produced, 50), { maxBatchBytes: 1024 })
      produced += 50
    }
    return produced
  })
})

test('a target broker holding a produce answer past 10 s (slow, still listed): kmirror warns naming the broker, its cluster, the request and the wait, counts it, cuts nothing; every record copied once when the answer comes', { timeout: 120_000 }, async t => {
  // Given kmirror copying to the `auth` broker through the proxy, which will hold the answer of a data-path produce
  // (and the answers after it on that connection) for HOLD_MS, under the default request.timeout.ms (30 s)
  const HOLD_MS = 13_000
  const topic = uniqueName('slow-broker')
  const remote = `A.${topic}`
  await createTopic('source', topic, { partitions: 1, t })
  await produce('source', records(topic, 0, 1000), { maxBatchBytes: 32 * 1024 })
  const proxy = await startAnswerCuttingProxy(t, AUTH_LISTENERS.proxied.advertisedPort, AUTH_LISTENERS.proxied.port)
  const broker = `127.0.0.1:${AUTH_LISTENERS.proxied.advertisedPort}`
  const target: TestCluster = { name: 'auth', bootstrap: broker, external: true }
  const config = writeTempFile(mm2Properties({ source: 'source', target, extra: [`A->B.topics = ${topic}`] }), '.properties', t)
  const kmirror = spawnKmirror(['run', config, '--http-port', '0', '--http-host', '127.0.0.1', '--progress-interval', '0'], { t })
  const port = Number((await kmirror.waitForOutput(/"port":(\d+)[^\n]*HTTP endpoint/, 15_000))[1])
  const count = async (): Promise<number> => (await readCommitted('auth', remote, 0).catch(() => [])).length
  await waitFor(async () => ({ done: await count() === 1000, state: await count() }), { timeoutMs: 60_000, intervalMs: 250, message: 'the first 1000 records copied' })

  // When more records arrive and the broker holds the answer to their produce
  proxy.holdProduce(20_000, HOLD_MS)
  await produce('source', records(topic, 1000, 1000), { maxBatchBytes: 32 * 1024 })
  await waitFor(() => ({ done: proxy.held().length === 1, state: proxy.held() }), { timeoutMs: 30_000, intervalMs: 100, message: 'a produce answer held' })

  // Then kmirror warns once the request has waited 10 s, naming the broker, its cluster, the request and the wait
  const slow = new RegExp(`"level":"warn"[^\\n]*"msg":"broker ${broker.replace(/\./g, '\\.')} of cluster B is slow: a Produce request to it has waited (1\\d\\.\\d) s without an answer\\. What it leads or coordinates waits meanwhile`)
  const waited = Number((await kmirror.waitForOutput(slow, HOLD_MS + 5000))[1])
  assert.ok(waited >= 10 && waited < HOLD_MS / 1000 + 1, `waited ${waited} s`)
  const metrics = async (): Promise<string> => await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2000) })).text()
  assert.match(await metrics(), new RegExp(`^kmirror_broker_slow_requests_total\\{broker="${broker}"\\} [1-9]\\d*$`, 'm'))
  // And /status lists the broker among those that troubled the process lately, with the request and its wait
  const status = await (await fetch(`http://127.0.0.1:${port}/status?summary`, { signal: AbortSignal.timeout(2000) })).json() as { brokers: { broker: string, clusters: string[], kind: string, count: number, cause: string }[] }
  const entry = status.brokers.find(b => b.broker === broker && b.kind === 'slow')
  assert.ok(entry !== undefined, JSON.stringify(status.brokers))
  assert.deepEqual(entry.clusters, ['cluster B'])
  assert.match(entry.cause, /^a Produce request to it still unanswered after 1\d\.\d s$/)
  // and so does the console, in its table of brokers in trouble
  const page = await (await launchBrowser(t)).newPage()
  await page.goto(`http://127.0.0.1:${port}/`)
  const row = `#brokers tr[data-broker="${broker}"][data-kind="slow"]`
  await waitForText(page, `${row} td:nth-child(2)`, 'cluster B', 'the slow broker in the console, with its cluster')
  await waitForText(page, `${row} td:nth-child(3)`, 'slow: a request held 10 s', 'what troubled it')
  await waitForText(page, `${row} td:last-child`, /^a Produce request to it still unanswered after 1\d\.\d s$/, 'the request and its wait')
  assert.equal(await page.locator(row).getAttribute('class'), null, 'a slow broker is not red: nothing was cut')
  // and the row is the same DOM node after two refreshes (the page updates in place: a selection in it survives)
  await page.evaluate(`(() => { window.keptRow = document.querySelector(${JSON.stringify(row)}) })()`)
  for (let refresh = 1; refresh <= 2; refresh++) {
    const before = await page.locator('#updated').getAttribute('data-at')
    await waitFor(async () => ({ done: await page.locator('#updated').getAttribute('data-at') !== before, state: before }), { timeoutMs: 10_000, intervalMs: 100, message: `refresh ${refresh} of the page` })
  }
  assert.equal(await page.evaluate(`document.querySelector(${JSON.stringify(row)}) === window.keptRow`), true)

  // And once the answer comes, every record is there once, at its source offset: nothing was cut or sent again
  await waitFor(async () => ({ done: await count() >= 2000, state: await count() }), { timeoutMs: 60_000, intervalMs: 250, message: 'all 2000 records copied' })
  kmirror.kill('SIGTERM')
  assert.deepEqual(await kmirror.waitForExit(15_000), { code: 0, signal: null })
  assert.doesNotMatch(kmirror.stderr, /answered nothing in time|was fenced by its cluster/)
  // (each request held 10 s is counted; the broker's trouble is logged at warn once)
  assert.equal(kmirror.stderr.split('\n').filter(l => slow.test(l)).length, 1)
  assert.equal(proxy.cuts().length, 0)
  const sourceRecords = await readCommitted('source', topic, 0)
  const targetRecords = await readCommitted('auth', remote, 0)
  assert.equal(sourceRecords.length, 2000)
  assertSamePartition(sourceRecords, targetRecords, remote)
  assert.deepEqual(targetRecords.map(r => r.offset), sourceRecords.map(r => r.offset))
})
