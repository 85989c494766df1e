/**
 * Maps errors of the Kafka library to KmirrorError, keeping the original as `cause`.
 * This is the only place that knows the library's error shapes.
 */
import { NetworkError, protocolErrorsCodesById, TimeoutError, UnsupportedApiError, UserError } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError, type ErrorCode } from '../errors.ts'
import { connectionHint, isBareClose, type ConnectionContext } from './connection-hints.ts'
import { toolConnection } from './tool-command.ts'
import { searchErrorTree } from './error-tree.ts'

/** Kafka protocol error names found anywhere in the error tree (e.g. TOPIC_ALREADY_EXISTS). */
export function kafkaErrorNames (err: unknown): string[] {
  const names = new Set<string>()
  searchErrorTree(err, e => {
    const apiId = (e as { apiId?: unknown }).apiId
    if (typeof apiId === 'string') names.add(apiId)
    return undefined
  })
  return [...names]
}

/**
 * The per-topic error codes of an answer the library rejected as a whole (a CreateTopics whose topics were answered
 * one by one: `response.topics[].errorCode`), by topic name; undefined when no such answer is in the error tree
 * (no answer at all, a timeout, a connection lost).
 */
export function perTopicErrorCodes (err: unknown): ReadonlyMap<string, number> | undefined {
  return searchErrorTree(err, e => {
    const topics = (e as { response?: { topics?: unknown } }).response?.topics
    if (!Array.isArray(topics)) return undefined
    const codes = new Map<string, number>()
    for (const t of topics as unknown[]) {
      const { name, errorCode } = (t ?? {}) as { name?: unknown, errorCode?: unknown }
      if (typeof name === 'string' && typeof errorCode === 'number') codes.set(name, errorCode)
    }
    return codes.size > 0 ? codes : undefined
  })
}

/** The throttle time (KIP-219) of an answer the library rejected as a whole, 0 when none is in the error tree. */
export function answerThrottleMs (err: unknown): number {
  return searchErrorTree(err, e => {
    const value = (e as { response?: { throttleTimeMs?: unknown } }).response?.throttleTimeMs
    return typeof value === 'number' ? value : undefined
  }) ?? 0
}

/** The protocol name of a Kafka error code (e.g. 6 -> NOT_LEADER_OR_FOLLOWER). */
export function kafkaErrorName (code: number): string {
  return protocolErrorsCodesById[code] ?? `KAFKA_ERROR_${code}`
}

/** Whether a partition-level error of a produce or fetch response is worth retrying. */
export function isRetriableKafkaError (code: number): boolean {
  return kafkaErrorInfo(kafkaErrorName(code)).retriable
}

/**
 * The hint for a Kafka error name, if users meet it often enough to have one. The cluster's alias prefixes the keys
 * it names (`<alias>.`), its brokers and protocol complete the Kafka tool line it names (`kafka-topics.sh <connection>`).
 */
export function kafkaErrorHint (name: string, cluster: ConnectionContext = {}): string | undefined {
  return kafkaErrorInfo(name).hint
    ?.replaceAll('<alias>.', cluster.alias === undefined ? '' : `${cluster.alias}.`)
    .replaceAll('kafka-topics.sh <connection>', `kafka-topics.sh ${toolConnection('kafka-topics.sh', cluster)}`)
}

function describe (err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return `${err.message} (${err.errors.map(e => (e instanceof Error ? e.message : String(e))).join('; ')})`
  }
  return err instanceof Error ? err.message : String(err)
}

/** Whether the library refused a request because the broker does not offer API `api` (e.g. 'IncrementalAlterConfigs'). */
export function isUnsupportedApi (err: unknown, api: string): boolean {
  return searchErrorTree(err, e => (e instanceof UnsupportedApiError && e.message.includes(api) ? true : undefined)) === true
}

/**
 * Whether the library's metadata call found a topic the broker does not know (its `Unknown topic NAME.`, thrown for
 * UNKNOWN_TOPIC_OR_PARTITION without the code): a topic created a moment ago, not in that broker's cache yet.
 */
