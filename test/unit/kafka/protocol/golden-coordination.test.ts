/**
 * What real brokers answered kmirror's group and transaction requests (test/fixtures/protocol/kafka-<release>.json,
 * captured by scripts/capture-coordination.ts), beyond golden.test.ts's byte-for-byte check: a member joins (in two
 * steps from JoinGroup v4), leads, gets the assignment it sent, heartbeats, is described and leaves; a
 * transactional producer is fenced by each new InitProducerId, adds a partition and commits.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { decodeWorkAssignment } from '../../../../src/formats/work-assignment.ts'
import { PROTOCOL_NAME, PROTOCOL_TYPE } from '../../../../src/kafka/group-member.ts'
import { decodeResponse } from '../../../../src/kafka/protocol/api.ts'
import type { AddPartitionsToTxnResponse } from '../../../../src/kafka/protocol/add-partitions-to-txn.ts'
import type { DescribeGroupsResponse } from '../../../../src/kafka/protocol/describe-groups.ts'
import type { DescribeTransactionsResponse } from '../../../../src/kafka/protocol/describe-transactions.ts'
import type { FindCoordinatorResponse } from '../../../../src/kafka/protocol/find-coordinator.ts'
import type { InitProducerIdResponse } from '../../../../src/kafka/protocol/init-producer-id.ts'
import type { JoinGroupResponse } from '../../../../src/kafka/protocol/join-group.ts'
import type { LeaveGroupResponse } from '../../../../src/kafka/protocol/leave-group.ts'
import type { ListTransactionsResponse } from '../../../../src/kafka/protocol/list-transactions.ts'
import type { SyncGroupResponse } from '../../../../src/kafka/protocol/sync-group.ts'
import { REPO_ROOT } from '../../../helpers/clusters.ts'
import {
  goldenAssignment, goldenGroup, goldenMemberMetadata, goldenTransactionalId
} from '../../../helpers/protocol-coordination-scenarios.ts'
import { scenarioFor, type GoldenContext, type GoldenTopic } from '../../../helpers/protocol-scenarios.ts'

interface Fixture {
  broker: string
  topic: GoldenTopic
  exchanges: { api: string, version: number, context?: GoldenContext, responseHex: string }[]
}

interface Answer<T> { version: number, context: GoldenContext, response: T }

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'protocol')
const fixtures: Fixture[] = readdirSync(DIR).filter(f => f.endsWith('.json')).sort().map(f => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Fixture)
const MEMBER_ID_REQUIRED = 79

for (const fixture of fixtures) {
  const { topic } = fixture
  const answers = <T>(api: string): Answer<T>[] => fixture.exchanges.filter(e => e.api === api).map(e => ({
    version: e.version,
    context: e.context ?? {},
    response: decodeResponse(scenarioFor(topic, api)!.spec, e.version, Buffer.from(e.responseHex, 'hex')) as T
  }))
  const versionsOf = (list: Answer<unknown>[]): number[] => [...new Set(list.map(a => a.version))]

  describe(`Kafka ${fixture.broker}: groups and transactions`, () => {
    test('every FindCoordinator version names the same coordinator, for a group and for a transactional id', () => {
      for (const [api, key] of [['FindCoordinator(group)', goldenGroup(topic)], ['FindCoordinator(transaction)', goldenTransactionalId(topic)]] as const) {
        const found = answers<FindCoordinatorResponse>(api)
        assert.ok(found.length > 0, api)
        const first = found[0]!.response.coordinators[0]!
        for (const { version, response } of found) {
          assert.equal(response.coordinators.length, 1, `${api} v${version}`)
          const c = response.coordinators[0]!
          assert.deepEqual([c.errorCode, c.nodeId, c.host, c.port], [0, first.nodeId, first.host, first.port], `${api} v${version}`)
          // From v4 the answer echoes the key it is for (one per key asked).
          assert.equal(c.key, version >= 4 ? key : '', `${api} v${version}`)
        }
      }
    })

    test('JoinGroup: a first join is answered with a member id to join again with from v4, then the member leads generation 1', () => {
      const joins = answers<JoinGroupResponse>('JoinGroup')
      assert.ok(joins.length > 0)
      for (const version of versionsOf(joins)) {
        const steps = joins.filter(j => j.version === version)
        assert.equal(steps.length, version >= 4 ? 2 : 1, `v${version}`)
        if (version >= 4) {
          const [asked, joined] = steps as [Answer<JoinGroupResponse>, Answer<JoinGroupResponse>]
          assert.equal(asked.context.memberId, '')
          assert.equal(asked.response.errorCode, MEMBER_ID_REQUIRED, `v${version}`)
          assert.match(asked.response.memberId, /^kmirror-capture-/)
          assert.equal(joined.context.memberId, asked.response.memberId, `v${version}: joins again with the id it was given`)
        }
        const r = steps.at(-1)!.response
        assert.deepEqual([r.errorCode, r.generationId, r.protocolName, r.leader], [0, 1, PROTOCOL_NAME, r.memberId], `v${version}`)
        assert.equal(r.protocolType, version >= 7 ? PROTOCOL_TYPE : null, `v${version}`)
        assert.deepEqual(r.members.map(m => [m.memberId, m.metadata.toString('hex')]), [[r.memberId, goldenMemberMetadata(topic).toString('hex')]], `v${version}`)
      }
    })

    test('SyncGroup: the leader gets back the assignment it sent, at every version', () => {
      const syncs = answers<SyncGroupResponse>('SyncGroup')
      assert.ok(syncs.length > 0)
      for (const { version, context, response } of syncs) {
        assert.equal(response.errorCode, 0, `v${version}`)
        assert.equal(response.assignment.toString('hex'), goldenAssignment(topic, context.generationId!).toString('hex'), `v${version}`)
        assert.deepEqual(decodeWorkAssignment(response.assignment).assigned, [`${topic.name}:0`])
        assert.deepEqual([response.protocolType, response.protocolName], version >= 5 ? [PROTOCOL_TYPE, PROTOCOL_NAME] : [null, null], `v${version}`)
      }
    })

    test('Heartbeat: the member of the current generation is alive at every version', () => {
      const beats = answers<{ errorCode: number }>('Heartbeat')
      assert.ok(beats.length > 0)
      for (const { version, response } of beats) assert.equal(response.errorCode, 0, `v${version}`)
    })

    test('DescribeGroups: a stable kmirror group with the member, its metadata and its assignment', () => {
      const member = answers<SyncGroupResponse>('SyncGroup')[0]!.context
      const described = answers<DescribeGroupsResponse>('DescribeGroups')
      assert.ok(described.length > 0)
      for (const { version, response } of described) {
        const [group] = response.groups
        assert.deepEqual([group!.errorCode, group!.groupId, group!.state, group!.protocolType, group!.protocol],
          [0, goldenGroup(topic), 'Stable', PROTOCOL_TYPE, PROTOCOL_NAME], `v${version}`)
        assert.deepEqual(group!.members.map(m => [m.memberId, m.clientId, m.metadata.toString('hex'), m.assignment.toString('hex')]),
          [[member.memberId, 'kmirror-capture', goldenMemberMetadata(topic).toString('hex'), goldenAssignment(topic, member.generationId!).toString('hex')]], `v${version}`)
      }
    })

    test('LeaveGroup: the member leaves at once; from v3 the answer names it', () => {
      const leaves = answers<LeaveGroupResponse>('LeaveGroup')
      assert.ok(leaves.length > 0)
      for (const { version, context, response } of leaves) {
        assert.equal(response.errorCode, 0, `v${version}`)
        assert.deepEqual(response.members, version >= 3 ? [{ memberId: context.memberId, errorCode: 0 }] : [], `v${version}`)
      }
    })

    test('InitProducerId with a transactional id: one producer id, its epoch bumped by each call (fencing the one before)', () => {
      const inits = answers<InitProducerIdResponse>('InitProducerId(transactional)')
      assert.ok(inits.length > 0)
      const id = inits[0]!.response.producerId
      assert.ok(id >= 0n)
      inits.forEach(({ version, response }, i) => {
        assert.deepEqual([response.errorCode, response.producerId, response.producerEpoch], [0, id, inits[0]!.response.producerEpoch + i], `v${version}`)
      })
      const last = inits.at(-1)!.response
      for (const api of ['AddPartitionsToTxn', 'EndTxn']) {
        for (const { context } of answers(api)) assert.deepEqual([context.producerId, context.producerEpoch], [last.producerId.toString(), last.producerEpoch], api)
      }
    })

    test('AddPartitionsToTxn adds the partition and EndTxn commits, at every version', () => {
      const added = answers<AddPartitionsToTxnResponse>('AddPartitionsToTxn')
      assert.ok(added.length > 0)
      for (const { version, response } of added) {
        assert.deepEqual(response.results, [{ name: topic.name, partitions: [{ index: 0, errorCode: 0 }] }], `v${version}`)
      }
      const ended = answers<{ errorCode: number }>('EndTxn')
      assert.ok(ended.length > 0)
      for (const { version, response } of ended) assert.equal(response.errorCode, 0, `v${version}`)
    })

    test('ListTransactions and DescribeTransactions (Kafka 3.0+): the open transaction listed Ongoing, described with its producer and partition', (t) => {
      const listed = answers<ListTransactionsResponse>('ListTransactions')
      const described = answers<DescribeTransactionsResponse>('DescribeTransactions')
      if (listed.length + described.length === 0) {
        t.diagnostic(`Kafka ${fixture.broker} offers neither (before 3.0)`)
        return
      }
      assert.ok(listed.length > 0 && described.length > 0)
      const producer = answers<InitProducerIdResponse>('InitProducerId(transactional)').at(-1)!.response
      for (const { version, response } of listed) {
        assert.equal(response.errorCode, 0, `v${version}`)
        assert.deepEqual(response.transactions.filter(x => x.transactionalId === goldenTransactionalId(topic)),
          [{ transactionalId: goldenTransactionalId(topic), producerId: producer.producerId, state: 'Ongoing' }], `v${version}`)
      }
      for (const { version, response } of described) {
        const [d] = response.transactions
        assert.deepEqual([response.transactions.length, d!.errorCode, d!.transactionalId, d!.state, d!.producerId, d!.producerEpoch, d!.timeoutMs],
          [1, 0, goldenTransactionalId(topic), 'Ongoing', producer.producerId, producer.producerEpoch, 60_000], `v${version}`)
        assert.deepEqual(d!.topics, [{ name: topic.name, partitions: [0] }], `v${version}`)
        assert.ok(d!.startTimeMs > 1_600_000_000_000n, `v${version}: a start time in ms since the epoch`)
      }
    })
  })
}
