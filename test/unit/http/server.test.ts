import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import { updateCheckpointGauges, updateUpGauges } from '../../../src/http/gauges.ts'
import { healthOf, startHttpServer, statusDocument, updateLagGauges } from '../../../src/http/server.ts'
import { HELD_READ_DEGRADED_MS, summaryDocument, type FlowContext } from '../../../src/http/status-summary.ts'
import { silentLogger } from '../../../src/logger.ts'
import { PrometheusMetrics } from '../../../src/metrics/registry.ts'
import { processRedactor } from '../../../src/redactor.ts'
import type { PartitionStatus } from '../../../src/replication/flow-replicator.ts'
import type { FailureReport } from '../../../src/replication/partition-failures.ts'
import type { FlowStatus } from '../../../src/runtime/flow.ts'

describe('/status', () => {
  it('never shows a secret of the configuration, even inside the error that stopped replication', async () => {
    // Given a loaded configuration's secret, and a failure whose message quotes it
    processRedactor.add({ certain: ['pw-from-a-provider', 'p"w\\ 2%/'] })
    const failure = new Error(`authentication failed for password pw-from-a-provider, request ${JSON.stringify({ password: 'p"w\\ 2%/' })}`)
    const server = await startHttpServer({
      host: '127.0.0.1', port: 0, metrics: new PrometheusMetrics(), log: silentLogger(),
      source: { status: () => [{ name: 'A->B', partitions: [], stepFailure: null, jobs: [], membership: null }], failure: () => failure }
    })
    try {
      const address = server.address()
      assert.ok(typeof address === 'object' && address !== null)
      // When /status is read
      const body = await (await fetch(`http://127.0.0.1:${address.port}/status`)).text()
      // Then the message is there, the secret is not, and the document is still JSON
      for (const secret of ['pw-from-a-provider', 'p\\"w', 'w\\\\ 2']) assert.ok(!body.includes(secret), body)
      assert.equal((JSON.parse(body) as { error: string }).error, 'authentication failed for password [redacted], request {"password":"[redacted]"}')
    } finally {
      server.close()
    }
  })
})

const partition = (topic: string, p: number, overrides: Partial<PartitionStatus> = {}): PartitionStatus => ({
  topic, partition: p, remoteTopic: `A.${topic}`, position: 10, highWatermark: 15, copiedRecords: 10, copiedBytes: 100, lostToRetention: 0, failure: null, lagSeconds: null, ...overrides
})
const failure = (error: string): FailureReport => ({
  side: 'source', cluster: 'A', code: 'KMIRROR_ERR_NOT_AUTHORIZED', error, kind: 'authorization', message: 'refused', remedy: 'grant READ on topic t to the principal kmirror uses on cluster A',
  since: '2026-01-01T00:00:00.000Z', attempts: 2, nextRetry: '2026-01-01T00:00:02.000Z'
})

