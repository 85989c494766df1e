/**
 * The open transactions under a prefix (src/kafka/open-transactions.ts): every broker is asked (each answers for
 * the ids it coordinates), only ids with the prefix are described, what is no longer open is left out, and what
 * cannot be asked is named while the rest is returned.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Broker, Connection } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { openTransactions, type OpenTransactionsDeps } from '../../../src/kafka/open-transactions.ts'
import type { ApiSpec } from '../../../src/kafka/protocol/api.ts'
import type { DescribedTransaction } from '../../../src/kafka/protocol/describe-transactions.ts'
import type { ListedTransaction } from '../../../src/kafka/protocol/list-transactions.ts'

const BROKERS: Broker[] = [{ host: 'b1', port: 9092 }, { host: 'b2', port: 9092 }]

function described (transactionalId: string, state = 'Ongoing', topics = ['A.t']): DescribedTransaction {
  return { errorCode: 0, transactionalId, state, timeoutMs: 60_000, startTimeMs: 1_000n, producerId: 5n, producerEpoch: 2, topics: topics.map(name => ({ name, partitions: [0] })) }
}

function deps (listed: Record<string, ListedTransaction[] | 'unsupported' | Error>, describe: (id: string) => DescribedTransaction | undefined = id => described(id)): OpenTransactionsDeps & { asked: string[], describedIds: string[] } {
  const asked: string[] = []
  const describedIds: string[] = []
  return {
    asked,
    describedIds,
    brokers: BROKERS,
    cluster: { label: 'cluster B', alias: 'B' },
    pool: { get: async (broker: Broker) => ({ host: broker.host, port: broker.port }) as unknown as Connection },
    send: async <Req, Res>(connection: Connection, spec: ApiSpec<Req, Res>, request: Req): Promise<Res> => {
      asked.push(`${connection.host} ${spec.name} ${JSON.stringify(request)}`)
      const answer = listed[connection.host ?? '']!
      if (answer === 'unsupported') throw new KmirrorError(ErrorCodes.BROKER_INCOMPATIBLE, `cluster B broker ${connection.host}:9092 offers no ListTransactions`, { details: { api: 'ListTransactions' } })
      if (answer instanceof Error) throw answer
      return { throttleTimeMs: 0, errorCode: 0, unknownStateFilters: [], transactions: answer } as unknown as Res
    },
    describe: async id => { describedIds.push(id); return describe(id) }
  }
}

const ongoing = (transactionalId: string): ListedTransaction => ({ transactionalId, producerId: 5n, state: 'Ongoing' })

test('every broker is asked for its Ongoing transactions; those with the prefix still open when described are returned, sorted', async () => {
  const d = deps({ b1: [ongoing('g-h:2:3'), ongoing('other-h:1:1')], b2: [ongoing('g-h:1:2'), ongoing('g-h:9:9')] },
    id => id === 'g-h:9:9' ? described(id, 'CompleteCommit', []) : described(id, 'Ongoing', ['A.t', 'mm2-offsets.A.internal']))
  const open = (await openTransactions(d, 'g-'))?.open
  assert.deepEqual(d.asked, ['b1 ListTransactions {"stateFilters":["Ongoing"]}', 'b2 ListTransactions {"stateFilters":["Ongoing"]}'])
  assert.deepEqual(d.describedIds, ['g-h:1:2', 'g-h:2:3', 'g-h:9:9'], 'only ids with the prefix are described')
  assert.deepEqual(open, ['g-h:1:2', 'g-h:2:3'].map(transactionalId => ({
    transactionalId, producerId: 5n, producerEpoch: 2, startedAt: 1000, timeoutMs: 60_000, topics: ['A.t', 'mm2-offsets.A.internal']
  })), 'one committed meanwhile is left out')
})

test('a broker that cannot be asked or is before Kafka 3.0 is named in missed, and what the others list is returned; none able to list: null', async () => {
  const down = await openTransactions(deps({ b1: [ongoing('g-h:1:2')], b2: new Error('connect ECONNREFUSED 127.0.0.1:9092') }, id => described(id)), 'g-')
  assert.deepEqual(down?.open.map(o => o.transactionalId), ['g-h:1:2'])
  assert.deepEqual(down?.missed.map(m => m.what), ['broker b2:9092'])
  assert.match(down!.missed[0]!.why, /list the open transactions of broker b2:9092 of cluster B: .*ECONNREFUSED/)
  const upgrading = await openTransactions(deps({ b1: [ongoing('g-h:1:2')], b2: 'unsupported' }, id => described(id)), 'g-')
  assert.deepEqual([upgrading?.open.length, upgrading?.missed], [1, [{ what: 'broker b2:9092', why: 'it does not offer ListTransactions (Kafka before 3.0)' }]])
  assert.equal(await openTransactions(deps({ b1: 'unsupported', b2: 'unsupported' }, id => described(id)), 'g-'), null)
})

test('an id listed by two brokers (its coordinator moving) is described once; one no longer known is left out silently, one that fails to be described is named', async () => {
  const notFound = new KmirrorError(ErrorCodes.PRODUCE, 'describe transactional id g-h:2:2 on cluster B: Kafka error TRANSACTIONAL_ID_NOT_FOUND', { details: { kafkaErrors: ['TRANSACTIONAL_ID_NOT_FOUND'] } })
  const refused = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'describe transactional id g-h:3:3 on cluster B: refused; grant DESCRIBE', { details: { kafkaErrors: ['TRANSACTIONAL_ID_AUTHORIZATION_FAILED'] } })
  const d = deps({ b1: [ongoing('g-h:1:1'), ongoing('g-h:2:2')], b2: [ongoing('g-h:1:1'), ongoing('g-h:3:3')] }, id => {
    if (id === 'g-h:2:2') throw notFound
    if (id === 'g-h:3:3') throw refused
    return described(id)
  })
  const listed = await openTransactions(d, 'g-')
  assert.deepEqual(d.describedIds, ['g-h:1:1', 'g-h:2:2', 'g-h:3:3'])
  assert.deepEqual(listed?.open.map(o => o.transactionalId), ['g-h:1:1'])
  assert.deepEqual(listed?.missed, [{ what: 'transactional id g-h:3:3', why: refused.message }])
})

test('a broker answering an error, or not knowing the state asked for, is named in missed rather than read as "nothing open"', async () => {
  const d = deps({ b1: [ongoing('g-h:1:1')], b2: [] }, id => described(id))
  const send = d.send
  const withAnswer = (answer: object): typeof d => ({
    ...d,
    send: async <Req, Res>(connection: Connection, spec: ApiSpec<Req, Res>, request: Req): Promise<Res> =>
      connection.host === 'b2' ? answer as Res : await send(connection, spec, request, 'cluster B')
  })
  const busy = await openTransactions(withAnswer({ throttleTimeMs: 0, errorCode: 14, unknownStateFilters: [], transactions: [] }), 'g-')
  assert.match(busy!.missed[0]!.why, /broker b2:9092 of cluster B: Kafka error COORDINATOR_LOAD_IN_PROGRESS/)
  const unknownState = await openTransactions(withAnswer({ throttleTimeMs: 0, errorCode: 0, unknownStateFilters: ['Ongoing'], transactions: [] }), 'g-')
  assert.match(unknownState!.missed[0]!.why, /does not know the transaction state\(s\) Ongoing/)
  assert.deepEqual(unknownState!.open.map(o => o.transactionalId), ['g-h:1:1'])
})
