import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { describe, it } from 'node:test'
import type { Connection } from '@platformatic/kafka'
import { brokerKeys, CHECK_INTERVAL_MS, FenceWatch, FORGET_AFTER_MS, STALL_MS } from '../../../src/kafka/fenced-brokers.ts'

/** A connection as the watch sees it: its broker's address, its status, and the 'close' event. */
class FakeConnection extends EventEmitter {
  status = 'connected'
  readonly host: string
  readonly port: number
  constructor (host: string, port: number) {
    super()
    this.host = host
    this.port = port
  }
}

const FROZEN = '127.0.0.1:9001'
const PEER = '127.0.0.1:9002'
const PRODUCE = 0
const METADATA = 3

/**
 * A watch over a cluster "cluster B" of two brokers, 9001 and 9002, with one open connection to each. `answers`
 * are the broker lists the checks get, in turn (an Error rejects the check; undefined never answers; a promise answers
 * when it resolves).
 */
function setup (answers: (readonly string[] | Error | Promise<readonly string[]> | undefined)[]) {
  let now = 1_000_000
  const frozen = new FakeConnection('127.0.0.1', 9001)
  const peer = new FakeConnection('127.0.0.1', 9002)
  const connections = [{ key: FROZEN, connection: frozen }, { key: PEER, connection: peer }]
  const asked: string[] = []
  const cuts: { broker: string, cause: string }[] = []
  const watch = new FenceWatch({
    now: () => now,
    clusterOf: c => (connections.some(o => o.connection === (c as unknown as FakeConnection)) ? 'cluster B' : undefined),
    connectionsOf: label => (label === 'cluster B' ? connections.map(o => ({ key: o.key, connection: o.connection as unknown as Connection })) : []),
    listed: async (c, label) => {
      const fake = c as unknown as FakeConnection
      asked.push(`${fake.host}:${fake.port} ${label}`)
      const answer = answers.shift()
      if (answer === undefined) return await new Promise<never>(() => undefined)
      if (answer instanceof Error) throw answer
      return new Set(await answer)
    },
    cut: (c, cause) => {
      const fake = c as unknown as FakeConnection
      cuts.push({ broker: `${fake.host}:${fake.port}`, cause })
    }
  })
  return {
    watch,
    frozen: frozen as unknown as Connection,
    frozenFake: frozen,
    peer: peer as unknown as Connection,
    asked,
    cuts,
    advance: (ms: number) => { now += ms },
    /** MS later, a tick, and its checks settled. */
    step: async (ms: number) => {
      now += ms
      watch.tick()
      await settle()
    }
  }
}

/** Lets the checks' promises settle. */
async function settle (): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
}

