/**
 * MM2's offset syncs written beside the data path: in order, each once, one send at a time, retried after a
 * failure with one warning and one recovery line; a stop drains what is queued, up to a deadline.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { OffsetSyncEntry } from '../../../src/replication/offset-sync-tracker.ts'
import { SyncOutbox } from '../../../src/replication/sync-outbox.ts'
import { CountingMetrics } from '../../fakes/counting-metrics.ts'
import { deferred, type Deferred } from '../../fakes/deferred.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'
import { waitFor } from '../../helpers/wait.ts'

function sync (upstreamOffset: number): OffsetSyncEntry {
  return { topic: 't', partition: 0, upstreamOffset, downstreamOffset: upstreamOffset, runStart: false, previousUpstream: -1 }
}

/** A sink whose sends the test answers one by one. */
class HeldSink {
  readonly calls: { entries: number[], answer: Deferred<void> }[] = []
  inFlight = 0
  maxInFlight = 0
  readonly written: number[] = []
  async send (entries: readonly OffsetSyncEntry[]): Promise<void> {
    const answer = deferred()
    this.calls.push({ entries: entries.map(e => e.upstreamOffset), answer })
    this.inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    try {
      await answer.promise
      this.written.push(...entries.map(e => e.upstreamOffset))
    } finally {
      this.inFlight--
    }
  }

  /** Waits for send number N (0-based) to be asked. */
  async asked (n: number): Promise<{ entries: number[], answer: Deferred<void> }> {
    for (let i = 0; i < 1000 && this.calls[n] === undefined; i++) await new Promise(resolve => setImmediate(resolve))
    const call = this.calls[n]
    assert.ok(call !== undefined, `send ${n} was not asked (${this.calls.length} sends)`)
    return call
  }
}

