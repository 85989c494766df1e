/**
 * The group and transaction requests of the protocol golden tests (scale-out and exactly-once): a kmirror member
 * finding its coordinator, joining, syncing, heartbeating, leaving, and a transactional producer's life
 * (InitProducerId with a transactional id, AddPartitionsToTxn, EndTxn, and while its transaction is open
 * ListTransactions and DescribeTransactions), as kmirror encodes them.
 *
 * Some fields are the broker's to hand out (member id, generation, producer id and epoch): the capture records
 * them with each exchange (GoldenContext), and the request is built again from that context, so the bytes stay
 * comparable.
 */
import { encodeMemberMetadata, encodeWorkAssignment } from '../../src/formats/work-assignment.ts'
import { PROTOCOL_NAME, PROTOCOL_TYPE } from '../../src/kafka/group-member.ts'
import { AddPartitionsToTxnApi, type AddPartitionsToTxnRequest } from '../../src/kafka/protocol/add-partitions-to-txn.ts'
import { DescribeGroupsApi } from '../../src/kafka/protocol/describe-groups.ts'
import { DescribeTransactionsApi } from '../../src/kafka/protocol/describe-transactions.ts'
import { EndTxnApi, type EndTxnRequest } from '../../src/kafka/protocol/end-txn.ts'
import { CoordinatorKeyTypes, FindCoordinatorApi, type FindCoordinatorRequest } from '../../src/kafka/protocol/find-coordinator.ts'
import { HeartbeatApi } from '../../src/kafka/protocol/heartbeat.ts'
import { InitProducerIdApi, type InitProducerIdRequest } from '../../src/kafka/protocol/init-producer-id.ts'
import { JoinGroupApi, type JoinGroupRequest } from '../../src/kafka/protocol/join-group.ts'
import { LeaveGroupApi } from '../../src/kafka/protocol/leave-group.ts'
import { ListTransactionsApi } from '../../src/kafka/protocol/list-transactions.ts'
import { SyncGroupApi, type SyncGroupRequest } from '../../src/kafka/protocol/sync-group.ts'
import type { GoldenTopic, Scenario } from './protocol-scenarios.ts'

/** What the broker handed out before a request was sent, recorded with its exchange (JSON: ids as strings). */
export interface GoldenContext {
  /** The group, when not the topic's (`<topic>-group`): each JoinGroup version joins a group of its own. */
  readonly group?: string
  readonly memberId?: string
  readonly generationId?: number
  readonly producerId?: string
  readonly producerEpoch?: number
}

export const MEMBER_NAME = 'golden-member'
export const SESSION_TIMEOUT_MS = 30_000
export const REBALANCE_TIMEOUT_MS = 60_000

export function goldenGroup (topic: GoldenTopic): string {
  return `${topic.name}-group`
}

export function goldenTransactionalId (topic: GoldenTopic): string {
  return `${topic.name}-txn`
}

/** The member metadata a kmirror member joins with (its name, transactional id, nothing owned yet). */
export function goldenMemberMetadata (topic: GoldenTopic): Buffer {
  return encodeMemberMetadata({ memberName: MEMBER_NAME, transactionalId: goldenTransactionalId(topic), owned: [] })
}

/** The assignment the leader (the only member) gives itself: the topic's partition 0. */
export function goldenAssignment (topic: GoldenTopic, generation: number): Buffer {
  return encodeWorkAssignment({
    error: 0,
    generation,
    leaderName: MEMBER_NAME,
    assigned: [`${topic.name}:0`],
    revoked: [],
    fence: [],
    members: [{ memberName: MEMBER_NAME, transactionalId: goldenTransactionalId(topic), partitions: 1, jobs: [] }]
  })
}

/** Scenario names in the fixture where one API is captured with more than one request. */
export const FIND_GROUP_COORDINATOR = 'FindCoordinator(group)'
export const FIND_TRANSACTION_COORDINATOR = 'FindCoordinator(transaction)'
export const INIT_TRANSACTIONAL_ID = 'InitProducerId(transactional)'

export function coordinationScenarios (topic: GoldenTopic, context: GoldenContext): Scenario<unknown>[] {
  const groupId = context.group ?? goldenGroup(topic)
  const memberId = context.memberId ?? ''
  const generationId = context.generationId ?? -1
  const transactionalId = goldenTransactionalId(topic)
  const producer = { producerId: BigInt(context.producerId ?? '-1'), producerEpoch: context.producerEpoch ?? -1 }
  const findGroup: FindCoordinatorRequest = { keyType: CoordinatorKeyTypes.GROUP, keys: [groupId] }
  const findTransaction: FindCoordinatorRequest = { keyType: CoordinatorKeyTypes.TRANSACTION, keys: [transactionalId] }
  const join: JoinGroupRequest = {
    groupId,
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
    memberId,
    protocolType: PROTOCOL_TYPE,
    protocols: [{ name: PROTOCOL_NAME, metadata: goldenMemberMetadata(topic) }],
    reason: null
  }
  const sync: SyncGroupRequest = {
    groupId, generationId, memberId, protocolType: PROTOCOL_TYPE, protocolName: PROTOCOL_NAME,
    assignments: [{ memberId, assignment: goldenAssignment(topic, generationId) }]
  }
  const initTransactional: InitProducerIdRequest = { transactionalId, transactionTimeoutMs: 60_000 }
  const addPartitions: AddPartitionsToTxnRequest = { transactionalId, ...producer, topics: [{ name: topic.name, partitions: [0] }] }
  const endTxn: EndTxnRequest = { transactionalId, ...producer, committed: true }
  return [
    { name: FIND_GROUP_COORDINATOR, spec: FindCoordinatorApi, request: findGroup },
    { name: FIND_TRANSACTION_COORDINATOR, spec: FindCoordinatorApi, request: findTransaction },
    { name: JoinGroupApi.name, spec: JoinGroupApi, request: join },
    { name: SyncGroupApi.name, spec: SyncGroupApi, request: sync },
    { name: HeartbeatApi.name, spec: HeartbeatApi, request: { groupId, generationId, memberId } },
    { name: DescribeGroupsApi.name, spec: DescribeGroupsApi, request: { groups: [groupId] } },
    { name: LeaveGroupApi.name, spec: LeaveGroupApi, request: { groupId, memberId } },
    { name: INIT_TRANSACTIONAL_ID, spec: InitProducerIdApi, request: initTransactional },
    { name: AddPartitionsToTxnApi.name, spec: AddPartitionsToTxnApi, request: addPartitions },
    { name: EndTxnApi.name, spec: EndTxnApi, request: endTxn },
    // Asked while the golden transaction is open (Kafka 3.0+)
    { name: ListTransactionsApi.name, spec: ListTransactionsApi, request: { stateFilters: ['Ongoing'] } },
    { name: DescribeTransactionsApi.name, spec: DescribeTransactionsApi, request: { transactionalIds: [transactionalId] } }
  ] as Scenario<unknown>[]
}