describe('fenced brokers', () => {
  it('cuts a broker its cluster listed and then no longer lists while a request waits on it, naming the request, both brokers and the cluster', async () => {
    const { watch, frozen, asked, cuts, step } = setup([[FROZEN, PEER], [PEER]])
    watch.sent(frozen, 1, PRODUCE)
    await step(STALL_MS)
    // Listed: the cluster has not fenced it yet
    assert.deepEqual([asked, cuts], [[`${PEER} cluster B`], []])
    await step(CHECK_INTERVAL_MS)
    assert.equal(asked.length, 2)
    assert.deepEqual(cuts, [{ broker: FROZEN, cause: `a Produce request to broker ${FROZEN} unanswered for 3.0 s, and broker ${PEER} no longer lists it among the brokers of cluster B: the cluster fenced it` }])
  })

  it('cuts a broker a Metadata answer of its cluster listed even when the first check came after the fence', async () => {
    const { watch, frozen, cuts, step } = setup([[PEER]])
    watch.listedBy('cluster B', [FROZEN, PEER])
    watch.listedBy('cluster A', ['127.0.0.1:9101'])
    watch.sent(frozen, 1, METADATA)
    await step(STALL_MS)
    assert.deepEqual(cuts.map(c => c.broker), [FROZEN])
    assert.match(cuts[0]!.cause, /^a Metadata request to broker 127\.0\.0\.1:9001 unanswered for 2\.0 s/)
  })

  it('reads the brokers of a Metadata answer as kmirror decodes it (a map) and as the client library does (an array)', () => {
    assert.deepEqual(brokerKeys({ brokers: new Map([[1, { nodeId: 1, host: 'Broker-1', port: 9092 }], [2, { nodeId: 2, host: '::1', port: 9093 }]]) }), ['broker-1:9092', '::1:9093'])
    assert.deepEqual(brokerKeys({ brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092 }, { nodeId: 2 }] }), ['127.0.0.1:9092'])
    assert.deepEqual([brokerKeys(undefined), brokerKeys({}), brokerKeys({ brokers: 'x' })], [[], [], []])
  })

  it('never cuts a broker no answer ever listed under that address (a bootstrap alias), nor one still listed', async () => {
    const alias = setup([['broker-1:9001', PEER], ['broker-1:9001', PEER]])
    alias.watch.sent(alias.frozen, 1, METADATA)
    for (let i = 0; i < 2; i++) {
      await alias.step(STALL_MS)
    }
    assert.deepEqual([alias.asked.length, alias.cuts], [2, []])

    const listed = setup([[FROZEN, PEER], [FROZEN, PEER]])
    listed.watch.sent(listed.frozen, 1, PRODUCE)
    for (let i = 0; i < 2; i++) {
      await listed.step(STALL_MS)
    }
    assert.deepEqual([listed.asked.length, listed.cuts], [2, []])
  })

  it('asks nothing while no request has waited STALL_MS, and nothing about a request answered', async () => {
    const { watch, frozen, asked, advance, step } = setup([[FROZEN, PEER]])
    watch.sent(frozen, 1, PRODUCE)
    advance(STALL_MS - 1)
    watch.tick()
    watch.answered(frozen, 1)
    await step(STALL_MS)
    assert.deepEqual(asked, [])
  })

  it('asks one cluster at most every CHECK_INTERVAL_MS and one check at a time; an unanswered check decides nothing', async () => {
    const { watch, frozen, asked, cuts, advance } = setup([undefined, [PEER]])
    watch.sent(frozen, 1, PRODUCE)
    advance(STALL_MS)
    watch.tick()
    watch.tick()
    advance(CHECK_INTERVAL_MS)
    // The first check never answered: no second one while it is under way (its timeout is real time, not waited here)
    watch.tick()
    await settle()
    assert.deepEqual([asked.length, cuts], [1, []])
  })

  it('a failed check decides nothing, and the next one still needs an earlier listing', async () => {
    const { watch, frozen, asked, cuts, step } = setup([new Error('no answer'), [PEER]])
    watch.sent(frozen, 1, PRODUCE)
    await step(STALL_MS)
    await step(CHECK_INTERVAL_MS)
    assert.deepEqual([asked.length, cuts], [2, []])
  })

  it('asks another broker than the stalled ones, and nothing when every broker of the cluster is stalled', async () => {
    const { watch, frozen, peer, asked, step } = setup([[FROZEN, PEER]])
    watch.sent(frozen, 1, PRODUCE)
    watch.sent(peer, 7, PRODUCE)
    await step(STALL_MS)
    assert.deepEqual(asked, [])
    watch.answered(peer, 7)
    watch.tick()
    await settle()
    assert.deepEqual(asked, [`${PEER} cluster B`])
  })

  it('does not cut a broker whose request was answered while the check was under way', async () => {
    let answer: (brokers: readonly string[]) => void = () => undefined
    const late = new Promise<readonly string[]>(resolve => { answer = resolve })
    const { watch, frozen, cuts, step } = setup([[FROZEN, PEER], late])
    watch.sent(frozen, 1, PRODUCE)
    await step(STALL_MS)
    await step(CHECK_INTERVAL_MS)
    watch.answered(frozen, 1)
    answer([PEER])
    await settle()
    assert.deepEqual(cuts, [])
  })

  it('forgets the requests of a closed connection, and entries older than FORGET_AFTER_MS', async () => {
    const closed = setup([[FROZEN, PEER], [PEER]])
    closed.watch.sent(closed.frozen, 1, PRODUCE)
    await closed.step(STALL_MS)
    closed.frozenFake.emit('close')
    await closed.step(CHECK_INTERVAL_MS)
    assert.deepEqual([closed.asked.length, closed.cuts], [1, []])

    // (one close listener per connection, however often its requests come and go)
    for (let id = 2; id < 30; id++) {
      closed.watch.sent(closed.peer, id, PRODUCE)
      closed.watch.answered(closed.peer, id)
    }
    assert.equal((closed.peer as unknown as FakeConnection).listenerCount('close'), 1)

    const old = setup([[FROZEN, PEER], [PEER]])
    old.watch.sent(old.frozen, 1, PRODUCE)
    await old.step(STALL_MS)
    await old.step(FORGET_AFTER_MS)
    assert.deepEqual([old.asked.length, old.cuts], [1, []])
  })
})
