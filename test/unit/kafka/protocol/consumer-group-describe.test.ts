/**
 * ConsumerGroupDescribe v0 against byte layouts written out by hand from Kafka's message JSONs (flexible from v0:
 * compact strings and arrays, a tag section after every struct): the request's group list and
 * includeAuthorizedOperations = false; the answer's members, their subscriptions and both assignments skipped.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeResponse, encodeRequest } from '../../../../src/kafka/protocol/api.ts'
import { ConsumerGroupDescribeApi } from '../../../../src/kafka/protocol/consumer-group-describe.ts'

const i8 = (v: number): string => Buffer.from([v & 0xff]).toString('hex')
const i16 = (v: number): string => { const b = Buffer.alloc(2); b.writeInt16BE(v); return b.toString('hex') }
const i32 = (v: number): string => { const b = Buffer.alloc(4); b.writeInt32BE(v); return b.toString('hex') }
/** Compact length (n + 1, one byte here) then the bytes; null is 00. */
const cstr = (s: string | null): string => s === null ? '00' : i8(s.length + 1) + Buffer.from(s).toString('hex')
const count = (n: number): string => i8(n + 1)
const TAGS = '00'
const UUID = '0123456789abcdef0123456789abcdef'

test('ConsumerGroupDescribe v0 sends the groups as a compact string array, then includeAuthorizedOperations = false', () => {
  const hex = Buffer.concat(encodeRequest(ConsumerGroupDescribeApi, 0, { groups: ['g1', 'g2'] })).toString('hex')
  assert.equal(hex, count(2) + cstr('g1') + cstr('g2') + i8(0) + TAGS)
})

test('ConsumerGroupDescribe v0 answers each group with its state and members; GROUP_ID_NOT_FOUND for others', () => {
  const assignment = count(1) + UUID + cstr('orders') + count(2) + i32(0) + i32(1) + TAGS + TAGS
  const member = cstr('m-1') + cstr(null) + cstr('rack-a') + i32(3) + cstr('client') + cstr('/10.0.0.1') + count(1) + cstr('orders') + cstr(null) + assignment + assignment + TAGS
  const live = i16(0) + cstr(null) + cstr('g1') + cstr('Stable') + i32(3) + i32(3) + cstr('uniform') + count(1) + member + i32(-2147483648) + TAGS
  const unknown = i16(69) + cstr('Group g2 not found.') + cstr('g2') + cstr('') + i32(0) + i32(0) + cstr('') + count(0) + i32(-2147483648) + TAGS
  const decoded = decodeResponse(ConsumerGroupDescribeApi, 0, Buffer.from(i32(0) + count(2) + live + unknown + TAGS, 'hex'))
  assert.deepEqual(decoded, {
    throttleTimeMs: 0,
    groups: [
      { errorCode: 0, errorMessage: null, groupId: 'g1', state: 'Stable', assignorName: 'uniform', members: [{ memberId: 'm-1', clientId: 'client', clientHost: '/10.0.0.1' }] },
      { errorCode: 69, errorMessage: 'Group g2 not found.', groupId: 'g2', state: '', assignorName: '', members: [] }
    ]
  })
})
