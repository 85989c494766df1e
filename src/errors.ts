/**
 * The single home of kmirror's error codes. Callers branch on `code`, never on message text.
 * Every message names what was wrong and how to fix it; `cause` is always kept when wrapping.
 */
export const ErrorCodes = {
  /** The configuration file is missing, unreadable or invalid. Exit code 2, nothing was written. */
  CONFIG_INVALID: 'KMIRROR_ERR_CONFIG_INVALID',
  /** The command line is wrong (unknown option, missing argument). Exit code 2. */
  USAGE: 'KMIRROR_ERR_USAGE',
  /**
   * A cluster could not be reached: nothing listens, the host does not resolve, no route, a TLS handshake or a
   * listener of another protocol. The message names the cluster, the broker host:port and the cause (errno, TLS
   * verification error). Credentials refused are AUTHENTICATION, missing ACLs NOT_AUTHORIZED.
   */
  CLUSTER_UNREACHABLE: 'KMIRROR_ERR_CLUSTER_UNREACHABLE',
  /**
   * A broker accepted the connection (or the connection attempt hung) but did not answer within the deadline
   * (`request.timeout.ms`, `socket.connection.setup.timeout.ms` of the client role, or a command's `--timeout`):
   * a wedged or frozen broker, a port that is not a Kafka listener, a TLS client on a plaintext port. Retried
   * while running; exit code 3 at start (once start-up stopped waiting) and for commands.
   */
  TIMEOUT: 'KMIRROR_ERR_TIMEOUT',
  /**
   * A broker speaks no version kmirror can use of an API it needs: it is older than Kafka 2.1, kmirror's floor.
   * Not retried; exit code 3 at start.
   */
  BROKER_INCOMPATIBLE: 'KMIRROR_ERR_BROKER_INCOMPATIBLE',
  /**
   * A cluster refused kmirror's credentials (SASL username or password, an OAUTHBEARER token), or the OAuth token
   * endpoint refused or failed. The message names the cluster, the mechanism or the token URL, never a secret.
   */
  AUTHENTICATION: 'KMIRROR_ERR_AUTHENTICATION',
  /** A topic (remote or internal) could not be created or is incompatible with what kmirror needs. */
  TOPIC_CREATE: 'KMIRROR_ERR_TOPIC_CREATE',
  /** A topic config change on the target was refused (invalid value, policy). The other topics keep syncing. */
  TOPIC_SYNC: 'KMIRROR_ERR_TOPIC_SYNC',
  /** The cluster refused an operation for lack of an ACL. The message names the grant to add. */
  NOT_AUTHORIZED: 'KMIRROR_ERR_NOT_AUTHORIZED',
  /** Records could not be written to the target. */
  PRODUCE: 'KMIRROR_ERR_PRODUCE',
  /** Records could not be read from the source. */
  FETCH: 'KMIRROR_ERR_FETCH',
  /** Replication progress could not be read or written. */
  PROGRESS: 'KMIRROR_ERR_PROGRESS',
  /**
   * This kmirror may no longer write (exactly-once mode or several instances): another producer with its
   * transactional id fenced it (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH), or its group membership lease ran out
   * (the BatchWriter `fence` hook). Nothing more was sent; the transaction in progress, if any, is aborted by the
   * coordinator. Not retried by the data path: the instance stops writing and reports; rejoining is the group's.
   */
  FENCED: 'KMIRROR_ERR_FENCED',
  /** Records were deleted by retention on the source before they were copied. Logged loudly, counted. */
  DATA_LOSS_RETENTION: 'KMIRROR_ERR_DATA_LOSS_RETENTION',
  /** A record of an internal topic could not be decoded. */
  DECODE: 'KMIRROR_ERR_DECODE',
  /**
   * The flow's group on its target cluster is used by another program (a Connect or MM2 worker group, a consumer
   * group) with another protocol type: kmirror cannot join it. The message names the group, the cluster and the
   * key to set (`A->B.group.id`). Not retried.
   */
  GROUP_CONFLICT: 'KMIRROR_ERR_GROUP_CONFLICT',
  /**
   * Membership in the flow's group failed in a way rejoining cannot fix: the broker refuses the session timeout
   * (outside its group.min/max.session.timeout.ms), the group is full (group.max.size), or another group error.
   * Transient failures (coordinator moving or loading, a rebalance, an eviction) are retried and never raise it.
   */
  GROUP_MEMBERSHIP: 'KMIRROR_ERR_GROUP_MEMBERSHIP',
  /**
   * A live MirrorMaker 2 copies the flow: its Connect worker group on the target (`B.group.id`, default
   * `<source>-mm2`) has a worker running MirrorSourceConnector tasks. Both would copy every record (two
   * transactional ids in exactly-once mode, which never fence each other). Retried at start (kmirror waits for MM2
   * to stop, e.g. a killed worker's session to end) until `start.retry.timeout.ms`, then exit code 3.
   */
  MM2_RUNNING: 'KMIRROR_ERR_MM2_RUNNING',
  /** An invariant kmirror relies on does not hold: a bug, please report it. */
  INTERNAL: 'KMIRROR_ERR_INTERNAL'
} as const

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes]

