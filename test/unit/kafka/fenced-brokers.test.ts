import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { describe, it } from 'node:test'
import { Connection, connectionsApiChannel } from '@platformatic/kafka'
import { brokerKeys, CHECK_INTERVAL_MS, FenceWatch, FORGET_AFTER_MS, STALL_MS, subscribeWatch, type WatchInput } from '../../../src/kafka/fenced-brokers.ts'
import { SLOW_MS, type SlowBrokerReport } from '../../../src/kafka/slow-brokers.ts'
import { ApiVersionsApi } from '../../../src/kafka/protocol/api-versions.ts'
import { sendAt } from '../../../src/kafka/protocol/negotiation.ts'

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
const OTHER = '127.0.0.1:9003'
const PRODUCE = 0
const METADATA = 3

interface Setup {
  /** Broker lists a Metadata answer of cluster B listed before (default: FROZEN, PEER and OTHER together). */
  readonly seen?: readonly (readonly string[])[]
  /** The addresses of the open connections to cluster B (default: FROZEN, PEER). */
  readonly open?: readonly string[]
}

/**
 * A watch over cluster "cluster B". `answers` are the broker lists the checks get, in turn (an Error rejects the
 * check; undefined never answers; a promise answers when it resolves).
 */
function setup (answers: (readonly string[] | Error | Promise<readonly string[]> | undefined)[], { seen = [[FROZEN, PEER, OTHER]], open = [FROZEN, PEER] }: Setup = {}) {
  let now = 1_000_000
  const connections = open.map(key => {
    const [host, port] = key.split(':') as [string, string]
    return { key, fake: new FakeConnection(host, Number(port)) }
  })
  const asked: string[] = []
  const cuts: { broker: string, cause: string }[] = []
  const slow: SlowBrokerReport[] = []
  const watch = new FenceWatch({
    slow: report => { slow.push(report) },
    now: () => now,
    clusterOf: c => (connections.some(o => o.fake === (c as unknown as FakeConnection)) ? 'cluster B' : undefined),
    connectionsOf: label => (label === 'cluster B' ? connections.map(o => ({ key: o.key, connection: o.fake as unknown as Connection })) : []),
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
  for (const list of seen) watch.listedBy('cluster B', list)
  const connection = (key: string): Connection => connections.find(o => o.key === key)!.fake as unknown as Connection
  return {
    watch,
    connection,
    fake: (key: string): FakeConnection => connections.find(o => o.key === key)!.fake,
    asked,
    cuts,
    slow,
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
  it('cuts a broker a check listed and the next one no longer lists while a request waits on it, naming the request, both brokers and the cluster', async () => {
    const { watch, connection, asked, cuts, step } = setup([[FROZEN, PEER], [PEER]], { seen: [[PEER]] })
    watch.sent(connection(FROZEN), 1, PRODUCE)
    await step(STALL_MS)
    // Listed: the cluster has not fenced it yet
    assert.deepEqual([asked, cuts], [[`${PEER} cluster B`], []])
    await step(CHECK_INTERVAL_MS)
    assert.equal(asked.length, 2)
    assert.deepEqual(cuts, [{ broker: FROZEN, cause: `a Produce request to broker ${FROZEN} unanswered for 3.0 s, and broker ${PEER} no longer lists it among the brokers of cluster B: the cluster fenced it` }])
  })

  it('cuts a broker a Metadata answer read earlier listed, even when the first check came after the fence', async () => {
    const { watch, connection, cuts, step } = setup([[PEER, OTHER]])
    watch.listedBy('cluster A', ['127.0.0.1:9101'])
    watch.sent(connection(FROZEN), 1, METADATA)
    await step(STALL_MS)
    assert.deepEqual(cuts.map(c => c.broker), [FROZEN])
    assert.match(cuts[0]!.cause, /^a Metadata request to broker 127\.0\.0\.1:9001 unanswered for 2\.0 s/)
  })

  it('never cuts a broker no answer listed under that address (a bootstrap alias), nor one still listed', async () => {
    const alias = setup([['broker-1:9001', PEER], ['broker-1:9001', PEER]], { seen: [['broker-1:9001', PEER]] })
    alias.watch.sent(alias.connection(FROZEN), 1, METADATA)
    await alias.step(STALL_MS)
    await alias.step(CHECK_INTERVAL_MS)
    assert.deepEqual([alias.asked.length, alias.cuts], [2, []])

    const listed = setup([[FROZEN, PEER], [FROZEN, PEER]])
    listed.watch.sent(listed.connection(FROZEN), 1, PRODUCE)
    await listed.step(STALL_MS)
    await listed.step(CHECK_INTERVAL_MS)
    assert.deepEqual([listed.asked.length, listed.cuts], [2, []])
  })

  it('compares names within one listener only: a cluster reached on two listeners never makes a healthy broker look unlisted', async () => {
    // FROZEN was listed on one listener (with OTHER); the broker asked answers for another listener's names
    const { watch, connection, cuts, step } = setup([['127.0.0.1:9011', '127.0.0.1:9012'], [PEER, '127.0.0.1:9013']], { seen: [[FROZEN, OTHER], [PEER, '127.0.0.1:9013']] })
    watch.sent(connection(FROZEN), 1, PRODUCE)
    // (the first answer does not even name the broker asked: ignored; the second names it, but never listed FROZEN)
    await step(STALL_MS)
    await step(CHECK_INTERVAL_MS)
    assert.deepEqual(cuts, [])
  })

  it('asks nothing while no request has waited STALL_MS, and nothing about a request answered or one written on a closed connection', async () => {
    const { watch, connection, fake, asked, advance, step } = setup([[FROZEN, PEER]])
    watch.sent(connection(FROZEN), 1, PRODUCE)
    advance(STALL_MS - 1)
    watch.tick()
    watch.answered(connection(FROZEN), 1)
    await step(STALL_MS)
    fake(FROZEN).status = 'closed'
    watch.sent(connection(FROZEN), 2, PRODUCE)
    await step(STALL_MS)
    assert.deepEqual(asked, [])
  })

  it('asks one cluster at most every CHECK_INTERVAL_MS, and one check at a time', async () => {
    const { watch, connection, asked, step } = setup([[FROZEN, PEER], [FROZEN, PEER], undefined])
    watch.sent(connection(FROZEN), 1, PRODUCE)
    await step(STALL_MS)
    await step(CHECK_INTERVAL_MS - 1)
    assert.equal(asked.length, 1)
    await step(1)
    assert.equal(asked.length, 2)
    // The third never answers: no fourth while it is under way (its timeout is real time, not waited for here)
    await step(CHECK_INTERVAL_MS)
    await step(CHECK_INTERVAL_MS)
    assert.equal(asked.length, 3)
  })

  it('a failed check decides nothing; the next one does', async () => {
    const { watch, connection, asked, cuts, step } = setup([new Error('no answer'), [PEER]])
    watch.sent(connection(FROZEN), 1, PRODUCE)
    await step(STALL_MS)
    assert.deepEqual([asked.length, cuts], [1, []])
    await step(CHECK_INTERVAL_MS)
    assert.deepEqual([asked.length, cuts.map(c => c.broker)], [2, [FROZEN]])
  })

  it('asks a listed broker that is not stalled, an idle one first; nothing when every listed one is stalled', async () => {
    const { watch, connection, asked, step } = setup([[FROZEN, PEER, OTHER]], { open: [FROZEN, 'broker-2:9002', PEER, OTHER] })
    watch.sent(connection(FROZEN), 1, PRODUCE)
    watch.sent(connection(PEER), 7, PRODUCE)
    watch.sent(connection(OTHER), 8, PRODUCE)
    // PEER and OTHER stalled too; broker-2:9002 (an alias no answer listed) is never asked
    await step(STALL_MS)
    assert.deepEqual(asked, [])
    watch.answered(connection(PEER), 7)
    watch.answered(connection(OTHER), 8)
    // Both fine now; OTHER busy with a fresh request, PEER idle: PEER is asked
    watch.sent(connection(OTHER), 9, PRODUCE)
    await step(0)
    assert.deepEqual(asked, [`${PEER} cluster B`])
  })

  it('does not cut a broker whose request was answered while the check was under way', async () => {
    let answer: (brokers: readonly string[]) => void = () => undefined
    const late = new Promise<readonly string[]>(resolve => { answer = resolve })
    const { watch, connection, cuts, step } = setup([late])
    watch.sent(connection(FROZEN), 1, PRODUCE)
    await step(STALL_MS)
    watch.answered(connection(FROZEN), 1)
    answer([PEER])
    await settle()
    assert.deepEqual(cuts, [])
  })

  it('forgets the requests of a closed connection, and entries older than FORGET_AFTER_MS; one close listener per connection', async () => {
    const closed = setup([[FROZEN, PEER], [PEER]])
    closed.watch.sent(closed.connection(FROZEN), 1, PRODUCE)
    closed.fake(FROZEN).emit('close')
    await closed.step(STALL_MS)
    assert.deepEqual([closed.asked.length, closed.cuts], [0, []])
    for (let id = 2; id < 30; id++) {
      closed.watch.sent(closed.connection(PEER), id, PRODUCE)
      closed.watch.answered(closed.connection(PEER), id)
    }
    assert.equal(closed.fake(PEER).listenerCount('close'), 1)

    const old = setup([[PEER]])
    old.watch.sent(old.connection(FROZEN), 1, PRODUCE)
    await old.step(FORGET_AFTER_MS)
    assert.deepEqual([old.asked.length, old.cuts], [0, []])
  })

  it('reports a request its broker holds SLOW_MS while the cluster still lists it, without cutting it; one answered in time is not', async () => {
    const { watch, connection, cuts, slow, step } = setup(Array.from({ length: 40 }, () => [FROZEN, PEER]))
    watch.sent(connection(PEER), 1, METADATA)
    watch.sent(connection(FROZEN), 2, PRODUCE)
    for (let waited = 0; waited < SLOW_MS - 500; waited += 500) await step(500)
    watch.answered(connection(PEER), 1)
    assert.equal(slow.length, 0)
    await step(500)
    assert.deepEqual([slow, cuts], [[{ broker: FROZEN, cluster: 'cluster B', api: 'Produce', waitedMs: SLOW_MS, first: true }], []])
  })

  it('reads the brokers of a Metadata answer as kmirror decodes it (a map) and as the client library does (an array)', () => {
    assert.deepEqual(brokerKeys({ brokers: new Map([[1, { nodeId: 1, host: 'Broker-1', port: 9092 }], [2, { nodeId: 2, host: '::1', port: 9093 }]]) }), ['broker-1:9092', '::1:9093'])
    assert.deepEqual(brokerKeys({ brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092 }, { nodeId: 2 }] }), ['127.0.0.1:9092'])
    assert.deepEqual([brokerKeys(undefined), brokerKeys({}), brokerKeys({ brokers: 'x' })], [[], [], []])
  })

  it('is fed by the client library\'s diagnostics channel: a request written on a real connection, its answer, a Metadata answer\'s brokers', async () => {
    // A broker that accepts connections and answers nothing
    const sockets: Socket[] = []
    const server = createServer(socket => { sockets.push(socket) })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const connection = new Connection('kmirror-test', { requestTimeout: 60_000 })
    const seen: string[] = []
    const recorder: WatchInput = {
      sent: (c, id, apiKey) => { if (c === connection) seen.push(`sent ${id} ${apiKey}`) },
      answered: (c, id) => { if (c === connection) seen.push(`answered ${id}`) },
      listedBy: (label, keys) => { seen.push(`listed ${label} ${[...keys].join(',')}`) }
    }
    const stop = subscribeWatch(recorder, c => (c === connection ? 'cluster B' : undefined))
    try {
      await connection.connect('127.0.0.1', (server.address() as AddressInfo).port)
      const unanswered = sendAt(connection, ApiVersionsApi, 3, { clientSoftwareName: 'kmirror-test', clientSoftwareVersion: '0' }).catch(() => undefined)
      assert.equal(seen.length, 1)
      const [, id, apiKey] = seen[0]!.split(' ')
      assert.deepEqual([Number.isInteger(Number(id)), apiKey], [true, String(ApiVersionsApi.key)])
      // The library publishes an answer as below (`connections:api` asyncStart, the decoded answer as `result`)
      connectionsApiChannel.asyncStart.publish({ connection, operation: 'send', apiKey: METADATA, correlationId: Number(id), result: { brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9001 }] } })
      assert.deepEqual(seen.slice(1), [`answered ${id}`, 'listed cluster B 127.0.0.1:9001'])
      await connection.close()
      await unanswered
    } finally {
      stop()
      for (const s of sockets) s.destroy()
      server.close()
    }
  })
})
