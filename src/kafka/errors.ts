/**
 * Maps errors of the Kafka library to KmirrorError, keeping the original as `cause`.
 * This is the only place that knows the library's error shapes.
 */
import { NetworkError, protocolErrorsCodesById, UnsupportedApiError } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError, type ErrorCode } from '../errors.ts'

/**
 * Visits every error of the library's error tree (aggregated `errors`, then `cause`), breadth first, each
 * once, until `visit` returns something other than undefined, which is then returned.
 */
export function searchErrorTree<T> (err: unknown, visit: (e: object) => T | undefined): T | undefined {
  const seen = new Set<unknown>()
  const queue: unknown[] = [err]
  while (queue.length > 0) {
    const e = queue.shift()
    if (e === null || typeof e !== 'object' || seen.has(e)) continue
    seen.add(e)
    const found = visit(e)
    if (found !== undefined) return found
    const nested = (e as { errors?: unknown }).errors
    if (Array.isArray(nested)) queue.push(...nested)
    queue.push((e as { cause?: unknown }).cause)
  }
  return undefined
}

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

/** The hint for a Kafka error name, if users meet it often enough to have one. */
export function kafkaErrorHint (name: string): string | undefined {
  return HINTS[name]
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

export function toKmirrorError (err: unknown, code: ErrorCode, action: string): KmirrorError {
  if (err instanceof KmirrorError) return err
  // kmirror's own errors raised inside the library (authentication, token endpoint) already say what to fix.
  const own = searchErrorTree(err, e => (e instanceof KmirrorError ? e : undefined))
  if (own !== undefined) return new KmirrorError(own.code, `${action}: ${own.message}`, { cause: err, retriable: own.retriable, details: own.details })
  const names = kafkaErrorNames(err)
  const network = isNetworkError(err) || names.some(n => n.startsWith('NOT_') || n.endsWith('_NOT_AVAILABLE') || n === 'REQUEST_TIMED_OUT')
  const hint = names.map(n => HINTS[n]).find(h => h !== undefined) ?? (network ? NETWORK_HINT : undefined)
  const suffix = (names.length > 0 ? ` [${names.join(', ')}]` : '') + (hint === undefined ? '' : `; ${hint}`)
  const denied = names.some(n => n.endsWith('_AUTHORIZATION_FAILED'))
  const finalCode = denied ? ErrorCodes.NOT_AUTHORIZED : network ? ErrorCodes.CLUSTER_UNREACHABLE : code
  return new KmirrorError(finalCode, `${action}: ${describe(err)}${suffix}`, {
    cause: err,
    retriable: network || names.length === 0 || names.some(n => RETRIABLE_NAMES.has(n)),
    details: { kafkaErrors: names }
  })
}

/** A Kafka error code returned in a response (not thrown by the library) as a KmirrorError, named and hinted. */
export function kafkaResponseError (errorCode: number, code: ErrorCode, action: string): KmirrorError {
  const name = kafkaErrorName(errorCode)
  const hint = HINTS[name]
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
const NETWORK_HINT = 'check <alias>.bootstrap.servers, that the cluster is reachable from here, and that <alias>.security.protocol matches the listener ' +
  '(a listener with ssl.client.auth=required closes TLS connections without a client certificate: set <alias>.ssl.keystore.*)'

const RETRIABLE_NAMES = new Set([
  'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION', 'COORDINATOR_NOT_AVAILABLE', 'COORDINATOR_LOAD_IN_PROGRESS', 'NOT_COORDINATOR', 'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'KAFKA_STORAGE_ERROR', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH',
  'UNKNOWN_TOPIC_ID', 'OUT_OF_ORDER_SEQUENCE_NUMBER', 'THROTTLING_QUOTA_EXCEEDED', 'CONCURRENT_TRANSACTIONS'
])