export function isUnknownTopicMetadata (err: unknown): boolean {
  return searchErrorTree(err, e => (e instanceof UserError && e.message.startsWith('Unknown topic ') ? true : undefined)) === true
}

export function isNetworkError (err: unknown): boolean {
  return err instanceof Error && NetworkError.isRetryable(err)
}

/** Whether the error tree holds the library's timeout (a request or a connection attempt not answered in time). */
export function isTimeoutError (err: unknown): boolean {
  return searchErrorTree(err, e => (e instanceof TimeoutError ? true : undefined)) === true
}

/**
 * What to tell the operator about a broker that did not answer in time: the brokers tried (when the action does
 * not name one) and the keys that set the deadlines. `alias` prefixes the keys.
 */
export function timeoutHint (context: ConnectionContext = {}): string {
  const key = (name: string): string => `${context.alias === undefined ? '' : `${context.alias}.`}${name}`
  const brokers = context.brokers === undefined ? '' : ` (brokers tried: ${context.brokers})`
  return `no answer in time${brokers}: a broker that accepts connections but does not answer is wedged, frozen, overloaded, ` +
    `or not a Kafka listener (wrong port, or ${key('security.protocol')} not matching it); check ${key('bootstrap.servers')} and the brokers. ` +
    `Deadlines: ${key('<role>.request.timeout.ms')} and ${key('<role>.socket.connection.setup.timeout.ms')} (role: consumer, producer, admin)`
}

/**
 * `err` of the library as a KmirrorError whose message starts with `action` (which names the cluster) and ends
 * with what to check. `context` (alias, security.protocol) makes the hint name the keys to fix exactly.
 */
export function toKmirrorError (err: unknown, code: ErrorCode, action: string, context: ConnectionContext = {}): KmirrorError {
  if (err instanceof KmirrorError) return err
  // kmirror's own errors raised inside the library (authentication, token endpoint) already say what to fix.
  const own = searchErrorTree(err, e => (e instanceof KmirrorError ? e : undefined))
  if (own !== undefined) return new KmirrorError(own.code, `${action}: ${own.message}`, { cause: err, retriable: own.retriable, details: own.details })
  const names = kafkaErrorNames(err)
  const timedOut = isTimeoutError(err)
  const network = timedOut || isNetworkError(err) || names.some(n => n.startsWith('NOT_') || n.endsWith('_NOT_AVAILABLE') || n === 'REQUEST_TIMED_OUT')
  const hint = names.map(n => kafkaErrorHint(n, context)).find(h => h !== undefined) ??
    (timedOut ? timeoutHint(context) : network || isConnectionRefusal(err) ? connectionHint(err, context) : undefined)
  const suffix = (names.length > 0 ? ` [${names.join(', ')}]` : '') + (hint === undefined ? '' : `; ${hint}`)
  const kind = names.map(n => kafkaErrorInfo(n).kind).find(k => k === K.AUTHORIZATION || k === K.AUTHENTICATION)
  const finalCode = kind !== undefined ? errorCodeOfKind(kind, code) : timedOut ? ErrorCodes.TIMEOUT : network ? ErrorCodes.CLUSTER_UNREACHABLE : code
  // A TLS listener that closes the connection without a word: a broker going down, or one that wants a client
  // certificate (ssl.client.auth=required under TLS 1.3 looks exactly like this). Start-up waits only a little.
  const closedOnTls = network && !timedOut && /SSL/i.test(context.protocol ?? '') && names.length === 0 && isBareClose(err)
  return new KmirrorError(finalCode, `${action}: ${describe(err)}${suffix}`, {
    cause: err,
    retriable: network || names.length === 0 || names.some(n => kafkaErrorInfo(n).retriable),
    details: closedOnTls ? { kafkaErrors: names, closedOnTls } : { kafkaErrors: names }
  })
}

/** The library refusing to talk to a listener of the other kind (TLS versus plaintext): not a network error. */
function isConnectionRefusal (err: unknown): boolean {
  return searchErrorTree(err, e => ((e as { code?: unknown }).code === 'PLT_KFK_USER' && /TLS/.test((e as Error).message ?? '') ? true : undefined)) === true
}

