/**
 * Maps errors of the Kafka library to KmirrorError, keeping the original as `cause`.
 * This is the only place that knows the library's error shapes.
 */
import { NetworkError, protocolErrorsCodesById, TimeoutError, UnsupportedApiError } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError, type ErrorCode } from '../errors.ts'
import { connectionHint, isBareClose, type ConnectionContext } from './connection-hints.ts'
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

/** The protocol name of a Kafka error code (e.g. 6 -> NOT_LEADER_OR_FOLLOWER). */
export function kafkaErrorName (code: number): string {
  return protocolErrorsCodesById[code] ?? `KAFKA_ERROR_${code}`
}

/** Whether a partition-level error of a produce or fetch response is worth retrying. */
export function isRetriableKafkaError (code: number): boolean {
  return RETRIABLE_NAMES.has(kafkaErrorName(code))
}

/** The hint for a Kafka error name, if users meet it often enough to have one; `alias` prefixes the keys it names. */
export function kafkaErrorHint (name: string, alias?: string): string | undefined {
  return HINTS[name]?.replaceAll('<alias>.', alias === undefined ? '' : `${alias}.`)
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
  const hint = names.map(n => kafkaErrorHint(n, context.alias)).find(h => h !== undefined) ??
    (timedOut ? timeoutHint(context) : network || isConnectionRefusal(err) ? connectionHint(err, context) : undefined)
  const suffix = (names.length > 0 ? ` [${names.join(', ')}]` : '') + (hint === undefined ? '' : `; ${hint}`)
  const denied = names.some(n => n.endsWith('_AUTHORIZATION_FAILED'))
  const finalCode = denied ? ErrorCodes.NOT_AUTHORIZED : timedOut ? ErrorCodes.TIMEOUT : network ? ErrorCodes.CLUSTER_UNREACHABLE : code
  // A TLS listener that closes the connection without a word: a broker going down, or one that wants a client
  // certificate (ssl.client.auth=required under TLS 1.3 looks exactly like this). Start-up waits only a little.
  const closedOnTls = network && !timedOut && /SSL/i.test(context.protocol ?? '') && names.length === 0 && isBareClose(err)
  return new KmirrorError(finalCode, `${action}: ${describe(err)}${suffix}`, {
    cause: err,
    retriable: network || names.length === 0 || names.some(n => RETRIABLE_NAMES.has(n)),
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
  const hint = kafkaErrorHint(name, context.alias)
  const denied = name.endsWith('_AUTHORIZATION_FAILED')
  return new KmirrorError(denied ? ErrorCodes.NOT_AUTHORIZED : code, `${action}: Kafka error ${name}${hint === undefined ? '' : `; ${hint}`}`, {
    retriable: RETRIABLE_NAMES.has(name),
    details: { kafkaErrors: [name] }
  })
}

/** What to check for the Kafka errors users meet most; appended to the message. */
const HINTS: Readonly<Record<string, string>> = {
  SASL_AUTHENTICATION_FAILED: 'check <alias>.sasl.mechanism and the username and password in <alias>.sasl.jaas.config',
  ILLEGAL_SASL_STATE: 'check <alias>.security.protocol and <alias>.sasl.mechanism match the listener',
  UNSUPPORTED_SASL_MECHANISM: 'set <alias>.sasl.mechanism to one the listener enables',
  TOPIC_AUTHORIZATION_FAILED: 'grant the principal kmirror uses the topic ACLs listed in docs/operations.md',
  CLUSTER_AUTHORIZATION_FAILED: 'grant the principal kmirror uses the cluster ACLs listed in docs/operations.md',
  GROUP_AUTHORIZATION_FAILED: 'grant the principal kmirror uses Read on the consumer group',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'grant the principal kmirror uses Write on its transactional id',
  POLICY_VIOLATION: 'the cluster\'s create-topic policy refused the settings; adjust replication.factor or the excluded configs',
  MESSAGE_TOO_LARGE: 'raise max.message.bytes of the remote topic (or message.max.bytes of the target brokers)',
  RECORD_LIST_TOO_LARGE: 'raise max.message.bytes of the remote topic (or message.max.bytes of the target brokers)'
}
const RETRIABLE_NAMES = new Set([
  'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION', 'COORDINATOR_NOT_AVAILABLE', 'COORDINATOR_LOAD_IN_PROGRESS', 'NOT_COORDINATOR', 'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'KAFKA_STORAGE_ERROR', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH',
  'UNKNOWN_TOPIC_ID', 'OFFSET_NOT_AVAILABLE', 'OUT_OF_ORDER_SEQUENCE_NUMBER', 'THROTTLING_QUOTA_EXCEEDED', 'CONCURRENT_TRANSACTIONS'
])
