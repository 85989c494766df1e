/**
 * Which AddPartitionsToTxn answers set one partition aside and which fail the transaction (src/kafka/transactions.ts):
 * every error of that API comes per partition, even those that concern the whole request.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Connection } from '@platformatic/kafka'
import { ErrorCodes } from '../../../src/errors.ts'
import { partitionRefusals, TransactionCoordinator, type TransactionCoordinatorDeps } from '../../../src/kafka/transactions.ts'

const E = { NONE: 0, UNKNOWN_TOPIC_OR_PARTITION: 3, NOT_COORDINATOR: 16, TOPIC_AUTHORIZATION_FAILED: 29, INVALID_TXN_STATE: 48, CONCURRENT_TRANSACTIONS: 51, OPERATION_NOT_ATTEMPTED: 55, INVALID_RECORD: 87, PRODUCER_FENCED: 90 }

function answer (...partitions: [string, number, number][]): Parameters<typeof partitionRefusals>[0] {
  const byTopic = new Map<string, { index: number, errorCode: number }[]>()
  for (const [topic, index, errorCode] of partitions) byTopic.set(topic, [...(byTopic.get(topic) ?? []), { index, errorCode }])
  return { throttleTimeMs: 0, results: [...byTopic].map(([name, list]) => ({ name, partitions: list })) }
}

test('a partition refused for itself (authorization, a topic the coordinator does not know) is returned refused; the others are asked again', () => {
  assert.deepEqual(partitionRefusals(answer(['A.t', 0, E.OPERATION_NOT_ATTEMPTED], ['A.u', 0, E.TOPIC_AUTHORIZATION_FAILED], ['A.v', 1, E.UNKNOWN_TOPIC_OR_PARTITION])), {
    refused: [{ key: 'A.u\u00000', error: 'TOPIC_AUTHORIZATION_FAILED' }, { key: 'A.v\u00001', error: 'UNKNOWN_TOPIC_OR_PARTITION' }], errorCode: 0
  })
  assert.deepEqual(partitionRefusals(answer(['A.v', 0, E.UNKNOWN_TOPIC_OR_PARTITION])).refused.map(r => r.error), ['UNKNOWN_TOPIC_OR_PARTITION'], 'also when it is the only partition asked')
})

test('any other error next to OPERATION_NOT_ATTEMPTED is the broker saying that partition was refused: it is set aside', () => {
  assert.deepEqual(partitionRefusals(answer(['A.t', 0, E.OPERATION_NOT_ATTEMPTED], ['A.u', 2, E.INVALID_RECORD])), { refused: [{ key: 'A.u\u00002', error: 'INVALID_RECORD' }], errorCode: 0 })
})

test('an error of the transaction (fenced, coordinator moved or busy, invalid state) is the request\'s error, never one partition\'s', () => {
  assert.deepEqual(partitionRefusals(answer(['A.t', 0, E.CONCURRENT_TRANSACTIONS], ['A.u', 0, E.CONCURRENT_TRANSACTIONS])), { refused: [], errorCode: E.CONCURRENT_TRANSACTIONS })
  assert.deepEqual(partitionRefusals(answer(['A.t', 0, E.NOT_COORDINATOR])), { refused: [], errorCode: E.NOT_COORDINATOR })
  assert.deepEqual(partitionRefusals(answer(['A.t', 0, E.OPERATION_NOT_ATTEMPTED], ['A.u', 0, E.PRODUCER_FENCED])), { refused: [], errorCode: E.PRODUCER_FENCED })
  assert.deepEqual(partitionRefusals(answer(['A.t', 0, E.INVALID_TXN_STATE])), { refused: [], errorCode: E.INVALID_TXN_STATE })
  assert.deepEqual(partitionRefusals(answer(['A.t', 0, E.NONE], ['A.t', 1, E.NONE])), { refused: [], errorCode: 0 })
})

test('a refused transactional id names the prefixed WRITE grant of the flow\'s ids (an id carries the pid and start time), or the id itself without a prefix', () => {
  const deps = (grantPrefix?: string): TransactionCoordinatorDeps => ({
    pool: { get: async () => ({}) as Connection, getFirstAvailable: async () => { throw new Error('not asked') } },
    send: async <_Req, Res>() => ({}) as Res,
    brokers: () => [],
    cluster: { label: 'cluster B', alias: 'B', brokers: 'b:9092', protocol: 'PLAINTEXT' },
    principal: 'User:mirror',
    ...(grantPrefix === undefined ? {} : { grantPrefix })
  })
  const id = 'kmirror-A-B-pod-7:42:1764950000000'
  const prefixed = new TransactionCoordinator(deps('kmirror-A-B-')).refused(`get a producer id for transactional id ${id}`, id)
  assert.equal(prefixed.code, ErrorCodes.NOT_AUTHORIZED)
  assert.match(prefixed.message, /refused \(TRANSACTIONAL_ID_AUTHORIZATION_FAILED\): grant WRITE on transactional-ids prefixed kmirror-A-B- to User:mirror on cluster B \(kafka-acls\.sh --bootstrap-server b:9092 --add --allow-principal User:mirror --operation Write --transactional-id kmirror-A-B- --resource-pattern-type prefixed;/)
  assert.doesNotMatch(prefixed.message, /DESCRIBE/)
  assert.match(new TransactionCoordinator(deps()).refused('x', id).message, /grant WRITE on transactional-id kmirror-A-B-pod-7:42:1764950000000 to User:mirror/)
})

test('a commit whose coordinator stays busy gives up within the time it was given (before the transaction times out), with a retriable error, not fenced', async () => {
  let asked = 0
  const coordinator = new TransactionCoordinator({
    pool: { get: async () => ({}) as Connection, getFirstAvailable: async () => { throw new Error('not asked') } },
    send: async <_Req, Res>() => { asked++; return { throttleTimeMs: 0, errorCode: E.CONCURRENT_TRANSACTIONS } as Res },
    locate: async () => ({ host: 'b', port: 9092, nodeId: 1 }),
    brokers: () => [],
    cluster: { label: 'cluster B', alias: 'B', brokers: 'b:9092', protocol: 'PLAINTEXT' },
    principal: 'User:mirror'
  })
  const started = Date.now()
  await assert.rejects(coordinator.endTxn('t-1', { id: 7n, epoch: 0, transactional: true }, true, 300), (err: { code?: string, retriable?: boolean, message: string }) => {
    assert.equal(err.code, ErrorCodes.PRODUCE)
    assert.equal(err.retriable, true)
    assert.match(err.message, /commit the transaction of transactional id t-1 on cluster B/)
    return true
  })
  const took = Date.now() - started
  assert.ok(took >= 300 && took < 5000, `gave up after ${took} ms`)
  assert.ok(asked > 1, 'asked again while busy')
})

test('AddPartitionsToTxn never asks again by name for a partition its coordinator does not know (the topic may be created again meanwhile): it is returned, the others are added', async () => {
  const answers = [
    { throttleTimeMs: 0, results: [{ name: 'A.new', partitions: [{ index: 0, errorCode: E.UNKNOWN_TOPIC_OR_PARTITION }] }, { name: 'A.old', partitions: [{ index: 0, errorCode: E.OPERATION_NOT_ATTEMPTED }] }] },
    { throttleTimeMs: 0, results: [{ name: 'A.old', partitions: [{ index: 0, errorCode: E.NONE }] }] }
  ]
  let asked = 0
  const requested: string[][] = []
  const coordinator = new TransactionCoordinator({
    pool: { get: async () => ({}) as Connection, getFirstAvailable: async () => { throw new Error('not asked') } },
    send: async <Req, Res>(_c: Connection, _s: unknown, request: Req) => {
      requested.push((request as { topics: { name: string }[] }).topics.map(t => t.name))
      return answers[Math.min(asked++, answers.length - 1)] as Res
    },
    locate: async () => ({ host: 'b', port: 9092, nodeId: 1 }),
    brokers: () => [],
    cluster: { label: 'cluster B', alias: 'B', brokers: 'b:9092', protocol: 'PLAINTEXT' },
    principal: 'User:mirror'
  })
  const refused = await coordinator.addPartitions('t-1', { id: 7n, epoch: 0, transactional: true }, [{ topic: 'A.new', partition: 0 }, { topic: 'A.old', partition: 0 }])
  assert.deepEqual([...refused], [['A.new\u00000', 'UNKNOWN_TOPIC_OR_PARTITION']])
  assert.deepEqual(requested, [['A.new', 'A.old'], ['A.old']])
})