/**
 * A Kafka error code returned in a response (not thrown by the library) as a KmirrorError, named and hinted
 * (`context.alias` prefixes the keys the hint names).
 */
export function kafkaResponseError (errorCode: number, code: ErrorCode, action: string, context: ConnectionContext = {}): KmirrorError {
  const name = kafkaErrorName(errorCode)
  const hint = kafkaErrorHint(name, context)
  const info = kafkaErrorInfo(name)
  return new KmirrorError(errorCodeOfKind(info.kind, code), `${action}: Kafka error ${name}${hint === undefined ? '' : `; ${hint}`}`, {
    retriable: info.retriable,
    details: { kafkaErrors: [name] }
  })
}

/**
 * What kind of failure a Kafka error is. The data path sets a partition aside by kind (authorization, unknown
 * topic, too large, corrupt), the start-up and the commands choose their error code and exit code by it.
 */
export const KafkaErrorKinds = {
  AUTHENTICATION: 'authentication',
  AUTHORIZATION: 'authorization',
  /** Leadership moving, a broker busy or restarting, a timeout: the same request later may succeed. */
  TRANSIENT: 'transient',
  UNKNOWN_TOPIC: 'unknown-topic',
  /** The record batch is larger than the topic or broker accepts. */
  TOO_LARGE: 'too-large',
  /** The record batch is unacceptable as it is (invalid, bad CRC, unsupported codec or timestamp). */
  CORRUPT: 'corrupt',
  OUT_OF_RANGE: 'out-of-range',
  /** A setting of kmirror or of the cluster is wrong (policy, replication factor, SASL mechanism). */
  CONFIG: 'config',
  /** Anything else: a broker answer kmirror does not expect. */
  FATAL: 'fatal'
} as const
export type KafkaErrorKind = (typeof KafkaErrorKinds)[keyof typeof KafkaErrorKinds]

export interface KafkaErrorInfo {
  readonly kind: KafkaErrorKind
  /** Whether the same request may succeed later without anyone acting. */
  readonly retriable: boolean
  /**
   * Leadership is moving or the partition is not loaded on its leader yet: a produce with this error appended
   * neither the batch nor any later one of that partition (batch-writer.ts rewinds the sequence).
   */
  readonly notNow?: true
  /** What to check, appended to the message; `<alias>.` is replaced by the cluster's alias. */
  readonly hint?: string
  /** What the answer of a group or transaction coordinator says about the coordinator itself (CoordinatorErrors). */
  readonly coordinator?: CoordinatorError
  /** What a group coordinator's answer says about this member's membership (MembershipErrors). */
  readonly membership?: MembershipError
  /**
   * A produce answer about the producer's transaction rather than the partition (authorization of the
   * transactional id, its state): the round's transaction cannot commit (writer-transaction.ts).
   */
  readonly transaction?: true
}

/** Answers of a group coordinator about the member's membership (group-member.ts acts on each). */
export const MembershipErrors = {
  /** The group is rebalancing: the member is still one of its generation, and joins the new one. */
  REBALANCING: 'rebalancing',
  /** The member is no longer one (evicted, an old generation, its static instance id taken): it joins as a new member. */
  GONE: 'gone',
  /** A first join on a broker that wants the member id it assigns sent back first (KIP-394). */
  ID_REQUIRED: 'id-required'
} as const
export type MembershipError = (typeof MembershipErrors)[keyof typeof MembershipErrors]

/**
 * Answers of a coordinator (group or transaction) about itself rather than the request: the same request succeeds
 * later without anyone acting.
 */
export const CoordinatorErrors = {
  /** The broker is not (or no longer) the coordinator, or none is elected yet: find the coordinator again. */
  MOVED: 'moved',
  /** The coordinator is loading its partition of __consumer_offsets or __transaction_state: ask it again shortly. */
  LOADING: 'loading',
  /** The transaction coordinator is still completing an earlier transaction (or its epoch changed): ask it again shortly. */
  BUSY: 'busy'
} as const
export type CoordinatorError = (typeof CoordinatorErrors)[keyof typeof CoordinatorErrors]

