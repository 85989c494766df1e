/**
 * ListTransactions v0 and DescribeTransactions v0 against byte layouts written out by hand from Kafka's message
 * JSONs (both flexible from v0: compact strings and arrays, a tagged-field section after each struct and at the end).
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeResponse, encodeRequest } from '../../../../src/kafka/protocol/api.ts'
import { DescribeTransactionsApi } from '../../../../src/kafka/protocol/describe-transactions.ts'
import { ListTransactionsApi } from '../../../../src/kafka/protocol/list-transactions.ts'

const u8 = (v: number): string => Buffer.from([v]).toString('hex')
const i16 = (v: number): string => { const b = Buffer.alloc(2); b.writeInt16BE(v); return b.toString('hex') }
const i32 = (v: number): string => { const b = Buffer.alloc(4); b.writeInt32BE(v); return b.toString('hex') }
const i64 = (v: bigint): string => { const b = Buffer.alloc(8); b.writeBigInt64BE(v); return b.toString('hex') }
/** A compact string (length + 1 as an unsigned varint; every length here fits one byte). */
const str = (s: string): string => u8(Buffer.byteLength(s) + 1) + Buffer.from(s).toString('hex')
const NO_TAGS = u8(0)

test('ListTransactions v0 asks for the given states and every producer id', () => {
  const hex = Buffer.concat(encodeRequest(ListTransactionsApi, 0, { stateFilters: ['Ongoing'] })).toString('hex')
  assert.equal(hex, u8(2) + str('Ongoing') + u8(1) + NO_TAGS)
  assert.equal(Buffer.concat(encodeRequest(ListTransactionsApi, 0, { stateFilters: [] })).toString('hex'), u8(1) + u8(1) + NO_TAGS)
})

test('ListTransactions v0 answers the state filters it does not know, then each transaction with its id, producer id and state', () => {
  const entry = (id: string, pid: bigint, state: string): string => str(id) + i64(pid) + str(state) + NO_TAGS
  const body = i32(3) + i16(0) + u8(2) + str('Bogus') + u8(3) + entry('g-h:1:2', 4001n, 'Ongoing') + entry('other', 9n, 'Ongoing') + NO_TAGS
  assert.deepEqual(decodeResponse(ListTransactionsApi, 0, Buffer.from(body, 'hex')), {
    throttleTimeMs: 3,
    errorCode: 0,
    unknownStateFilters: ['Bogus'],
    transactions: [{ transactionalId: 'g-h:1:2', producerId: 4001n, state: 'Ongoing' }, { transactionalId: 'other', producerId: 9n, state: 'Ongoing' }]
  })
})

test('DescribeTransactions v0 asks for the ids and answers each one\'s state, producer, start time and partitions', () => {
  assert.equal(Buffer.concat(encodeRequest(DescribeTransactionsApi, 0, { transactionalIds: ['g-h:1:2'] })).toString('hex'), u8(2) + str('g-h:1:2') + NO_TAGS)
  const topic = (name: string, partitions: number[]): string => str(name) + u8(partitions.length + 1) + partitions.map(i32).join('') + NO_TAGS
  const state = i16(0) + str('g-h:1:2') + str('Ongoing') + i32(60_000) + i64(1_764_950_000_000n) + i64(4001n) + i16(7) +
    u8(3) + topic('A.orders', [0, 3]) + topic('mm2-offsets.A.internal', [11]) + NO_TAGS
  assert.deepEqual(decodeResponse(DescribeTransactionsApi, 0, Buffer.from(i32(0) + u8(2) + state + NO_TAGS, 'hex')), {
    throttleTimeMs: 0,
    transactions: [{
      errorCode: 0,
      transactionalId: 'g-h:1:2',
      state: 'Ongoing',
      timeoutMs: 60_000,
      startTimeMs: 1_764_950_000_000n,
      producerId: 4001n,
      producerEpoch: 7,
      topics: [{ name: 'A.orders', partitions: [0, 3] }, { name: 'mm2-offsets.A.internal', partitions: [11] }]
    }]
  })
})
