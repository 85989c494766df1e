/**
 * The start-up guard against a live MirrorMaker 2 on the same flow: MM2's worker group for A->B (`B.group.id`,
 * default `A-mm2`) described on B; a worker running MirrorSourceConnector tasks refuses the start (retriably:
 * the start retries wait for MM2 to stop); a herder kept for heartbeats only does not; a refused describe skips.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseConfig } from '../../../src/config/index.ts'
import { ErrorCodes, isKmirrorError, KmirrorError } from '../../../src/errors.ts'
import { encodeInt16, encodeInt32, encodeInt64, encodeString } from '../../../src/formats/struct-codec.ts'
import type { DescribedGroup, DescribedMember } from '../../../src/kafka/protocol/describe-groups.ts'
import { judgeMm2Group, Mm2States, refuseWhileMm2Copies } from '../../../src/runtime/mm2-worker-check.ts'
import { isTransientStartFault } from '../../../src/runtime/start-retry.ts'
import { MM2_411_ASSIGNMENT, MM2_411_METADATA } from '../../fakes/connect-worker-bytes.ts'
import { LogLevels, memoryLogger } from '../../fakes/memory-logger.ts'

function flow (...lines: string[]) {
  const text = ['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', ...lines].join('\n')
  return parseConfig(text, 'mm2.properties').flows.find(f => f.name === 'A->B')!
}

function worker (metadata: Buffer, assignment: Buffer, clientId = 'A->B'): DescribedMember {
  return { memberId: `${clientId}-1`, clientId, clientHost: '/10.0.0.7', metadata, assignment }
}

function group (members: DescribedMember[], state = 'Stable', protocolType = 'connect'): DescribedGroup {
  return { errorCode: 0, groupId: 'A-mm2', state, protocolType, protocol: 'sessioned', members }
}

/** Metadata v2 whose allocation runs only MirrorHeartbeatConnector and its task 0 (A->B disabled in MM2). */
function heartbeatsOnlyMetadata (): Buffer {
  const allocation = Buffer.concat([encodeInt16(2, 'v'), encodeInt16(0, 'e'), encodeString('l', 'l'), encodeString('http://w/', 'u'), encodeInt64(4, 'o'),
    encodeInt32(1, 'n'), encodeString('MirrorHeartbeatConnector', 'c'), encodeInt32(2, 'n'), encodeInt32(-1, 't'), encodeInt32(0, 't'),
    encodeInt32(0, 'r'), encodeInt32(0, 'd')])
  return Buffer.concat([encodeInt16(2, 'v'), encodeString('http://w/', 'u'), encodeInt64(4, 'o'), encodeInt32(allocation.length, 'len'), allocation])
}

test('MM2\'s worker group is B.group.id, by default <source>-mm2, as MirrorMakerConfig.workerConfig sets it', () => {
  assert.equal(flow().mm2WorkerGroupId, 'A-mm2')
  assert.equal(flow('B.group.id = mm2-east').mm2WorkerGroupId, 'mm2-east')
  // kmirror's own group key is per flow and never MM2's
  assert.equal(flow('A->B.group.id = mine').mm2WorkerGroupId, 'A-mm2')
})

test('a real MM2 4.1.1 worker running MirrorSourceConnector tasks copies the flow', () => {
  const verdict = judgeMm2Group(group([worker(MM2_411_METADATA, MM2_411_ASSIGNMENT)]))
  assert.deepEqual(verdict, { state: Mm2States.COPYING, workers: ['A->B@10.0.0.7'], sourceTasks: 2 })
})

test('no group, an empty one or another program\'s is absent; heartbeats only is not copying; a rebalance is unknown', () => {
  assert.equal(judgeMm2Group(undefined).state, Mm2States.ABSENT)
  assert.equal(judgeMm2Group(group([], 'Empty')).state, Mm2States.ABSENT)
  assert.equal(judgeMm2Group(group([worker(MM2_411_METADATA, MM2_411_ASSIGNMENT)], 'Stable', 'consumer')).state, Mm2States.ABSENT)
  assert.equal(judgeMm2Group(group([worker(heartbeatsOnlyMetadata(), Buffer.alloc(0))])).state, Mm2States.NOT_COPYING)
  assert.equal(judgeMm2Group(group([worker(heartbeatsOnlyMetadata(), Buffer.alloc(0))], 'CompletingRebalance')).state, Mm2States.UNKNOWN)
  assert.equal(judgeMm2Group(group([worker(Buffer.from('garbled'), Buffer.alloc(0))])).state, Mm2States.UNKNOWN)
  // tasks seen in a rebalancing group are enough
  assert.equal(judgeMm2Group(group([worker(MM2_411_METADATA, MM2_411_ASSIGNMENT)], 'PreparingRebalance')).state, Mm2States.COPYING)
})

