/**
 * The connections of one group member to its group coordinator: FindCoordinator through any bootstrap broker,
 * then every group request to the coordinator, versioned per broker (negotiation.ts).
 *
 * Invariants:
 * - Two lanes, two connections: `join` (JoinGroup, SyncGroup; its request timeout covers rebalance.timeout.ms, as
 *   the Java client's does) and `beat` (Heartbeat, LeaveGroup). A broker answers a connection's requests one at a
 *   time, so heartbeats on their own connection keep flowing while a JoinGroup waits for the other members.
 * - The coordinator is found once and kept until a request fails on the network or answers that the coordinator
 *   is starting or moved (`isCoordinatorRetriable`, errors.ts: then `reset`); the next request finds it again. Concurrent finds share one request.
 * - Every FindCoordinator is bounded by default.api.timeout.ms; a refusal names the ACL to grant. It goes to the
 *   first bootstrap broker that takes a connection, brokers that lately failed such a request last
 *   (broker-suspects.ts): a wedged broker listed first is not asked again after every timeout.
 * - A coordinator found at another address than the one before (its broker died or handed the group's
 *   __consumer_offsets partition over) is reported to `onMoved`, once per move: the member logs it.
 */
import { ConnectionPool, type Broker } from '@platformatic/kafka'
import { clientInt } from '../config/client-settings.ts'
import type { ClientProps } from '../config/types.ts'
import { rejectAfter } from '../deadline.ts'
import { ErrorCodes, KmirrorError } from '../errors.ts'
import { withGrant } from './acl-grant.ts'
import { withApiDeadline } from './api-deadline.ts'
import { parseBrokerAddress } from './broker-address.ts'
import { toConnectOptions } from './client-options.ts'
import type { ClusterContext } from './connection-hints.ts'
import { kafkaErrorName, kafkaResponseError, toKmirrorError } from './errors.ts'
import type { ApiSpec } from './protocol/api.ts'
import { CoordinatorKeyTypes, FindCoordinatorApi } from './protocol/find-coordinator.ts'
import { RequestTimeout, sendRequest } from './protocol/negotiation.ts'
import { askAnyBroker, noteOutcome } from './broker-suspects.ts'
import { watchedPool } from './silent-brokers.ts'
import { describePrincipal } from './principal.ts'

export type GroupLane = 'join' | 'beat'

/** Called when the coordinator is found at another broker than before: `host:port` of both, the new node id. */
export type CoordinatorMoved = (from: string, to: string, nodeId: number) => void

/** What a group member uses of its coordinator (tests give a member a fake one). */
export type GroupCoordinatorPort = Pick<GroupCoordinator, 'cluster' | 'address' | 'send' | 'reset' | 'refusal' | 'close'>

export class GroupCoordinator {
  readonly groupId: string
  readonly cluster: ClusterContext
  readonly #pools: Record<GroupLane, ConnectionPool>
  readonly #bootstrap: Broker[]
  readonly #apiTimeoutMs: number
  readonly #principal: string
  readonly #onMoved: CoordinatorMoved | undefined
  #coordinator: Promise<Broker> | null = null
  /** `host:port` of the coordinator found last (kept across `reset`, to tell a move from a reconnect). */
  #lastFound: string | null = null