describe('healthOf and statusDocument', () => {
  it('Given every partition copying, then /healthz is 200 ok and the flow lag is the sum', () => {
    const flows: FlowStatus[] = [{ name: 'A->B', partitions: [partition('t', 0), partition('t', 1)], stepFailure: null, jobs: [], membership: null }]
    assert.deepEqual(healthOf(flows, undefined), { status: 200, summary: 'ok' })
    const doc = statusDocument(flows, undefined) as { healthy: boolean, flows: { lagRecords: number | null, lagUnknownPartitions: number }[] }
    assert.equal(doc.healthy, true)
    assert.equal(doc.flows[0]!.lagRecords, 10)
    // Without a group, /status shows no membership at all (as before groups existed)
    assert.equal('membership' in (doc.flows[0] as object), false)
  })

  it('Given MM2\'s offset syncs failing to be written, then /status and its summary show them and /healthz stays ok (the data path copies on)', () => {
    const offsetSyncs = { pending: 1200, thinned: 0, failure: { since: '2026-01-01T00:00:00.000Z', attempts: 4, error: 'produce to A: connect ECONNREFUSED' } }
    const flows: FlowStatus[] = [{ name: 'A->B', partitions: [partition('t', 0)], stepFailure: null, jobs: [], membership: null, offsetSyncs }]
    assert.deepEqual(healthOf(flows, undefined), { status: 200, summary: 'ok' })
    const doc = statusDocument(flows, undefined) as { flows: { offsetSyncs: unknown }[] }
    assert.deepEqual(doc.flows[0]!.offsetSyncs, offsetSyncs)
    const context: FlowContext = { rate: () => ({ recordsPerSecond: null, bytesPerSecond: null }), stalled: new Set(), ready: true, failed: false }
    const [summary] = summaryDocument(flows, context, { filter: '', limit: 20 })
    assert.deepEqual(summary!['offsetSyncs'], offsetSyncs)
    // Without the outbox (exactly-once, or offset syncs off) there is no such field
    assert.equal('offsetSyncs' in (statusDocument([{ ...flows[0]!, offsetSyncs: undefined }], undefined) as { flows: object[] }).flows[0]!, false)
  })

  it('Given an exactly-once flow, then /status and its summary show its transactions; an at-least-once flow has no such field', () => {
    const exactlyOnce = { transactionalId: 'kmirror-A-B-h:1:2', transactionTimeoutMs: 60_000, committed: 12, aborted: 1, lastCommitAt: '2026-01-01T00:00:01.000Z', lastAbort: { at: '2026-01-01T00:00:00.000Z', code: 'KMIRROR_ERR_PRODUCE', message: 'connection reset' } }
    const flows: FlowStatus[] = [{ name: 'A->B', partitions: [partition('t', 0)], stepFailure: null, jobs: [], membership: null, exactlyOnce }]
    assert.deepEqual((statusDocument(flows, undefined) as { flows: { exactlyOnce: unknown }[] }).flows[0]!.exactlyOnce, exactlyOnce)
    const context: FlowContext = { rate: () => ({ recordsPerSecond: null, bytesPerSecond: null }), stalled: new Set(), ready: true, failed: false }
    assert.deepEqual(summaryDocument(flows, context, { filter: '', limit: 20 })[0]!['exactlyOnce'], exactlyOnce)
    assert.equal('exactlyOnce' in (statusDocument([{ ...flows[0]!, exactlyOnce: undefined }], undefined) as { flows: object[] }).flows[0]!, false)
  })

  it('Given a read of a flow\'s progress held by an open transaction, then /status and its summary show it and /healthz is degraded naming it; none held, no such field', () => {
    const heldReads = [{ topic: 'mm2-offsets.A.internal', cluster: 'B', partitions: [{ partition: 2, offset: 40, end: 45 }], since: '2026-01-01T00:00:00.000Z', timeoutMs: 80_000 }]
    const flows: FlowStatus[] = [{ name: 'A->B', partitions: [], stepFailure: null, jobs: [], membership: null, heldReads }]
    const since = Date.parse('2026-01-01T00:00:00.000Z')
    assert.deepEqual(healthOf(flows, undefined, since + HELD_READ_DEGRADED_MS), { status: 503, summary: 'degraded: A->B waits for a transaction open on mm2-offsets.A.internal on cluster B (its read held since 2026-01-01T00:00:00.000Z; /status heldReads and the log name it and how to end it)' })
    // (a shorter hold, as a commit slowed by a coordinator moving makes, is shown but does not degrade the flow)
    assert.deepEqual(healthOf(flows, undefined, since + HELD_READ_DEGRADED_MS - 1), { status: 200, summary: 'ok' })
    assert.deepEqual(healthOf([{ ...flows[0]!, heldReads: undefined }], undefined, since + HELD_READ_DEGRADED_MS), { status: 200, summary: 'ok' })
    assert.deepEqual((statusDocument(flows, undefined) as { flows: { heldReads: unknown }[] }).flows[0]!.heldReads, heldReads)
    const context: FlowContext = { rate: () => ({ recordsPerSecond: null, bytesPerSecond: null }), stalled: new Set(), ready: true, failed: false }
    assert.deepEqual(summaryDocument(flows, context, { filter: '', limit: 20 })[0]!['heldReads'], heldReads)
    assert.equal('heldReads' in (statusDocument([{ ...flows[0]!, heldReads: undefined }], undefined) as { flows: object[] }).flows[0]!, false)
  })

  it('Given a flow in a group, then /status shows its members and what each owns', () => {
    const membership = { group: 'kmirror-A-B', generation: 3, leader: 'h1:1:1', self: 'h1:1:1', members: [{ name: 'h1:1:1', partitions: 2, jobs: ['refresh-topics'] }] }
    const flows: FlowStatus[] = [{ name: 'A->B', partitions: [partition('t', 0)], stepFailure: null, jobs: [], membership }]
    const doc = statusDocument(flows, undefined) as { flows: { membership: unknown }[] }
    assert.deepEqual(doc.flows[0]!.membership, membership)
  })

  it('Given a failing partition, then /healthz is 503 degraded naming it, its lag and the flow lag are unknown, never 0', () => {
    const flows: FlowStatus[] = [{ name: 'A->B', partitions: [partition('t', 0), partition('t', 1, { failure: failure('TOPIC_AUTHORIZATION_FAILED') })], stepFailure: null, jobs: [], membership: null }]
    assert.deepEqual(healthOf(flows, undefined), { status: 503, summary: 'degraded: 1 partition(s) failing in A->B (TOPIC_AUTHORIZATION_FAILED)' })
    const doc = statusDocument(flows, undefined) as { healthy: boolean, flows: { lagRecords: number | null, lagUnknownPartitions: number, failingPartitions: number, partitions: { lagRecords: number | null }[] }[] }
    assert.equal(doc.healthy, false)
    assert.equal(doc.flows[0]!.lagRecords, null)
    assert.equal(doc.flows[0]!.lagUnknownPartitions, 1)
    assert.equal(doc.flows[0]!.failingPartitions, 1)
    assert.deepEqual(doc.flows[0]!.partitions.map(p => p.lagRecords), [5, null])
  })

  it('Given remote topics that cannot be created, then /healthz is 503 degraded naming the topics (each once, at most 5), and /status and its summary list the problems', () => {
    const problem = (topic: string, message = `cannot create topic A.${topic} on cluster B: refused; grant CREATE`) => ({ topic, remoteTopic: `A.${topic}`, message })
    const remoteTopicProblems = [problem('t1'), problem('t1', 'cannot sync configs: refused'), problem('t2')]
    const flows: FlowStatus[] = [{ name: 'A->B', partitions: [partition('t', 0)], stepFailure: null, jobs: [], membership: null, remoteTopicProblems }]
    assert.deepEqual(healthOf(flows, undefined), { status: 503, summary: 'degraded: 2 topic(s) of A->B with a remote topic problem (t1, t2; /status remoteTopicProblems names the fix)' })
    assert.deepEqual((statusDocument(flows, undefined) as { flows: { remoteTopicProblems: unknown }[] }).flows[0]!.remoteTopicProblems, remoteTopicProblems)
    const context: FlowContext = { rate: () => ({ recordsPerSecond: null, bytesPerSecond: null }), stalled: new Set(), ready: true, failed: false }
    const [summary] = summaryDocument(flows, context, { filter: '', limit: 20 })
    assert.deepEqual(summary!['remoteTopicProblems'], remoteTopicProblems)
    assert.equal(summary!['remoteTopicProblemCount'], 3)
    assert.equal(summary!['state'], 'degraded')
    const many = Array.from({ length: 7 }, (_, i) => problem(`t${i}`))
    assert.deepEqual(healthOf([{ ...flows[0]!, remoteTopicProblems: many }], undefined).summary, 'degraded: 7 topic(s) of A->B with a remote topic problem (t0, t1, t2, t3, t4 and 2 more; /status remoteTopicProblems names the fix)')
    // None (or another instance runs the topic refresh: no field), then ok
    assert.deepEqual(healthOf([{ ...flows[0]!, remoteTopicProblems: [] }], undefined), { status: 200, summary: 'ok' })
    assert.deepEqual(healthOf([{ ...flows[0]!, remoteTopicProblems: undefined }], undefined), { status: 200, summary: 'ok' })
    assert.equal('remoteTopicProblems' in summaryDocument([{ ...flows[0]!, remoteTopicProblems: undefined }], context, { filter: '', limit: 20 })[0]!, false)
  })

  it('Given a flow whose steps failed three times in a row, then /healthz is degraded; once stopped, failed', () => {
    const stepFailure = { code: 'KMIRROR_ERR_AUTHENTICATION', message: 'refused', since: '2026-01-01T00:00:00.000Z', attempts: 3 }
    const flows: FlowStatus[] = [{ name: 'A->B', partitions: [partition('t', 0)], stepFailure, jobs: [], membership: null }]
    assert.deepEqual(healthOf(flows, undefined), { status: 503, summary: 'degraded: A->B cannot copy (KMIRROR_ERR_AUTHENTICATION, 3 attempts since 2026-01-01T00:00:00.000Z)' })
    assert.deepEqual(healthOf([{ ...flows[0]!, stepFailure: { ...stepFailure, attempts: 2 } }], undefined), { status: 200, summary: 'ok' })
    assert.deepEqual(healthOf(flows, new Error('stopped')), { status: 503, summary: 'failed' })
  })

  it('Given a topic with a partition of unknown lag, then its lag gauge is NaN, not 0, and the unknown partitions are counted', async () => {
    const metrics = new PrometheusMetrics()
    updateLagGauges(metrics, [{ name: 'A->B', partitions: [partition('t', 0), partition('t', 1, { highWatermark: -1 }), partition('u', 0)], stepFailure: null, jobs: [], membership: null }])
    const text = await metrics.render()
    // prom-client writes NaN as "Nan"; Prometheus parses either (ParseFloat is case-insensitive)
    assert.match(text, /kmirror_replication_lag_records\{flow="A->B",topic="t"\} NaN/i)
    assert.match(text, /kmirror_replication_lag_records\{flow="A->B",topic="u"\} 5/)
    assert.match(text, /kmirror_replication_lag_unknown_partitions\{flow="A->B",topic="t"\} 1/)
  })

  it('Given partitions behind by 2.5 s and 7 s, then the topic lag in seconds is the largest; NaN while one is unknown', async () => {
    const metrics = new PrometheusMetrics()
    updateLagGauges(metrics, [{
      name: 'A->B',
      partitions: [partition('t', 0, { lagSeconds: 2.5 }), partition('t', 1, { lagSeconds: 7 }), partition('u', 0, { lagSeconds: 1 }), partition('u', 1, { lagSeconds: null })],
      stepFailure: null, jobs: [], membership: null
    }])
    const text = await metrics.render()
    assert.match(text, /kmirror_replication_lag_seconds\{flow="A->B",topic="t"\} 7\n/)
    assert.match(text, /kmirror_replication_lag_seconds\{flow="A->B",topic="u"\} NaN/i)
    const doc = statusDocument([{ name: 'A->B', partitions: [partition('t', 0, { lagSeconds: 2.5 }), partition('t', 1, { lagSeconds: 7 })], stepFailure: null, jobs: [], membership: null }], undefined) as { flows: { lagSeconds: number | null, partitions: { lagSeconds: number | null }[] }[] }
    assert.equal(doc.flows[0]!.lagSeconds, 7)
    assert.deepEqual(doc.flows[0]!.partitions.map(p => p.lagSeconds), [2.5, 7])
  })

  it('Given a stalled flow, then kmirror_ready is 1 and its kmirror_flow_up 0, the other flow 1; once failed, every flow 0', async () => {
    const metrics = new PrometheusMetrics()
    const flows: FlowStatus[] = ['A->B', 'B->A'].map(name => ({ name, partitions: [], stepFailure: null, jobs: [], membership: null }))
    updateUpGauges(metrics, flows, { ready: true, healthy: false, stalled: [{ flow: 'B->A', sinceMs: 90_000, thresholdMs: 60_000, started: true }] }, false)
    let text = await metrics.render()
    assert.match(text, /^kmirror_ready 1$/m)
    assert.match(text, /^kmirror_flow_up\{flow="A->B"\} 1$/m)
    assert.match(text, /^kmirror_flow_up\{flow="B->A"\} 0$/m)
    updateUpGauges(metrics, flows, { ready: true, healthy: true, stalled: [] }, true)
    text = await metrics.render()
    assert.match(text, /^kmirror_flow_up\{flow="A->B"\} 0$/m)
  })

  it('Given a flow alone and one in a group of 3 owning 2 partitions here, then members and the lease are shown for the group only', async () => {
    const metrics = new PrometheusMetrics()
    const membership = { group: 'g', generation: 1, leader: 'a', self: 'a', members: ['a', 'b', 'c'].map(name => ({ name, partitions: 2, jobs: [] })), lease: { valid: true, lastError: null } }
    updateUpGauges(metrics, [
      { name: 'A->B', partitions: [partition('t', 0)], stepFailure: null, jobs: [], membership: null },
      { name: 'B->A', partitions: [partition('t', 0), partition('t', 1)], stepFailure: null, jobs: [], membership }
    ], { ready: true, healthy: true, stalled: [] }, false)
    const text = await metrics.render()
    assert.match(text, /^kmirror_owned_partitions\{flow="A->B"\} 1$/m)
    assert.match(text, /^kmirror_owned_partitions\{flow="B->A"\} 2$/m)
    assert.match(text, /^kmirror_group_members\{flow="B->A"\} 3$/m)
    assert.doesNotMatch(text, /kmirror_group_members\{flow="A->B"\}/)
    assert.match(text, /^kmirror_group_lease_valid\{flow="B->A"\} 1$/m)
    assert.doesNotMatch(text, /kmirror_group_lease_valid\{flow="A->B"\}/)
    // When the lease no longer holds (the work held until the coordinator answers), Then 0
    updateUpGauges(metrics, [{ name: 'B->A', partitions: [], stepFailure: null, jobs: [], membership: { ...membership, lease: { valid: false, lastError: 'the lease ran out 9 s ago' } } }], { ready: true, healthy: true, stalled: [] }, false)
    assert.match(await metrics.render(), /^kmirror_group_lease_valid\{flow="B->A"\} 0$/m)
  })

  it('Given groups checkpointed 30 s and 2 s ago, then their checkpoint ages; a group no longer reported disappears', async () => {
    const metrics = new PrometheusMetrics()
    const now = 1_800_000_000_000
    const flow = (checkpoints: { group: string, at: number }[]): FlowStatus => ({ name: 'A->B', partitions: [], stepFailure: null, jobs: [], membership: null, checkpoints })
    updateCheckpointGauges(metrics, [flow([{ group: 'billing', at: now - 30_000 }, { group: 'audit', at: now - 2000 }])], now)
    let text = await metrics.render()
    assert.match(text, /^kmirror_checkpoint_age_seconds\{flow="A->B",group="billing"\} 30$/m)
    assert.match(text, /^kmirror_checkpoint_age_seconds\{flow="A->B",group="audit"\} 2$/m)
    updateCheckpointGauges(metrics, [flow([{ group: 'audit', at: now }])], now + 1000)
    text = await metrics.render()
    assert.doesNotMatch(text, /group="billing"/)
    assert.match(text, /^kmirror_checkpoint_age_seconds\{flow="A->B",group="audit"\} 1$/m)
  })
})

