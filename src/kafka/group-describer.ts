/**
 * Describes any group (a consumer group, a Connect worker group, kmirror's own group, a group of KIP-848 consumers)
 * with kmirror's own FindCoordinator, DescribeGroups and, for groups DescribeGroups calls Dead, ConsumerGroupDescribe:
 * state, protocol type and member count, whatever the members' protocol. Not the library's `describeGroups`: it
 * decodes every member's metadata as a consumer subscription and, on any other protocol, throws inside its response
 * callback, outside the caller's promise, which kills the process (`kmirror failover --group` on a Connect worker
 * group did); and, like DescribeGroups up to v4, it shows a live group of KIP-848 consumers as Dead, safe to write.
 *
 * Invariants:
 * - The groups are asked of their coordinators, one FindCoordinator for all of them (batched from Kafka 3.0) and
 *   one DescribeGroups per coordinator.
 * - A coordinator that is loading or moved (`isCoordinatorRetriable`), or a connection that fails (to the broker
 *   asked for coordinators, or to a coordinator), is asked again, found afresh, every RETRY_BACKOFF_MS until
 *   `deadlineAt`; then TIMEOUT names the groups still pending and the last error. Any other failure is thrown at once.
 * - A broker that failed to say where the coordinators are is noted (broker-suspects.ts) and so asked again only
 *   when no other broker takes a connection: a wedged broker (accepts connections, answers nothing) costs one
 *   request timeout, not every pass, nor every later describe while it stays wedged.
 * - Any other error of a group (GROUP_AUTHORIZATION_FAILED, ...) fails the whole call with the Kafka error named
 *   (`details.kafkaErrors`), for the caller to name the grant.
 * - Every named group is in the result, or the call fails: a group left out of an answer is asked again, never
 *   taken as absent (callers read an absent group as Dead, safe to write).
 */
import type { Connection } from '@platformatic/kafka'
import { setTimeout as delay } from 'node:timers/promises'
import { groupBy } from '../collections.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import type { ClusterContext } from './connection-hints.ts'
import { isCoordinatorRetriable, isNetworkError, kafkaErrorName, kafkaResponseError, toKmirrorError } from './errors.ts'
import { ConsumerGroupDescribeApi, type DescribedConsumerGroup } from './protocol/consumer-group-describe.ts'
import { DescribeGroupsApi, type DescribedGroup } from './protocol/describe-groups.ts'
import { CoordinatorKeyTypes, findCoordinator } from './protocol/find-coordinator.ts'
import { brokerApis, sendRequest } from './protocol/negotiation.ts'
import { addressOf, noteOutcome } from './broker-suspects.ts'

/** How the describer reaches the brokers of one cluster. */
export interface GroupConnections {
  /** A connection to any broker that takes one, brokers that lately failed (broker-suspects.ts) last. */
  readonly any: () => Promise<Connection>
  /** A connection to broker NODE (a coordinator the cluster named). */
  readonly broker: (node: number) => Promise<Connection>
}

const RETRY_BACKOFF_MS = 250

/** One pass's outcome: the groups described, and those to ask again with the error that says why. */
interface Pass {
  readonly described: DescribedGroup[]
  readonly again: string[]
  readonly lastRetriable: KmirrorError | null
}

/** Every named group as its coordinator describes it (a group that does not exist is described as Dead). */
export async function describeAnyGroups (connections: GroupConnections, groupIds: readonly string[], cluster: ClusterContext, deadlineAt: number): Promise<Map<string, DescribedGroup>> {
  const out = new Map<string, DescribedGroup>()
  let pending = [...new Set(groupIds)]
  while (pending.length > 0) {
    const pass = await describeOnce(connections, pending, cluster)
    for (const group of pass.described) out.set(group.groupId, group)
    pending = pass.again
    if (pending.length === 0) break
    if (Date.now() + RETRY_BACKOFF_MS >= deadlineAt) throw outOfTime(pending, pass.lastRetriable!, cluster)
    await delay(RETRY_BACKOFF_MS)
  }
  return out
}

