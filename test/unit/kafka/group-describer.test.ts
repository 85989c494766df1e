import assert from 'node:assert/strict'
import { test } from 'node:test'
import { NetworkError, TimeoutError, type Connection } from '@platformatic/kafka'
import { clearSuspects, suspectsLast } from '../../../src/kafka/broker-suspects.ts'
import { ErrorCodes, KmirrorError } from '../../../src/errors.ts'
import { describeAnyGroups, type GroupConnections } from '../../../src/kafka/group-describer.ts'
import { ApiVersionsApi } from '../../../src/kafka/protocol/api-versions.ts'
import { FindCoordinatorApi } from '../../../src/kafka/protocol/find-coordinator.ts'
import { ByteWriter } from '../../../src/kafka/protocol/wire.ts'

const CLUSTER = { label: 'cluster B', alias: 'B' }
const NOT_COORDINATOR = 16
const COORDINATOR_LOAD_IN_PROGRESS = 14
const GROUP_AUTHORIZATION_FAILED = 30

interface Group { readonly id: string, readonly node: number, readonly protocolType: string, readonly members: number, readonly state?: string }

/** ConsumerGroupDescribe's entries for a group (several: one per coordinator shard before Kafka 4.0.1). */
type Kip848Answers = ReadonlyMap<string, readonly { readonly code: number, readonly members: number }[]>

/**
 * Brokers of one cluster answering ApiVersions, FindCoordinator v4 and DescribeGroups v4 from GROUPS. `errors`
 * gives, per group, the error codes its next answers carry (FindCoordinator's when prefixed `find:`), one each;
 * -1 leaves the group out of a DescribeGroups answer.
 */
function fakeCluster (groups: readonly Group[], errors: Map<string, string[]>, kip848?: Kip848Answers) {
  const asked: string[] = []
  const answer = (parse: (c: number, k: number, v: number, r: { buffer: { buffer: Buffer }, position: number }) => unknown, key: number, version: number, body: Buffer, callback: (e: Error | null, r?: unknown) => void): void => {
    try { callback(null, parse(1, key, version, { buffer: { buffer: body }, position: 0 })) } catch (error) { callback(error as Error) }
  }
  const nextError = (key: string): number => Number(errors.get(key)?.shift() ?? 0)
  const connectionTo = (node: number): Connection => ({
    host: `broker-${node}`,
    port: 9092,
    send (key: number, version: number, payload: () => { buffer: Buffer }, parse: never, _h: boolean, _rh: boolean, callback: (e: Error | null, r?: unknown) => void) {
      if (key === ApiVersionsApi.key) {
        const w = new ByteWriter(true)
        const apis = kip848 === undefined ? [[18, 3], [10, 4], [15, 4]] : [[18, 3], [10, 4], [15, 4], [69, 0]]
        w.int16(0).structs(apis, (w, [k, max]) => { w.int16(k!).int16(0).int16(max!) }).int32(0).tags()
        answer(parse, key, version, w.toBuffer(), callback)
        return
      }
      const wanted = requestedGroups(payload().buffer, key)
      if (key === 69) {
        asked.push(`kip848 ${wanted.join(',')} at ${node}`)
        const entries = wanted.flatMap(id => (kip848?.get(id) ?? [{ code: 69, members: 0 }]).map(e => [id, e] as const))
        const w = new ByteWriter(true)
        w.int32(0).structs(entries, (w, [id, e]) => {
          w.int16(e.code).string(null).string(id).string(e.code === 0 ? 'Stable' : '').int32(1).int32(1).string('uniform')
          w.structs(Array.from({ length: e.members }, (_, i) => i), (w, i) => {
            w.string(`k${i}`).string(null).string(null).int32(1).string('client').string('/127.0.0.1').uvarint(1).string(null)
            w.uvarint(1).tags().uvarint(1).tags()
          }).int32(0)
        }).tags()
        answer(parse, key, version, w.toBuffer(), callback)
        return
      }
      if (key === FindCoordinatorApi.key) {
        asked.push(`find ${wanted.join(',')}`)
        const w = new ByteWriter(true)
        w.int32(0).structs(wanted, (w, id) => {
          const g = groups.find(x => x.id === id)!
          w.string(id).int32(g.node).string(`broker-${g.node}`).int32(9092).int16(nextError(`find:${id}`)).string(null)
        }).tags()
        answer(parse, key, version, w.toBuffer(), callback)
        return
      }
      asked.push(`describe ${wanted.join(',')} at ${node}`)
      const w = new ByteWriter(false)
      // Error -1: the group is left out of the answer.
      const listed = wanted.map(id => [id, nextError(id)] as const).filter(([, code]) => code !== -1)
      w.int32(0).structs(listed, (w, [id, code]) => {
        const g = groups.find(x => x.id === id)!
        w.int16(code).string(id).string(g.state ?? 'Stable').string(g.protocolType).string('p')
        w.structs(Array.from({ length: g.members }, (_, i) => i), (w, i) => {
          w.string(`m${i}`).string(null).string('client').string('/127.0.0.1').bytes(Buffer.from('not a consumer subscription')).bytes(Buffer.from('x'))
        }).int32(0)
      })
      answer(parse, key, version, w.toBuffer(), callback)
    }
  } as unknown as Connection)
  const connections: GroupConnections = { any: async () => connectionTo(0), broker: async node => connectionTo(node) }
  return { connections, asked }
}