const K = KafkaErrorKinds
const MOVING = { kind: K.TRANSIENT, retriable: true, notNow: true } as const
const TRANSIENT = { kind: K.TRANSIENT, retriable: true } as const
const COORDINATOR_MOVED = { ...TRANSIENT, coordinator: CoordinatorErrors.MOVED } as const
const COORDINATOR_BUSY = { ...TRANSIENT, coordinator: CoordinatorErrors.BUSY } as const
const MEMBER_GONE = { ...TRANSIENT, membership: MembershipErrors.GONE } as const
const TOO_LARGE_HINT = 'raise max.message.bytes of the topic written to (or message.max.bytes of that cluster\'s brokers)'

/** The one table of the Kafka errors kmirror meets: kind, retriability, hint. Names not here are FATAL, not retriable. */
const KAFKA_ERRORS: Readonly<Record<string, KafkaErrorInfo>> = {
  NOT_LEADER_OR_FOLLOWER: MOVING,
  LEADER_NOT_AVAILABLE: { ...MOVING, hint: 'if it lasts, the partition has no leader (its broker down, no replica in sync): bring that broker back, or elect a leader among its live replicas (to list such partitions: kafka-topics.sh <connection> --describe --unavailable-partitions)' },
  FENCED_LEADER_EPOCH: MOVING,
  UNKNOWN_LEADER_EPOCH: MOVING,
  UNKNOWN_TOPIC_OR_PARTITION: { kind: K.UNKNOWN_TOPIC, retriable: true, notNow: true },
  UNKNOWN_TOPIC_ID: { kind: K.UNKNOWN_TOPIC, retriable: true },
  REPLICA_NOT_AVAILABLE: TRANSIENT,
  REQUEST_TIMED_OUT: TRANSIENT,
  NETWORK_EXCEPTION: TRANSIENT,
  COORDINATOR_NOT_AVAILABLE: COORDINATOR_MOVED,
  COORDINATOR_LOAD_IN_PROGRESS: { ...TRANSIENT, coordinator: CoordinatorErrors.LOADING },
  NOT_COORDINATOR: COORDINATOR_MOVED,
  NOT_ENOUGH_REPLICAS: TRANSIENT,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: TRANSIENT,
  KAFKA_STORAGE_ERROR: TRANSIENT,
  OFFSET_NOT_AVAILABLE: TRANSIENT,
  OUT_OF_ORDER_SEQUENCE_NUMBER: TRANSIENT,
  THROTTLING_QUOTA_EXCEEDED: TRANSIENT,
  CONCURRENT_TRANSACTIONS: COORDINATOR_BUSY,
  // A stable read of a group's commits (group-admin.ts) while a transaction of the application using it is open.
  UNSTABLE_OFFSET_COMMIT: { ...TRANSIENT, hint: 'a transaction holds commits of the group not yet committed or aborted: a transactional application uses the group now; stop it (or let its transaction end) and run again' },
  // Group membership (group-member.ts handles each before this table; these say what the rest of kmirror may do).
  REBALANCE_IN_PROGRESS: { ...TRANSIENT, membership: MembershipErrors.REBALANCING },
  MEMBER_ID_REQUIRED: { ...TRANSIENT, membership: MembershipErrors.ID_REQUIRED },
  UNKNOWN_MEMBER_ID: MEMBER_GONE,
  ILLEGAL_GENERATION: MEMBER_GONE,
  FENCED_INSTANCE_ID: MEMBER_GONE,
  INCONSISTENT_GROUP_PROTOCOL: { kind: K.CONFIG, retriable: false, hint: 'another program (a Connect or MirrorMaker 2 worker group, a consumer group) uses this group id on the cluster: set the flow\'s group.id (`A->B.group.id`) to a group of kmirror\'s own' },
  INVALID_SESSION_TIMEOUT: { kind: K.CONFIG, retriable: false, hint: 'the brokers accept session.timeout.ms only between their group.min.session.timeout.ms and group.max.session.timeout.ms (Kafka defaults: 6000 and 1800000): set the flow\'s session.timeout.ms inside them' },
  GROUP_MAX_SIZE_REACHED: { kind: K.CONFIG, retriable: false, hint: 'the group has as many members as the brokers\' group.max.size allows: run fewer kmirror instances or raise group.max.size' },
  /** kmirror's own name (batch-writer.ts): a batch was appended after a refused one; the write starts afresh. */
  APPENDED_AFTER_REFUSED_BATCH: TRANSIENT,
  /** kmirror's own name (remote-topic-ids.ts): the remote topic has a new topic id; the partition is copied again from the log start. */
  REMOTE_TOPIC_RECREATED: TRANSIENT,
  /** kmirror's own name (source-waits.ts): a read_committed read held at the last stable offset by a transaction open on the source. */
  SOURCE_TRANSACTION_OPEN: TRANSIENT,
  OFFSET_OUT_OF_RANGE: { kind: K.OUT_OF_RANGE, retriable: false },
  SASL_AUTHENTICATION_FAILED: { kind: K.AUTHENTICATION, retriable: false, hint: 'check <alias>.sasl.mechanism and the username and password in <alias>.sasl.jaas.config' },
  ILLEGAL_SASL_STATE: { kind: K.CONFIG, retriable: false, hint: 'check <alias>.security.protocol and <alias>.sasl.mechanism match the listener' },
  UNSUPPORTED_SASL_MECHANISM: { kind: K.CONFIG, retriable: false, hint: 'set <alias>.sasl.mechanism to one the listener enables' },
  TOPIC_AUTHORIZATION_FAILED: { kind: K.AUTHORIZATION, retriable: false, hint: 'grant the principal kmirror uses the topic ACLs listed in docs/operations.md' },
  CLUSTER_AUTHORIZATION_FAILED: { kind: K.AUTHORIZATION, retriable: false, hint: 'grant the principal kmirror uses the cluster ACLs listed in docs/operations.md' },
  GROUP_AUTHORIZATION_FAILED: { kind: K.AUTHORIZATION, retriable: false, hint: 'grant the principal kmirror uses Read on the consumer group' },
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: { kind: K.AUTHORIZATION, retriable: false, transaction: true, hint: 'grant the principal kmirror uses WRITE on its transactional ids, prefixed with the flow\'s group id and a dash (docs/operations.md "Least-privilege ACLs", rows "exactly-once")' },
  INVALID_TRANSACTION_TIMEOUT: { kind: K.CONFIG, retriable: false, hint: 'set <alias>.producer.transaction.timeout.ms at most the target brokers\' transaction.max.timeout.ms (Kafka\'s default 900000), or raise that broker setting' },
  PRODUCER_FENCED: { kind: K.FATAL, retriable: false, hint: 'another kmirror with the same transactional id started (or a group leader fenced this one): this instance stops writing' },
  INVALID_PRODUCER_EPOCH: { kind: K.FATAL, retriable: false, hint: 'another kmirror with the same transactional id started (or a group leader fenced this one): this instance stops writing' },
  // The broker asked is no longer the coordinator of the id (a newer coordinator epoch took over): found again.
  TRANSACTION_COORDINATOR_FENCED: COORDINATOR_MOVED,
  INVALID_TXN_STATE: { kind: K.FATAL, retriable: true, transaction: true },
  INVALID_PRODUCER_ID_MAPPING: { kind: K.FATAL, retriable: true, transaction: true },
  TRANSACTION_ABORTABLE: { kind: K.TRANSIENT, retriable: true, transaction: true },
  OPERATION_NOT_ATTEMPTED: TRANSIENT,
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: { kind: K.AUTHORIZATION, retriable: false },
  // A KRaft controller also answers it to a request needing more than 10,000 metadata records (a topic, a record per
  // partition and per config: "excessively large batch"; from 4.0 also "Excessively large number of partitions per
  // request"); kmirror's batches stay under it (create-batches.ts), and it grows topics in steps under it.
  POLICY_VIOLATION: { kind: K.CONFIG, retriable: false, hint: 'the cluster refused the settings: its create-topic or alter-config policy (adjust replication.factor or the excluded configs), or, with "excessively large batch" or "Excessively large number of partitions per request" above, a KRaft controller\'s limit of 10,000 metadata records a request (a topic of about 10,000 partitions or more cannot be created in one request: create it by hand with fewer, and kmirror grows it to the source\'s count in steps)' },
  INVALID_REPLICATION_FACTOR: { kind: K.CONFIG, retriable: false },
  INVALID_CONFIG: { kind: K.CONFIG, retriable: false },
  GROUP_ID_NOT_FOUND: { kind: K.CONFIG, retriable: false, hint: 'the group does not exist on this cluster: check the group name, and that the group has committed offsets on this cluster' },
  INVALID_GROUP_ID: { kind: K.CONFIG, retriable: false, hint: 'the group id is empty or invalid: check the group id given (the flow\'s group.id, `A->B.group.id`, or the group named on the command line)' },
  UNSUPPORTED_VERSION: { kind: K.CONFIG, retriable: false, hint: 'the broker does not support this request version or feature: its Kafka release is too old for it, or the feature is turned off on the broker; upgrade the brokers or turn the feature on (docs/compatibility.md)' },
  MESSAGE_TOO_LARGE: { kind: K.TOO_LARGE, retriable: false, hint: TOO_LARGE_HINT },
  RECORD_LIST_TOO_LARGE: { kind: K.TOO_LARGE, retriable: false, hint: TOO_LARGE_HINT },
  CORRUPT_MESSAGE: { kind: K.CORRUPT, retriable: false },
  INVALID_RECORD: { kind: K.CORRUPT, retriable: false },
  INVALID_TIMESTAMP: { kind: K.CORRUPT, retriable: false },
  UNSUPPORTED_COMPRESSION_TYPE: { kind: K.CORRUPT, retriable: false }
}