function outOfTime (pending: readonly string[], last: KmirrorError, cluster: ClusterContext): KmirrorError {
  const groups = pending.length === 1 ? `group ${pending[0]}` : `${pending.length} groups (${pending.slice(0, 5).join(', ')}${pending.length > 5 ? ', ...' : ''})`
  return new KmirrorError(ErrorCodes.TIMEOUT, `describe ${groups} on ${cluster.label}: still not answered when default.api.timeout.ms ran out; last: ${last.message}. ` +
    'The group coordinator (the leader of the group\'s __consumer_offsets partition) is moving or loading: retry shortly, or check that broker',
  { retriable: true, cause: last, details: last.details })
}

async function describeOnce (connections: GroupConnections, groupIds: readonly string[], cluster: ClusterContext): Promise<Pass> {
  const described: DescribedGroup[] = []
  const again: string[] = []
  let lastRetriable: KmirrorError | null = null
  const retry = (groups: readonly string[], err: KmirrorError): void => {
    again.push(...groups)
    lastRetriable = err
  }
  let coordinators
  let asked: ReturnType<typeof addressOf>
  try {
    const connection = await connections.any()
    asked = addressOf(connection)
    coordinators = await findCoordinator(connection, CoordinatorKeyTypes.GROUP, groupIds, cluster.label)
    if (asked !== undefined) noteOutcome(asked)
  } catch (err) {
    if (asked !== undefined) noteOutcome(asked, err)
    const failed = toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `find the coordinators of ${groupIds.length} group(s) on ${cluster.label}`, cluster)
    if (!isRetriableConnectionFailure(err, failed)) throw failed
    retry(groupIds, failed)
    return { described, again, lastRetriable }
  }
  for (const found of coordinators) {
    if (found.errorCode === 0) continue
    if (isCoordinatorRetriable(found.errorCode)) retry([found.key], refusal(found.errorCode, 'find the coordinator of', found.key, cluster))
    else throw refusal(found.errorCode, 'find the coordinator of', found.key, cluster)
  }
  const byCoordinator = groupBy(coordinators.filter(c => c.errorCode === 0), c => c.nodeId)
  await Promise.all([...byCoordinator].map(async ([node, found]) => {
    const groups = found.map(c => c.key)
    try {
      const connection = await connections.broker(node)
      const answer = await sendRequest(connection, DescribeGroupsApi, { groups }, cluster.label)
      const dead: DescribedGroup[] = []
      for (const group of answer.groups) {
        if (group.errorCode === 0) (group.state === 'Dead' ? dead : described).push(group)
        else if (isCoordinatorRetriable(group.errorCode)) retry([group.groupId], refusal(group.errorCode, 'describe', group.groupId, cluster))
        else throw refusal(group.errorCode, 'describe', group.groupId, cluster)
      }
      if (dead.length > 0) described.push(...await asConsumerGroups(connection, dead, cluster, retry))
    } catch (err) {
      if (err instanceof KmirrorError && err.details['groups'] !== undefined) throw err
      const failed = toKmirrorError(err, ErrorCodes.CLUSTER_UNREACHABLE, `describe groups at their coordinator (broker ${node}) on ${cluster.label}`, cluster)
      if (!isRetriableConnectionFailure(err, failed)) throw failed
      retry(groups.filter(g => !described.some(d => d.groupId === g)), failed)
    }
  }))
  // A group the answers left out (a key FindCoordinator did not echo, a group DescribeGroups did not list) is asked
  // again: never taken as absent, which callers would read as Dead, a group safe to write.
  const answered = new Set([...described.map(g => g.groupId), ...again])
  const unanswered = groupIds.filter(id => !answered.has(id))
  if (unanswered.length > 0) {
    retry(unanswered, new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `describe group ${unanswered[0]} on ${cluster.label}: its coordinator's answer left it out; ask again later`, { retriable: true }))
  }
  return { described, again: [...new Set(again)], lastRetriable }
}