/** The group ids of a FindCoordinator v4 (flexible) or DescribeGroups v4 request body (the connection adds the header). */
function requestedGroups (body: Buffer, key: number): string[] {
  let at = 0
  const ids: string[] = []
  if (key === FindCoordinatorApi.key || key === 69) {
    if (key === FindCoordinatorApi.key) at += 1 // key type
    const count = body[at++]! - 1
    for (let i = 0; i < count; i++) {
      const length = body[at++]! - 1
      ids.push(body.toString('utf8', at, at + length))
      at += length
    }
    return ids
  }
  const count = body.readInt32BE(at)
  at += 4
  for (let i = 0; i < count; i++) {
    const length = body.readInt16BE(at)
    ids.push(body.toString('utf8', at + 2, at + 2 + length))
    at += 2 + length
  }
  return ids
}

const GROUPS: Group[] = [
  { id: 'billing', node: 1, protocolType: 'consumer', members: 0 },
  { id: 'connect-cluster', node: 2, protocolType: 'connect', members: 2 },
  { id: 'kmirror-A-B', node: 1, protocolType: 'kmirror', members: 1 }
]

test('groups of any protocol are described, with one FindCoordinator and one DescribeGroups per coordinator', async () => {
  const { connections, asked } = fakeCluster(GROUPS, new Map())
  const described = await describeAnyGroups(connections, GROUPS.map(g => g.id), CLUSTER, Date.now() + 5000)
  assert.deepEqual([...described.values()].map(g => [g.groupId, g.protocolType, g.members.length]).sort(),
    [['billing', 'consumer', 0], ['connect-cluster', 'connect', 2], ['kmirror-A-B', 'kmirror', 1]])
  assert.deepEqual(asked.sort(), ['describe billing,kmirror-A-B at 1', 'describe connect-cluster at 2', 'find billing,connect-cluster,kmirror-A-B'])
})

test('a coordinator that moved or is loading is found again and asked again; the others are not asked twice', async () => {
  const errors = new Map([['billing', [String(NOT_COORDINATOR)]], ['find:connect-cluster', [String(COORDINATOR_LOAD_IN_PROGRESS), String(COORDINATOR_LOAD_IN_PROGRESS)]]])
  const { connections, asked } = fakeCluster(GROUPS, errors)
  const described = await describeAnyGroups(connections, GROUPS.map(g => g.id), CLUSTER, Date.now() + 5000)
  assert.equal(described.size, 3)
  assert.deepEqual(asked.filter(a => a.startsWith('describe')).sort(),
    ['describe billing at 1', 'describe billing,kmirror-A-B at 1', 'describe connect-cluster at 2'])
})