const UNKNOWN_ERROR: KafkaErrorInfo = { kind: K.FATAL, retriable: false }

/** Kind, retriability and hint of a Kafka error name. */
export function kafkaErrorInfo (name: string): KafkaErrorInfo {
  return KAFKA_ERRORS[name] ?? UNKNOWN_ERROR
}

/** What a coordinator's error (a Kafka error code or name) says about the coordinator, if anything. */
export function coordinatorError (error: number | string): CoordinatorError | undefined {
  return kafkaErrorInfo(typeof error === 'number' ? kafkaErrorName(error) : error).coordinator
}

/**
 * Whether a coordinator's error means it is starting or moved (MOVED or LOADING): find it again and ask again
 * shortly. What group members (and anything describing a group) wait out rather than fail on.
 */
export function isCoordinatorRetriable (error: number | string): boolean {
  const state = coordinatorError(error)
  return state === CoordinatorErrors.MOVED || state === CoordinatorErrors.LOADING
}

/** An error that only says a coordinator moved or is loading (Kafka answers, not a network fault): routine for a moment. */
export function isCoordinatorTransient (error: KmirrorError): boolean {
  const names = error.details['kafkaErrors']
  return Array.isArray(names) && names.length > 0 && names.every(n => typeof n === 'string' && isCoordinatorRetriable(n))
}

/** What a group coordinator's error (a Kafka error code or name) says about the member's membership, if anything. */
export function membershipError (error: number | string): MembershipError | undefined {
  return kafkaErrorInfo(typeof error === 'number' ? kafkaErrorName(error) : error).membership
}

/** Whether a produce answer (a Kafka error name) is about the producer's transaction rather than the partition. */
export function isTransactionError (name: string): boolean {
  return kafkaErrorInfo(name).transaction === true
}

/** Whether the target refused the batch itself as it is (too large, invalid), rather than the moment. */
export function isRefusedBatchError (name: string): boolean {
  const { kind } = kafkaErrorInfo(name)
  return kind === K.TOO_LARGE || kind === K.CORRUPT
}

/** The error code of kmirror for a Kafka error of this kind, or `fallback`. */
export function errorCodeOfKind (kind: KafkaErrorKind, fallback: ErrorCode): ErrorCode {
  if (kind === K.AUTHORIZATION) return ErrorCodes.NOT_AUTHORIZED
  if (kind === K.AUTHENTICATION) return ErrorCodes.AUTHENTICATION
  return fallback
}
