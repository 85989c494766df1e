/**
 * The transactional APIs' grammar, byte for byte from Kafka's request and response JSON schemas (no golden
 * capture yet: scripts/capture-protocol.ts does not run transactions).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decodeResponse, encodeRequest, type ApiSpec } from '../../../../src/kafka/protocol/api.ts'
import { AddPartitionsToTxnApi } from '../../../../src/kafka/protocol/add-partitions-to-txn.ts'
import { EndTxnApi } from '../../../../src/kafka/protocol/end-txn.ts'
import { CoordinatorKeyTypes, FindCoordinatorApi } from '../../../../src/kafka/protocol/find-coordinator.ts'
import { ProduceApi } from '../../../../src/kafka/protocol/produce.ts'

function hex<Req> (spec: ApiSpec<Req, unknown>, version: number, request: Req): string {
  return Buffer.concat(encodeRequest(spec, version, request)).toString('hex')
}

describe('FindCoordinator', () => {
  const request = { keyType: CoordinatorKeyTypes.TRANSACTION, keys: ['tx'] }
  test('v1-v2 carry one key then its type; v3 compact; v4+ a type then a key array', () => {
    assert.equal(hex(FindCoordinatorApi, 1, request), '0002' + '7478' + '01')
    assert.equal(hex(FindCoordinatorApi, 3, request), '03' + '7478' + '01' + '00')
    assert.equal(hex(FindCoordinatorApi, 4, request), '01' + '02' + '037478' + '00')
    assert.equal(hex(FindCoordinatorApi, 4, { keyType: CoordinatorKeyTypes.GROUP, keys: ['g', 'h'] }), '00' + '03' + '0267' + '0268' + '00')
    assert.throws(() => hex(FindCoordinatorApi, 2, { keyType: CoordinatorKeyTypes.GROUP, keys: ['g', 'h'] }), RangeError)
  })

  test('answers decode to one coordinator per key', () => {
    const v1 = Buffer.from('00000000' + '0000' + 'ffff' + '00000001' + '000168' + '00002383', 'hex')
    assert.deepEqual(decodeResponse(FindCoordinatorApi, 1, v1), { throttleTimeMs: 0, coordinators: [{ key: '', nodeId: 1, host: 'h', port: 9091, errorCode: 0, errorMessage: null }] })
    const v4 = Buffer.from('00000000' + '02' + '037478' + '00000001' + '0268' + '00002383' + '000f' + '00' + '00' + '00', 'hex')
    assert.deepEqual(decodeResponse(FindCoordinatorApi, 4, v4), { throttleTimeMs: 0, coordinators: [{ key: 'tx', nodeId: 1, host: 'h', port: 9091, errorCode: 15, errorMessage: null }] })
  })
})

describe('AddPartitionsToTxn and EndTxn', () => {
  const txn = { transactionalId: 'tx', producerId: 7n, producerEpoch: 2 }
  test('AddPartitionsToTxn v0 and v3 (flexible) requests and answers', () => {
    const request = { ...txn, topics: [{ name: 't', partitions: [0, 1] }] }
    assert.equal(hex(AddPartitionsToTxnApi, 0, request), '00027478' + '0000000000000007' + '0002' + '00000001' + '000174' + '00000002' + '00000000' + '00000001')
    assert.equal(hex(AddPartitionsToTxnApi, 3, request), '037478' + '0000000000000007' + '0002' + '02' + '0274' + '03' + '00000000' + '00000001' + '00' + '00')
    const answer = Buffer.from('00000000' + '02' + '0274' + '02' + '00000001' + '0033' + '00' + '00' + '00', 'hex')
    assert.deepEqual(decodeResponse(AddPartitionsToTxnApi, 3, answer), { throttleTimeMs: 0, results: [{ name: 't', partitions: [{ index: 1, errorCode: 51 }] }] })
  })

  test('EndTxn v0 and v3 requests and answers', () => {
    assert.equal(hex(EndTxnApi, 0, { ...txn, committed: true }), '00027478' + '0000000000000007' + '0002' + '01')
    assert.equal(hex(EndTxnApi, 3, { ...txn, committed: false }), '037478' + '0000000000000007' + '0002' + '00' + '00')
    assert.deepEqual(decodeResponse(EndTxnApi, 3, Buffer.from('00000000' + '005a' + '00', 'hex')), { throttleTimeMs: 0, errorCode: 90 })
  })

  test('a transactional Produce names its transactional id; an idempotent one sends null', () => {
    const base = { acks: -1, timeoutMs: 1000, topics: [] }
    assert.ok(hex(ProduceApi, 7, { ...base, transactionalId: 'tx' }).startsWith('00027478'))
    assert.ok(hex(ProduceApi, 7, base).startsWith('ffff'))
  })
})
