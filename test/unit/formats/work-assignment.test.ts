import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import {
  decodeMemberMetadata, decodeWorkAssignment, encodeMemberMetadata, encodeWorkAssignment
} from '../../../src/formats/work-assignment.ts'

const i16 = (v: number): string => { const b = Buffer.alloc(2); b.writeInt16BE(v); return b.toString('hex') }
const i32 = (v: number): string => { const b = Buffer.alloc(4); b.writeInt32BE(v); return b.toString('hex') }
const str = (s: string): string => i16(Buffer.byteLength(s)) + Buffer.from(s).toString('hex')

const isDecodeError = (pattern: RegExp) => (err: unknown): boolean =>
  err instanceof KmirrorError && err.code === ErrorCodes.DECODE && pattern.test(err.message)

describe('member metadata', () => {
  const metadata = { memberName: 'h:1:2', transactionalId: 'kmirror-A-B-h:1:2', owned: ['p:0:t', 'j:emit-heartbeats'] }

  test('is version, name, nullable transactional id, then the owned keys, byte for byte', () => {
    assert.equal(encodeMemberMetadata(metadata).toString('hex'),
      i16(0) + str('h:1:2') + str('kmirror-A-B-h:1:2') + i32(2) + str('p:0:t') + str('j:emit-heartbeats'))
    assert.equal(encodeMemberMetadata({ ...metadata, transactionalId: null, owned: [] }).toString('hex'), i16(0) + str('h:1:2') + 'ffff' + i32(0))
  })

  test('round-trips, with and without a transactional id', () => {
    assert.deepEqual(decodeMemberMetadata(encodeMemberMetadata(metadata)), { version: 0, ...metadata })
    assert.deepEqual(decodeMemberMetadata(encodeMemberMetadata({ ...metadata, transactionalId: null })), { version: 0, ...metadata, transactionalId: null })
  })

  test('a newer version with fields appended is read as far as this version knows', () => {
    const newer = Buffer.from(i16(3) + str('h:1:2') + 'ffff' + i32(1) + str('p:0:t') + str('a field of v3'), 'hex')
    assert.deepEqual(decodeMemberMetadata(newer), { version: 3, memberName: 'h:1:2', transactionalId: null, owned: ['p:0:t'] })
  })

  test('a truncated payload is a DECODE error naming the field', () => {
    const bytes = encodeMemberMetadata(metadata)
    assert.throws(() => decodeMemberMetadata(bytes.subarray(0, bytes.length - 3)), isDecodeError(/owned\[1\].*truncated/))
    assert.throws(() => decodeMemberMetadata(Buffer.alloc(1)), isDecodeError(/version/))
  })

  test('garbled bytes (a huge count, a negative version) are DECODE errors, not huge allocations', () => {
    assert.throws(() => decodeMemberMetadata(Buffer.from(i16(0) + str('x') + 'ffff' + i32(0x7fffffff), 'hex')), isDecodeError(/claims 2147483647 entries/))
    assert.throws(() => decodeMemberMetadata(Buffer.from(i16(-2) + str('x'), 'hex')), isDecodeError(/version -2 is negative/))
  })
})

describe('assignment', () => {
  const members = [{ memberName: 'h:1:2', transactionalId: null, partitions: 2, jobs: ['emit-heartbeats'] }]
  const assignment = { error: 0, generation: 7, leaderName: 'h:1:2', assigned: ['p:0:t', 'p:1:t'], revoked: ['p:2:t'], fence: ['kmirror-A-B-old'], members }

  test('is version, error, generation, leader, then assigned, revoked, fence and members arrays, byte for byte', () => {
    assert.equal(encodeWorkAssignment(assignment).toString('hex'),
      i16(0) + i16(0) + i32(7) + str('h:1:2') + i32(2) + str('p:0:t') + str('p:1:t') + i32(1) + str('p:2:t') + i32(1) + str('kmirror-A-B-old') +
      i32(1) + str('h:1:2') + 'ffff' + i32(2) + i32(1) + str('emit-heartbeats'))
  })

  test('round-trips', () => {
    assert.deepEqual(decodeWorkAssignment(encodeWorkAssignment(assignment)), { version: 0, ...assignment })
  })

  test('a newer version is read as far as known; a truncated one names the field', () => {
    const newer = Buffer.concat([encodeWorkAssignment(assignment), Buffer.from('00000001', 'hex')])
    newer.writeInt16BE(1, 0)
    assert.deepEqual(decodeWorkAssignment(newer), { version: 1, ...assignment })
    const bytes = encodeWorkAssignment(assignment)
    assert.throws(() => decodeWorkAssignment(bytes.subarray(0, 10)), isDecodeError(/kmirror assignment.*leaderName/))
  })
})