/** Exit codes of the `kmirror` command (MM2's MirrorMaker uses 2 for fatal errors, 3 for a failed start). */
export const ExitCodes = {
  OK: 0,
  /** `kmirror plan`-style commands: something to do. */
  DRIFT: 1,
  /** Bad input: configuration or usage. Nothing was written anywhere. */
  BAD_INPUT: 2,
  /** Start-up failed after the configuration was accepted (cluster unreachable, topic creation refused). */
  START_FAILED: 3,
  /** A running replication stopped because of an error it could not recover from. */
  RUNTIME_FAILURE: 4,
  /** failover, failback, offsets set: a group was refused as unsafe (active members, rewind, skip); nothing written for it. */
  REFUSED: 5
} as const

export interface KmirrorErrorOptions {
  cause?: unknown
  retriable?: boolean
  details?: Record<string, unknown>
}

export class KmirrorError extends Error {
  readonly code: ErrorCode
  readonly retriable: boolean
  readonly details: Record<string, unknown>

  constructor (code: ErrorCode, message: string, options: KmirrorErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'KmirrorError'
    this.code = code
    this.retriable = options.retriable ?? false
    this.details = options.details ?? {}
  }
}

/** One problem found in a configuration file. `key` is the property key as written in the file, when there is one. */
export interface ConfigProblem {
  key?: string
  message: string
}

/** Every problem of a configuration at once, so the user fixes them in one pass. */
export class ConfigError extends KmirrorError {
  readonly problems: readonly ConfigProblem[]

  constructor (problems: readonly ConfigProblem[], source: string) {
    const lines = problems.map(p => `  - ${p.key === undefined ? '' : `${p.key}: `}${p.message}`)
    super(ErrorCodes.CONFIG_INVALID, `invalid configuration ${source} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${lines.join('\n')}`, {
      details: { problems }
    })
    this.name = 'ConfigError'
    this.problems = problems
  }
}

export function isKmirrorError (err: unknown): err is KmirrorError {
  return err instanceof KmirrorError
}

/** The message of anything thrown, for a log line's text (the `err` field keeps its code, cause and stack). */
export function errorMessage (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/**
 * The one place that decides whether an operation that failed with `err` may be retried.
 * Programmer errors never are; kmirror's own errors say so themselves; anything from the Kafka
 * adapter has already been mapped to a KmirrorError with the right flag.
 */
export function isRetriable (err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError) return false
  if (isKmirrorError(err)) return err.retriable
  return false
}

/**
 * A bug rather than a cluster that cannot be read: KMIRROR_ERR_INTERNAL, or a JavaScript error no Kafka or network
 * failure raises (TypeError, RangeError, ReferenceError, SyntaxError), unless it wraps a system error (fetch's
 * `TypeError: fetch failed` caused by ECONNREFUSED is an unreachable endpoint). Exit 4 in every command
 * (cli/unexpected-errors.ts `reportCommandFailure`), 3 in a `kmirror run` still starting.
 */
export function isInternalError (err: unknown): boolean {
  if (isKmirrorError(err)) return err.code === ErrorCodes.INTERNAL
  const programming = err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError
  const cause: unknown = programming ? err.cause : undefined
  return programming && !(typeof cause === 'object' && cause !== null && 'code' in cause)
}
