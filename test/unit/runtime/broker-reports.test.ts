/**
 * What the operator is told of a source broker the data path cannot fetch from while the others answer: one warning
 * at the start naming the broker, the cluster, the partitions that wait and why, the tries in between at debug, one
 * info line at the end; each failed try counted and listed in /status's broker troubles.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { LeaderOutages, MOVED_AFTER_MS } from '../../../src/kafka/leader-outages.ts'
import { watchQuotaThrottles } from '../../../src/kafka/quota-throttles.ts'
import { connectionsApiChannel } from '@platformatic/kafka'
import { reportBrokerTroubles } from '../../../src/runtime/broker-reports.ts'
import { BrokerTroubles } from '../../../src/runtime/broker-troubles.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

describe('reportBrokerTroubles: a source broker out of reach', () => {
  let stop: () => void = () => undefined
  afterEach(() => { stop() })

  it('warns once at the start, logs the tries at debug, counts each and lists the broker unreachable; one info line when it answers again', () => {
    const { log, at, lines } = memoryLogger()
    const metrics = new CountingMetrics()
    const troubles = new BrokerTroubles()
    stop = reportBrokerTroubles(log, metrics, troubles)
    const outages = new LeaderOutages('cluster A')
    const partitions = ['orders-0', 'orders-3', 'orders-6', 'orders-9', 'orders-12', 'orders-15']
    const cause = 'connect ECONNREFUSED 127.0.0.1:9093; nothing accepts connections there: check A.bootstrap.servers and that the brokers run'
    outages.failed(2, '127.0.0.1:9093', cause, partitions, 1_000)
    outages.failed(2, '127.0.0.1:9093', cause, partitions, 1_200)
    outages.answered(2, 9_400)

    const [warn, ...moreWarnings] = at(LogLevels.warn)
    assert.deepEqual(moreWarnings, [])
    assert.equal(warn!.msg, `cannot fetch from broker 2 (127.0.0.1:9093) of cluster A: ${cause}. The 6 partition(s) it leads (orders-0, orders-3, orders-6, orders-9, orders-12, ...) ` +
      'wait where they are, nothing skipped, and are asked again in 0.2 s (then less and less often: every 2 s at most, or twice as long as a try that timed out); the partitions the other brokers lead copy on. ' +
      'A broker killed or restarting answers again, or its cluster moves its leadership to another replica (after its broker session timeout); if neither happens, look at that broker')
    assert.deepEqual([warn!['broker'], warn!['cluster'], warn!['partitions']], ['127.0.0.1:9093', 'cluster A', 6])
    assert.deepEqual(at(LogLevels.debug).map(l => l.msg), ['still cannot fetch from broker 2 (127.0.0.1:9093) of cluster A; the 6 partition(s) it leads (orders-0, orders-3, orders-6, orders-9, orders-12, ...) wait'])
    assert.deepEqual(at(LogLevels.info).map(l => l.msg), ['broker 2 (127.0.0.1:9093) of cluster A answers fetches again after 8.4 s (2 failed tries); the partitions it leads copy on'])
    assert.equal(lines.length, 3)
    assert.equal(metrics.counts.get('sourceFetchFailures{"broker":"127.0.0.1:9093"}'), 2)
    const [listed] = troubles.list()
    assert.deepEqual([listed?.broker, listed?.kind, listed?.count, listed?.clusters, listed?.cause], ['127.0.0.1:9093', 'unreachable', 2, ['cluster A'], `fetches failed: ${cause}`])
  })

  it('says so when the partitions moved away from the broker instead', () => {
    const { log, at } = memoryLogger()
    stop = reportBrokerTroubles(log, new CountingMetrics(), new BrokerTroubles())
    const outages = new LeaderOutages('cluster A')
    outages.failed(2, '127.0.0.1:9093', 'refused', ['orders-0'], 1_000)
    outages.leading(new Set([1]), 10_000 - MOVED_AFTER_MS)
    outages.leading(new Set([1]), 10_000)
    assert.match(at(LogLevels.info)[0]!.msg, /^broker 2 \(127\.0\.0\.1:9093\) of cluster A leads none of the partitions kmirror reads any more, 9\.0 s after its fetches began to fail: its cluster moved their leadership/)
  })

  it('names the flow whose fetches fail: two flows reading one cluster each report the broker for their own partitions', () => {
    const { log, at } = memoryLogger()
    stop = reportBrokerTroubles(log, new CountingMetrics(), new BrokerTroubles())
    new LeaderOutages('cluster A', 'A->B').failed(2, '127.0.0.1:9093', 'refused', ['orders-0'], 1_000)
    new LeaderOutages('cluster A', 'A->C').failed(2, '127.0.0.1:9093', 'refused', ['audit-0'], 1_000)
    assert.deepEqual(at(LogLevels.warn).map(l => [l['flow'], l['partitions']]), [['A->B', 1], ['A->C', 1]])
  })

  it('tells nothing once stopped', () => {
    const { log, lines } = memoryLogger()
    reportBrokerTroubles(log, new CountingMetrics(), new BrokerTroubles())()
    new LeaderOutages('cluster A').failed(2, '127.0.0.1:9093', 'refused', ['orders-0'], 0)
    assert.deepEqual(lines, [])
  })
})

describe('reportBrokerTroubles: a broker throttling kmirror for a client quota', () => {
  let stop: () => void = () => undefined
  afterEach(() => { stop() })

  it('warns once a minute per broker and request with the quota to raise, counts every pause and lists the broker throttled', () => {
    const { log, at } = memoryLogger()
    const metrics = new CountingMetrics()
    const troubles = new BrokerTroubles()
    const stopReports = reportBrokerTroubles(log, metrics, troubles)
    const stopWatch = watchQuotaThrottles()
    stop = () => { stopWatch(); stopReports() }
    // Given three Produce answers of one target broker asking for pauses, one Fetch answer, and one without a pause
    const connection = { host: '127.0.0.1', port: 19192 }
    const answer = (apiKey: number, throttleTimeMs: number): void => { connectionsApiChannel.asyncStart.publish({ connection, apiKey, result: { throttleTimeMs } }) }
    answer(0, 1200)
    answer(0, 800)
    answer(0, 0)
    answer(1, 500)
    // Then one warning per request kind, naming the broker, the pause, what it slows and the quota to raise
    const warnings = at(LogLevels.warn)
    assert.deepEqual(warnings.map(w => [w['api'], w['throttleMs']]), [['Produce', 1200], ['Fetch', 500]])
    assert.match(warnings[0]!.msg, /^broker 127\.0\.0\.1:19192 throttles kmirror's Produce requests for a client quota: it asked for a pause of 1\.2 s, which kmirror waits out before its next Produce to it, so every partition a flow writes goes at the quota's pace/)
    assert.match(warnings[0]!.msg, /raise or remove the quota \(producer_byte_rate, or request_percentage\)/)
    assert.match(warnings[1]!.msg, /quota \(consumer_byte_rate, or request_percentage\)/)
    // the kafka-configs.sh lines reach the cluster as kmirror's clients of it do (here unknown: placeholders)
    assert.match(warnings[0]!.msg, /to see them: kafka-configs\.sh --bootstrap-server BOOTSTRAP_SERVERS --describe --entity-type users and kafka-configs\.sh --bootstrap-server BOOTSTRAP_SERVERS --describe --entity-type clients\)/)
    assert.deepEqual(at(LogLevels.debug).map(l => l['throttleMs']), [800])
    // and every pause counted, the broker listed once per kind
    assert.equal(metrics.counts.get('quotaThrottleSeconds{"broker":"127.0.0.1:19192","request":"Produce"}'), 2)
    assert.deepEqual(troubles.list().map(t => [t.kind, t.count]), [['throttled', 3]])
  })
})