test('a coordinator still loading at the deadline fails with TIMEOUT naming the group, the setting and the last Kafka error', async () => {
  const errors = new Map([['billing', Array.from({ length: 50 }, () => String(COORDINATOR_LOAD_IN_PROGRESS))]])
  const { connections } = fakeCluster(GROUPS, errors)
  const err = await describeAnyGroups(connections, ['billing'], CLUSTER, Date.now() + 600).then(() => null, (e: unknown) => e)
  assert.ok(err instanceof KmirrorError)
  assert.equal(err.code, ErrorCodes.TIMEOUT)
  assert.equal(err.retriable, true)
  assert.match(err.message, /^describe group billing on cluster B: still not answered when default.api.timeout.ms ran out; last: describe group billing on cluster B: Kafka error COORDINATOR_LOAD_IN_PROGRESS/)
})

test('a connection that fails is tried again (the broker asked for coordinators, then the coordinator); another failure is thrown at once', async () => {
  const { connections, asked } = fakeCluster(GROUPS, new Map())
  let anyFails = 1
  let brokerFails = 1
  const flaky: GroupConnections = {
    any: async () => { if (anyFails-- > 0) throw new NetworkError('Connection closed'); return await connections.any() },
    broker: async node => { if (brokerFails-- > 0) throw new NetworkError('Connection closed'); return await connections.broker(node) }
  }
  const described = await describeAnyGroups(flaky, ['billing'], CLUSTER, Date.now() + 5000)
  assert.deepEqual([...described.keys()], ['billing'])
  assert.deepEqual(asked, ['find billing', 'find billing', 'describe billing at 1'])
  const broken: GroupConnections = { any: async () => { throw new RangeError('a bug') }, broker: connections.broker }
  const started = Date.now()
  await assert.rejects(describeAnyGroups(broken, ['billing'], CLUSTER, Date.now() + 5000), /a bug/)
  assert.ok(Date.now() - started < 200)
})

test('a refused group fails the call at once with the Kafka error named, for the caller to name the grant', async () => {
  const { connections, asked } = fakeCluster(GROUPS, new Map([['find:billing', [String(GROUP_AUTHORIZATION_FAILED)]]]))
  const err = await describeAnyGroups(connections, ['billing'], CLUSTER, Date.now() + 5000).then(() => null, (e: unknown) => e)
  assert.ok(err instanceof KmirrorError)
  assert.deepEqual(err.details['kafkaErrors'], ['GROUP_AUTHORIZATION_FAILED'])
  assert.match(err.message, /find the coordinator of group billing on cluster B/)
  assert.deepEqual(err.details['groups'], ['billing'])
  assert.deepEqual(asked, ['find billing'])
})

