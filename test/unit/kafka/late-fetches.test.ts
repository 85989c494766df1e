/**
 * Brokers slower than the others in a fetch round: the round waits a grace after the first answer, a broker still
 * out keeps its one fetch out, and a later round uses its answer for the partitions asked again at the same offsets.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { emptyBatches, FetchOutcomes, type FetchedBatches, type PartitionPosition } from '../../../src/kafka/fetch-results.ts'
import { LateFetches, matchLate, settleWithGrace } from '../../../src/kafka/late-fetches.ts'
import { deferred } from '../../fakes/deferred.ts'

const at = (topic: string, partition: number, offset: number): PartitionPosition => ({ topic, partition, offset })
const answer = (position: PartitionPosition, nextOffset: number): FetchedBatches => ({ ...emptyBatches(position, FetchOutcomes.OK), nextOffset, highWatermark: nextOffset })

describe('settleWithGrace', () => {
  it('waits for all when they settle within the grace after the first', async () => {
    const settled = await settleWithGrace([Promise.resolve(1), new Promise(resolve => setTimeout(() => resolve(2), 20))], 1000)
    assert.deepEqual(settled, [{ status: 'fulfilled', value: 1 }, { status: 'fulfilled', value: 2 }])
  })

  it('leaves out what has not settled a grace after the first answer', async () => {
    const slow = deferred<number>()
    const started = Date.now()
    const settled = await settleWithGrace([Promise.resolve(1), slow.promise], 30)
    assert.deepEqual(settled, [{ status: 'fulfilled', value: 1 }, undefined])
    assert.ok(Date.now() - started >= 25, 'waited the grace')
    slow.resolve(2)
  })

  it('starts no grace on a failure: until one answers it waits for all (every broker failing is the cluster down)', async () => {
    const slow = deferred<number>()
    setTimeout(() => slow.resolve(2), 60)
    const failed = Promise.reject(new Error('connection refused'))
    const settled = await settleWithGrace([failed, slow.promise], 10)
    assert.equal(settled[0]?.status, 'rejected')
    assert.deepEqual(settled[1], { status: 'fulfilled', value: 2 })
  })

  it('returns at once for no promises', async () => {
    assert.deepEqual(await settleWithGrace([], 1000), [])
  })
})

describe('LateFetches', () => {
  it('keeps a fetch out until it settles, then hands its outcome over once', async () => {
    const late = new LateFetches()
    const fetch = deferred<FetchedBatches[]>()
    late.leave(2, fetch.promise, 1000, new Map([['t', 'id-t']]))
    assert.equal(late.outstanding(2), true)
    assert.equal(late.sentAt(2), 1000)
    assert.equal(late.take(2), null, 'nothing to take while it is out')
    fetch.resolve([answer(at('t', 0, 5), 9)])
    await late.anySettled([2], 1000)
    assert.equal(late.outstanding(2), false)
    const outcome = late.take(2)
    assert.ok(outcome?.ok === true)
    assert.equal(outcome.value[0]?.nextOffset, 9)
    assert.equal(outcome.topicIds.get('t'), 'id-t')
    assert.equal(late.take(2), null, 'taken once')
  })

  it('hands a late failure over with how long it took', async () => {
    const late = new LateFetches()
    const fetch = deferred<FetchedBatches[]>()
    late.leave(3, fetch.promise, Date.now() - 40, new Map())
    fetch.reject(new Error('connection cut'))
    await late.anySettled([3], 1000)
    const outcome = late.take(3)
    assert.ok(outcome?.ok === false)
    assert.match(String(outcome.reason), /connection cut/)
    assert.ok(outcome.tookMs >= 40)
  })

  it('waits for one of the fetches out to settle, at most the time given', async () => {
    const late = new LateFetches()
    const fetch = deferred<FetchedBatches[]>()
    late.leave(1, fetch.promise, Date.now(), new Map())
    const started = Date.now()
    await late.anySettled([1], 30)
    assert.ok(Date.now() - started >= 25)
    setTimeout(() => fetch.resolve([]), 10)
    await late.anySettled([1], 5000)
    assert.equal(late.outstanding(1), false)
    // Nothing out: no wait
    await late.anySettled([1, 7], 5000)
  })

  it('forgets the settled fetches of brokers no longer asked, never one still out', async () => {
    const late = new LateFetches()
    const out = deferred<FetchedBatches[]>()
    late.leave(1, Promise.resolve([]), 0, new Map())
    late.leave(2, out.promise, 0, new Map())
    await late.anySettled([1], 1000)
    late.forgetSettled(new Set([3]))
    assert.equal(late.take(1), null)
    assert.equal(late.outstanding(2), true)
    out.resolve([])
  })
})

describe('matchLate', () => {
  const ids = new Map([['t', 'id-t'], ['u', 'id-u']])

  it('answers the partitions asked again at the very offsets fetched; the others are asked anew', () => {
    const value = [answer(at('t', 0, 5), 9), answer(at('t', 1, 7), 8), answer(at('u', 0, 3), 3)]
    const { answered, unanswered } = matchLate(value, [at('t', 0, 5), at('t', 1, 6), at('u', 0, 3), at('u', 1, 0)], ids, ids)
    assert.deepEqual(answered.map(f => `${f.topic}-${f.partition}@${f.fromOffset}->${f.nextOffset}`), ['t-0@5->9', 'u-0@3->3'])
    assert.deepEqual(unanswered, [at('t', 1, 6), at('u', 1, 0)])
  })

  it('never answers for a topic whose id changed since (deleted and created again)', () => {
    const { answered, unanswered } = matchLate([answer(at('t', 0, 5), 9)], [at('t', 0, 5)], ids, new Map([['t', 'id-t2']]))
    assert.deepEqual(answered, [])
    assert.deepEqual(unanswered, [at('t', 0, 5)])
  })
})