test('a live MM2 refuses the flow\'s start with MM2_RUNNING, retriable, naming the group, the cluster, the workers and the fix', async () => {
  const { log } = memoryLogger()
  const config = flow()
  await assert.rejects(refuseWhileMm2Copies(config, log, async () => group([worker(MM2_411_METADATA, MM2_411_ASSIGNMENT)])), (err: unknown) => {
    assert.ok(isKmirrorError(err))
    assert.equal(err.code, ErrorCodes.MM2_RUNNING)
    assert.ok(isTransientStartFault(err), 'the start retries wait for MM2 to stop')
    assert.match(err.message, /MirrorMaker 2 is running flow A->B: its worker group A-mm2 on cluster B has 1 live worker\(s\) \(A->B@10\.0\.0\.7\) and 2 MirrorSourceConnector task\(s\)/)
    assert.match(err.message, /Stop MM2 first \(SIGTERM/)
    assert.match(err.message, /A->B\.enabled = false/)
    return true
  })
})

test('no MM2, or MM2 for heartbeats only, starts the flow; a refused describe is logged with the grant and starts it', async () => {
  const logger = memoryLogger()
  await refuseWhileMm2Copies(flow(), logger.log, async () => undefined)
  assert.equal(logger.lines.length, 0)
  await refuseWhileMm2Copies(flow(), logger.log, async () => group([worker(heartbeatsOnlyMetadata(), Buffer.alloc(0))]))
  assert.match(logger.at(LogLevels.info)[0]!.msg, /run no MirrorSourceConnector task for this flow: starting/)
  const refused = new KmirrorError(ErrorCodes.NOT_AUTHORIZED, 'DescribeGroups of group A-mm2 on cluster B: GROUP_AUTHORIZATION_FAILED')
  await refuseWhileMm2Copies(flow(), logger.log, async () => { throw refused })
  assert.match(logger.at(LogLevels.info)[1]!.msg, /grant DESCRIBE on group A-mm2 on cluster B/)
  // other failures are the start's to retry or report
  const timeout = new KmirrorError(ErrorCodes.TIMEOUT, 'no answer', { retriable: true })
  await assert.rejects(refuseWhileMm2Copies(flow(), logger.log, async () => { throw timeout }), timeout)
})

test('a fresh target without a group coordinator yet is asked again in place, not failed; one that stays down fails the attempt', async () => {
  const logger = memoryLogger()
  const starting = (name: string) => new KmirrorError(ErrorCodes.GROUP_MEMBERSHIP, `FindCoordinator of group A-mm2 on cluster B: Kafka error ${name}`, { retriable: true, details: { kafkaErrors: [name] } })
  const answers: (KmirrorError | undefined)[] = [starting('COORDINATOR_NOT_AVAILABLE'), starting('COORDINATOR_LOAD_IN_PROGRESS'), undefined]
  let asked = 0
  await refuseWhileMm2Copies(flow(), logger.log, async () => {
    const answer = answers[asked++]
    if (answer !== undefined) throw answer
    return undefined
  })
  assert.equal(asked, 3, 'asked until the coordinator answered')
  assert.equal(logger.lines.length, 0)
  // A live MM2 found once the coordinator is up is still refused.
  let copying = 0
  await assert.rejects(refuseWhileMm2Copies(flow(), logger.log, async () => {
    if (copying++ === 0) throw starting('COORDINATOR_NOT_AVAILABLE')
    return group([worker(MM2_411_METADATA, MM2_411_ASSIGNMENT)])
  }), (err: unknown) => isKmirrorError(err) && err.code === ErrorCodes.MM2_RUNNING)
  // A coordinator still unavailable after the wait fails the start attempt (retried by the start), never "no MM2".
  const down = starting('COORDINATOR_NOT_AVAILABLE')
  let tries = 0
  await assert.rejects(refuseWhileMm2Copies(flow(), logger.log, async () => { tries++; throw down }, 200), down)
  assert.ok(tries >= 2 && tries <= 4, `asked ${tries} times within 200 ms`)
})
