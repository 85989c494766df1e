/**
 * DescribeGroups v1-v4 against byte layouts written out by hand from Kafka's message JSONs: the request's group
 * list (v3+ with includeAuthorizedOperations false), the answer's members with their metadata and assignment
 * bytes (v4+ with a group instance id), and the authorized operations (v3+) skipped.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeResponse, encodeRequest } from '../../../../src/kafka/protocol/api.ts'
import { DescribeGroupsApi } from '../../../../src/kafka/protocol/describe-groups.ts'

const i8 = (v: number): string => Buffer.from([v & 0xff]).toString('hex')
const i16 = (v: number): string => { const b = Buffer.alloc(2); b.writeInt16BE(v); return b.toString('hex') }
const i32 = (v: number): string => { const b = Buffer.alloc(4); b.writeInt32BE(v); return b.toString('hex') }
const str = (s: string): string => i16(s.length) + Buffer.from(s).toString('hex')
const bytes = (b: Buffer): string => i32(b.length) + b.toString('hex')

test('DescribeGroups v1-v2 send the group list; v3-v4 add includeAuthorizedOperations = false', () => {
  const hex = (v: number): string => Buffer.concat(encodeRequest(DescribeGroupsApi, v, { groups: ['g1', 'g2'] })).toString('hex')
  assert.equal(hex(1), i32(2) + str('g1') + str('g2'))
  assert.equal(hex(2), hex(1))
  assert.equal(hex(3), hex(1) + i8(0))
  assert.equal(hex(4), hex(1) + i8(0))
})

test('DescribeGroups v1 and v4 answer each member with its metadata and assignment bytes', () => {
  const [metadata, assignment] = [Buffer.from([1, 2]), Buffer.from([3])]
  const member = (v: number): string => str('m-1') + (v >= 4 ? 'ffff' : '') + str('client') + str('/10.0.0.1') + bytes(metadata) + bytes(assignment)
  const group = (v: number): string => i16(0) + str('g1') + str('Stable') + str('kmirror') + str('sticky-v1') + i32(1) + member(v) + (v >= 3 ? i32(-2147483648) : '')
  const expected = {
    throttleTimeMs: 7,
    groups: [{ errorCode: 0, groupId: 'g1', state: 'Stable', protocolType: 'kmirror', protocol: 'sticky-v1', members: [{ memberId: 'm-1', clientId: 'client', clientHost: '/10.0.0.1', metadata, assignment }] }]
  }
  for (const v of [1, 4]) assert.deepEqual(decodeResponse(DescribeGroupsApi, v, Buffer.from(i32(7) + i32(1) + group(v), 'hex')), expected)
})

test('DescribeGroups stays below v6, which answers a missing group with GROUP_ID_NOT_FOUND instead of Dead (see the version notes)', () => {
  assert.ok(DescribeGroupsApi.maxVersion < 6)
})