/**
 * Groups DescribeGroups called Dead, asked again with ConsumerGroupDescribe where the coordinator lists it: a group
 * of KIP-848 consumers is Dead with no members to DescribeGroups (v0-v4), whatever its members. What the answer says:
 * - GROUP_ID_NOT_FOUND (not a KIP-848 group) or UNSUPPORTED_VERSION (Kafka 3.8-3.9, or 4.x with the consumer
 *   protocol turned off, list the API but run no KIP-848 group): Dead stands.
 * - TOPIC_AUTHORIZATION_FAILED (Kafka 4.0+: a member is assigned a topic kmirror may not describe): the group has
 *   members, so it is active (state Unknown, members not known), never Dead.
 * - A group the answer leaves out is asked again (invariant 38). Brokers before Kafka 4.0.1 answer a group once per
 *   __consumer_offsets partition of the coordinator, GROUP_ID_NOT_FOUND from all but its own: an answer without
 *   error wins, then any other error, then GROUP_ID_NOT_FOUND.
 */
async function asConsumerGroups (connection: Connection, dead: readonly DescribedGroup[], cluster: ClusterContext, retry: (groups: readonly string[], err: KmirrorError) => void): Promise<DescribedGroup[]> {
  // An empty group id names no KIP-848 group (and brokers fail to answer it).
  const asked = dead.filter(g => g.groupId !== '')
  if (asked.length === 0 || (await brokerApis(connection)).versionFor(ConsumerGroupDescribeApi) === null) return [...dead]
  const answer = await sendRequest(connection, ConsumerGroupDescribeApi, { groups: asked.map(g => g.groupId) }, cluster.label)
  const out: DescribedGroup[] = dead.filter(g => g.groupId === '')
  for (const group of asked) {
    const found = bestAnswer(answer.groups.filter(g => g.groupId === group.groupId))
    const error = found === undefined ? undefined : kafkaErrorName(found.errorCode)
    if (found === undefined) retry([group.groupId], new KmirrorError(ErrorCodes.CLUSTER_UNREACHABLE, `describe group ${group.groupId} on ${cluster.label}: ConsumerGroupDescribe's answer left it out; ask again later`, { retriable: true }))
    else if (found.errorCode === 0) out.push(kip848Group(found))
    else if (error === 'GROUP_ID_NOT_FOUND' || error === 'UNSUPPORTED_VERSION') out.push(group)
    else if (error === 'TOPIC_AUTHORIZATION_FAILED') out.push({ ...group, state: 'Unknown', protocolType: 'consumer' })
    else if (isCoordinatorRetriable(found.errorCode)) retry([group.groupId], refusal(found.errorCode, 'describe (ConsumerGroupDescribe)', group.groupId, cluster))
    else throw refusal(found.errorCode, 'describe (ConsumerGroupDescribe)', group.groupId, cluster)
  }
  return out
}

function bestAnswer (answers: readonly DescribedConsumerGroup[]): DescribedConsumerGroup | undefined {
  return answers.find(g => g.errorCode === 0) ?? answers.find(g => kafkaErrorName(g.errorCode) !== 'GROUP_ID_NOT_FOUND') ?? answers[0]
}

function kip848Group (found: DescribedConsumerGroup): DescribedGroup {
  const members = found.members.map(m => ({ memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost, metadata: Buffer.alloc(0), assignment: Buffer.alloc(0) }))
  return { errorCode: 0, groupId: found.groupId, state: found.state, protocolType: 'consumer', protocol: found.assignorName, members }
}

/** A connection that failed or closed, or a broker the cluster's metadata does not list yet: worth asking again. */
function isRetriableConnectionFailure (err: unknown, failed: KmirrorError): boolean {
  return isNetworkError(err) || (err instanceof KmirrorError && err.code === ErrorCodes.CLUSTER_UNREACHABLE && err.retriable) || failed.code === ErrorCodes.TIMEOUT
}

/** A group's error answer; `details.groups` names the group, for a refusal's grant to name it alone. */
function refusal (errorCode: number, action: string, group: string, cluster: ClusterContext): KmirrorError {
  const err = kafkaResponseError(errorCode, ErrorCodes.CLUSTER_UNREACHABLE, `${action} group ${group} on ${cluster.label}`, cluster)
  return new KmirrorError(err.code, err.message, { retriable: err.retriable, details: { ...err.details, groups: [group] } })
}
