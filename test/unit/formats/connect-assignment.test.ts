/**
 * Connect worker metadata and assignments as a real MirrorMaker 2 4.1.1 worker showed them to DescribeGroups
 * (protocol `sessioned`, one worker, flow with two source tasks), and the eager (v0) layout of older Connect.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  CONNECTOR_TASK, decodeConnectAssignment, decodeConnectMemberMetadata, runningTasks
} from '../../../src/formats/connect-assignment.ts'
import { ErrorCodes } from '../../../src/errors.ts'
import { encodeInt16, encodeInt32, encodeInt64, encodeString } from '../../../src/formats/struct-codec.ts'
import { MM2_411_ASSIGNMENT, MM2_411_METADATA } from '../../fakes/connect-worker-bytes.ts'

test('a real MM2 4.1.1 worker: it joined running the three connectors, its last assignment added two source tasks', () => {
  const metadata = decodeConnectMemberMetadata(MM2_411_METADATA)
  assert.equal(metadata.version, 2)
  assert.equal(metadata.url, 'http://127.0.0.1:40183/')
  assert.deepEqual([...metadata.allocation!.assigned], [
    ['MirrorSourceConnector', [CONNECTOR_TASK]], ['MirrorHeartbeatConnector', [CONNECTOR_TASK]], ['MirrorCheckpointConnector', [CONNECTOR_TASK]]
  ])
  const assignment = decodeConnectAssignment(MM2_411_ASSIGNMENT)
  assert.equal(assignment.version, 2)
  assert.equal(assignment.error, 0)
  assert.match(assignment.leader, /^a03a0b9->b6ba3ea-/)
  assert.deepEqual([...assignment.assigned], [['MirrorSourceConnector', [0, 1]]])
  assert.deepEqual([...assignment.revoked], [])
  assert.deepEqual(runningTasks(metadata.allocation, assignment, 'MirrorSourceConnector'), [0, 1])
  assert.deepEqual(runningTasks(metadata.allocation, assignment, 'MirrorHeartbeatConnector'), [])
})

function taskMap (entries: [string, number[]][] | null): Buffer {
  if (entries === null) return encodeInt32(-1, 'n')
  return Buffer.concat([encodeInt32(entries.length, 'n'), ...entries.map(([c, tasks]) =>
    Buffer.concat([encodeString(c, 'c'), encodeInt32(tasks.length, 'n'), ...tasks.map(t => encodeInt32(t, 't'))]))])
}

function assignmentBytes (version: number, assigned: [string, number[]][] | null, revoked: [string, number[]][] | null = []): Buffer {
  return Buffer.concat([encodeInt16(version, 'v'), encodeInt16(0, 'e'), encodeString('leader', 'l'), encodeString('http://w:8083/', 'u'), encodeInt64(3, 'o'),
    taskMap(assigned), ...(version >= 1 ? [taskMap(revoked), encodeInt32(0, 'd')] : [])])
}

test('incremental assignments: allocation plus what was added minus what was revoked; null arrays read as empty', () => {
  const allocation = decodeConnectAssignment(assignmentBytes(1, [['MirrorSourceConnector', [-1, 0, 1, 2]]]))
  const change = decodeConnectAssignment(assignmentBytes(1, null, [['MirrorSourceConnector', [1, 2]]]))
  assert.deepEqual(runningTasks(allocation, change, 'MirrorSourceConnector'), [0])
  assert.deepEqual(runningTasks(allocation, null, 'MirrorSourceConnector'), [0, 1, 2])
  assert.deepEqual(runningTasks(null, null, 'MirrorSourceConnector'), [])
})

test('an eager (v0) assignment is the whole set; v0 metadata has no allocation', () => {
  const eager = decodeConnectAssignment(assignmentBytes(0, [['MirrorSourceConnector', [-1, 3]], ['MirrorHeartbeatConnector', [0]]]))
  assert.deepEqual([...eager.revoked], [])
  assert.deepEqual(runningTasks(null, eager, 'MirrorSourceConnector'), [3])
  const v0 = Buffer.concat([encodeInt16(0, 'v'), encodeString('http://w:8083/', 'u'), encodeInt64(7, 'o')])
  assert.equal(decodeConnectMemberMetadata(v0).allocation, null)
})

test('truncated bytes are a DECODE error naming the field', () => {
  assert.throws(() => decodeConnectAssignment(MM2_411_ASSIGNMENT.subarray(0, 90)), (err: Error & { code?: string }) =>
    err.code === ErrorCodes.DECODE && /Connect worker assignment/.test(err.message))
})