describe('the console and the light JSON routes', () => {
  async function withServer (source: Parameters<typeof startHttpServer>[0]['source'], fn: (base: string) => Promise<void>): Promise<void> {
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, metrics: new PrometheusMetrics(), log: silentLogger(), source })
    try {
      const address = server.address()
      assert.ok(typeof address === 'object' && address !== null)
      await fn(`http://127.0.0.1:${address.port}`)
    } finally {
      server.close()
    }
  }
  const flows: FlowStatus[] = [{ name: 'A->B', partitions: [partition('t', 0), partition('t', 1, { failure: failure('TOPIC_AUTHORIZATION_FAILED') }), partition('u', 0)], stepFailure: null, jobs: [], membership: null }]

  it('serves the page at / and its files from kmirror itself, nothing from elsewhere, and 404 for any other file', async () => {
    await withServer({ status: () => flows, failure: () => undefined }, async base => {
      const page = await fetch(`${base}/`)
      assert.equal(page.status, 200)
      assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8')
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/)
      const html = await page.text()
      assert.match(html, /<script type="module" src="\/console\/console.js">/)
      assert.ok(!/https?:\/\//.test(html.replace(/<a href="\/[^"]*">/g, '')), 'the page loads nothing from another origin')
      for (const file of ['console.js', 'render.js', 'morph.js', 'format.js', 'topology.js']) {
        const res = await fetch(`${base}/console/${file}`)
        assert.equal(res.status, 200, file)
        assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8')
        assert.ok(!/from ['"]https?:/.test(await res.text()), `${file} imports from kmirror only`)
      }
      assert.equal((await fetch(`${base}/console/console.css`)).headers.get('content-type'), 'text/css; charset=utf-8')
      assert.equal((await fetch(`${base}/console/../server.ts`)).status, 404)
      assert.equal((await fetch(`${base}/console/format.d.ts`)).status, 404)
    })
  })

  it('lists the brokers that troubled the process lately in /status and /status?summary alike; none without a source of them', async () => {
    const brokers = [{ broker: '127.0.0.1:9001', clusters: ['cluster B'], kind: 'slow' as const, count: 2, firstAt: '2026-12-05T03:00:00.000Z', lastAt: '2026-12-05T03:00:01.000Z', cause: 'a Produce request to it still unanswered after 10.2 s' }]
    await withServer({ status: () => flows, failure: () => undefined, brokers: () => brokers }, async base => {
      for (const path of ['/status', '/status?summary']) assert.deepEqual(((await (await fetch(`${base}${path}`)).json()) as { brokers: unknown }).brokers, brokers, path)
    })
    await withServer({ status: () => flows, failure: () => undefined }, async base => {
      for (const path of ['/status', '/status?summary']) assert.deepEqual(((await (await fetch(`${base}${path}`)).json()) as { brokers: unknown }).brokers, [], path)
    })
  })

  it('answers /status?summary with the flow\'s state, totals and topics, and /status?flow&topic with one topic\'s partitions', async () => {
    await withServer({ status: () => flows, failure: () => undefined }, async base => {
      const summary = await (await fetch(`${base}/status?summary`)).json() as { summary: boolean, healthy: boolean, flows: { state: string, partitionCount: number, topics: { topic: string }[], failing: { partition: number }[], partitions?: unknown }[] }
      assert.equal(summary.summary, true)
      assert.equal(summary.healthy, false)
      assert.equal(summary.flows[0]!.state, 'degraded')
      assert.equal(summary.flows[0]!.partitionCount, 3)
      assert.deepEqual(summary.flows[0]!.topics.map(t => t.topic), ['t', 'u'])
      assert.deepEqual(summary.flows[0]!.failing.map(p => p.partition), [1])
      assert.equal(summary.flows[0]!.partitions, undefined)
      const topic = await (await fetch(`${base}/status?flow=${encodeURIComponent('A->B')}&topic=t`)).json() as { partitions: { partition: number, lagRecords: number | null }[] }
      assert.deepEqual(topic.partitions.map(p => [p.partition, p.lagRecords]), [[0, 5], [1, null]])
      const missing = await fetch(`${base}/status?flow=${encodeURIComponent('A->B')}&topic=nope`)
      assert.equal(missing.status, 404)
      assert.deepEqual(await missing.json(), { error: 'flow A->B copies no topic nope' })
      // The full /status keeps every partition and gains the flow's state and rates
      const full = await (await fetch(`${base}/status`)).json() as { flows: { state: string, recordsPerSecond: number | null, partitions: unknown[] }[] }
      assert.equal(full.flows[0]!.state, 'degraded')
      assert.equal(full.flows[0]!.recordsPerSecond, null)
      assert.equal(full.flows[0]!.partitions.length, 3)
    })
  })

  it('answers 400 to a request whose path is not a URL path, and goes on serving', async () => {
    await withServer({ status: () => flows, failure: () => undefined }, async base => {
      const { port } = new URL(base)
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.end('GET //[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
        let text = ''
        socket.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('end', () => resolve(text)).on('error', reject)
      })
      assert.match(answer, /^HTTP\/1\.1 400 /)
      assert.equal((await fetch(`${base}/readyz`)).status, 200)
    })
  })

  it('answers /livez 200 while flows are degraded or stalled (a restart fixes neither), 503 once a flow stopped on an error', async () => {
    const stalled = { ready: true, healthy: false, stalled: [{ flow: 'A->B', sinceMs: 200_000, thresholdMs: 120_000, started: true }] }
    await withServer({ status: () => flows, failure: () => undefined, health: () => stalled }, async base => {
      assert.equal((await fetch(`${base}/healthz`)).status, 503)
      const live = await fetch(`${base}/livez`)
      assert.deepEqual([live.status, await live.text()], [200, 'alive\n'])
    })
    await withServer({ status: () => flows, failure: () => new Error('boom') }, async base => {
      const live = await fetch(`${base}/livez`)
      assert.equal(live.status, 503)
      assert.match(await live.text(), /^failed: a flow stopped on an error/)
    })
  })

  it('answers /topology from the topology source, 404 without one', async () => {
    const document = { readAt: '2026-01-01T00:00:00.000Z', nodes: [], links: [] }
    await withServer({ status: () => flows, failure: () => undefined, topology: async () => document }, async base => {
      assert.deepEqual(await (await fetch(`${base}/topology`)).json(), document)
    })
    await withServer({ status: () => flows, failure: () => undefined }, async base => {
      assert.equal((await fetch(`${base}/topology`)).status, 404)
    })
  })
})
