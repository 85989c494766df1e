/**
 * The group membership APIs at every version kmirror speaks, against byte layouts written out by hand from Kafka's
 * message JSONs (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup): classic int16/int32 lengths before
 * each API's first flexible version, compact lengths (n + 1) and empty tagged-field sections (0x00) from it on.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decodeResponse, encodeRequest } from '../../../../src/kafka/protocol/api.ts'
import { CoordinatorKeyTypes, FindCoordinatorApi } from '../../../../src/kafka/protocol/find-coordinator.ts'
import { HeartbeatApi } from '../../../../src/kafka/protocol/heartbeat.ts'
import { JoinGroupApi } from '../../../../src/kafka/protocol/join-group.ts'
import { LeaveGroupApi } from '../../../../src/kafka/protocol/leave-group.ts'
import { SyncGroupApi } from '../../../../src/kafka/protocol/sync-group.ts'

// Hand-written field encoders, independent of wire.ts.
const i8 = (v: number): string => Buffer.from([v & 0xff]).toString('hex')
const i16 = (v: number): string => { const b = Buffer.alloc(2); b.writeInt16BE(v); return b.toString('hex') }
const i32 = (v: number): string => { const b = Buffer.alloc(4); b.writeInt32BE(v); return b.toString('hex') }
const str = (s: string): string => i16(s.length) + Buffer.from(s).toString('hex')
const cstr = (s: string): string => i8(s.length + 1) + Buffer.from(s).toString('hex')
const NULL_STR = 'ffff'
const CNULL = '00'
const TAGS = '00'
const bytes = (b: Buffer): string => i32(b.length) + b.toString('hex')
const cbytes = (b: Buffer): string => i8(b.length + 1) + b.toString('hex')

const encode = (spec: Parameters<typeof encodeRequest>[0], version: number, request: unknown): string =>
  Buffer.concat(encodeRequest(spec, version, request)).toString('hex')
const decode = <T>(spec: { key: number } & Parameters<typeof decodeResponse<T>>[0], version: number, hex: string): T =>
  decodeResponse(spec, version, Buffer.from(hex, 'hex'))

describe('FindCoordinator', () => {
  const request = { keyType: CoordinatorKeyTypes.GROUP, keys: ['g1'] }
  test('v2 sends Key then KeyType; v3 the same, compact, with tags; v4 KeyType then the CoordinatorKeys array', () => {
    assert.equal(encode(FindCoordinatorApi, 2, request), str('g1') + i8(0))
    assert.equal(encode(FindCoordinatorApi, 3, request), cstr('g1') + i8(0) + TAGS)
    assert.equal(encode(FindCoordinatorApi, 4, { keyType: CoordinatorKeyTypes.TRANSACTION, keys: ['a', 'b'] }), i8(1) + i8(3) + cstr('a') + cstr('b') + TAGS)
  })
  test('below v4 a request carries exactly one key', () => {
    assert.throws(() => encode(FindCoordinatorApi, 3, { keyType: 0, keys: ['a', 'b'] }), /exactly one key/)
  })
  test('v2 and v3 answer one coordinator; v4 a list with the key and error of each', () => {
    assert.deepEqual(decode(FindCoordinatorApi, 2, i32(0) + i16(0) + NULL_STR + i32(3) + str('h') + i32(9092)),
      { throttleTimeMs: 0, coordinators: [{ key: '', errorCode: 0, errorMessage: null, nodeId: 3, host: 'h', port: 9092 }] })
    assert.deepEqual(decode(FindCoordinatorApi, 3, i32(5) + i16(15) + cstr('loading') + i32(-1) + cstr('') + i32(-1) + TAGS),
      { throttleTimeMs: 5, coordinators: [{ key: '', errorCode: 15, errorMessage: 'loading', nodeId: -1, host: '', port: -1 }] })
    assert.deepEqual(decode(FindCoordinatorApi, 4, i32(0) + i8(2) + cstr('g1') + i32(1) + cstr('h') + i32(9092) + i16(0) + CNULL + TAGS + TAGS),
      { throttleTimeMs: 0, coordinators: [{ key: 'g1', nodeId: 1, host: 'h', port: 9092, errorCode: 0, errorMessage: null }] })
  })
})

describe('JoinGroup', () => {
  const metadata = Buffer.from([1, 2, 3])
  const request = { groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 60_000, memberId: '', protocolType: 'kmirror', protocols: [{ name: 'sticky-v1', metadata }], reason: 'r' }
  const head = (s: (x: string) => string): string => s('g') + i32(10_000) + i32(60_000) + s('')
  test('v3-v4 classic; v5 adds a null group.instance.id; v6 flexible; v8 adds the reason', () => {
    const v3 = head(str) + str('kmirror') + i32(1) + str('sticky-v1') + bytes(metadata)
    assert.equal(encode(JoinGroupApi, 3, request), v3)
    assert.equal(encode(JoinGroupApi, 4, request), v3)
    assert.equal(encode(JoinGroupApi, 5, request), head(str) + NULL_STR + str('kmirror') + i32(1) + str('sticky-v1') + bytes(metadata))
    const v6 = head(cstr) + CNULL + cstr('kmirror') + i8(2) + cstr('sticky-v1') + cbytes(metadata) + TAGS
    assert.equal(encode(JoinGroupApi, 6, request), v6 + TAGS)
    assert.equal(encode(JoinGroupApi, 7, request), v6 + TAGS)
    assert.equal(encode(JoinGroupApi, 8, request), v6 + cstr('r') + TAGS)
    assert.equal(encode(JoinGroupApi, 9, { ...request, reason: null }), v6 + CNULL + TAGS)
  })
  test('the leader\'s answer carries every member\'s metadata; v7 the protocol type, v9 SkipAssignment', () => {
    const v3 = i32(0) + i16(0) + i32(4) + str('sticky-v1') + str('m1') + str('m1') + i32(1) + str('m1') + bytes(metadata)
    const expected = { throttleTimeMs: 0, errorCode: 0, generationId: 4, protocolType: null, protocolName: 'sticky-v1', leader: 'm1', skipAssignment: false, memberId: 'm1', members: [{ memberId: 'm1', groupInstanceId: null, metadata }] }
    assert.deepEqual(decode(JoinGroupApi, 3, v3), expected)
    const v5 = i32(0) + i16(0) + i32(4) + str('sticky-v1') + str('m1') + str('m1') + i32(1) + str('m1') + NULL_STR + bytes(metadata)
    assert.deepEqual(decode(JoinGroupApi, 5, v5), expected)
    const v9 = i32(0) + i16(0) + i32(4) + cstr('kmirror') + cstr('sticky-v1') + cstr('m1') + i8(0) + cstr('m1') + i8(2) + cstr('m1') + CNULL + cbytes(metadata) + TAGS + TAGS
    assert.deepEqual(decode(JoinGroupApi, 9, v9), { ...expected, protocolType: 'kmirror' })
  })
  test('v4+: a first join is answered MEMBER_ID_REQUIRED with the id to join again with', () => {
    const answer = decode(JoinGroupApi, 4, i32(0) + i16(79) + i32(-1) + str('') + str('') + str('m-1') + i32(0))
    assert.equal(answer.errorCode, 79)
    assert.equal(answer.memberId, 'm-1')
  })
})

describe('SyncGroup', () => {
  const assignment = Buffer.from([9, 8])
  const request = { groupId: 'g', generationId: 4, memberId: 'm1', protocolType: 'kmirror', protocolName: 'sticky-v1', assignments: [{ memberId: 'm1', assignment }] }
  test('v2 classic; v3 a null group.instance.id; v4 flexible; v5 the protocol type and name', () => {
    assert.equal(encode(SyncGroupApi, 2, request), str('g') + i32(4) + str('m1') + i32(1) + str('m1') + bytes(assignment))
    assert.equal(encode(SyncGroupApi, 3, request), str('g') + i32(4) + str('m1') + NULL_STR + i32(1) + str('m1') + bytes(assignment))
    assert.equal(encode(SyncGroupApi, 4, request), cstr('g') + i32(4) + cstr('m1') + CNULL + i8(2) + cstr('m1') + cbytes(assignment) + TAGS + TAGS)
    assert.equal(encode(SyncGroupApi, 5, request), cstr('g') + i32(4) + cstr('m1') + CNULL + cstr('kmirror') + cstr('sticky-v1') + i8(2) + cstr('m1') + cbytes(assignment) + TAGS + TAGS)
  })
  test('the answer is this member\'s assignment', () => {
    assert.deepEqual(decode(SyncGroupApi, 2, i32(0) + i16(0) + bytes(assignment)), { throttleTimeMs: 0, errorCode: 0, protocolType: null, protocolName: null, assignment })
    assert.deepEqual(decode(SyncGroupApi, 5, i32(1) + i16(27) + cstr('kmirror') + cstr('sticky-v1') + cbytes(assignment) + TAGS), { throttleTimeMs: 1, errorCode: 27, protocolType: 'kmirror', protocolName: 'sticky-v1', assignment })
  })
})

describe('Heartbeat and LeaveGroup', () => {
  test('Heartbeat v2 classic, v3 with a null group.instance.id, v4 flexible', () => {
    const request = { groupId: 'g', generationId: 7, memberId: 'm' }
    assert.equal(encode(HeartbeatApi, 2, request), str('g') + i32(7) + str('m'))
    assert.equal(encode(HeartbeatApi, 3, request), str('g') + i32(7) + str('m') + NULL_STR)
    assert.equal(encode(HeartbeatApi, 4, request), cstr('g') + i32(7) + cstr('m') + CNULL + TAGS)
    assert.deepEqual(decode(HeartbeatApi, 2, i32(0) + i16(27)), { throttleTimeMs: 0, errorCode: 27 })
    assert.deepEqual(decode(HeartbeatApi, 4, i32(0) + i16(0) + TAGS), { throttleTimeMs: 0, errorCode: 0 })
  })
  test('LeaveGroup v2 names the member; v3 sends a members array with an error per member; v4 flexible', () => {
    const request = { groupId: 'g', memberId: 'm' }
    assert.equal(encode(LeaveGroupApi, 2, request), str('g') + str('m'))
    assert.equal(encode(LeaveGroupApi, 3, request), str('g') + i32(1) + str('m') + NULL_STR)
    assert.equal(encode(LeaveGroupApi, 4, request), cstr('g') + i8(2) + cstr('m') + CNULL + TAGS + TAGS)
    assert.deepEqual(decode(LeaveGroupApi, 2, i32(0) + i16(0)), { throttleTimeMs: 0, errorCode: 0, members: [] })
    assert.deepEqual(decode(LeaveGroupApi, 3, i32(0) + i16(0) + i32(1) + str('m') + NULL_STR + i16(25)), { throttleTimeMs: 0, errorCode: 0, members: [{ memberId: 'm', errorCode: 25 }] })
    assert.deepEqual(decode(LeaveGroupApi, 4, i32(0) + i16(0) + i8(2) + cstr('m') + CNULL + i16(0) + TAGS + TAGS), { throttleTimeMs: 0, errorCode: 0, members: [{ memberId: 'm', errorCode: 0 }] })
  })
})