describe('SyncOutbox', () => {
  it('a sync queued in any microtask while the last send ends is sent, and a stop drains it (no lost wake-up)', async () => {
    // (the pump used to be marked done in a callback of its promise: an enqueue in the microtasks between its loop's
    // end and that callback started no send, and a stop then found nothing to wait for and left the sync unwritten)
    for (let ticks = 0; ticks < 12; ticks++) {
      const written: number[] = []
      const sent = deferred()
      const sink = { send: async (entries: readonly OffsetSyncEntry[]): Promise<void> => { written.push(...entries.map(e => e.upstreamOffset)); sent.resolve() } }
      const { log, lines } = memoryLogger()
      const outbox = new SyncOutbox(sink, log, { flow: 'f', retryBaseMs: 1 })
      outbox.enqueue([sync(1)])
      await sent.promise
      for (let i = 0; i < ticks; i++) await Promise.resolve()
      outbox.enqueue([sync(2)])
      assert.equal(await outbox.drain(1000), 0, `enqueued ${ticks} microtask(s) after the send: ${JSON.stringify(lines)}`)
      assert.deepEqual(written, [1, 2], `enqueued ${ticks} microtask(s) after the send`)
    }
  })

  it('a stop whose writes are refused from now on (its member left its group) does not wait for them, and says why they are not written', async () => {
    const sink = { send: async (): Promise<void> => { throw new Error('the lease ended') } }
    const { log, lines } = memoryLogger()
    const outbox = new SyncOutbox(sink, log, { flow: 'f', retryBaseMs: 60_000 })
    outbox.enqueue([sync(1), sync(2)])
    const started = Date.now()
    assert.equal(await outbox.drain(10_000, true), 2)
    assert.ok(Date.now() - started < 1000, `drained in ${Date.now() - started} ms`)
    const warning = lines.find(l => String(l.msg).includes('could not be written before the stop'))
    assert.match(String(warning?.msg), /^2 offset sync\(s\) could not be written before the stop \(its group membership had ended \(its writes are refused from then on\)\): MM2 reading /)
  })

  it('a stop whose writes are refused from now on still waits, up to its timeout, for the send under way (its request went out before)', async () => {
    const sink = new HeldSink()
    const { log, lines } = memoryLogger()
    const outbox = new SyncOutbox(sink, log, { flow: 'f', retryBaseMs: 1 })
    outbox.enqueue([sync(1), sync(2)])
    const send = await sink.asked(0)
    const draining = outbox.drain(1000, true)
    send.answer.resolve()
    assert.equal(await draining, 0)
    assert.deepEqual(sink.written, [1, 2])
    assert.equal(lines.filter(l => String(l.msg).includes('could not be written')).length, 0)
    // and a send under way that never ends is waited for only until the timeout
    const stuck = new HeldSink()
    const other = new SyncOutbox(stuck, memoryLogger().log, { flow: 'f', retryBaseMs: 1 })
    other.enqueue([sync(3)])
    await stuck.asked(0)
    const started = Date.now()
    assert.equal(await other.drain(50, true), 1)
    assert.ok(Date.now() - started < 1000)
  })

  it('sends one batch at a time, what was queued meanwhile in the next, each sync once and in order', async () => {
    const sink = new HeldSink()
    const outbox = new SyncOutbox(sink, memoryLogger().log, { flow: 'f', retryBaseMs: 1 })
    outbox.enqueue([sync(1), sync(2)])
    const first = await sink.asked(0)
    outbox.enqueue([sync(3)])
    outbox.enqueue([sync(4)])
    first.answer.resolve()
    const second = await sink.asked(1)
    second.answer.resolve()
    assert.equal(await outbox.drain(1000), 0)
    assert.deepEqual(sink.calls.map(c => c.entries), [[1, 2], [3, 4]])
    assert.deepEqual(sink.written, [1, 2, 3, 4])
    assert.equal(sink.maxInFlight, 1)
  })

  it('sends a failed batch again whole and first, warns once while it keeps failing alike, and says when written again', async () => {
    const sink = new HeldSink()
    const { log, at } = memoryLogger()
    const outbox = new SyncOutbox(sink, log, { flow: 'f', retryBaseMs: 1, writesTo: { topic: 'mm2-offset-syncs.B.internal', cluster: 'A' } })
    outbox.enqueue([sync(1)])
    for (let i = 0; i < 3; i++) {
      const call = await sink.asked(i)
      if (i === 0) outbox.enqueue([sync(2)])
      call.answer.reject(new Error(`write ${i + 5} record(s) to cluster A: connect ECONNREFUSED 10.0.0.2:9092`))
    }
    const fourth = await sink.asked(3)
    // While the sends fail, /status shows what waits and the failure
    const failing = outbox.status()
    assert.equal(failing.pending, 2)
    assert.equal(failing.failure?.attempts, 3)
    assert.equal(failing.failure?.error, 'write 7 record(s) to cluster A: connect ECONNREFUSED 10.0.0.2:9092')
    fourth.answer.resolve()
    assert.equal(await outbox.drain(1000), 0)
    assert.deepEqual(sink.calls.map(c => c.entries), [[1], [1, 2], [1, 2], [1, 2]])
    assert.deepEqual(sink.written, [1, 2])
    assert.deepEqual(at(LogLevels.warn).map(l => [l.msg, l.topic, l.cluster]), [['cannot write offset syncs; will retry', 'mm2-offset-syncs.B.internal', 'A']])
    assert.deepEqual(outbox.status(), { pending: 0, thinned: 0, failure: null })
    assert.deepEqual(at(LogLevels.info).map(l => [l.msg, l.topic, l.cluster]), [['offset syncs written again after 3 failed attempt(s)', 'mm2-offset-syncs.B.internal', 'A']])
  })

  it('drains at stop up to its deadline: what is left is logged with its count and never sent afterwards', async () => {
    const sink = new HeldSink()
    const { log, at } = memoryLogger()
    const outbox = new SyncOutbox(sink, log, { flow: 'f', retryBaseMs: 1 })
    outbox.enqueue([sync(1)])
    const first = await sink.asked(0)
    outbox.enqueue([sync(2), sync(3)])
    // When the first send is still unanswered at the drain's deadline
    assert.equal(await outbox.drain(20), 3)
    first.answer.reject(new Error('timed out'))
    // (a second drain waits for the sending to end)
    await outbox.drain(1000)
    // Then nothing more was sent, and the warning counts what was lost
    assert.equal(sink.calls.length, 1)
    assert.ok(at(LogLevels.warn).some(l => /^3 offset sync\(s\) could not be written before the stop \(20 ms\): MM2 reading/.test(l.msg)))
  })

  it('drops what is queued when the membership is lost: a send under way that fails is not sent again, later syncs are', async () => {
    const sink = new HeldSink()
    const outbox = new SyncOutbox(sink, memoryLogger().log, { flow: 'f', retryBaseMs: 1 })
    outbox.enqueue([sync(1)])
    const first = await sink.asked(0)
    outbox.enqueue([sync(2)])
    outbox.dropQueued()
    outbox.enqueue([sync(30)])
    first.answer.reject(new Error('fenced'))
    const next = await sink.asked(1)
    next.answer.resolve()
    assert.equal(await outbox.drain(1000), 0)
    assert.deepEqual(sink.calls.map(c => c.entries), [[1], [30]])
    assert.deepEqual(sink.written, [30])
  })

  it('past its bound thins what is not in flight, tells it once per stretch, and counts what is pending and dropped', async () => {
    const sink = new HeldSink()
    const { log, at } = memoryLogger()
    const metrics = new CountingMetrics()
    const outbox = new SyncOutbox(sink, log, { flow: 'f', retryBaseMs: 1, maxPending: 8, metrics })
    outbox.enqueue([sync(1), sync(2)])
    const first = await sink.asked(0)
    // While [1, 2] is in flight, nine queued (past 8): the seven not in flight are halved to [3, 5, 7, 9] (the
    // partition's first and newest kept).
    outbox.enqueue([3, 4, 5, 6, 7, 8, 9].map(sync))
    assert.equal(metrics.counts.get('offsetSyncsThinned{"flow":"f"}'), 3)
    assert.equal(metrics.gauges.get('offsetSyncsPending{"flow":"f"}'), 6)
    // The next thinning waits for twice what the last kept (12): then [3 .. 16] is halved twice, to [3, 10, 14, 16].
    outbox.enqueue([10, 11, 12, 13, 14, 15, 16].map(sync))
    assert.equal(metrics.counts.get('offsetSyncsThinned{"flow":"f"}'), 10)
    assert.equal(metrics.gauges.get('offsetSyncsPending{"flow":"f"}'), 6)
    first.answer.reject(new Error('connect ECONNREFUSED'))
    const again = await sink.asked(1)
    again.answer.resolve()
    assert.equal(await outbox.drain(1000), 0)
    // The batch in flight went again whole and first; of the rest, the order, the first and the newest (16) were kept.
    assert.deepEqual(sink.calls.map(c => c.entries), [[1, 2], [1, 2, 3, 10, 14, 16]])
    assert.deepEqual(sink.written, [1, 2, 3, 10, 14, 16])
    assert.equal(metrics.gauges.get('offsetSyncsPending{"flow":"f"}'), 0)
    assert.deepEqual(outbox.status(), { pending: 0, thinned: 10, failure: null })
    assert.equal(metrics.counts.get('offsetSyncWriteFailures{"flow":"f"}'), 1)
    const warnings = at(LogLevels.warn).filter(l => l.msg.startsWith('more than 8 offset syncs wait to be written'))
    assert.equal(warnings.length, 1)
    assert.match(warnings[0]!.msg, /: 3 of them dropped, keeping for each partition its newest/)
  })

  it('does not thin again before the queue doubles what the last thinning kept (more partitions than room)', async () => {
    const sink = new HeldSink()
    const metrics = new CountingMetrics()
    const outbox = new SyncOutbox(sink, memoryLogger().log, { flow: 'f', retryBaseMs: 1, maxPending: 4, metrics })
    const of = (partition: number, offset: number): OffsetSyncEntry => ({ ...sync(offset), partition })
    outbox.enqueue([of(9, 1)])
    await sink.asked(0)
    // Five partitions' first syncs: past 4, but nothing may go; the next try waits for 12 queued
    outbox.enqueue([0, 1, 2, 3, 4].map(p => of(p, 1)))
    for (let offset = 2; offset <= 7; offset++) outbox.enqueue([of(0, offset)])
    assert.equal(metrics.counts.get('offsetSyncsThinned{"flow":"f"}'), 0, 'thinned at 12 queued or fewer')
    outbox.enqueue([of(0, 8)])
    assert.ok((metrics.counts.get('offsetSyncsThinned{"flow":"f"}') ?? 0) > 0, 'thinned past 12 queued')
  })

  it('removes each acknowledged part of a split send at once: a later part failing sends only the rest again', async () => {
    const sent: number[][] = []
    let calls = 0
    const sink = {
      async send (entries: readonly OffsetSyncEntry[], onAcked?: (count: number) => void): Promise<void> {
        sent.push(entries.map(e => e.upstreamOffset))
        if (calls++ === 0) {
          onAcked?.(2)
          throw new Error('the second produce request failed')
        }
        onAcked?.(entries.length)
      }
    }
    const outbox = new SyncOutbox(sink, memoryLogger().log, { flow: 'f', retryBaseMs: 1 })
    outbox.enqueue([1, 2, 3, 4].map(sync))
    assert.equal(await outbox.drain(1000), 0)
    assert.deepEqual(sent, [[1, 2, 3, 4], [3, 4]])
  })

  it('forgets a failure when the membership is lost: /status and the failing-since gauge clear', async () => {
    const sink = new HeldSink()
    const metrics = new CountingMetrics()
    const outbox = new SyncOutbox(sink, memoryLogger().log, { flow: 'f', retryBaseMs: 1, metrics })
    assert.equal(metrics.counts.get('offsetSyncsThinned{"flow":"f"}'), 0, 'the counters exist from the start')
    outbox.enqueue([sync(1)])
    ;(await sink.asked(0)).answer.reject(new Error('connect ECONNREFUSED'))
    const retry = await sink.asked(1)
    assert.ok((metrics.gauges.get('offsetSyncsFailingSince{"flow":"f"}') ?? 0) > 0)
    assert.notEqual(outbox.status().failure, null)
    outbox.dropQueued()
    assert.deepEqual(outbox.status(), { pending: 0, thinned: 0, failure: null })
    assert.equal(metrics.gauges.get('offsetSyncsFailingSince{"flow":"f"}'), 0)
    assert.equal(metrics.gauges.get('offsetSyncsPending{"flow":"f"}'), 0)
    retry.answer.resolve()
    assert.equal(await outbox.drain(1000), 0)
  })

  it('settled: waits for the syncs queued before the call (not those after), says how many are left at its timeout, and ends with a drop or a stop', async () => {
    const sink = new HeldSink()
    const outbox = new SyncOutbox(sink, memoryLogger().log, { flow: 'f', retryBaseMs: 1 })
    assert.equal(await outbox.settled(1000), 0, 'nothing queued: nothing to wait for')
    outbox.enqueue([sync(1), sync(2)])
    const first = await sink.asked(0)
    outbox.enqueue([sync(3)])
    let settled: number | null = null
    const waiting = outbox.settled(10_000).then(left => { settled = left })
    // (queued after the call: not waited for)
    outbox.enqueue([sync(4)])
    first.answer.resolve()
    const second = await sink.asked(1)
    assert.deepEqual(second.entries, [3, 4])
    assert.equal(settled, null, 'sync 3 is not written yet')
    second.answer.resolve()
    await waiting
    assert.equal(settled, 0)
    // At its timeout: how many of those queued before are still queued
    outbox.enqueue([sync(5), sync(6)])
    assert.equal(await outbox.settled(20), 2)
    // A lost membership drops them: nothing left to wait for
    const dropped = outbox.settled(10_000)
    outbox.dropQueued()
    assert.equal(await dropped, 0)
    // A stop ends the wait at once: what is left is the drain's to tell
    outbox.enqueue([sync(7)])
    const stopping = outbox.settled(10_000)
    assert.equal(await outbox.drain(1), 1)
    assert.equal(await stopping, 1)
  })

  it('settled with no time left: tells what is queued at once, without waking a send waiting out its back-off', async () => {
    const sink = new HeldSink()
    const outbox = new SyncOutbox(sink, memoryLogger().log, { flow: 'f', retryBaseMs: 60_000 })
    outbox.enqueue([sync(1), sync(2)])
    const first = await sink.asked(0)
    first.answer.reject(new Error('MESSAGE_TOO_LARGE'))
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(await outbox.settled(0), 2)
    for (let i = 0; i < 20; i++) await new Promise(resolve => setImmediate(resolve))
    assert.equal(sink.calls.length, 1, 'the send waiting out its back-off was not woken')
    await outbox.drain(1)
  })

  it('settled: a sync thinned away does not end the wait while older ones are queued; a send waiting out its back-off is tried at once; after a stop it answers at once', async () => {
    const sink = new HeldSink()
    const outbox = new SyncOutbox(sink, memoryLogger().log, { flow: 'f', retryBaseMs: 60_000, maxPending: 8 })
    outbox.enqueue([sync(1), sync(2)])
    const first = await sink.asked(0)
    outbox.enqueue([3, 4, 5, 6].map(sync))
    let left: number | null = null
    const waiting = outbox.settled(10_000).then(n => { left = n })
    // (more syncs of the same partition: the thinning drops 4-6 among them, sync 6 the newest when the wait began)
    outbox.enqueue([7, 8, 9, 10].map(sync))
    await new Promise(resolve => setImmediate(resolve))
    assert.equal(left, null, 'syncs 1-3 queued before the wait are still queued')
    // When the send fails, its back-off (a minute here) is cut short by the wait: sent again at once
    first.answer.reject(new Error('NOT_LEADER_OR_FOLLOWER'))
    await waitFor(() => sink.calls.length > 1, { timeoutMs: 5000, intervalMs: 5, message: 'the failed send tried again well before its back-off of a minute' })
    const again = await sink.asked(1)
    again.answer.resolve()
    await waiting
    assert.equal(left, 0)
    assert.ok(again.entries.includes(3) && !again.entries.includes(6), JSON.stringify(again.entries))
    // After a stop (queue closed), a wait answers at once with what is left
    outbox.enqueue([sync(11)])
    await outbox.drain(1)
    const started = Date.now()
    assert.ok(await outbox.settled(10_000) >= 1)
    assert.ok(Date.now() - started < 1000)
  })
})