  constructor (props: ClientProps, clientId: string, cluster: ClusterContext, groupId: string, rebalanceTimeoutMs: number, onMoved?: CoordinatorMoved) {
    this.groupId = groupId
    this.#onMoved = onMoved
    this.cluster = cluster
    const connect = toConnectOptions(props, clientId)
    const joinTimeout = Math.max(connect.requestTimeout ?? 30_000, rebalanceTimeoutMs + 5000)
    this.#pools = {
      join: watchedPool(new ConnectionPool(clientId, { ...connect, requestTimeout: joinTimeout }), cluster.label),
      beat: watchedPool(new ConnectionPool(clientId, connect), cluster.label)
    }
    this.#bootstrap = connect.bootstrapBrokers.map(parseBrokerAddress)
    this.#apiTimeoutMs = clientInt(props, 'default.api.timeout.ms')
    this.#principal = describePrincipal(props, cluster.alias ?? clientId)
  }

  /** The coordinator's address, found now or remembered. */
  coordinator (): Promise<Broker> {
    if (this.#coordinator === null) {
      const finding = this.#find()
      this.#coordinator = finding
      finding.catch(() => { if (this.#coordinator === finding) this.#coordinator = null })
    }
    return this.#coordinator
  }

  /** `host:port` of the coordinator found last, kept while it is being found again; null before the first answer. */
  get address (): string | null {
    return this.#lastFound
  }

  /** Forget the coordinator: the next request finds it again. */
  reset (): void {
    this.#coordinator = null
  }

  /**
   * REQUEST to the coordinator on LANE; a network failure, or no answer within TIMEOUT_MS when given (a heartbeat
   * gives up after a session: its answer could no longer keep the membership), forgets the coordinator, notes its
   * broker as a suspect (broker-suspects.ts) and throws (retriable). ON_SENT hears the time the request leaves, once
   * the coordinator is found and connected (a member's lease counts from it).
   */
  async send<Req, Res> (spec: ApiSpec<Req, Res>, request: Req, lane: GroupLane, onSent?: (at: number) => void, timeoutMs?: number): Promise<Res> {
    const broker = await this.coordinator()
    try {
      const connection = await this.#pools[lane].get(broker)
      onSent?.(Date.now())
      const answer = await within(sendRequest(connection, spec, request, this.cluster.label), timeoutMs, `${spec.name} to the coordinator`)
      noteOutcome(broker)
      return answer
    } catch (err) {
      this.reset()
      // A request given up on (a timeout) makes the broker silent: its connections, this one included, are closed
      // (silent-brokers.ts), so the next request gets a fresh one instead of queueing behind the hung one.
      noteOutcome(broker, err)
      throw toKmirrorError(err, ErrorCodes.GROUP_MEMBERSHIP, `${spec.name} of group ${this.groupId} to coordinator ${broker.host}:${broker.port} of ${this.cluster.label}`, this.cluster)
    }
  }

  /**
   * A refused group request as an error naming the grant (READ on the group) or the Kafka error and its fix;
   * INCONSISTENT_GROUP_PROTOCOL is GROUP_CONFLICT: another program's group has the flow's group id.
   */
  refusal (errorCode: number, action: string): KmirrorError {
    if (kafkaErrorName(errorCode) === 'INCONSISTENT_GROUP_PROTOCOL') {
      return new KmirrorError(ErrorCodes.GROUP_CONFLICT, `group ${this.groupId} on ${this.cluster.label} belongs to another program (INCONSISTENT_GROUP_PROTOCOL: its members speak another protocol than kmirror's 'kmirror', e.g. a Connect or MirrorMaker 2 worker group or a consumer group): set the flow's group id (\`A->B.group.id\`) to one no other program uses`, { retriable: false, details: { group: this.groupId } })
    }
    const err = kafkaResponseError(errorCode, ErrorCodes.GROUP_MEMBERSHIP, `${action} of group ${this.groupId} on ${this.cluster.label}`, this.cluster)
    if (kafkaErrorName(errorCode) !== 'GROUP_AUTHORIZATION_FAILED') return err
    return withGrant(err, `${action} of group ${this.groupId} on ${this.cluster.label}`, { operation: 'READ', resourceType: 'group', names: [this.groupId] }, this.#principal, this.cluster)
  }

  async #find (): Promise<Broker> {
    const action = `finding the coordinator of group ${this.groupId} on ${this.cluster.label}`
    return await withApiDeadline(async () => {
      let answer
      try {
        answer = await askAnyBroker(this.#pools.beat, this.#bootstrap, async connection => await sendRequest(connection, FindCoordinatorApi, { keyType: CoordinatorKeyTypes.GROUP, keys: [this.groupId] }, this.cluster.label))
      } catch (err) {
        throw toKmirrorError(err, ErrorCodes.GROUP_MEMBERSHIP, action, this.cluster)
      }
      const found = answer.coordinators[0]
      if (found === undefined) throw new KmirrorError(ErrorCodes.GROUP_MEMBERSHIP, `${action}: the broker answered no coordinator`, { retriable: true })
      if (found.errorCode !== 0) throw this.refusal(found.errorCode, 'FindCoordinator')
      const address = `${found.host}:${found.port}`
      if (this.#lastFound !== null && this.#lastFound !== address) this.#onMoved?.(this.#lastFound, address, found.nodeId)
      this.#lastFound = address
      return { host: found.host, port: found.port }
    }, this.#apiTimeoutMs, action, this.cluster)
  }

  async close (): Promise<void> {
    await Promise.allSettled([this.#pools.join.close(), this.#pools.beat.close()])
  }
}

/** A request given up on after the caller's own bound (a heartbeat after session.timeout.ms). */
class GivenUp extends RequestTimeout {}

/** PROMISE, or GivenUp once TIMEOUT_MS passed (never when not given). */
async function within<T> (promise: Promise<T>, timeoutMs: number | undefined, what: string): Promise<T> {
  if (timeoutMs === undefined) return await promise
  return await rejectAfter(promise, timeoutMs, () => new GivenUp(`${what} given up: no answer within session.timeout.ms = ${timeoutMs} ms, after which its answer could not keep the membership`))
}
