/** Which throttled answers are a broker's first within a minute (kafka/quota-throttles.ts). */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { QuotaThrottles, THROTTLE_AGAIN_MS, throttleTimeOf } from '../../../src/kafka/quota-throttles.ts'

const b1 = { host: '10.0.0.1', port: 9092 }
const b2 = { host: '10.0.0.2', port: 9092 }

test('the first throttle of a broker and API is first again only THROTTLE_AGAIN_MS later; no pause, no report', () => {
  const throttles = new QuotaThrottles()
  const first = (c: typeof b1, apiKey: number, ms: number, now: number): boolean | undefined => throttles.answered(c, apiKey, ms, 'cluster B', now)?.first
  assert.equal(first(b1, 0, 0, 0), undefined, 'an answer without a pause is no report')
  assert.equal(first(b1, 0, 300, 1_000), true)
  assert.equal(first(b1, 0, 300, 2_000), false)
  assert.equal(first(b1, 1, 300, 2_000), true, 'another API of the same broker')
  assert.equal(first(b2, 0, 300, 2_000), true, 'another broker')
  assert.equal(first(b1, 0, 300, 1_000 + THROTTLE_AGAIN_MS - 1), false)
  assert.equal(first(b1, 0, 300, 1_000 + THROTTLE_AGAIN_MS), true)
  assert.deepEqual(throttles.answered(b1, 0, 250, 'cluster B', 0), { broker: '10.0.0.1:9092', cluster: 'cluster B', tool: undefined, api: 'Produce', throttleMs: 250, first: false })
})

test('the throttle time of an answer, whoever decoded it; anything else is none', () => {
  assert.equal(throttleTimeOf({ throttleTimeMs: 120 }), 120)
  assert.equal(throttleTimeOf({}), 0)
  assert.equal(throttleTimeOf(null), 0)
  assert.equal(throttleTimeOf({ throttleTimeMs: '5' }), 0)
})

test('a throttle carried by an answer the library parsed into an error counts too', () => {
  assert.equal(throttleTimeOf(undefined, { response: { throttleTimeMs: 900 } }), 900)
  assert.equal(throttleTimeOf(undefined, new Error('no response')), 0)
})
