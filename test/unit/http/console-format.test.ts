import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatAgo, formatByteRate, formatBytes, formatCount, formatHeldRead, formatPartition, formatRate, formatSeconds, headerState, stateClass } from '../../../src/http/console/format.js'

describe('the console\'s formatting (src/http/console/format.js)', () => {
  it('writes counts with thousands separators and unknown values as a dash', () => {
    assert.equal(formatCount(1_234_567), '1,234,567')
    assert.equal(formatCount(0), '0')
    assert.equal(formatCount(null), '—')
    assert.equal(formatCount(undefined), '—')
    assert.equal(formatCount(Number.NaN), '—')
  })

  it('writes bytes in binary units and rates per second', () => {
    assert.equal(formatBytes(512), '512 B')
    assert.equal(formatBytes(1536), '1.5 KiB')
    assert.equal(formatBytes(5 * 1024 ** 3), '5 GiB')
    assert.equal(formatByteRate(2 * 1024 * 1024), '2 MiB/s')
    assert.equal(formatByteRate(null), '—')
    assert.equal(formatRate(2.54), '2.5/s')
    assert.equal(formatRate(12_345.6), '12,346/s')
    assert.equal(formatRate(null), '—')
  })

  it('writes durations for people', () => {
    assert.equal(formatSeconds(0), '0 s')
    assert.equal(formatSeconds(0.42), '0.4 s')
    assert.equal(formatSeconds(42.4), '42 s')
    assert.equal(formatSeconds(185), '3 min 5 s')
    assert.equal(formatSeconds(7620), '2 h 7 min')
    assert.equal(formatSeconds(273_600), '3 d 4 h')
    assert.equal(formatSeconds(null), '—')
  })

  it('writes how long ago, never for no time, and names partitions and state classes', () => {
    assert.equal(formatAgo('2026-01-01T00:00:00.000Z', Date.parse('2026-01-01T00:00:05.000Z')), '5 s ago')
    assert.equal(formatAgo(null, 0), 'never')
    assert.equal(formatAgo('garbage', 0), '—')
    assert.equal(formatPartition('orders', 3), 'orders-3')
    assert.equal(stateClass('caught up'), 'state-caught-up')
    assert.equal(stateClass('cannot copy'), 'state-cannot-copy')
  })

  it('says in the header the worst unhealthy flow state, not `starting` above a flow held at start', () => {
    const doc = { healthy: false, error: null, stalled: [], ready: false, flows: [{ state: 'starting' }, { state: 'degraded' }] }
    assert.equal(headerState(doc), 'degraded')
    assert.equal(headerState({ ...doc, flows: [{ state: 'degraded' }, { state: 'cannot copy' }] }), 'cannot copy')
    assert.equal(headerState({ ...doc, flows: [{ state: 'starting' }] }), 'starting')
    assert.equal(headerState({ ...doc, ready: true, flows: [{ state: 'copying' }] }), 'degraded', 'unhealthy for another reason (a broker unreachable)')
    assert.equal(headerState({ ...doc, stalled: ['A->B'] }), 'stalled')
    assert.equal(headerState({ ...doc, error: 'boom' }), 'failed')
    assert.equal(headerState({ ...doc, healthy: true }), 'healthy')
  })

  it('writes a read held by an open transaction: topic, cluster, at most three partitions (counting the rest), for how long, its limit, where the fix is told', () => {
    const read = { topic: 'mm2-offsets.A.internal', cluster: 'B', partitions: [0, 1, 2, 3, 4].map(p => ({ partition: p, offset: 1000 + p, end: 2000 })), since: '2026-12-06T10:00:00.000Z', timeoutMs: 80_000 }
    assert.equal(formatHeldRead(read, Date.parse('2026-12-06T10:01:05Z')), 'waits for a transaction open on mm2-offsets.A.internal on cluster B (partition 0 at ' +
      'offset 1,000, partition 1 at offset 1,001, partition 2 at offset 1,002 and 2 more), held for 1 min 5 s; gives up after 1 min 20 s and tries again. ' +
      'The log\'s warning names the producer and the kafka-transactions.sh lines that end it.')
  })
})
