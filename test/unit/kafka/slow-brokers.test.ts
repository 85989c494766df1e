/**
 * Requests a broker holds far longer than it should are reported (slow-brokers.ts), except those brokers hold by
 * design and those queued behind them, and nothing while this process was paused.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Connection } from '@platformatic/kafka'
import { SLOW_AGAIN_MS, SLOW_MS, SlowRequests, type SlowBrokerReport, type Waiting } from '../../../src/kafka/slow-brokers.ts'

const API = { Produce: 0, Fetch: 1, Metadata: 3, CreateTopics: 19, CreateAcls: 30, IncrementalAlterConfigs: 44 }
const TICK = 500

/** SlowRequests over connections to 127.0.0.1:9001 and :9002 of cluster B, checked every TICK ms by `step`. */
function setup () {
  let now = 0
  const reports: SlowBrokerReport[] = []
  const slow = new SlowRequests(c => (c.port === 9003 ? undefined : 'cluster B'), r => reports.push(r), TICK + 1000)
  const waiting = new Map<Connection, Map<number, Waiting>>()
  const connection = (port: number): Connection => ({ host: '127.0.0.1', port }) as unknown as Connection
  const [first, second, unwatched] = [connection(9001), connection(9002), connection(9003)]
  const send = (c: Connection, id: number, apiKey: number): void => {
    const requests = waiting.get(c) ?? new Map<number, Waiting>()
    waiting.set(c, requests)
    requests.set(id, { at: now, apiKey })
  }
  const answer = (c: Connection, id: number): void => {
    const request = waiting.get(c)?.get(id)
    waiting.get(c)?.delete(id)
    if (request !== undefined) slow.answered(c, request, now)
  }
  /** MS later, in ticks of TICK (or in one late jump with `late`). */
  const step = (ms: number, late = false): void => {
    if (late) {
      now += ms
      slow.check(waiting, now)
      return
    }
    for (let t = 0; t < ms; t += TICK) {
      now += TICK
      slow.check(waiting, now)
    }
  }
  return { first, second, unwatched, send, answer, step, reports }
}

describe('SlowRequests', () => {
  it('reports each request unanswered SLOW_MS once, with its broker, cluster, API and wait; the first of a broker per SLOW_AGAIN_MS is marked for warn', () => {
    const { first, second, unwatched, send, step, reports } = setup()
    send(first, 1, API.Produce)
    send(unwatched, 1, API.Produce)
    step(SLOW_MS - TICK)
    assert.equal(reports.length, 0)
    step(TICK)
    send(first, 2, API.Metadata)
    send(second, 1, API.Metadata)
    step(SLOW_MS)
    assert.deepEqual(reports, [
      { broker: '127.0.0.1:9001', cluster: 'cluster B', api: 'Produce', waitedMs: SLOW_MS, first: true },
      { broker: '127.0.0.1:9001', cluster: 'cluster B', api: 'Metadata', waitedMs: SLOW_MS, first: false },
      { broker: '127.0.0.1:9002', cluster: 'cluster B', api: 'Metadata', waitedMs: SLOW_MS, first: true }
    ])
    // Within a minute of its warn, a broker's next slow request is not marked for warn; a minute after, it is
    send(first, 3, API.Metadata)
    step(SLOW_AGAIN_MS - 2 * SLOW_MS)
    send(first, 4, API.Metadata)
    step(SLOW_MS)
    assert.deepEqual(reports.slice(3).map(r => [r.broker, r.api, r.first]), [['127.0.0.1:9001', 'Metadata', false], ['127.0.0.1:9001', 'Metadata', true]])
  })

  it('never reports what brokers hold by design (long polls, joins, requests waiting for the controller), nor what queues behind them until they are answered', () => {
    const { first, second, send, answer, step, reports } = setup()
    send(first, 1, API.Fetch)
    send(first, 2, API.Metadata) // queued behind the long poll
    for (const [id, api] of [[1, API.CreateTopics], [2, API.CreateAcls], [3, API.IncrementalAlterConfigs]] as const) send(second, id, api)
    step(SLOW_MS + TICK)
    assert.equal(reports.length, 0)
    // Once the long poll is answered, the request behind it counts from then
    answer(first, 1)
    step(SLOW_MS - TICK)
    assert.equal(reports.length, 0)
    step(TICK)
    assert.deepEqual(reports.map(r => [r.api, r.waitedMs]), [['Metadata', SLOW_MS]])
  })

  it('reports nothing on a check that comes late (this process was paused), and reports then on the next one', () => {
    const { first, send, answer, step, reports } = setup()
    step(TICK)
    send(first, 1, API.Produce)
    send(first, 2, API.Produce)
    step(SLOW_MS + 5000, true)
    assert.equal(reports.length, 0)
    // The answer read after the pause: only the request still waiting is reported at the next check
    answer(first, 1)
    step(TICK)
    assert.deepEqual(reports.map(r => [r.api, r.waitedMs]), [['Produce', SLOW_MS + 5000 + TICK]])
  })
})