test('a group an answer leaves out is asked again, never taken as absent (which would read as Dead, safe to write)', async () => {
  const { connections, asked } = fakeCluster(GROUPS, new Map([['connect-cluster', ['-1']]]))
  const described = await describeAnyGroups(connections, ['connect-cluster'], CLUSTER, Date.now() + 5000)
  assert.deepEqual([...described.keys()], ['connect-cluster'])
  assert.deepEqual(asked, ['find connect-cluster', 'describe connect-cluster at 2', 'find connect-cluster', 'describe connect-cluster at 2'])
  const never = fakeCluster(GROUPS, new Map([['connect-cluster', Array.from({ length: 50 }, () => '-1')]]))
  const err = await describeAnyGroups(never.connections, ['connect-cluster'], CLUSTER, Date.now() + 600).then(() => null, (e: unknown) => e)
  assert.ok(err instanceof KmirrorError)
  assert.match(err.message, /describe group connect-cluster on cluster B: its coordinator's answer left it out/)
})

test('groups DescribeGroups calls Dead are asked with ConsumerGroupDescribe: a KIP-848 group shows its members, the others stay Dead', async () => {
  // Kafka 4.0.0: one entry per coordinator shard, GROUP_ID_NOT_FOUND from all but the group's own, in any order.
  const groups: Group[] = [
    { id: 'live', node: 1, protocolType: '', members: 0, state: 'Dead' },
    { id: 'none', node: 1, protocolType: '', members: 0, state: 'Dead' },
    { id: 'hidden', node: 1, protocolType: '', members: 0, state: 'Dead' },
    { id: 'classic', node: 1, protocolType: 'consumer', members: 1 }
  ]
  const kip848 = new Map([
    ['live', [{ code: 69, members: 0 }, { code: 0, members: 2 }]],
    ['none', [{ code: 69, members: 0 }, { code: 69, members: 0 }]],
    ['hidden', [{ code: 69, members: 0 }, { code: 29, members: 0 }]]
  ])
  const { connections, asked } = fakeCluster(groups, new Map(), kip848)
  const described = await describeAnyGroups(connections, groups.map(g => g.id), CLUSTER, Date.now() + 5000)
  assert.deepEqual([...described.values()].map(g => [g.groupId, g.state, g.protocolType, g.members.length]).sort(),
    [['classic', 'Stable', 'consumer', 1], ['hidden', 'Unknown', 'consumer', 0], ['live', 'Stable', 'consumer', 2], ['none', 'Dead', '', 0]])
  assert.deepEqual(asked.filter(a => a.startsWith('kip848')), ['kip848 live,none,hidden at 1'])
})

test('a coordinator that lists ConsumerGroupDescribe but runs no KIP-848 group (UNSUPPORTED_VERSION: Kafka 3.8-3.9) leaves Dead groups Dead', async () => {
  const groups: Group[] = [{ id: 'new-group', node: 1, protocolType: '', members: 0, state: 'Dead' }]
  const { connections } = fakeCluster(groups, new Map(), new Map([['new-group', [{ code: 35, members: 0 }]]]))
  const described = await describeAnyGroups(connections, ['new-group'], CLUSTER, Date.now() + 5000)
  assert.deepEqual([...described.values()].map(g => [g.groupId, g.state, g.members.length]), [['new-group', 'Dead', 0]])
})

test('a broker that times out saying where the coordinators are is asked again only when no other broker takes a connection', async t => {
  t.after(clearSuspects)
  // Given a broker at broker-0:9092, first of the list, that accepts connections and never answers in time
  const { connections, asked } = fakeCluster(GROUPS, new Map())
  const wedged = { host: 'broker-0', port: 9092, send (...args: unknown[]) { (args[6] as (e: Error) => void)(new TimeoutError('Request timed out')) } } as unknown as Connection
  const healthy = await connections.broker(9)
  const tried: string[] = []
  const withWedged: GroupConnections = {
    any: async () => {
      const first = suspectsLast([{ host: 'broker-0', port: 9092, connection: wedged }, { host: 'broker-9', port: 9092, connection: healthy }])[0]!
      tried.push(first.host)
      return first.connection
    },
    broker: connections.broker
  }
  // When a group is described, and then again
  assert.deepEqual([...(await describeAnyGroups(withWedged, ['billing'], CLUSTER, Date.now() + 5000)).keys()], ['billing'])
  assert.deepEqual([...(await describeAnyGroups(withWedged, ['billing'], CLUSTER, Date.now() + 5000)).keys()], ['billing'])
  // Then only the first pass asked the wedged broker: the retry and the next describe went to another
  assert.deepEqual(tried, ['broker-0', 'broker-9', 'broker-9'])
  assert.deepEqual(asked, ['find billing', 'describe billing at 1', 'find billing', 'describe billing at 1'])
})
